"""Model adapters: one step-by-step scoring interface over Hugging Face models.

The beam search never touches a model directly. It opens a ``Session`` for a batch of
source sentences and then alternates ``logprobs()`` (next-token log-probabilities of every
live hypothesis) and ``advance(rows, tokens)`` (keep hypotheses ``rows``, in that order,
each extended by its token). ``rows`` may repeat or drop hypotheses, so one call both
reorders the KV cache with the beam and shrinks the batch when sentences finish.

Two adapters: ``Seq2SeqAdapter`` for encoder-decoder models (T5, BART, Marian, Pegasus:
the encoder runs once, the decoder reuses its self- and cross-attention cache) and
``ChatAdapter`` for decoder-only chat models prompted to paraphrase (left-padded prompts;
constraints and scores apply only to generated tokens). ``load`` builds either from a
preset, a local folder or GGUF file (a converted safetensors copy is cached after the
first GGUF load), or a hub id when the network allows.
"""

from __future__ import annotations

import hashlib
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from spanaug_core.errors import ConfigError, SpanaugError
from spanaug_core.models import PRESETS, cache_dir, model_path
from spanaug_core.protocols import ProgressCallback, ProgressEvent

if TYPE_CHECKING:
    import torch

DEFAULT_SYSTEM = (
    "You rewrite sentences. Answer with exactly one paraphrase of the user's sentence that keeps its meaning: "
    "the rewritten sentence alone, with no preamble, no quotes and no explanation."
)
DEFAULT_PROMPT = "Paraphrase this sentence: {text}"


class Session(Protocol):
    """Decoding state of a batch: the model's cache and the hypotheses it holds."""

    device: torch.device

    def logprobs(self) -> torch.Tensor:
        """FloatTensor [H, V]: next-token log-probabilities (float32) of the H live hypotheses."""

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        """Keep hypotheses ``rows`` (LongTensor [H']) and extend row i by ``tokens[i]`` (LongTensor [H'])."""


