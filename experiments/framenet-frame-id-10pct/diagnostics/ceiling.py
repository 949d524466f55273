"""How far can new-trigger recall alone lift Frame ID F1? An upper bound from a curve's results.csv.

A cell with records finds more of the test targets whose lexical unit its gold data never
shows (unseen-LU recall). Suppose those extra finds cost nothing: gold's predictions plus
exactly those true positives, no false positive added. This prints, per fraction and
condition, the F1 gold would then reach, and the unseen-LU recall gain that 2 sd of gold's
F1 (over the seeds) would take under the same assumption: the issue's goal, reached by
new triggers alone.

    python ceiling.py equal-steps/results.csv --targets 4458
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections import defaultdict


def f1(tp: float, predicted: float, gold: float) -> float:
    return 2 * tp / (predicted + gold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a learning curve's results.csv with unseen_recall")
    parser.add_argument("--targets", type=int, required=True, help="test targets (fn-test.jsonl: 4,458)")
    args = parser.parse_args()
    with open(args.results, newline="") as fh:
        rows = list(csv.DictReader(fh))
    cells = defaultdict(dict)  # (condition, fraction) -> seed -> row
    for row in rows:
        cells[row["condition"], row["fraction"]][row["seed"]] = row
    n = args.targets
    for fraction in sorted({f for _, f in cells}, key=float):
        gold = cells["gold", fraction]
        tp = {s: float(r["test_recall"]) * n for s, r in gold.items()}
        predicted = {s: tp[s] / float(r["test_precision"]) for s, r in gold.items()}
        gold_f1 = [float(r["test_f1"]) for r in gold.values()]
        goal = statistics.mean(gold_f1) + 2 * statistics.stdev(gold_f1)
        # extra true positives x with none wrong: 2(tp + x) / (predicted + x + n) = goal
        needed = [(goal * (predicted[s] + n) - 2 * tp[s]) / (2 - goal) / float(r["unseen_targets"]) for s, r in gold.items()]
        print(f"fraction {fraction}: gold F1 {100 * statistics.mean(gold_f1):.1f} ± {100 * statistics.stdev(gold_f1):.1f}, "
              f"goal {100 * goal:.1f}; unseen-LU recall gain it needs at no precision cost: +{100 * statistics.mean(needed):.1f}")
        for (condition, frac), by_seed in sorted(cells.items()):
            if frac != fraction or condition == "gold":
                continue
            paired = [s for s in by_seed if s in gold]
            gains = [float(by_seed[s]["unseen_recall"]) - float(gold[s]["unseen_recall"]) for s in paired]
            bound = [f1(tp[s] + g * float(gold[s]["unseen_targets"]), predicted[s] + g * float(gold[s]["unseen_targets"]), n) for s, g in zip(paired, gains)]
            real = [float(by_seed[s]["test_f1"]) for s in paired]
            print(f"  {condition:10} seeds {len(paired)}: unseen gain {100 * statistics.mean(gains):+.1f}, "
                  f"F1 if it cost nothing {100 * statistics.mean(bound):.1f} (gold {100 * statistics.mean(float(gold[s]['test_f1']) for s in paired):.1f}), "
                  f"F1 measured {100 * statistics.mean(real):.1f}")


if __name__ == "__main__":
    main()
