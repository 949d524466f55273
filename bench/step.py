"""The cost of one VDBA search step beside the cost of the model's forward pass in it.

A search step is the model's forward pass plus our bookkeeping: log-softmax, banning
avoided tokens, choosing candidates, allocating the beam, advancing the tries, reordering
the KV cache. On a GPU the forward of a 1.5B model over a few hundred rows takes a few
milliseconds, so whatever the bookkeeping costs shows in full; on a CPU it hides behind
a slow forward. This benchmark makes that cost visible on either device: the model is
Qwen2.5-1.5B's shapes where they matter to the bookkeeping (its tokenizer, 151,936-entry
vocabulary and tied head) with thin random layers (``--layers``, ``--hidden``), or the
whole architecture with ``--full`` (random weights: the GPU figure of a real step).

Every sentence (the 20 of ``bench/decoder.py``, repeated) avoids ten phrases (the avoided
word's forms, then other sentences' words) and includes one; all start together and
decode ``--steps`` steps (random weights rarely end a hypothesis; the search stops no
sentence early, so every step has the full batch). Forward hooks time the model's own
forward passes (synchronised on CUDA); the rest of the step is the bookkeeping.

``--baseline REV`` also runs the search code of git revision REV (``vdba.py``,
``tries.py``, ``adapters.py`` and, where REV has it, ``prefix_attention.py``, taken from
git into a temporary package; or from a folder that ``--export`` filled, where there is
no git history) on the same model and requests, alternating with the working tree's,
best of ``--rounds`` each, and reports the size of each code's KV cache buffers.
``--requests N`` then decodes N requests through continuous batching, ``--batch`` in
flight, with each code: requests an hour, prompts and joins included.

    .venv/bin/python bench/step.py --baseline c0ab539           # CPU proxy, thin layers
    OMP_NUM_THREADS=2 .venv/bin/python bench/step.py --full --quantize int8 --sentences 20 --baseline bbbdd18  # as CPU runs decode
    python bench/step.py --device cuda --full --baseline DIR --requests 640 --batch 160  # on a GPU (bench/gpu.sh)
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from decoder import SENTENCES  # noqa: E402

from spanaug_core.types import Constraints, DecodeRequest  # noqa: E402

QWEN_1_5B = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2}
SEARCH_MODULES = ("prefix_attention", "tries", "adapters", "vdba")
# Newer than some baselines: a revision without it is timed without it.
OPTIONAL_MODULES = {"prefix_attention"}


def requests(n: int, avoid: int) -> list[DecodeRequest]:
    """``n`` requests: each sentence includes its include word and avoids ``avoid`` phrases."""
    from lemminflect import getAllInflections, getAllLemmas

    out = []
    for i in range(n):
        text, include, word = SENTENCES[i % len(SENTENCES)]
        lemma = next(iter(getAllLemmas(word).get("VERB", (word,))))
        forms = dict.fromkeys([word, lemma, *(f for fs in getAllInflections(lemma).values() for f in fs)])
        phrases = [*forms, word.capitalize()]
        for j in range(1, len(SENTENCES)):
            if len(phrases) >= avoid:
                break
            phrases.append(SENTENCES[(i + j) % len(SENTENCES)][2])
        out.append(DecodeRequest(text=text, constraints=Constraints(avoid=tuple(phrases[:avoid]), include=(include,))))
    return out


def search_code(rev: str | None) -> dict[str, ModuleType]:
    """The search modules of the working tree (``rev`` None), of git revision ``rev``, or of
    a folder ``rev`` holding them (a machine without the repository's history: ``--export``)."""
    if rev is None:
        return {name: importlib.import_module(f"spanaug_decoders.{name}") for name in SEARCH_MODULES}
    package = "spanaug_decoders_at_" + "".join(c if c.isalnum() else "_" for c in Path(rev).name)
    folder = Path(tempfile.mkdtemp(prefix="spanaug-bench-")) / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    present = {name: text for name in SEARCH_MODULES if (text := module_text(rev, name)) is not None}
    if missing := set(SEARCH_MODULES) - OPTIONAL_MODULES - present.keys():
        raise SystemExit(f"{rev}: no search code ({', '.join(sorted(missing))}.py not found)")
    for name, text in present.items():
        # Both import forms: "from spanaug_decoders.x import y" and "from spanaug_decoders import x".
        text = text.replace("spanaug_decoders.", f"{package}.").replace("from spanaug_decoders import", f"from {package} import")
        (folder / f"{name}.py").write_text(text)
    sys.path.insert(0, str(folder.parent))
    return {name: importlib.import_module(f"{package}.{name}") for name in present}


def module_text(rev: str, name: str) -> str | None:
    """The source of search module ``name`` at git revision ``rev``, or in folder ``rev`` (None: it has none)."""
    if Path(rev).is_dir():
        path = Path(rev) / f"{name}.py"
        return path.read_text() if path.exists() else None
    shown = subprocess.run(["git", "show", f"{rev}:plugins/decoders/{name}.py"], cwd=ROOT, capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def load_tokenizer(name_or_path: str) -> Any:
    """A tokenizer from a folder, or a preset's (read from its GGUF file without the weights)."""
    from transformers import AutoTokenizer

    from spanaug_shared.models import model_path

    path = Path(name_or_path) if Path(name_or_path).exists() else model_path(name_or_path)
    if path.suffix == ".gguf":
        return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    return AutoTokenizer.from_pretrained(path)


def build_model(args: argparse.Namespace, vocab: int) -> Any:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    shape = QWEN_1_5B if args.full else {
        "hidden_size": args.hidden,
        "intermediate_size": 2 * args.hidden,
        "num_hidden_layers": args.layers,
        "num_attention_heads": max(1, args.hidden // 64),
        "num_key_value_heads": max(1, args.hidden // 64),
    }
    config = Qwen2Config(vocab_size=vocab, tie_word_embeddings=True, max_position_embeddings=4096, **shape)
    torch.manual_seed(0)
    dtype = {"auto": torch.float32 if args.device == "cpu" else torch.bfloat16, "float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype]
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # built in its dtype: a float32 copy of 1.5B weights first would double the memory
    try:
        with torch.device(args.device):
            model = Qwen2ForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    if args.quantize == "int8":
        from spanaug_shared.weights import quantize_int8

        quantize_int8(model)
    return model.eval()


class ForwardClock:
    """Seconds spent inside the model's forward passes (forward hooks, synchronised on CUDA)."""

    def __init__(self, model: Any, device: torch.device) -> None:
        self.seconds, self.calls, self._t0 = 0.0, 0, 0.0
        self.cuda = device.type == "cuda"
        model.register_forward_pre_hook(self._start)
        model.register_forward_hook(self._stop)

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def _start(self, *_: Any) -> None:
        self._sync()
        self._t0 = time.perf_counter()

    def _stop(self, *_: Any) -> None:
        self._sync()
        self.seconds += time.perf_counter() - self._t0
        self.calls += 1


def run(code: dict[str, ModuleType], adapter: Any, clock: ForwardClock, reqs: list[DecodeRequest], args: argparse.Namespace) -> dict[str, float]:
    """Decode ``args.steps`` steps of all requests together; seconds of the steps and of the forwards in them."""
    tries, vdba = code["tries"], code["vdba"]
    options = vdba.SearchOptions(beam_size=args.beam, prune=None, sample_top_k=None, length_penalty=1.0, seed=0)
    search = vdba.BeamSearch(adapter.start(True), adapter.end_ids, options)
    for key, request in enumerate(reqs):
        include = [adapter.encode_phrase(p) for p in request.constraints.include]
        avoid = [v for p in request.constraints.avoid for v in adapter.encode_phrase(p)]
        search.add(key, request, tries.PositiveTrie.from_alternatives(include), tries.NegativeTrie(avoid), args.steps)
    search.step()  # the prompts: prefill, not a search step
    clock.seconds = 0.0
    sync = torch.cuda.synchronize if adapter.device.type == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    steps = 0
    while len(search) and steps < args.steps - 1:
        search.step()
        steps += 1
    sync()
    total = time.perf_counter() - t0
    return {"steps": steps, "step_s": total / steps, "forward_s": clock.seconds / steps, "rows": len(reqs) * args.beam, "cache_mb": cache_mb(search.session)}


def cache_mb(session: Any) -> float:
    """Megabytes of a chat session's KV cache buffers (both of them: the reorder's double buffering)."""
    return sum(t.numel() * t.element_size() for buffer in session.cache.buffers for t in buffer) / 1e6


def throughput(code: dict[str, ModuleType], adapter: Any, reqs: list[DecodeRequest], args: argparse.Namespace) -> dict[str, float]:
    """``args.requests`` requests through continuous batching, ``args.batch`` in flight, each
    decoding ``args.steps`` tokens (random weights rarely end earlier): requests an hour."""
    tries, vdba = code["tries"], code["vdba"]
    options = vdba.SearchOptions(beam_size=args.beam, prune=None, sample_top_k=None, length_penalty=1.0, seed=0)
    search = vdba.BeamSearch(adapter.start(True), adapter.end_ids, options)
    queue = [reqs[i % len(reqs)] for i in range(args.requests)]
    sync = torch.cuda.synchronize if adapter.device.type == "cuda" else (lambda: None)
    done = steps = 0
    sync()
    t0 = time.perf_counter()
    while done < args.requests:
        while queue and len(search) < args.batch:
            request = queue.pop()
            include = [adapter.encode_phrase(p) for p in request.constraints.include]
            avoid = [v for p in request.constraints.avoid for v in adapter.encode_phrase(p)]
            search.add(done + len(queue), request, tries.PositiveTrie.from_alternatives(include), tries.NegativeTrie(avoid), args.steps)
        done += len(search.step())
        steps += 1
    sync()
    seconds = time.perf_counter() - t0
    return {"requests": args.requests, "seconds": seconds, "steps": steps, "requests_per_h": args.requests / seconds * 3600}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16"])
    parser.add_argument("--full", action="store_true", help="Qwen2.5-1.5B's whole architecture (random weights)")
    parser.add_argument("--quantize", default="none", choices=["none", "int8"], help="int8: linear layers as the decoder's quantize=int8 makes them (CPU)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--sentences", type=int, default=80)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--avoid", type=int, default=10)
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tokenizer", default="qwen2.5-coder-1.5b-instruct", help="a preset or a folder with a tokenizer")
    parser.add_argument("--baseline", default=None, help="git revision whose search code to time beside the working tree's")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument("--requests", type=int, default=0, help="also decode this many requests, --batch in flight (throughput)")
    parser.add_argument("--batch", type=int, default=80, help="sentences in flight for --requests")
    parser.add_argument("--export", default=None, help="write the --baseline revision's search modules to this folder and stop")
    args = parser.parse_args()
    if args.export:
        Path(args.export).mkdir(parents=True, exist_ok=True)
        for name in SEARCH_MODULES:
            if (text := module_text(args.baseline, name)) is not None:
                (Path(args.export) / f"{name}.py").write_text(text)
        return

    tokenizer = load_tokenizer(args.tokenizer)
    model = build_model(args, len(tokenizer))
    clock = ForwardClock(model, torch.device(args.device))
    reqs = requests(args.sentences, args.avoid)
    codes = {"new": search_code(None)}
    if args.baseline:
        codes = {"old": search_code(args.baseline), **codes}
    adapters = {name: code["adapters"].ChatAdapter(model, tokenizer, [tokenizer.eos_token_id], code["adapters"].DEFAULT_SYSTEM,
                code["adapters"].DEFAULT_PROMPT, code["adapters"].FEW_SHOT, code["adapters"].DEFAULT_AVOID_HINT) for name, code in codes.items()}
    best: dict[str, dict[str, float]] = {}
    for name in codes:  # warm-up: allocator, kernels, the prefix caches
        run(codes[name], adapters[name], clock, reqs[:8], argparse.Namespace(**{**vars(args), "steps": 4}))
    for _ in range(args.rounds):
        for name in codes:
            got = run(codes[name], adapters[name], clock, reqs, args)
            if name not in best or got["step_s"] < best[name]["step_s"]:
                best[name] = got
    where = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({platform.machine()}, {torch.get_num_threads()} threads)"
    shape = ("Qwen2.5-1.5B (random weights)" if args.full else f"{args.layers} layers of {args.hidden}") + (", int8" if args.quantize == "int8" else "")
    print(f"{where}; {shape}, vocabulary {len(tokenizer)}; {args.sentences} sentences x beam {args.beam} = {args.sentences * args.beam} rows, "
          f"{args.avoid} avoid + 1 include phrases each; best of {args.rounds}, {args.steps - 1} steps")
    print(f"| code | step ms | forward ms | rest ms | rest us/row | cache MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, got in best.items():
        rest = got["step_s"] - got["forward_s"]
        got["rest_s"] = rest
        print(f"| {name} | {got['step_s'] * 1e3:.1f} | {got['forward_s'] * 1e3:.1f} | {rest * 1e3:.1f} | {rest / got['rows'] * 1e6:.1f} | {got['cache_mb']:,.0f} |")
    summary: dict[str, Any] = {"device": where, "shape": shape, **{name: got for name, got in best.items()}}
    if "old" in best:
        summary["rest_ratio"] = best["new"]["rest_s"] / best["old"]["rest_s"]
        summary["step_speedup"] = best["old"]["step_s"] / best["new"]["step_s"]
        print(f"rest new/old: {summary['rest_ratio']:.3f}; step speedup old/new: {summary['step_speedup']:.2f}x")
    if args.requests:
        print(f"{args.requests} requests, {args.batch} in flight, {args.steps} tokens each:")
        for name in codes:
            summary[f"throughput_{name}"] = got = throughput(codes[name], adapters[name], reqs, args)
            print(f"  {name}: {got['seconds']:.1f} s, {got['steps']} steps, {got['requests_per_h']:,.0f} requests/h")
        if "old" in codes:
            summary["throughput_speedup"] = summary["throughput_new"]["requests_per_h"] / summary["throughput_old"]["requests_per_h"]
            print(f"  new/old: {summary['throughput_speedup']:.2f}x")
    print(json.dumps(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
