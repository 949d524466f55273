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
from pathlib import Path

from spanaug_filters.adequacy import AdequacyFilter, roc_auc
from spanaug_shared.records import read_records

from judgments import read_judgments  # this folder's
from rescore import examples

SIGNALS = ("paraphrase", "paraphrase_fluency", "alignment", "rank", "round", "adequacy")


def judged(run: Path, tsv: Path) -> list[dict]:
    """The judged records of RUN with their judgments and signals."""
    judgments = read_judgments(tsv)
    records = {record.id: record for record in read_records(run / "augmented.jsonl")}
    missing = sorted(set(judgments) - set(records))
    if missing:
        raise SystemExit(f"{tsv}: {len(missing)} judged records are not in {run / 'augmented.jsonl'}, e.g. {missing[0]!r}")
    return [{"record": records[record_id], "frame": judgment.frame, "both": judgment.both, "kept": judgment.verdict == "kept",
             **{k: records[record_id].scores[k] for k in ("paraphrase", "paraphrase_fluency", "alignment")},
             "rank": -records[record_id].scores["rank"], "round": -records[record_id].iteration}
            for record_id, judgment in judgments.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pool", type=Path, help="the pool JSONL the runs augmented (fn-pool.jsonl)")
    parser.add_argument("samples", nargs="+", help="RUN:JUDGMENTS.tsv, a run folder and its judged sample")
    args = parser.parse_args()
    pool = {example.id: example.tokens for example in examples(args.pool)}
    rows = []
    for sample in args.samples:
        run, _, tsv = sample.partition(":")
        rows += judged(Path(run), Path(tsv))
    adequacy = AdequacyFilter(AdequacyFilter.Config())
    for row in rows:
        record = row["record"]
        (row["adequacy"],) = adequacy.adequacy(pool[record.source_id], [record.tokens])
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
