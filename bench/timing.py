"""Timing for the benchmarks: runs take turns, round after round, and each keeps its best round.

This machine is shared and noisy, so a ratio comes from runs timed side by side in one
process, not from one run each: a slow moment then hurts one round of every run, and the
best round of each is compared.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping


def best_of(rounds: int, runs: Mapping[str, Callable[[], object]], warm_up: bool = True) -> dict[str, float]:
    """Seconds of each run, the best of ``rounds`` taken in turns; first one untimed call of
    each when ``warm_up`` (it loads weights into memory and the page cache)."""
    if warm_up:
        for run in runs.values():
            run()
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def ab_parser(description: str) -> argparse.ArgumentParser:
    """The options of a benchmark that decodes bench/decoder.py's sentences two ways in one process."""
    import torch

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--nbest", type=int, default=4)
    parser.add_argument("--sentences", type=int, default=None, help="how many of bench/decoder.py's sentences (default: all)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return parser
