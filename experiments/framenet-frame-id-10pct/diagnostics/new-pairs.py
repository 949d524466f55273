"""What each round of a run adds after the README's FrameNet filters: records kept, and new
(frame, trigger words) pairs that the pool's gold lacks, with the test targets they match.

The filters are applied as ``spanaug experiment learning-curve``'s filtered condition applies
them: adequacy, fluency, facts and frame-lexicon in that order, each record with its source's
earlier outputs (in file order) as context. ``--verdicts FILE`` also writes every record's
verdict (kept, or the first filter that drops it) as JSON, for a judged sample's table.
``--consistency MODEL`` adds the ``label-consistency`` filter last, with a frame-id model
trained on gold held to FNDATA's LUs (and predicting held to them); ``--judged TSV...`` then
counts, of the judged records in the run, how many each verdict keeps and how many of those
the annotators found good (the frame evoked, and the meaning kept too; with two annotators,
both said yes).

    python new-pairs.py RUN POOL TEST FNDATA [--verdicts verdicts.json] [--consistency MODEL --judged TSV...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from spanaug_core.choices import first_rejection
from spanaug_core.plugins import default_registry
from spanaug_core.protocols import FilterContext
from spanaug_core.types import Augmented, Example
from spanaug_shared.records import read_records

from judgments import pair, read_judgments  # this folder's


def new_trigger(record: Augmented) -> tuple[str, str]:
    span = next(s for s in record.spans if s.role == "target" and not s.attrs.get("carried"))
    return pair(record.tokens, span.label, span.start, span.end)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("run", "pool", "test", "fndata"):
        parser.add_argument(name, type=Path)
    parser.add_argument("--verdicts", type=Path)
    parser.add_argument("--consistency", type=Path, help="a frame-id model trained on gold, for label-consistency")
    parser.add_argument("--judged", type=Path, nargs="*", default=[], help="judgment TSVs (docs/results/judgments/)")
    args = parser.parse_args()
    pool = [Example.model_validate_json(line) for line in args.pool.read_text().splitlines()]
    sources = {e.id: e for e in pool}
    registry = default_registry()
    filters = [registry.create("filter", name) for name in ("adequacy", "fluency", "facts")]
    filters.append(registry.create("filter", "frame-lexicon", release=str(args.fndata)))
    if args.consistency:
        lexicon = {"name": "framenet", "release": str(args.fndata)}
        filters.append(registry.create("filter", "label-consistency", model=args.consistency, trainer={"lexicon": lexicon}))
    seen: dict[str, set[str]] = defaultdict(set)
    records = read_records(args.run / "augmented.jsonl")
    verdict = {}
    for record in records:
        context = FilterContext(source=sources[record.source_id], previous_texts=frozenset(seen[record.source_id]))
        reason = first_rejection(filters, record, context)
        seen[record.source_id].add(record.text)
        verdict[record.id] = "kept" if reason is None else reason.split(":", 1)[0]
    if args.verdicts:
        args.verdicts.write_text(json.dumps(verdict, indent=0))
    gold = {pair(e.tokens, s.label, s.start, s.end) for e in pool for s in e.spans if s.role == "target"}
    test: Counter[tuple[str, str]] = Counter()
    for line in args.test.read_text().splitlines():
        example = Example.model_validate_json(line)
        test.update(pair(example.tokens, s.label, s.start, s.end) for s in example.spans if s.role == "target")
    for round_ in sorted({r.iteration for r in records}):
        these = [r for r in records if r.iteration == round_]
        why = Counter(verdict[r.id] for r in these)
        pairs = {new_trigger(r) for r in records if r.iteration <= round_ and verdict[r.id] == "kept"} - gold
        print(
            f"round {round_}: {len(these)} records, kept {why.pop('kept', 0)}, dropped {dict(why)}; rounds 1-{round_} kept: "
            f"{len(pairs)} new (frame, trigger) pairs matching {sum(test[p] for p in pairs)} test targets"
        )
    if args.judged:
        judged_table(verdict, args.judged)


def judged_table(verdict: dict[str, str], tsvs: list[Path]) -> None:
    """Of the judged records among ``verdict``'s, how many each verdict keeps and how many of those are good."""
    good = {record_id: judgment for tsv in tsvs for record_id, judgment in read_judgments(tsv).items()}
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for record_id, (frame, both, _) in good.items():
        if record_id in verdict:
            for row in (verdict[record_id], "all"):
                rows[row][0] += 1
                rows[row][1] += frame
                rows[row][2] += both
    print("verdict | judged | frame evoked | both")
    for row in sorted(rows, key=lambda r: (r != "all", r != "kept", r)):
        judged, frame, both = rows[row]
        print(f"{row} | {judged} | {frame} | {both}")


if __name__ == "__main__":
    main()
