"""What reusing a job's n-best list saves: a decoder that is asked a repeated request again against one whose list is reused.

A whole-sentence job (NER: entities kept, nothing rewritten) asks the decoder the same
request every round, since nothing is added to its avoid set, and takes the best
candidate it has not written yet. A repeatable decoder (``vdba`` searching, not
sampling) answers a repeated request with the same list, so the pipeline keeps the list
and decodes it once. Both paths run ``spanaug run`` (``bench/pipeline.py``'s
``run_once``) on the same input in one process after a warm-up run that loads the model
and the aligner: ``redecode`` hides the decoder's ``repeatable`` from the pipeline,
``reuse`` does not. The last line is JSON with the speedup and whether both wrote the
same records.

    .venv/bin/python bench/reuse.py --model qwen2.5-coder-1.5b-instruct --input ner.jsonl --iterations 5
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path
from typing import Any

import torch
from pipeline import add_run_arguments, run_once, same_records


class Redecoding:
    """The decoder it wraps, except that it does not tell the pipeline its answers repeat."""

    repeatable = False

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._decoder, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    args = parser.parse_args()

    print(f"# {platform.machine()} {platform.processor() or ''}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"# model {args.model}, beam {args.beam}, batch {args.batch}, iterations {args.iterations}, top-m {args.top_m}, input {args.input}")
    with tempfile.TemporaryDirectory(prefix="spanaug-bench-") as tmp:
        root = Path(tmp)
        run_once(root / "warm", argparse.Namespace(**{**vars(args), "limit": 1, "iterations": 1}))
        results = {}
        for name, wrap in (("redecode", Redecoding), ("reuse", None)):
            results[name] = run_once(root / name, args, wrap)
            print(name, json.dumps(results[name]), flush=True)
        same = same_records(root / "redecode" / "augmented.jsonl", root / "reuse" / "augmented.jsonl")
    old, new = results["redecode"], results["reuse"]
    print(json.dumps({
        "speedup": round(old["wall_s"] / new["wall_s"], 2),
        "decode_speedup": round(old["decode_s"] / new["decode_s"], 2),
        "reused_nbest": new["reused_nbest"],
        "same_records": same,
        "records": new["accepted"],
    }))


if __name__ == "__main__":
    main()
