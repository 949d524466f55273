"""Scale-out cost and gain: the same ``spanaug run`` on the local engine and on Ray with 1 and 2 workers.

All three runs use one thread per pipeline (``torch.set_num_threads(1)`` here, one CPU
per Ray worker), the same model, aligner and input (the FrameNet sample, or ``--input``),
into fresh folders, in this one process. A local Ray cluster of this machine
(``--cpus`` CPUs, 127.0.0.1 only) is started before timing, as a user's running cluster
would be; each Ray run still starts its workers, which load the models (from the page
cache: a warm-up local run loads everything first), and that start-up is reported apart.

Ray runs split the input into chunks of ``--chunk`` examples; ``ray-1-whole`` sends the
whole input as one chunk, which isolates the engine's own cost from the cost of chunk
ends (a worker's decoder batch drains at the end of each chunk).

Reported: wall seconds per run, the workers' start-up, rewritten spans per hour; the last
line is JSON with ``ray1_whole_over_local`` and ``ray1_over_local`` (Ray 1-worker wall /
local wall, one chunk and ``--chunk`` examples a chunk; the goal is ≤ 1.10),
``two_over_one`` (Ray 1-worker wall / 2-worker wall; the goal is ≥ 1.6) and
``same_records`` (all three augmented.jsonl hold the same records, scores within 1e-4).

    .venv/bin/python bench/scale.py --model smollm2-135m-instruct --iterations 2
    .venv/bin/python bench/scale.py --model smollm2-135m-instruct --iterations 1 --repeat 4
    python bench/scale.py --model qwen2.5-coder-1.5b-instruct --iterations 2 --device cuda --cpus 16  # workers share the GPU
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from pipeline import add_run_arguments, run_flags, same_records  # bench/pipeline.py

from spanaug_core.config import load_run_config
from spanaug_core.plugins import default_registry
from spanaug_core.run import execute


def run_once(out: Path, args: argparse.Namespace, engine: dict[str, Any]) -> dict[str, Any]:
    """One ``spanaug run`` into ``out`` on ``engine``; its wall time and figures."""
    flags = {**run_flags(args, out), **{f"engine.{k}": v for k, v in engine.items()}}
    config = load_run_config(None, flags, list(args.set))
    started: list[float] = []
    from spanaug_ray.engine import RayExecution

    original = RayExecution.start_workers

    def timed(self: RayExecution) -> None:  # the workers' start-up, reported apart
        t0 = time.perf_counter()
        original(self)
        started.append(time.perf_counter() - t0)

    RayExecution.start_workers = timed  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        summary = execute(config, registry=default_registry())
        wall = time.perf_counter() - t0
    finally:
        RayExecution.start_workers = original  # type: ignore[method-assign]
    counts = summary.counts
    rewritten = counts["accepted"] + counts["rejected"]
    return {
        "wall_s": round(wall, 1),
        "startup_s": round(started[0], 1) if started else 0.0,
        "spans": counts["jobs"],
        "rewritten": rewritten,
        "accepted": counts["accepted"],
        "rewritten_per_h": round(rewritten / wall * 3600),
    }


def ray_engine(args: argparse.Namespace, workers: int, chunk: int) -> dict[str, Any]:
    """The Ray engine's settings for ``workers`` workers; on a GPU they share this machine's one GPU."""
    engine: dict[str, Any] = {"name": "ray", "workers": workers, "chunk_size": chunk}
    if args.device.startswith("cuda"):
        engine["gpus_per_worker"] = 1 / workers
    return engine


def repeated(args: argparse.Namespace, path: Path) -> Path:
    """The run's input ``args.repeat`` times over, as jsonl, each copy's ids suffixed ``#k``."""
    dataset = "framenet" if args.input is None else "jsonl"
    examples = list(default_registry().create("dataset", dataset).read(Path(args.input) if args.input else None))
    with path.open("w", encoding="utf-8") as fh:
        for k in range(args.repeat):
            for example in examples:
                fh.write(example.model_copy(update={"id": f"{example.id}#{k}"}).model_dump_json() + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.add_argument("--chunk", type=int, default=16, help="engine.chunk_size of the Ray runs (16: the default)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument(
        "--repeat", type=int, default=1, help="the input K times over (ids suffixed #k): enough examples to keep every worker's batch full"
    )
    args = parser.parse_args()

    torch.set_num_threads(1)
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a cluster on 127.0.0.1 only
    import ray

    gpus = {"num_gpus": torch.cuda.device_count()} if args.device.startswith("cuda") else {}
    ray.init(num_cpus=args.cpus, **gpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    print(f"# {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores, torch {torch.__version__}, ray {ray.__version__}")
    print(f"# model {args.model}, beam {args.beam}, batch {args.batch}, iterations {args.iterations}, chunk {args.chunk}, 1 thread per pipeline")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.repeat > 1:
            args.input = str(repeated(args, root / "input.jsonl"))
        warm = argparse.Namespace(**{**vars(args), "limit": 1, "iterations": 1})
        run_once(root / "warm", warm, {})  # loads the models; the page cache then holds them
        results = {
            "local": run_once(root / "local", args, {}),
            # One chunk holding the whole input: the engine's own cost, without chunk ends.
            "ray-1-whole": run_once(root / "ray1w", args, ray_engine(args, 1, 1_000_000)),
            "ray-1": run_once(root / "ray1", args, ray_engine(args, 1, args.chunk)),
            "ray-2": run_once(root / "ray2", args, ray_engine(args, 2, args.chunk)),
        }
        for name, figures in results.items():
            print(f"{name:6} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
        same = all(same_records(root / "local" / "augmented.jsonl", root / d / "augmented.jsonl") for d in ("ray1w", "ray1", "ray2"))
    ray.shutdown()
    summary = {
        "ray1_whole_over_local": round(results["ray-1-whole"]["wall_s"] / results["local"]["wall_s"], 3),
        "ray1_over_local": round(results["ray-1"]["wall_s"] / results["local"]["wall_s"], 3),
        "two_over_one": round(results["ray-1"]["wall_s"] / results["ray-2"]["wall_s"], 3),
        "same_records": same,
        **{f"{name}_wall_s": figures["wall_s"] for name, figures in results.items()},
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
