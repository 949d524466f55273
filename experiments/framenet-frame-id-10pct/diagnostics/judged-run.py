"""A run less the records its annotators judged wrong: what an oracle filter would leave.

Every record of RUN is copied to OUT unless a judgments file says it fails the count asked for
(``frame``: the new trigger does not evoke the frame; ``both``: that, or the meaning is not
kept). Records nobody judged are copied as they are, so the curve's filters still decide them;
with ``kept-items.py``'s judgments of every record the filters keep, the filtered condition on
OUT trains on exactly the kept records judged right. The manifest is copied unchanged.
``--for-filter FILE`` also writes the judged records as ``spanaug train filter`` reads
judgments (id, iteration, the record's scores, accepted: the count asked for), to see how near
a learned filter on the decoder's and aligner's scores comes to the annotators.

    python judged-run.py RUN OUT JUDGMENTS.tsv... [--count frame|both] [--for-filter JUDGMENTS.jsonl]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from judgments import read_judgments  # this folder's


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("judgments", type=Path, nargs="+")
    parser.add_argument("--count", choices=("frame", "both"), default="frame")
    parser.add_argument("--for-filter", type=Path, help="also write the judged records as train filter's judgments")
    args = parser.parse_args()
    judged = {}
    for tsv in args.judgments:
        judged.update(read_judgments(tsv))
    lines = (args.run / "augmented.jsonl").read_text().splitlines(keepends=True)
    records = {(record := json.loads(line))["id"]: (record, line) for line in lines}
    unknown = sorted(set(judged) - set(records))
    if unknown:
        raise SystemExit(f"{args.judgments[0]}: {len(unknown)} judged records are not in {args.run}, e.g. {unknown[0]}")
    if args.out.exists():
        raise SystemExit(f"{args.out}: already there; remove it to write the run anew")
    dropped = {i for i, j in judged.items() if not getattr(j, args.count)}
    args.out.mkdir(parents=True)
    shutil.copy(args.run / "manifest.json", args.out / "manifest.json")
    (args.out / "augmented.jsonl").write_text("".join(line for i, (_, line) in records.items() if i not in dropped))
    if args.for_filter:
        args.for_filter.write_text("".join(
            json.dumps({"id": i, "iteration": records[i][0]["iteration"], "scores": records[i][0]["scores"],
                        "accepted": getattr(j, args.count)}) + "\n"
            for i, j in judged.items()))
    print(f"{len(lines) - len(dropped)} of {len(lines)} records copied: {len(dropped)} of {len(judged)} judged fail on {args.count}")


if __name__ == "__main__":
    main()
