"""Could a score choose the records for precision? Each score's ROC AUC on the blind judgments.

The judged samples of docs/results/judgments/framenet-pool-10pct*.tsv say, record by record,
whether the new trigger evokes the frame and whether the meaning is kept. A precision filter
(the paper's learned classifier, or a threshold on one score) can only be as good as the
signals it reads, so this script asks each signal how well it ranks the good records above
the bad among those the README's FrameNet filters keep (what the curve's `filtered` condition
adds), and what dropping the lowest-scored share would buy. Signals: the record's own scores
(`paraphrase`, its fluency, `alignment`, the n-best rank), the round, and `adequacy` (the
shipped MRPC classifier against the pool sentence, as the `adequacy` filter computes it).

A record counts as good on a count when every annotator of its sample said yes. Samples of
runs made with other aligner heads or decoders have scores on other scales: give those as
separate calls, not pooled.

    python judged-scores.py POOL RUN:JUDGMENTS.tsv [RUN:JUDGMENTS.tsv ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spanaug_filters.adequacy import AdequacyFilter, roc_auc

SIGNALS = ("paraphrase", "paraphrase_fluency", "alignment", "rank", "round", "adequacy")
# The judgments files: the first sample has one annotator (frame, meaning, verdict), the later
# ones a round column, two annotators and the verdict.
ONE_ANNOTATOR, TWO_ANNOTATORS = 5, 9


def judged(run: Path, tsv: Path) -> list[dict]:
    """The judged records of RUN with their verdicts, judgments and scores."""
    records = {}
    with (run / "augmented.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            records[record["id"]] = record
    rows = []
    for number, line in enumerate(tsv.read_text().splitlines(), 1):
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == ONE_ANNOTATOR:
            frame, meaning, verdict = int(fields[1]), int(fields[2]), fields[3]
        elif len(fields) == TWO_ANNOTATORS:
            frame, meaning, verdict = int(fields[2]) * int(fields[4]), int(fields[3]) * int(fields[5]), fields[6]
        else:
            raise SystemExit(f"{tsv}:{number}: expected {ONE_ANNOTATOR} or {TWO_ANNOTATORS} tab-separated fields, found {len(fields)}")
        if fields[0] not in records:
            raise SystemExit(f"{tsv}:{number}: record {fields[0]!r} is not in {run / 'augmented.jsonl'}")
        record = records[fields[0]]
        rows.append({"record": record, "frame": frame, "both": frame * meaning, "kept": verdict == "kept",
                     **{k: record["scores"][k] for k in ("paraphrase", "paraphrase_fluency", "alignment")},
                     "rank": -record["scores"]["rank"], "round": -record["iteration"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pool", type=Path, help="the pool JSONL the runs augmented (fn-pool.jsonl)")
    parser.add_argument("samples", nargs="+", help="RUN:JUDGMENTS.tsv, a run folder and its judged sample")
    args = parser.parse_args()
    pool = {}
    with args.pool.open() as lines:
        for line in lines:
            example = json.loads(line)
            pool[example["id"]] = example["tokens"]
    rows = []
    for sample in args.samples:
        run, _, tsv = sample.partition(":")
        rows += judged(Path(run), Path(tsv))
    adequacy = AdequacyFilter(AdequacyFilter.Config())
    for row in rows:
        record = row["record"]
        (row["adequacy"],) = adequacy.adequacy(tuple(pool[record["source_id"]]), [tuple(record["tokens"])])
    kept = [row for row in rows if row["kept"]]
    print(f"{len(rows)} judged records, {len(kept)} kept by the README's filters: "
          f"frame evoked {sum(r['frame'] for r in kept)}, both counts {sum(r['both'] for r in kept)}")
    print("\nROC AUC among the kept records (0.5: no better than chance; rank and round: earlier is higher)")
    print(f"{'signal':<20} {'frame':>6} {'both':>6}")
    for signal in SIGNALS:
        values = [row[signal] for row in kept]
        print(f"{signal:<20} {roc_auc(values, [r['frame'] for r in kept]):6.3f} {roc_auc(values, [r['both'] for r in kept]):6.3f}")
    for signal in ("alignment", "adequacy"):
        print(f"\nthe kept records without the lowest share by {signal}")
        print(f"{'dropped':>8} {'from':>7} {'kept':>5} {'frame':>7} {'both':>7}")
        ranked = sorted(kept, key=lambda row: row[signal])
        for tenth in range(7):
            rest = ranked[len(ranked) * tenth // 10:]
            print(f"{tenth * 10:>7}% {rest[0][signal]:7.3f} {len(rest):5} "
                  f"{sum(r['frame'] for r in rest) / len(rest):7.1%} {sum(r['both'] for r in rest) / len(rest):7.1%}")


if __name__ == "__main__":
    main()
