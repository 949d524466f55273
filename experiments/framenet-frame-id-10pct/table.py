"""The results tables of issue 44's curves, from this folder's CSVs, each condition paired by seed
with its table's gold row: first the headline table of docs/experiments.md (the issue's four
conditions, held to FrameNet's lexical units on dev and test, each epoch at its best NULL scale on
dev, the records' dev scored as often as gold's), then those of the results page's "The curve",
in its order: the filtered records scored on dev once an epoch; the same calibrated once the
epoch was chosen at scale 1; the kept models rescored, calibrated; the
cells trained held but not calibrated (the records also with each gold sentence repeated in every
epoch, and so the three-iteration records); the kept models held on test only; every condition
unheld, against gold trained as many optimiser steps as the cells with records; then finding
29's, the headline's gold and filtered cells with a 25% share of the pool beside them; then finding
30's, those cells over another frozen encoder; then finding 31's: the same cells at the setting
its search over that encoder chose, then the search itself; last, finding 32's: the filtered cells
on the pool decoded keeping up to four records a round, beside the headline's on the same seeds.

    python table.py            # prints the tables' markdown (header and rows) in that order

A row whose CSV is not there yet (a diagnostic still training) is left out.
"""

from __future__ import annotations

import csv
import statistics as st
from pathlib import Path

from spanaug_experiments.curve import Paired, paired

