"""Write gold sentences as a run folder, so that `spanaug judge export` asks the annotators about the gold itself.

A paraphrase keeps its source's labels, so a source the annotators reject (a garbled
sentence, a label they read otherwise) takes all its outputs down with it. Judging the
seeds the same way, blind among controls, gives that ceiling (docs/results/conll2003-kept-text.md,
"How good are the seeds themselves?"). Each example with a `target` span gives one record per
target (that span judged, as a span job's record would be); any other gives one
whole-sentence record, every span judged, as NER records are. Records need an
iteration, so each says 1.

    .venv/bin/python bench/gold_as_run.py ner16.jsonl ner18.jsonl --out gold-run
    spanaug judge export gold-run --gold eng-train.jsonl --per-item 3 --seed 3 --output judge-gold
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spanaug_core.files import ensure_folder
from spanaug_core.plugins import create
from spanaug_core.types import Augmented, Constraints, Example


def as_records(example: Example) -> list[Augmented]:
    """The records that stand for ``example``: one per target span, or one for the whole sentence."""
    # (id stem, target, spans judged): the pipeline's record ids, SOURCE/sK/itN or SOURCE/itN.
    jobs = [(f"{example.id}/s{k}", k, (span,)) for k, span in enumerate(example.spans) if span.role == "target"]
    return [
        Augmented(id=f"{stem}/it1", source_id=example.id, target=target, iteration=1, tokens=example.tokens,
                  text=example.text, spans=spans, scores={}, constraints=Constraints())
        for stem, target, spans in jobs or [(example.id, None, example.spans)]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", type=Path, help="gold examples, spanaug JSONL")
    parser.add_argument("--out", type=Path, required=True, help="the run folder to write (augmented.jsonl)")
    args = parser.parse_args()
    dataset = create("dataset", "jsonl")
    records = [record for path in args.inputs for example in dataset.read(path) for record in as_records(example)]
    ensure_folder(args.out)
    (args.out / "augmented.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} records -> {args.out / 'augmented.jsonl'}")


if __name__ == "__main__":
    main()
