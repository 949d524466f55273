"""End-to-end ``spanaug run`` throughput: the streaming decoder against fixed batches, one process.

Both paths run the same ``spanaug_core.run.execute`` on the FrameNet sample shipped in
the framenet plugin (or ``--input``), into fresh output folders, with the same model,
aligner and settings. They differ in two decoder switches only:

* new: ``prefix_cache=true`` (the chat prompt's constant start is encoded once per model)
  and ``continuous=true`` (a finished sentence's rows go to the next waiting request);
* old: both false — every prompt is encoded whole and a batch is refilled only when all
  of its sentences have finished;
* prefix: the prefix cache alone (fixed batches), to tell the two apart.

Before timing, a warm-up run loads the model and the aligner (the page cache then holds
their weights; the decoder's weights stay loaded in the process and both paths share them).
Reported per path: wall seconds, rewritten spans per hour (paraphrases made and aligned,
accepted or filtered) and accepted records per hour, the share of search time spent in
steps with the batch full, and prompt tokens run through the model. The last line is JSON
with ``speedup`` (old time / new time) and ``same_records`` (both folders' augmented.jsonl
identical).

    .venv/bin/python bench/pipeline.py --model smollm2-135m-instruct --iterations 3
    .venv/bin/python bench/pipeline.py --model qwen2.5-coder-1.5b-instruct --iterations 2
    python bench/pipeline.py --model qwen2.5-coder-1.5b-instruct --iterations 2 --batch 10 --device cuda  # on a GPU
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from spanaug_core.config import load_run_config
from spanaug_core.plugins import default_registry
from spanaug_core.protocols import Part, RunPlan
from spanaug_core.run import execute


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the benchmarked ``spanaug run`` (shared with bench/scale.py)."""
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--input", default=None, help="a JSONL dataset (default: the FrameNet sample)")
    parser.add_argument("--limit", type=int, default=None, help="first N examples only")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--top-m", type=int, default=4)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--aligner", default="bert-span")
    parser.add_argument(
        "--device", default="cpu", help="torch device of the decoder and the aligner (cuda: both on the GPU)"
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="any other run setting, as spanaug run --set")


