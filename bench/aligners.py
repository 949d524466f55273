"""Aligner throughput: pairs aligned per second, each aligner against the first one named, in one run.

Every aligner aligns the same span-alignment items (``--gold``, e.g. MultiMWA dev from
``spanaug convert word-alignments``) in one ``align`` call, as ``spanaug eval align`` does.
Before timing, each aligner aligns the first 64 items once: that loads its encoder (the page
cache then holds the weights) and head, so the timed pass measures alignment, not loading.
The aligners take turns over ``--repeats`` rounds, and each reports its best round, because
this machine is shared and noisy. A ratio above 1 means faster than the baseline (the first
``--aligner``). Exact F1 is printed as a check that the timed aligner is the one meant.

    .venv/bin/python bench/aligners.py --gold mwa-dev.jsonl \\
        --aligner bert-span:head=HEAD-previous --aligner bert-span --aligner simalign
"""

from __future__ import annotations

import argparse
import json
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from timing import best_of

from spanaug_aligners.metrics import evaluate
from spanaug_aligners.pairs import read_pairs
from spanaug_core.plugins import create


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``name[:key=value,key=value]`` -> (name, options)."""
    name, _, rest = spec.partition(":")
    options = dict(part.split("=", 1) for part in rest.split(",") if part)
    return name, options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, required=True, help="span-alignment JSONL with gold spans")
    parser.add_argument("--aligner", action="append", required=True, help="name[:key=value,...]; the first is the baseline")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds per aligner (best one counts)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pairs = list(read_pairs(args.gold, require_gold=True))
    items = [p.item for p in pairs]
    aligners = []
    for spec in args.aligner:
        name, options = parse_spec(spec)
        aligners.append((spec, create("aligner", name, **options)))
    for _, aligner in aligners:
        aligner.align(items[:64])
    results = {}

    def align(spec: str, aligner: Any) -> Callable[[], object]:
        return lambda: results.__setitem__(spec, aligner.align(items))

    best = best_of(args.repeats, {spec: align(spec, aligner) for spec, aligner in aligners}, warm_up=False)
    f1 = {}
    for spec, aligned in results.items():
        scores = evaluate((r.span, p.gold_span, p.kind) for r, p in zip(aligned, pairs))
        f1[spec] = {kind: round(s["exact_f1"] * 100, 1) for kind, s in scores.items() if kind in ("all", "paraphrased")}
    baseline = best[aligners[0][0]]
    print(f"{len(items)} items, {args.threads} threads, {platform.processor() or platform.machine()}, best of {args.repeats}")
    for spec, _ in aligners:
        print(f"{spec:50s} {len(items) / best[spec]:8.1f} pairs/s  x{baseline / best[spec]:.2f}  exact F1 {f1[spec]}")
    print(json.dumps({spec: {"pairs_per_s": round(len(items) / best[spec], 1), "ratio": round(baseline / best[spec], 3)} for spec, _ in aligners}))


if __name__ == "__main__":
    main()
