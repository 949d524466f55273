"""int8 weights against float32 on a CPU: one ``spanaug run`` each, same input and settings, one process.

The two runs differ in ``decoder.quantize`` only (none, then int8: every linear layer of
the paraphrase model as int8 with a scale per output row, spanaug_shared.weights). A
warm-up run of each loads the model (and quantizes it) and the aligner first, so the
timed runs hold the weights in memory and the page cache. Reported: each run's wall and
decode seconds and rewritten spans per hour, the speed ratio, and how the records compare:
for each (source, target, iteration) that either run wrote, whether both wrote one and
whether its sentence and new span are the same. ``--keep DIR`` keeps both output folders,
to judge the records that differ (``spanaug judge export``).

    .venv/bin/python bench/int8.py --model qwen2.5-coder-1.5b-instruct --input fn-pool.jsonl --limit 6 \\
        --iterations 2 --set lexicon.name=framenet --set lexicon.release=$FN --keep int8-runs
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from pipeline import add_run_arguments, run_once  # bench/pipeline.py

from spanaug_core.types import Augmented
from spanaug_shared.records import read_records, rewritten_span


def records(folder: Path) -> dict[tuple[str, int | None, int], Augmented]:
    """A run's accepted records by (source id, target, iteration)."""
    return {(r.source_id, r.target, r.iteration): r for r in read_records(folder / "augmented.jsonl")}


def compare(a: Path, b: Path) -> dict[str, int]:
    """How the records of two runs of the same input line up."""
    left, right = records(a), records(b)
    both = left.keys() & right.keys()
    same_text = [k for k in both if left[k].text == right[k].text]
    return {
        "float32_records": len(left),
        "int8_records": len(right),
        "in_both": len(both),
        "same_sentence": len(same_text),
        "same_sentence_and_span": sum(rewritten_span(left[k], ("target",)) == rewritten_span(right[k], ("target",)) for k in same_text),
        "float32_only": len(left.keys() - right.keys()),
        "int8_only": len(right.keys() - left.keys()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--keep", type=Path, default=None, help="keep the output folders here")
    args = parser.parse_args()
    print(f"# {platform.machine()} {platform.processor() or ''}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"# model {args.model}, beam {args.beam}, batch {args.batch}, iterations {args.iterations}, top-m {args.top_m}, limit {args.limit}")
    with tempfile.TemporaryDirectory(prefix="spanaug-bench-") as tmp:
        root = args.keep or Path(tmp)
        warm = argparse.Namespace(**{**vars(args), "limit": 1, "iterations": 1})
        results: dict[str, dict[str, Any]] = {}
        for name in ("none", "int8"):
            t0 = time.perf_counter()
            run_once(root / f"warm-{name}", warm, quantize=name)  # loads (and quantizes) the weights
            print(f"warm-up {name}: {time.perf_counter() - t0:.1f} s", flush=True)
        for name in ("none", "int8"):
            results[name] = run_once(root / name, args, quantize=name)
            print(name, json.dumps(results[name]), flush=True)
        agreement = compare(root / "none", root / "int8")
    plain, int8 = results["none"], results["int8"]
    print(
        json.dumps(
            {
                "model": args.model,
                "speedup": round(plain["wall_s"] / int8["wall_s"], 2),
                "decode_speedup": round(plain["decode_s"] / int8["decode_s"], 2),
                "rewritten_per_h_float32": plain["rewritten_per_h"],
                "rewritten_per_h_int8": int8["rewritten_per_h"],
                **agreement,
            }
        )
    )


if __name__ == "__main__":
    main()