class Adapter(ABC):
    """A loaded model and tokenizer plus what decoding needs to know about them."""

    def __init__(self, model: Any, tokenizer: Any, end_ids: Sequence[int]) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.end_ids = sorted(set(end_ids))
        if not self.end_ids:
            raise ConfigError("the model has no end-of-sequence token; cannot tell where a paraphrase ends")
        # Some checkpoints pad the output layer beyond the tokenizer; those ids are never real tokens.
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @abstractmethod
    def start(self, texts: Sequence[str]) -> Session:
        """A session for the sentences ``texts`` (one hypothesis each)."""

    def encode_phrase(self, phrase: str) -> list[list[int]]:
        """Every token sequence this model may produce for ``phrase`` mid-sentence or at its start."""
        out: list[list[int]] = []
        for variant in (phrase, " " + phrase):
            ids = self.tokenizer(variant, add_special_tokens=False)["input_ids"]
            if ids and ids not in out:
                out.append(ids)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        """The paraphrase text of generated ids: special tokens dropped, cut at the first line break."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=True).split("\n", 1)[0].strip()


class Seq2SeqAdapter(Adapter):
    """An encoder-decoder model: the source sentence is the encoder input."""

    def start(self, texts: Sequence[str]) -> Session:
        return _Seq2SeqSession(self, texts)


class _Seq2SeqSession:
    def __init__(self, adapter: Seq2SeqAdapter, texts: Sequence[str]) -> None:
        import torch
        from transformers import DynamicCache, EncoderDecoderCache

        self.model, self.device = adapter.model, adapter.device
        enc = adapter.tokenizer(list(texts), return_tensors="pt", padding=True).to(adapter.device)
        with torch.inference_mode():
            self.encoder_out = self.model.get_encoder()(**enc)
        self.enc_mask = enc["attention_mask"]
        self.cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        start = self.model.config.decoder_start_token_id
        if start is None:
            raise ConfigError("the encoder-decoder model has no decoder_start_token_id in its config")
        self.next_input = torch.full((len(texts), 1), start, dtype=torch.long, device=adapter.device)

    def logprobs(self) -> torch.Tensor:
        import torch

        with torch.inference_mode():
            out = self.model(
                encoder_outputs=self.encoder_out,
                attention_mask=self.enc_mask,
                decoder_input_ids=self.next_input,
                past_key_values=self.cache,
                use_cache=True,
            )
        self.cache = out.past_key_values
        return torch.log_softmax(out.logits[:, -1].float(), dim=-1)

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        self.cache.reorder_cache(rows)
        self.encoder_out.last_hidden_state = self.encoder_out.last_hidden_state[rows]
        self.enc_mask = self.enc_mask[rows]
        self.next_input = tokens[:, None]


class ChatAdapter(Adapter):
    """A decoder-only chat model asked, through its chat template, to paraphrase.

    ``system`` and ``prompt`` (with ``{text}``) make the instruction; a model without a
    chat template gets ``prompt`` alone as plain text.
    """

    def __init__(self, model: Any, tokenizer: Any, end_ids: Sequence[int], system: str, prompt: str) -> None:
        # The answer is one line: a token with a line break ends it as the end-of-turn token
        # does. Otherwise a model whose end is held back (a positive constraint not yet met)
        # runs on into an invented next turn ("\nHuman: ...") and places the constraint there.
        pieces = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
        breaks = [i for i, piece in enumerate(pieces) if "\n" in piece]
        super().__init__(model, tokenizer, [*end_ids, *breaks])
        if "{text}" not in prompt:
            raise ConfigError(f"the prompt template must contain {{text}} (got {prompt!r})")
        self.system, self.prompt = system, prompt
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token

    def render(self, text: str) -> str:
        """The prompt string for one sentence (the answer is generated after it)."""
        user = self.prompt.format(text=text)
        if not getattr(self.tokenizer, "chat_template", None):
            return user
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": user})
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def start(self, texts: Sequence[str]) -> Session:
        return _ChatSession(self, texts)


class _ChatSession:
    def __init__(self, adapter: ChatAdapter, texts: Sequence[str]) -> None:
        from transformers import DynamicCache

        self.model, self.device = adapter.model, adapter.device
        enc = adapter.tokenizer(
            [adapter.render(t) for t in texts], return_tensors="pt", padding=True, add_special_tokens=False
        ).to(adapter.device)
        self.next_input = enc["input_ids"]
        self.mask = enc["attention_mask"]
        self.cache = DynamicCache()

    def logprobs(self) -> torch.Tensor:
        import torch

        # Left padding: positions count real tokens only, as transformers' generate does.
        positions = (self.mask.cumsum(-1) - 1).clamp(min=0)[:, -self.next_input.shape[1] :]
        with torch.inference_mode():
            out = self.model(
                input_ids=self.next_input,
                attention_mask=self.mask,
                position_ids=positions,
                past_key_values=self.cache,
                use_cache=True,
                logits_to_keep=1,
            )
        self.cache = out.past_key_values
        return torch.log_softmax(out.logits[:, -1].float(), dim=-1)

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        import torch

        self.cache.reorder_cache(rows)
        self.mask = torch.cat([self.mask[rows], self.mask.new_ones(len(rows), 1)], dim=1)
        self.next_input = tokens[:, None]


# -- loading -----------------------------------------------------------------------------


def load(
    name_or_path: str,
    *,
    dtype: str = "bfloat16",
    device: str = "cpu",
    system: str = DEFAULT_SYSTEM,
    prompt: str = DEFAULT_PROMPT,
    progress: ProgressCallback | None = None,
) -> Adapter:
    """An adapter for a preset, a local folder or GGUF file, or (with network) a hub id."""
    import torch
    import transformers

    torch_dtype = {"bfloat16": torch.bfloat16, "float32": torch.float32, "float16": torch.float16}.get(dtype)
    if torch_dtype is None:
        raise ConfigError(f"dtype must be bfloat16, float16 or float32 (got {dtype!r})")
    source = _local_source(name_or_path, progress)
    if source.suffix == ".gguf":
        source = _converted(source, torch_dtype, progress)
    kwargs = {"dtype": torch_dtype}
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
    if config.is_encoder_decoder:
        return Seq2SeqAdapter(model, tokenizer, _end_ids(model, tokenizer))
    return ChatAdapter(model, tokenizer, _end_ids(model, tokenizer), system, prompt)


def _local_source(name_or_path: str, progress: ProgressCallback | None) -> Path | str:
    """A preset or existing path through the model cache; ``owner/name`` that is neither is a hub id."""
    looks_like_hub = name_or_path.count("/") == 1 and not Path(name_or_path).exists() and name_or_path not in PRESETS
    if looks_like_hub and not name_or_path.startswith((".", "/", "~")):
        return Path(name_or_path)  # transformers resolves it on the hub (needs network)
    return model_path(name_or_path, progress)


def _end_ids(model: Any, tokenizer: Any) -> list[int]:
    """The ids that end an answer: the generation config's EOS ids and the tokenizer's."""
    ids: list[int] = []
    gen = getattr(model, "generation_config", None)
    eos = getattr(gen, "eos_token_id", None) if gen is not None else None
    ids.extend(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.append(tokenizer.eos_token_id)
    return ids


def _converted(gguf: Path, dtype: torch.dtype, progress: ProgressCallback | None) -> Path:
    """A safetensors copy of a GGUF model in the cache, converted on first use.

    Loading a GGUF dequantizes every tensor (a minute for 1.5B parameters); the copy
    reloads in well under a second with identical weights.
    """
    import transformers

    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    target = cache_dir() / "converted" / f"{gguf.stem}-{str(dtype).removeprefix('torch.')}-{key}"
    if (target / "config.json").is_file():
        return target
    if progress is not None:
        progress(ProgressEvent("convert", 0, 1, f"dequantizing {gguf.name} (first use only)"))
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
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}-", dir=target.parent) as tmp:
        staged = Path(tmp) / "model"
        model.save_pretrained(staged)
        tokenizer.save_pretrained(staged)
        try:
            staged.rename(target)
        except OSError:
            if not (target / "config.json").is_file():  # not a concurrent conversion that won
                raise
    del model
    if progress is not None:
        progress(ProgressEvent("convert", 1, 1, f"cached as {target}"))
    return target
