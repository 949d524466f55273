"""Every record a run's filters keep, as blind items to judge in batches: an oracle filter's input.

A learned filter (the paper's P-classifier) can at best keep the records annotators would keep.
Judging every record the README's FrameNet filters keep, not a sample, says what that best is:
``judged-run.py`` then drops the records judged wrong and the curve trains on the rest.
The items are ``round-sample.py``'s (frame, definition, marked source and output, nothing
else), shuffled with the seed so that no batch holds one source's records together, numbered
across the batches. The key (item, record id, round, batch) goes to its own file. The
annotators read ``judging-guide.md`` (this folder's) and judged one batch each.

    python kept-items.py items RUN POOL FNDATA VERDICTS.json OUTDIR [--batches 16] [--seed 44]
    python kept-items.py join OUTDIR HEADER > JUDGMENTS.tsv

``join`` reads the annotators' OUTDIR/out-NN.tsv (item, frame, meaning, reason: one line an item
of items-NN.md) and writes them by record id in ``judgments.py``'s one-annotator layout, HEADER
as its first comment line.

VERDICTS is ``new-pairs.py --verdicts``'s file: a record is kept where its verdict is ``kept``, as
in the curve's filtered condition, or ``label-consistency``, the filter ``--consistency`` adds
after the README's (``label-consistency/verdicts.json.gz``, unpacked, serves).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from judgments import record_item  # this folder's


def items(args: argparse.Namespace) -> None:
    sources = {e["id"]: e for e in map(json.loads, args.pool.read_text().splitlines())}
    verdicts = json.loads(args.verdicts.read_text())
    records = [json.loads(line) for line in (args.run / "augmented.jsonl").read_text().splitlines()]
    missing = [r["id"] for r in records if r["id"] not in verdicts]
    if missing:
        raise SystemExit(f"{args.verdicts}: no verdict for {len(missing)} records of {args.run}, e.g. {missing[0]}")
    kept = [r for r in records if verdicts[r["id"]] in ("kept", "label-consistency")]
    random.Random(args.seed).shuffle(kept)
    args.out.mkdir(parents=True, exist_ok=True)
    size = -(-len(kept) // args.batches)
    key = []
    for batch in range(args.batches):
        chunk = kept[batch * size:(batch + 1) * size]
        numbers = range(batch * size + 1, batch * size + len(chunk) + 1)
        (args.out / f"items-{batch + 1:02d}.md").write_text(
            "\n".join(record_item(n, r, sources, args.fndata) for n, r in zip(numbers, chunk)))
        key += [f"{n}\t{r['id']}\t{r['iteration']}\t{batch + 1}\n" for n, r in zip(numbers, chunk)]
    (args.out / "key.tsv").write_text("".join(key))
    print(f"{len(kept)} kept records of {len(records)} in {args.batches} batches of at most {size}")


def join(args: argparse.Namespace) -> None:
    key = {}
    for line in (args.out / "key.tsv").read_text().splitlines():
        number, record_id, _round, batch = line.split("\t")
        key[number] = (record_id, int(batch))
    judged = {}
    for batch in sorted({b for _, b in key.values()}):
        path = args.out / f"out-{batch:02d}.tsv"
        if not path.exists():
            raise SystemExit(f"{path}: not there; batch {batch} is not judged yet")
        for line_number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 3 or fields[0] not in key or key[fields[0]][1] != batch or any(v not in ("0", "1") for v in fields[1:3]):
                raise SystemExit(f"{path}:{line_number}: expected ITEM of batch {batch}, FRAME and MEANING (1 or 0), REASON; found {line!r}")
            judged[fields[0]] = (fields[1], fields[2], " ".join(fields[3:]).strip())
    missing = [n for n in key if n not in judged]
    if missing:
        raise SystemExit(f"{args.out}: {len(missing)} items have no judgment, e.g. item {missing[0]} (batch {key[missing[0]][1]})")
    print(f"# {args.header}")
    print("# record id, frame evoked by the marked words (1/0), meaning of the source kept (1/0), the README FrameNet filters' verdict, reason")
    for number, (record_id, _batch) in key.items():
        frame, meaning, reason = judged[number]
        print(f"{record_id}\t{frame}\t{meaning}\tkept\t{reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("items", help="write the items and their key")
    for name in ("run", "pool", "fndata", "verdicts", "out"):
        write.add_argument(name, type=Path)
    write.add_argument("--batches", type=int, default=16)
    write.add_argument("--seed", type=int, default=44)
    read = commands.add_parser("join", help="the annotators' judgments by record id")
    read.add_argument("out", type=Path)
    read.add_argument("header")
    args = parser.parse_args()
    {"items": items, "join": join}[args.command](args)


if __name__ == "__main__":
    main()