def run_flags(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """The run's settings as dotted flags (``load_run_config``) from ``add_run_arguments``' options."""
    return {
        "dataset.name": "framenet" if args.input is None else "jsonl",
        "input": args.input,
        "limit": args.limit,
        "decoder.name": "vdba",
        "decoder.model": args.model,
        "decoder.beam_size": args.beam,
        "decoder.batch_size": args.batch,
        "decoder.dtype": args.dtype,
        "aligner.name": args.aligner,
        **({"aligner.device": args.device} if "device" in default_registry().get("aligner", args.aligner).Config.model_fields else {}),
        "decoder.device": args.device,
        "iterations": args.iterations,
        "top_m": args.top_m,
        "output": str(out),
    }


def run_once(out: Path, args: argparse.Namespace, wrap: Callable[[Any], Any] | None = None, **decoder: Any) -> dict[str, Any]:
    """One ``spanaug run`` into ``out``; its figures (and the decoder's occupancy counters).

    ``wrap``, if given, receives the decoder the run builds and returns the one it uses.
    """
    flags = {**run_flags(args, out), **{f"decoder.{k}": v for k, v in decoder.items()}}
    config = load_run_config(None, flags, list(args.set))
    registry = default_registry()
    seen: dict[str, Any] = {}
    original = registry.plan

    def plan(run_config: Any) -> RunPlan:  # keep the decoder the run builds, to read its counters
        made = original(run_config)
        part = made.one("decoder")

        def build(options: Any) -> Any:
            component = part.cls(options)
            seen["decoder"] = wrap(component) if wrap is not None else component
            return seen["decoder"]

        return replace(made, parts={**made.parts, "decoder": (Part(build, part.config),)})  # type: ignore[arg-type]

    # The default registry is one per process: put its plan back, or the next run would
    # build its decoder through this run's hook too.
    registry.plan = plan  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        summary = execute(config, registry=registry)
        wall = time.perf_counter() - t0
    finally:
        del registry.plan
    counts = summary.counts
    occupancy = seen["decoder"].occupancy
    rewritten = counts["accepted"] + counts["rejected"]
    return {
        "wall_s": round(wall, 1),
        "decode_s": counts["decode_s"],
        "decode_calls": counts["decode_calls"],
        "reused_nbest": counts.get("reused_nbest", 0),
        "align_s": counts["align_s"],
        "spans": counts["jobs"],
        "rewritten": rewritten,
        "accepted": counts["accepted"],
        "rewritten_per_h": round(rewritten / wall * 3600),
        "spans_per_h": round(counts["jobs"] / wall * 3600),
        "records_per_h": round(counts["accepted"] / wall * 3600),
        "full_batch_share": round(occupancy["full_step_s"] / max(counts["decode_s"], 1e-9), 3),
        "steps": int(occupancy["steps"]),
        "full_steps": int(occupancy["full_steps"]),
        **gpu_peak(),
    }


def gpu_peak() -> dict[str, float]:
    """The GPU memory this process has held at most since the last call (GiB), when it used one."""
    if not torch.cuda.is_initialized():
        return {}
    peak = torch.cuda.max_memory_allocated() / 2**30
    torch.cuda.reset_peak_memory_stats()
    return {"gpu_peak_gib": round(peak, 2)}


def same_records(a: Path, b: Path, tolerance: float = 1e-4) -> bool:
    """Whether two augmented.jsonl files hold the same records (scores within ``tolerance``)."""
    left = [json.loads(line) for line in a.read_text().splitlines()]
    right = [json.loads(line) for line in b.read_text().splitlines()]
    if len(left) != len(right):
        return False
    for x, y in zip(left, right, strict=True):
        sx, sy = x.pop("scores"), y.pop("scores")
        if x != y or sx.keys() != sy.keys() or any(abs(sx[k] - sy[k]) > tolerance for k in sx):
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--keep", type=Path, default=None, help="keep the output folders here")
    parser.add_argument("--today", action="store_true", help="also run the old path in bfloat16 (the former default)")
    args = parser.parse_args()

    print(f"# {platform.machine()} {platform.processor() or ''}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    if args.device.startswith("cuda"):
        print(f"# {torch.cuda.get_device_name()}, decoder and aligner on {args.device}")
    print(f"# model {args.model}, dtype {args.dtype}, beam {args.beam}, batch {args.batch}, iterations {args.iterations}, top-m {args.top_m}")
    with tempfile.TemporaryDirectory(prefix="spanaug-bench-") as tmp:
        root = args.keep or Path(tmp)
        warm = argparse.Namespace(**{**vars(args), "limit": 1, "iterations": 1})
        run_once(root / "warm", warm)
        results = {}
        old_switches = {"prefix_cache": False, "continuous": False}
        paths = [("old", args, old_switches), ("prefix", args, {"continuous": False}), ("new", args, {})]
        if args.today:
            paths.append(("today", argparse.Namespace(**{**vars(args), "dtype": "bfloat16"}), old_switches))
        for name, path_args, switches in paths:
            results[name] = run_once(root / name, path_args, **switches)
            print(name, json.dumps(results[name]), flush=True)
        old_file, new_file = root / "old" / "augmented.jsonl", root / "new" / "augmented.jsonl"
        same = same_records(old_file, new_file)
        identical = old_file.read_bytes() == new_file.read_bytes()
    old, new = results["old"], results["new"]
    extra = {}
    if args.today:
        extra = {"speedup_vs_today": round(results["today"]["wall_s"] / new["wall_s"], 2)}
    print(
        json.dumps(
            {
                "model": args.model,
                "speedup": round(old["wall_s"] / new["wall_s"], 2),
                "decode_speedup": round(old["decode_s"] / new["decode_s"], 2),
                "speedup_prefix_only": round(old["wall_s"] / results["prefix"]["wall_s"], 2),
                "same_records": same,
                "byte_identical": identical,
                "records": new["accepted"],
                "full_batch_share_new": new["full_batch_share"],
                "full_batch_share_old": old["full_batch_share"],
                "rewritten_per_h_new": new["rewritten_per_h"],
                "rewritten_per_h_old": old["rewritten_per_h"],
                **extra,
            }
        )
    )


if __name__ == "__main__":
    main()
