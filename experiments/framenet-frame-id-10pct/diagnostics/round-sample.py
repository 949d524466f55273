"""A blind sample of a run's records for judging, by round: N of each round asked for, shuffled.

Each item shows what the annotators of finding 10's and the three-iteration run's samples saw:
the frame and its FrameNet definition, the source with its trigger marked, the output with
its new trigger marked; nothing else (no round, score or filter verdict). The key (item,
record id, round) goes to its own file, for the judgments to be joined back.

    python round-sample.py RUN POOL FNDATA ITEMS.md KEY.tsv 1=25 2=25 3=50 [--seed 44]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from judgments import record_item  # this folder's


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("pool", type=Path)
    parser.add_argument("fndata", type=Path)
    parser.add_argument("items", type=Path)
    parser.add_argument("key", type=Path)
    parser.add_argument("rounds", nargs="+", help="ROUND=N: how many records of each round")
    parser.add_argument("--seed", type=int, default=44)
    args = parser.parse_args()
    sources = {e["id"]: e for e in map(json.loads, args.pool.read_text().splitlines())}
    records = [json.loads(line) for line in (args.run / "augmented.jsonl").read_text().splitlines()]
    rng = random.Random(args.seed)
    picked = []
    for spec in args.rounds:
        round_, n = map(int, spec.split("="))
        picked += rng.sample([r for r in records if r["iteration"] == round_], n)
    rng.shuffle(picked)
    items, key = [], []
    for number, record in enumerate(picked, start=1):
        items.append(record_item(number, record, sources, args.fndata))
        key.append(f"{number}\t{record['id']}\t{record['iteration']}\n")
    args.items.write_text("\n".join(items))
    args.key.write_text("".join(key))


if __name__ == "__main__":
    main()
