"""Issue 44's control for project_source: the records replaced by unchanged copies of their sources.

Each record of a run keeps its id, source and target, but its words and spans become the source
sentence's, with the record's target and that target's frame elements. With the frame-id trainer's
project_source, such a copy learns every other label of its source, so the curve's augmented
condition then adds exact copies of gold sentences: as many as the records, from the same sources.
What the paraphrases add beyond that repetition is the gap between the two conditions.

    python copies.py RUN_FOLDER POOL.jsonl OUT_FOLDER   (OUT_FOLDER then serves as --augmented)
"""

import json
import shutil
import sys
from pathlib import Path


def main(run: Path, pool: Path, out: Path) -> None:
    sources = {}
    with pool.open(encoding="utf-8") as fh:
        for line in fh:
            example = json.loads(line)
            sources[example["id"]] = example
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with (run / "augmented.jsonl").open(encoding="utf-8") as records, (out / "augmented.jsonl").open("w", encoding="utf-8") as fh:
        for number, line in enumerate(records, 1):
            record = json.loads(line)
            source = sources[record["source_id"]]
            group = next(s["group"] for s in record["spans"] if s["role"] == "target")
            spans = [dict(s) for s in source["spans"] if s["group"] == group]
            if not any(s["role"] == "target" for s in spans):
                sys.exit(f"{run / 'augmented.jsonl'}:{number}: the source {record['source_id']} has no target in group {group}")
            record.update(tokens=source["tokens"], text=" ".join(source["tokens"]), spans=spans)
            fh.write(json.dumps(record) + "\n")
            count += 1
    shutil.copy(run / "manifest.json", out)
    print(f"{count} copies written to {out / 'augmented.jsonl'}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*(Path(a) for a in sys.argv[1:]))
