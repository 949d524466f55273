"""Language-model weights, loaded once per process and shared by whoever asks for them.

The paraphrase decoder and a filter that asks the same model a question (``sense``) both
need a 1.5B-parameter model in memory; loading it twice would double a run's memory and
its start-up. So weights are kept per (model, dtype, device, quantization), and ``loaded``
finds a copy already in memory in any of them. A model is named as the decoder's
``--model`` takes it: a preset, a local folder or GGUF file (a converted safetensors copy
is cached after the first GGUF load), or a hub id when the network allows.

On a CPU, decoding a 1.5B model is bound by reading its weights from memory: each step of
a batch reads every linear layer's float32 matrix once. ``quantize="int8"`` stores those
matrices as int8 with a scale per output row and multiplies them with activations
quantized on the fly (PyTorch's dynamic quantization, fbgemm kernels): a quarter of the
bytes to read, so more steps per second, for rounding that changes some outputs
(docs/results/bench-int8.md).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from spanaug_core.errors import ConfigError, SpanaugError
from spanaug_core.files import ensure_folder, writing
from spanaug_core.protocols import ProgressCallback, ProgressEvent
from spanaug_shared.models import (
    RECORD,
    cache_dir,
    changed_files,
    model_path,
    presets,
    quiet_loading,
    record_files,
)

if TYPE_CHECKING:
    import torch

_WEIGHTS: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}

Quantize = Literal["none", "int8"]
QUANTIZE_HELP = (
    "none, or int8: linear layers' weights as int8 with a scale per row, activations quantized per step "
    "(a CPU and float32 only; faster decoding there, docs/results/bench-int8.md)"
)


def resolve_dtype(dtype: str, device: str) -> str:
    """``auto``: float32 on a CPU, bfloat16 on an accelerator.

    CPUs without bfloat16 units (most, and this project's CI) run bfloat16 matmuls several
    times slower than float32, and bfloat16 rounding makes a sentence's candidates depend on
    the batch it shared (docs/results/bench-pipeline.md, docs/results/decoder-checks.md).
    """
    if dtype != "auto":
        return dtype
    return "float32" if device == "cpu" else "bfloat16"


def check_quantize(quantize: str, dtype: str, device: str) -> None:
    """Refuse a quantization the device and dtype cannot run, before anything is loaded."""
    if quantize == "none":
        return
    if quantize != "int8":
        raise ConfigError(f"quantize must be none or int8 (got {quantize!r})")
    if device != "cpu" or resolve_dtype(dtype, device) != "float32":
        raise ConfigError(
            f"quantize=int8 runs on a CPU in float32 (got device={device!r}, dtype={dtype!r}); "
            "on a GPU use dtype=bfloat16 and quantize=none"
        )


def load_weights(
    name_or_path: str, dtype: str = "auto", device: str = "cpu", progress: ProgressCallback | None = None, quantize: Quantize = "none"
) -> tuple[Any, Any]:
    """A model and its tokenizer, on ``device`` in ``dtype`` (``auto``: see ``resolve_dtype``),
    with ``quantize`` applied, loaded once."""
    check_quantize(quantize, dtype, device)
    dtype = resolve_dtype(dtype, device)
    key = (name_or_path, dtype, device, quantize)
    if key not in _WEIGHTS:
        model, tokenizer = _load(name_or_path, dtype, device, progress)
        _WEIGHTS[key] = (quantize_int8(model) if quantize == "int8" else model), tokenizer
    return _WEIGHTS[key]


def loaded(name_or_path: str) -> tuple[Any, Any] | None:
    """The weights of a model some component of this process already loaded (any dtype, device
    or quantization), if any."""
    return next((weights for (name, *_), weights in _WEIGHTS.items() if name == name_or_path), None)


def quantize_int8(model: Any) -> Any:
    """``model`` with its linear layers dynamically quantized to int8, a scale per output row (in place)."""
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():
        # PyTorch points users of torch.ao.quantization to torchao, whose CPU int8 paths are
        # not the fbgemm kernels this speed comes from; the API still works in the pinned torch.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8, inplace=True)


def _load(name_or_path: str, dtype: str, device: str, progress: ProgressCallback | None) -> tuple[Any, Any]:
    """A model and its tokenizer, on ``device`` in ``dtype``."""
    import torch
    import transformers

    torch_dtype = {"bfloat16": torch.bfloat16, "float32": torch.float32, "float16": torch.float16}.get(dtype)
    if torch_dtype is None:
        raise ConfigError(f"dtype must be auto, bfloat16, float16 or float32 (got {dtype!r})")
    source = _local_source(name_or_path, progress)
    if source.suffix == ".gguf":
        source = _converted(source, torch_dtype, progress)
    kwargs = {"dtype": torch_dtype}
    with quiet_loading():
        try:
            config = transformers.AutoConfig.from_pretrained(source)
            tokenizer = transformers.AutoTokenizer.from_pretrained(source)
            if config.is_encoder_decoder:
                model = transformers.AutoModelForSeq2SeqLM.from_pretrained(source, **kwargs)
            else:
                model = transformers.AutoModelForCausalLM.from_pretrained(source, **kwargs)
        except OSError as exc:
            raise SpanaugError(f"cannot load model '{name_or_path}' from {source}: {exc}") from exc
    model.to(device)
    return model, tokenizer


def _local_source(name_or_path: str, progress: ProgressCallback | None) -> Path | str:
    """A preset or existing path through the model cache; ``owner/name`` that is neither is a hub id."""
    looks_like_hub = name_or_path.count("/") == 1 and not Path(name_or_path).exists() and name_or_path not in presets()
    if looks_like_hub and not name_or_path.startswith((".", "/", "~")):
        return Path(name_or_path)  # transformers resolves it on the hub (needs network)
    return model_path(name_or_path, progress)



def _converted(gguf: Path, dtype: torch.dtype, progress: ProgressCallback | None) -> Path:
    """A safetensors copy of a GGUF model in the cache, converted on first use.

    Loading a GGUF dequantizes every tensor (a minute for 1.5B parameters); the copy
    reloads in well under a second with identical weights. The copy records its files'
    hashes; one that changed since is converted again.
    """
    import transformers

    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    target = cache_dir() / "converted" / f"{gguf.stem}-{str(dtype).removeprefix('torch.')}-{key}"
    if (target / "config.json").is_file():
        if not (target / RECORD).is_file():
            record_files(target)  # a copy made before copies were recorded
            return target
        changed = changed_files(target)
        if not changed:
            return target
        if progress is not None:
            progress(ProgressEvent("convert", 0, 1, f"{target / changed[0]} changed since it was written: converting again"))
        shutil.rmtree(target)
    if progress is not None:
        progress(ProgressEvent("convert", 0, 1, f"dequantizing {gguf.name} (first use only)"))
    with quiet_loading():
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=dtype)
        except Exception as exc:  # transformers raises many types for an unreadable GGUF
            raise SpanaugError(f"cannot load GGUF {gguf} (are the gguf and accelerate packages installed?): {exc}") from exc
    # save_pretrained refuses a model still marked as GGUF-quantized; the weights are plain now.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    ensure_folder(target.parent)
    # A full disk (a 1.5B model's copy takes gigabytes) names the copy, and the temporary goes.
    with writing(target), tempfile.TemporaryDirectory(prefix=f".{target.name}-", dir=target.parent) as tmp:
        staged = Path(tmp) / "model"
        model.save_pretrained(staged)
        tokenizer.save_pretrained(staged)
        record_files(staged)
        try:
            staged.rename(target)
        except OSError:
            if not (target / "config.json").is_file():  # not a concurrent conversion that won
                raise
    del model
    if progress is not None:
        progress(ProgressEvent("convert", 1, 1, f"cached as {target}"))
    return target
