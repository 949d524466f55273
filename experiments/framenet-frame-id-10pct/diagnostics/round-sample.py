"""A blind sample of a run's records for judging, by round or place in it: N of each group asked for, shuffled.

Each item shows what the annotators of finding 10's and the three-iteration run's samples saw:
the frame and its FrameNet definition, the source with its trigger marked, the output with
its new trigger marked; nothing else (no round, score or filter verdict). The key (item,
record id, group) goes to its own file, for the judgments to be joined back.

    python round-sample.py RUN POOL FNDATA ITEMS.md KEY.tsv 1=25 2=25 3=50 [--seed 44]
    python round-sample.py RUN POOL FNDATA ITEMS.md KEY.tsv first=40 more=40 --verdicts verdicts.json

A group is a round (1, 2, ...), or ``first`` and ``more``: a round's first record, and the
further records a run with ``per_round`` kept beside it (ids ending ``/itK.2`` and on).
``--verdicts`` (``new-pairs.py --verdicts``'s file) samples only the records the README's
FrameNet filters keep. The key's third column is the record's group.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from judgments import record_item  # this folder's


def group_of(record: dict, by_round: bool) -> str:
    """The record's round, or whether it is its round's first record or a further one (``per_round``)."""
    if by_round:
        return str(record["iteration"])
    return "more" if re.search(r"/it\d+\.\d+$", record["id"]) else "first"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("pool", type=Path)
    parser.add_argument("fndata", type=Path)
    parser.add_argument("items", type=Path)
    parser.add_argument("key", type=Path)
    parser.add_argument("rounds", nargs="+", help="GROUP=N: how many records of each group (a round, first or more)")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--verdicts", type=Path, help="new-pairs.py --verdicts's file: sample the kept records only")
    args = parser.parse_args()
    sources = {e["id"]: e for e in map(json.loads, args.pool.read_text().splitlines())}
    records = [json.loads(line) for line in (args.run / "augmented.jsonl").read_text().splitlines()]
    if args.verdicts:
        verdicts = json.loads(args.verdicts.read_text())
        records = [r for r in records if verdicts.get(r["id"]) == "kept"]
    rng = random.Random(args.seed)
    picked = []
    for spec in args.rounds:
        group, n = spec.split("=")
        members = [r for r in records if group_of(r, group.isdigit()) == group]
        picked += [(group, r) for r in rng.sample(members, int(n))]
    rng.shuffle(picked)
    items, key = [], []
    for number, (group, record) in enumerate(picked, start=1):
        items.append(record_item(number, record, sources, args.fndata))
        key.append(f"{number}\t{record['id']}\t{group}\n")
    args.items.write_text("\n".join(items))
    args.key.write_text("".join(key))


if __name__ == "__main__":
    main()