HERE = Path(__file__).parent
HEADER = (
    "| fraction | condition | runs | records added | test F1 | Δ F1 vs bold gold (paired) | p | precision "
    "| unseen-LU recall | Δ unseen recall |\n|---|---|---|---|---|---|---|---|---|---|"
)
# (label, CSV under this folder, condition in it); the first row of a table is its baseline
# The four conditions at the final trainer: held on dev and test, each epoch scored at its
# best NULL scale on all of dev (null_scale: dev since 43724b6), dev scored every gold epoch's steps
HEADLINE = [
    ("**gold**", "more-seeds/results.csv", "gold"),
    ("+ every record", "four-conditions/results.csv", "augmented"),
    ("+ the records the README's FrameNet filters keep", "more-seeds/results.csv", "filtered"),
    ("+ lexsub made from every record", "four-conditions/results.csv", "lexsub"),
]
FRACTIONS = (("0.25", "25%"), ("0.5", "50%"), ("1", "100%"))
# The headline's gold and filtered cells with a 25% share of the pool (curve.sh smaller): finding 29,
# its 25% rows alone (the others are the headline's)
SMALLER = [
    ("**gold**", "smaller-share/results.csv", "gold"),
    ("+ the records the README's FrameNet filters keep", "smaller-share/results.csv", "filtered"),
]
# The headline's gold and filtered cells over all-mpnet-base-v2's vectors (curve.sh encoder): finding 30
ENCODER = [
    ("**gold, all-mpnet-base-v2**", "encoder-all-mpnet-base-v2/results.csv", "gold"),
    ("+ the filtered records, all-mpnet-base-v2", "encoder-all-mpnet-base-v2/results.csv", "filtered"),
]
# The search's choice on dev, dropout 0.1, with the filtered records too: finding 31
ENCODER_DROPOUT = [
    ("**gold, all-mpnet-base-v2, dropout 0.1**", "encoder-all-mpnet-base-v2-dropout-0.1/results.csv", "gold"),
    ("+ the filtered records, the same", "encoder-all-mpnet-base-v2-dropout-0.1/results.csv", "filtered"),
]
# The headline's filtered cells on the pool decoded keeping up to four records a round (curve.sh
# per-round): finding 32, on the seeds those cells have
PER_ROUND = [
    ("**gold**", "more-seeds/results.csv", "gold"),
    ("+ the filtered records, one a round", "more-seeds/results.csv", "filtered"),
    ("+ the filtered records, up to four a round", "per-round/results.csv", "filtered"),
]
# Finding 31's search over all-mpnet-base-v2 (curve.sh encoder ... KEY=VALUE): gold at 50%, the seeds
# every setting has, judged on dev F1 (test must not choose)
SEARCH = [
    ("all-MiniLM-L6-v2, the trainer's settings", "more-seeds/results.csv"),
    ("all-mpnet-base-v2, the trainer's settings", "encoder-all-mpnet-base-v2/results.csv"),
    ("all-mpnet-base-v2, dropout 0.5 (0.3)", "encoder-all-mpnet-base-v2-dropout-0.5/results.csv"),
    ("all-mpnet-base-v2, dropout 0.1", "encoder-all-mpnet-base-v2-dropout-0.1/results.csv"),
    ("all-mpnet-base-v2, lr 5e-4 (1e-3)", "encoder-all-mpnet-base-v2-lr-0.0005/results.csv"),
    ("all-mpnet-base-v2, BiLSTM hidden 256 (128)", "encoder-all-mpnet-base-v2-hidden-256/results.csv"),
]
# The same gold cells, the filtered records' dev scored once an epoch (their first cells: finding 18)
EPOCH_CALIBRATED = [
    ("**gold, held, each epoch at its best NULL scale on dev**", "more-seeds/results.csv", "gold"),
    ("+ filtered records, two iterations, gold 7 times an epoch, the same", "epoch-calibrated/results.csv", "filtered"),
]
# Held on dev and test, NULL calibrated on dev100 once the epoch is chosen at scale 1 (null_scale: dev until 43724b6)
CALIBRATED = [
    ("**gold, held, NULL calibrated on dev**", "calibrated/results.csv", "gold"),
    ("+ filtered records, two iterations, gold 7 times an epoch, calibrated", "calibrated/results.csv", "filtered"),
]
KEPT_CALIBRATED = [
    ("**gold, held to the LUs, NULL calibrated on dev**", "kept-calibrated/results.csv", "gold"),
    ("+ filtered records, two iterations, the same", "kept-calibrated/results.csv", "filtered"),
]
LEXICON = [
    ("**gold, held to the LUs**", "lexicon/results.csv", "gold"),
    ("+ filtered records, two iterations, held to the LUs", "lexicon/results.csv", "filtered"),
]
# The same cells trained with the lexicon set, which also holds dev F1 and so chooses the epoch
HELD = [
    ("**gold, held to the LUs on dev and test**", "held/results.csv", "gold"),
    ("+ filtered records, two iterations, held on dev and test", "held/results.csv", "filtered"),
    ("+ the same, each gold sentence 7 times an epoch", "gold-repeat/results.csv", "filtered"),
    ("+ filtered records, three iterations, gold 7 times an epoch", "three-iterations/results.csv", "filtered"),
]
ROWS = [
    ("**gold, as many steps as with records**", "equal-steps/results.csv", "gold"),
    ("gold, the curve's epochs", "project-source/results.csv", "gold"),
    ("+ every record", "equal-steps/results.csv", "augmented"),
    ("+ filtered records", "equal-steps/results.csv", "filtered"),
    ("+ filtered records, trigger of one frame only", "diagnostics/strict-trigger/results.csv", "filtered"),
    ("+ every record, two iterations", "two-iterations/results.csv", "augmented"),
    ("+ filtered records, two iterations", "two-iterations/results.csv", "filtered"),
    ("+ lexsub", "equal-steps/results.csv", "lexsub"),
    ("+ copies of the sources (control)", "diagnostics/copies/results.csv", "augmented"),
    ("+ every record, own target only", "curve/results.csv", "augmented"),
    ("+ filtered records, own target only", "curve/results.csv", "filtered"),
    ("+ lexsub, own target only", "curve/results.csv", "lexsub"),
]


def read(name: str) -> list[dict[str, str]]:
    path = HERE / name
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def mean_sd(values: list[float]) -> str:
    return f"{100 * st.mean(values):.1f} ± {100 * st.stdev(values):.1f}" if len(values) > 1 else f"{100 * values[0]:.1f}"


