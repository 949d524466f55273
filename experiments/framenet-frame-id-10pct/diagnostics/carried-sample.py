"""The carried targets that only the aligner placed: their count, and a blind sample to judge.

A record takes its source's other targets along (``carry``, marked ``carried``). Where the
paraphrase kept a target's words, ``project_source`` teaches the same label anyway; the trainer
learns something of its own from a carried target only where it lies on words the paraphrase
changed, placed there by the aligner (finding 10 of the results page). This counts those of at
most ``max_span`` words (what the trainer sees), draws N of them and writes items as the
judged samples' are (the frame, its definition, the source with its target marked, the
output with the carried span marked; no score), with a key: record id, frame, the marked
words, whether FrameNet lists them for the frame (as ``frame-lexicon`` asks of a record's own
trigger) and whether the pool's gold has that (frame, words) pair.

    python carried-sample.py RUN POOL FNDATA ITEMS.md KEY.tsv [--n 60] [--seed 44]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from spanaug_trainers.frame_id import FrameIdTrainer, FrameSentence, projected

from judgments import item, pair  # this folder's
from spanaug_core.plugins import default_registry
from spanaug_core.types import CARRIED, Example
from spanaug_shared.records import read_records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("run", "pool", "fndata", "items", "key"):
        parser.add_argument(name, type=Path)
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    max_span = trainer.config.max_span
    pool = {e.id: e for e in (Example.model_validate_json(line) for line in args.pool.read_text().splitlines())}
    carried, changed = 0, []
    for record in read_records(args.run / "augmented.jsonl"):
        source = pool[record.source_id]
        own = tuple((s.start, s.end, s.label) for s in record.spans if s.role == "target" and not s.attrs.get(CARRIED))
        kept = projected(FrameSentence(record.tokens, own, False), trainer.sentence(source), max_span).known
        for span in record.spans:
            if span.role == "target" and span.attrs.get(CARRIED) and span.end - span.start <= max_span:
                carried += 1
                if (span.start, span.end, span.label) not in kept:
                    origin = next(s for s in source.spans if s.role == "target" and (s.label, s.group) == (span.label, span.group))
                    changed.append((record, span, source, origin))
    lexicon = default_registry().create("lexicon", "framenet", release=str(args.fndata))
    gold = {pair(e.tokens, s.label, s.start, s.end) for e in pool.values() for s in e.spans if s.role == "target"}
    listed = [s.label in lexicon.labels_for(" ".join(r.tokens[s.start : s.end])) for r, s, _, _ in changed]
    new = [pair(r.tokens, s.label, s.start, s.end) not in gold for r, s, _, _ in changed]
    print(f"{carried} carried targets of at most {max_span} words; {len(changed)} not on words the paraphrase kept, "
          f"{sum(listed)} of them listed for their frame, {sum(new)} a pair the pool's gold lacks, {sum(map(all, zip(listed, new)))} both")
    items, key = [], []
    drawn = random.Random(args.seed).sample(range(len(changed)), min(args.n, len(changed)))
    for number, k in enumerate(drawn, 1):
        record, span, source, origin = changed[k]
        items.append(item(number, span.label, args.fndata, (source.tokens, origin.start, origin.end),
                          (record.tokens, span.start, span.end)))
        key.append(f"{number}\t{record.id}\t{span.label}\t{' '.join(record.tokens[span.start:span.end])}\t{int(listed[k])}\t{int(new[k])}\n")
    args.items.write_text("\n".join(items))
    args.key.write_text("".join(key))


if __name__ == "__main__":
    main()