def diff(comparison: Paired) -> str:
    return f"{100 * comparison.mean_diff:+.1f} ± {100 * comparison.std_diff:.1f}"


def main() -> None:
    for rows in (HEADLINE, EPOCH_CALIBRATED, CALIBRATED, KEPT_CALIBRATED, HELD, LEXICON, ROWS, SMALLER, ENCODER, ENCODER_DROPOUT):
        if not read(rows[0][1]):  # its baseline still training
            continue
        table(rows, FRACTIONS[:1] if rows is SMALLER else FRACTIONS)
        print()
    search(SEARCH)
    if read(PER_ROUND[-1][1]):
        print()
        table(PER_ROUND, FRACTIONS, same_seeds=True)


def search(rows: list[tuple[str, str]], fraction: str = "0.5") -> None:
    """Gold's dev and test F1 for each setting, over the seeds that every setting has."""
    cells = {
        name: {r["seed"]: r for r in read(name) if r["fraction"] == fraction and r["condition"] == "gold"} for _, name in rows
    }
    seeds = sorted(set.intersection(*(set(c) for c in cells.values() if c)), key=int)
    print(f"| gold at {float(fraction):.0%} of the pool, seeds {', '.join(seeds)} | dev F1 | test F1 | precision | unseen-LU recall |")
    print("|---|---|---|---|---|")
    for label, name in rows:
        if not cells[name]:  # still training
            continue
        chosen = [cells[name][seed] for seed in seeds]
        keys = ("dev_f1", "test_f1", "test_precision", "unseen_recall")
        dev, f1, precision, unseen = ([float(r[key]) for r in chosen] for key in keys)
        print(f"| {label} | {mean_sd(dev)} | {mean_sd(f1)} | {mean_sd(precision)} | {mean_sd(unseen)} |")


def table(rows: list[tuple[str, str, str]], fractions: tuple[tuple[str, str], ...], same_seeds: bool = False) -> None:
    """The rows' cells by fraction, paired with the first row's; with ``same_seeds``, only the
    seeds the last row has at that fraction (a new condition beside rows with more seeds)."""
    print(HEADER)
    label0, name0, condition0 = rows[0]
    baseline = {(r["fraction"], r["seed"]): r for r in read(name0) if r["condition"] == condition0}
    for fraction, shown in fractions:
        # Only with same_seeds: the seeds the last row has here (None: every seed counts).
        last = {r["seed"] for r in read(rows[-1][1]) if r["fraction"] == fraction and r["condition"] == rows[-1][2]} if same_seeds else None
        for label, name, condition in rows:
            cells = [r for r in read(name) if r["fraction"] == fraction and r["condition"] == condition
                     and (last is None or r["seed"] in last)]
            if not cells:
                continue
            f1 = [float(r["test_f1"]) for r in cells]
            precision = st.mean(float(r["test_precision"]) for r in cells)
            unseen = [float(r["unseen_recall"]) for r in cells]
            added = st.mean(int(r["added_examples"]) for r in cells)
            line = f"| {shown} | {label} | {len(cells)} | {added:.0f} | {mean_sd(f1)} |"
            if label == label0:
                print(f"{line}  |  | {100 * precision:.1f} | {mean_sd(unseen)} |  |")
                continue
            # summarize's paired test, with this table's baseline standing as gold
            gold = [{**r, "condition": "gold"} for (f, seed), r in baseline.items() if f == fraction and (last is None or seed in last)]
            by = {c.metric: c for c in paired(gold + [{**r, "condition": "records"} for r in cells])}
            f1, recall = by["test_f1"], by["unseen_recall"]
            p = float("nan") if f1.p is None else f1.p
            line += f" {diff(f1)} | {p:.2g} | {100 * precision:.1f} | {mean_sd(unseen)} | {diff(recall)} |"
            print(line + (f" (paired on {f1.runs})" if f1.runs < len(cells) else ""))


if __name__ == "__main__":
    main()
