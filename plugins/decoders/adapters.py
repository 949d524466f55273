"""Model adapters: one step-by-step scoring interface over Hugging Face models.

The beam search never touches a model directly. It opens a ``Session`` and then, each
step, calls ``logprobs()`` (next-token log-probabilities of every live hypothesis),
``add(requests, copies)`` when sentences join (their prompts are encoded and ``copies`` rows
each are appended) and ``advance(rows, tokens)`` (keep hypotheses ``rows``, in that
order, each extended by its token). ``rows`` may repeat or drop hypotheses, so one call
both reorders the KV cache with the beam and shrinks the batch when sentences finish.

Two adapters: ``Seq2SeqAdapter`` for encoder-decoder models (T5, BART, Marian, Pegasus:
the encoder runs once, the decoder reuses its self- and cross-attention cache; sentences
join only an empty session) and ``ChatAdapter`` for decoder-only chat models prompted to
paraphrase (constraints and scores apply only to generated tokens). A chat session
encodes the part of the prompt before the sentence once (the *prefix*: system message,
template and instruction) and starts every sentence from a copy of its KV cache; new
sentences join a running batch by padding caches to a common length (masked, so each
row attends to its own tokens only). ``load`` builds either over weights from
``spanaug_shared.weights`` (a preset, a local folder or GGUF file, or a hub id).
"""

from __future__ import annotations

import inspect
import weakref
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressCallback
from spanaug_core.text import placeholders
from spanaug_core.types import DecodeRequest
from spanaug_shared.weights import load_weights, resolve_dtype

if TYPE_CHECKING:
    import torch

DEFAULT_SYSTEM = (
    "You rewrite sentences. Answer with exactly one paraphrase of the user's sentence that keeps its meaning: "
    "the rewritten sentence alone, with no preamble, no quotes and no explanation."
)
DEFAULT_PROMPT = "Paraphrase this sentence: {text}"
# Said after the sentence when a request avoids words. Told which words are blocked, the
# model plans a rewording of them (the avoid constraint stays the guarantee) instead of
# meeting the block mid-sentence, where it tended to drop the clause or fact around it.
# "Replace" rather than "do not use": asked not to use a word, the model deleted it.
DEFAULT_AVOID_HINT = "\nReplace {avoid} with a word or phrase of the same meaning{prefer}, and keep every other detail of the sentence."
# What fills the avoid hint's {prefer} when a lexicon offers words for the span ("" when it
# offers none). Offered, not imposed: the model still picks what fits the sentence, but a
# word the label's lexicon lists is a word that keeps the label (FrameNet: "attempts" for
# efforts, where the model alone wrote "ability"; docs/results/framenet-lexicon.md).
DEFAULT_PREFER_HINT = " (such as {words})"
Example = tuple[str, str]
# Hand-written (sentence, paraphrase) turns shown before the sentence to paraphrase. Each
# paraphrase keeps every fact, name and number of its sentence (the cause of the first, which
# a paraphrase model drops readily), changes the wording where a word would be avoided, and
# stays one sentence, also for a headline.
FEW_SHOT: tuple[Example, ...] = (
    (
        "Catastrophe losses reduced Aetna's net income by $50 million in the third quarter.",
        "In the third quarter, catastrophe losses cut Aetna's net income by $50 million.",
    ),
    (
        "The committee will review the proposal before it votes on Friday.",
        "Before its vote on Friday, the committee is going to examine the proposal.",
    ),
    (
        "Rain halts play in second test at Colombo.",
        "Play in the second test at Colombo was stopped by rain.",
    ),
)


def hint_problem(hint: str, needs: str, may: str | None = None) -> str | None:
    """What is wrong with a hint template, or None: it needs the placeholder ``needs``, may
    have ``may``, and no other, or is "" (no hint)."""
    try:
        fields = placeholders(hint)
    except ValueError as exc:
        return f"the hint is {exc}"
    if hint and (needs not in fields or fields - {needs, may}):
        also = f", may contain {{{may}}}," if may else ""
        return f"the hint must contain the placeholder {{{needs}}}{also} and no other (found {sorted(fields) or 'none'}), or be \"\" for no hint"
    return None


def avoid_hint_problem(hint: str) -> str | None:
    """What is wrong with an avoid hint template (``{avoid}``, and ``{prefer}`` where offered words go), or None."""
    return hint_problem(hint, "avoid", "prefer")


def prefer_hint_problem(hint: str) -> str | None:
    """What is wrong with a prefer hint template (``{words}``), or None."""
    return hint_problem(hint, "words")


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(f'"{w}"' for w in words)


class Session(Protocol):
    """Decoding state of a batch: the model's cache and the hypotheses it holds."""

    device: torch.device
    joins_running: bool  # sentences may be added while others decode (else only to an empty session)

    def add(self, requests: Sequence[DecodeRequest], copies: int) -> torch.Tensor:
        """Append ``copies`` rows per sentence after the current rows, prompts encoded.

        Returns FloatTensor [len(requests), V]: each sentence's first next-token log-probabilities.
        Called between ``logprobs`` and ``advance``; ``advance`` then covers these rows too.
        """

    def logprobs(self) -> torch.Tensor:
        """FloatTensor [H, V]: next-token log-probabilities (float32) of the H rows ``advance`` extended."""

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
        self.cache_name = cache_name(model)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @abstractmethod
    def start(self, share_prefix: bool = True) -> Session:
        """An empty session; sentences join it with ``Session.add``.

        ``share_prefix``: chat models start each sentence from the cached prompt prefix
        (False: encode every prompt whole, as a baseline).
        """

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

    @abstractmethod
    def forced_logprob(self, text: str, output: str) -> tuple[float, int]:
        """The model's log-probability of answering ``text`` with ``output`` (then ending), and
        the tokens it counts, end included: what decoding would score ``output`` if it found it."""

    def forced_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
        """``forced_logprob`` of each (text, output) pair; adapters that can batch them do."""
        return [self.forced_logprob(text, output) for text, output in pairs]

    def _answer_logprob(self, logits: torch.Tensor, answer: Sequence[int]) -> tuple[float, int]:
        """``forced_logprob`` from the logits [len(answer) + 1, V] that predict each answer token
        and then the end (any end token)."""
        import torch

        logprobs = torch.log_softmax(logits.float(), dim=-1)
        total = float(logprobs[torch.arange(len(answer)), torch.tensor(answer, dtype=torch.long)].sum()) if answer else 0.0
        return total + float(torch.logsumexp(logprobs[len(answer), self.end_ids], dim=0)), len(answer) + 1


class Seq2SeqAdapter(Adapter):
    """An encoder-decoder model: the source sentence is the encoder input."""

    def start(self, share_prefix: bool = True) -> Session:
        return _Seq2SeqSession(self)

    def forced_logprob(self, text: str, output: str) -> tuple[float, int]:
        import torch

        enc = self.tokenizer([text], return_tensors="pt").to(self.device)
        out_ids = self.tokenizer(output, add_special_tokens=False)["input_ids"]
        start = self.model.config.decoder_start_token_id
        decoder_ids = torch.tensor([[int(start), *out_ids]], dtype=torch.long, device=self.device)
        with torch.inference_mode():
            logits = self.model(**enc, decoder_input_ids=decoder_ids).logits[0]
        return self._answer_logprob(logits, out_ids)


class _Seq2SeqSession:
    # Decoder positions (T5's relative bias) follow the cache length, so rows of different
    # ages cannot share one cache: sentences join only an empty session.
    joins_running = False

    def __init__(self, adapter: Seq2SeqAdapter) -> None:
        self.adapter, self.model, self.device = adapter, adapter.model, adapter.device
        start = self.model.config.decoder_start_token_id
        if start is None:
            raise ConfigError("the encoder-decoder model has no decoder_start_token_id in its config")
        self.start_id = int(start)

    def add(self, requests: Sequence[DecodeRequest], copies: int) -> torch.Tensor:
        import torch
        from transformers import DynamicCache, EncoderDecoderCache

        texts = [r.text for r in requests]
        enc = self.adapter.tokenizer(texts, return_tensors="pt", padding=True).to(self.device)
        with torch.inference_mode():
            self.encoder_out = self.model.get_encoder()(**enc)
        self.enc_mask = enc["attention_mask"]
        self.cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        self.next_input = torch.full((len(texts), 1), self.start_id, dtype=torch.long, device=self.device)
        first = self.logprobs()
        self._keep_rows(torch.arange(len(texts), device=self.device).repeat_interleave(copies))
        return first

    def logprobs(self) -> torch.Tensor:
        import torch

        with torch.inference_mode():
            out = self.model(
                encoder_outputs=self.encoder_out,
                attention_mask=self.enc_mask,
                decoder_input_ids=self.next_input,
                use_cache=True,
                **{self.adapter.cache_name: self.cache},
            )
        self.cache = getattr(out, self.adapter.cache_name)
        return torch.log_softmax(out.logits[:, -1].float(), dim=-1)

    def _keep_rows(self, rows: torch.Tensor) -> None:
        self.cache.reorder_cache(rows)
        self.encoder_out.last_hidden_state = self.encoder_out.last_hidden_state[rows]
        self.enc_mask = self.enc_mask[rows]

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        self._keep_rows(rows)
        self.next_input = tokens[:, None]


# Pairs scored per forward pass by ChatAdapter.forced_logprobs: the kept logits ([rows, answer
# length, vocabulary], ~0.6 MB per token and row for Qwen's 152k entries) stay small.
_FORCED_ROWS = 8


# Per tokenizer (and its size, should tokens be added): decoding a whole vocabulary is slow for
# a large one (Qwen's 152k entries), and every adapter over shared weights would otherwise repeat it.
_BREAKS: weakref.WeakKeyDictionary[Any, tuple[int, tuple[int, ...]]] = weakref.WeakKeyDictionary()


def _line_break_ids(tokenizer: Any) -> tuple[int, ...]:
    """The ids of the tokens whose text holds a line break."""
    size = len(tokenizer)
    if tokenizer not in _BREAKS or _BREAKS[tokenizer][0] != size:
        pieces = tokenizer.batch_decode([[i] for i in range(size)])
        _BREAKS[tokenizer] = (size, tuple(i for i, piece in enumerate(pieces) if "\n" in piece))
    return _BREAKS[tokenizer][1]


class ChatAdapter(Adapter):
    """A decoder-only chat model asked, through its chat template, to paraphrase.

    ``system`` and ``prompt`` (with ``{text}``) make the instruction, ``examples`` (sentence,
    paraphrase) pairs are shown as earlier turns (few-shot); a model without a chat template
    gets the examples and ``prompt`` as plain text. ``avoid_hint`` (with ``{avoid}``) follows
    the sentence when its request avoids words ("" for never); its ``{prefer}`` is
    ``prefer_hint`` naming the request's preferred words (``{words}``), or "" when it has none.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        end_ids: Sequence[int],
        system: str,
        prompt: str,
        examples: Sequence[Example] = (),
        avoid_hint: str = "",
        prefer_hint: str = "",
    ) -> None:
        # The answer is one line: a token with a line break ends it as the end-of-turn token
        # does. Otherwise a model whose end is held back (a positive constraint not yet met)
        # runs on into an invented next turn ("\nHuman: ...") and places the constraint there.
        super().__init__(model, tokenizer, [*end_ids, *_line_break_ids(tokenizer)])
        if "{text}" not in prompt:
            raise ConfigError(f"the prompt template must contain {{text}} (got {prompt!r})")
        for problem, hint in ((avoid_hint_problem(avoid_hint), avoid_hint), (prefer_hint_problem(prefer_hint), prefer_hint)):
            if problem:
                raise ConfigError(f"{problem} (got {hint!r})")
        self.system, self.prompt, self.examples = system, prompt, tuple(examples)
        self.avoid_hint, self.prefer_hint = avoid_hint, prefer_hint
        self._prefix_ids: list[int] | None = None
        self._prefix_kv: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token

    def message(self, text: str, avoid: Sequence[str] = (), prefer: Sequence[str] = ()) -> str:
        """The user's message for one sentence: the prompt, then the avoid hint naming the
        avoided phrases once each (case folded: "Bought" and "bought" are one word to a reader)
        and, where it has ``{prefer}``, the preferred words."""
        message = self.prompt.format(text=text)
        if avoid and self.avoid_hint:
            shown = list(dict.fromkeys(" ".join(p.split()).lower() for p in avoid))
            offered = self.prefer_hint.format(words=_quoted(prefer)) if prefer and self.prefer_hint else ""
            message += self.avoid_hint.format(avoid=_quoted(shown), prefer=offered)
        return message

    def render(self, text: str, avoid: Sequence[str] = (), prefer: Sequence[str] = ()) -> str:
        """The prompt string for one sentence (the answer is generated after it): the system
        message, each example as a user turn and its answer, then the sentence's user turn."""
        if not getattr(self.tokenizer, "chat_template", None):
            shots = "".join(f"{self.message(source)}\n{answer}\n\n" for source, answer in self.examples)
            return shots + self.message(text, avoid, prefer)
        messages = [{"role": "system", "content": self.system}] if self.system else []
        for source, answer in self.examples:
            messages += [{"role": "user", "content": self.message(source)}, {"role": "assistant", "content": answer}]
        messages.append({"role": "user", "content": self.message(text, avoid, prefer)})
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def start(self, share_prefix: bool = True) -> Session:
        return _ChatSession(self, share_prefix)

    def forced_logprob(self, text: str, output: str) -> tuple[float, int]:
        return self.forced_logprobs([(text, output)])[0]

    def forced_logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, int]]:
        """Batched, ``_FORCED_ROWS`` pairs per forward pass. Each row is laid out as decoding
        lays out a prompt ([prefix, pad..., rest of the prompt, answer]), so every answer
        ends at the last column and only the last columns' logits are computed."""
        out: list[tuple[float, int]] = []
        for start in range(0, len(pairs), _FORCED_ROWS):
            chunk = pairs[start : start + _FORCED_ROWS]
            answers = [self.tokenizer(output, add_special_tokens=False)["input_ids"] for _, output in chunk]
            ids, mask, past = self.encode_prompts([self.prompt_ids(text) + answer for (text, _), answer in zip(chunk, answers)])
            # Column -1 predicts the end; the len(answer) columns before it, the answer's tokens.
            keep = max(len(a) for a in answers) + 1
            logits = _forward(self, ids, mask, past, keep).logits
            out += [self._answer_logprob(row[keep - len(answer) - 1 :], answer) for row, answer in zip(logits, answers)]
        return out

    def encode_prompts(self, prompts: Sequence[Sequence[int]], share_prefix: bool = True) -> tuple[torch.Tensor, torch.Tensor, Any]:
        """Token rows ready for one forward pass: ids [n, L] and mask [n, P + L] of ``prompts``
        left-padded after the prefix ([prefix, pad..., rest]) and the prefix cache for n rows
        (P = 0 and no cache when ``share_prefix`` is off or a prompt does not start with it)."""
        import torch

        prefix = self.prefix_ids if share_prefix else []
        if prefix and not all(p[: len(prefix)] == prefix and len(p) > len(prefix) for p in prompts):
            prefix = []
        rests = [p[len(prefix) :] for p in prompts]
        width = max(len(r) for r in rests)
        ids = torch.full((len(prompts), width), int(self.tokenizer.pad_token_id), dtype=torch.long)
        mask = torch.zeros(len(prompts), len(prefix) + width, dtype=torch.long)
        mask[:, : len(prefix)] = 1
        for i, rest in enumerate(rests):
            ids[i, width - len(rest) :] = torch.tensor(rest)
            mask[i, len(prefix) + width - len(rest) :] = 1
        past = None
        if prefix:
            past = _cache([(k.expand(len(prompts), -1, -1, -1), v.expand(len(prompts), -1, -1, -1)) for k, v in self.prefix_cache()])
        return ids.to(self.device), mask.to(self.device), past

    def prompt_ids(self, text: str, avoid: Sequence[str] = (), prefer: Sequence[str] = ()) -> list[int]:
        """The token ids of one sentence's whole prompt."""
        return self.tokenizer(self.render(text, avoid, prefer), add_special_tokens=False)["input_ids"]

    @property
    def prefix_ids(self) -> list[int]:
        """The prompt's first tokens whatever the sentence: the tokens of the rendered prompt
        before ``{text}``, less the last (it could merge with a sentence's first characters).
        A sentence whose prompt does not start with them is encoded whole (``Session.add``)."""
        if self._prefix_ids is None:
            marker = "\x00"
            before = self.render(marker).split(marker)[0]
            ids = self.tokenizer(before, add_special_tokens=False)["input_ids"] if before else []
            self._prefix_ids = ids[:-1]
        return self._prefix_ids

    def prefix_cache(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per layer, (keys, values) [1, heads, P, dim] of ``prefix_ids``: computed once per adapter."""
        import torch

        if self._prefix_kv is None:
            ids = torch.tensor([self.prefix_ids], dtype=torch.long, device=self.device)
            with torch.inference_mode():
                out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
            self._prefix_kv = _layers(getattr(out, self.cache_name))
        return self._prefix_kv


class _ChatSession:
    joins_running = True

    def __init__(self, adapter: ChatAdapter, share_prefix: bool) -> None:
        self.adapter, self.model, self.device = adapter, adapter.model, adapter.device
        self.share_prefix = share_prefix
        self.cache: Any = None  # a transformers DynamicCache: per layer [H, heads, T, dim]
        self.mask: torch.Tensor | None = None  # [H, T]; 0 marks padding
        self.next_input: torch.Tensor | None = None  # [H, 1]
        self.prefilled = 0  # prompt tokens run through the model (with a shared prefix, only the rest)

    def add(self, requests: Sequence[DecodeRequest], copies: int) -> torch.Tensor:
        import torch

        prompts = [self.adapter.prompt_ids(r.text, r.constraints.avoid, r.constraints.prefer) for r in requests]
        ids, mask, past = self.adapter.encode_prompts(prompts, self.share_prefix)
        logprobs, cache = self._forward(ids, mask, past)
        self.prefilled += int(mask[:, -ids.shape[1] :].sum())
        rows = torch.arange(len(requests), device=self.device).repeat_interleave(copies)
        self._join([(k[rows], v[rows]) for k, v in _layers(cache)], mask[rows])
        return logprobs

    def logprobs(self) -> torch.Tensor:
        assert self.next_input is not None and self.mask is not None
        logprobs, self.cache = self._forward(self.next_input, self.mask, self.cache)
        return logprobs

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        import torch

        assert self.mask is not None
        mask = self.mask[rows]
        # Columns that are padding in every remaining row are dropped (rows that joined late
        # were padded to the rows that have left).
        used = mask.any(0).nonzero()
        first = int(used[0]) if len(used) else mask.shape[1]
        for layer in self.cache.layers:
            layer.keys, layer.values = layer.keys[rows, :, first:], layer.values[rows, :, first:]
        self.mask = torch.cat([mask[:, first:], mask.new_ones(len(rows), 1)], dim=1)
        self.next_input = tokens[:, None]

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor, past: Any) -> tuple[torch.Tensor, Any]:
        """Run ``ids`` [H, L] after ``past`` (mask [H, past + L]); last-position log-probabilities and the cache."""
        import torch

        out = _forward(self.adapter, ids, mask, past, 1)
        return torch.log_softmax(out.logits[:, -1].float(), dim=-1), getattr(out, self.adapter.cache_name)

    def _join(self, layers: list[tuple[torch.Tensor, torch.Tensor]], mask: torch.Tensor) -> None:
        """Append rows (cache ``layers``, ``mask`` [n, T']) after the current ones, left-padding the shorter side."""
        import torch

        if self.mask is None or self.mask.shape[0] == 0:
            self.cache, self.mask = _cache(layers), mask
            return
        width = max(self.mask.shape[1], mask.shape[1])

        def pad(t: torch.Tensor, dim: int) -> torch.Tensor:
            missing = width - t.shape[dim]
            if missing == 0:
                return t
            shape = list(t.shape)
            shape[dim] = missing
            return torch.cat([t.new_zeros(shape), t], dim=dim)

        self.cache = _cache(
            [
                (torch.cat([pad(k0, 2), pad(k1, 2)]), torch.cat([pad(v0, 2), pad(v1, 2)]))
                for (k0, v0), (k1, v1) in zip(_layers(self.cache), layers, strict=True)
            ]
        )
        self.mask = torch.cat([pad(self.mask, 1), pad(mask, 1)])


def _forward(adapter: ChatAdapter, ids: torch.Tensor, mask: torch.Tensor, past: Any, keep: int) -> Any:
    """A chat model's forward pass over ``ids`` [n, L] after ``past`` (``mask`` [n, past + L],
    0 marks padding), with logits [n, keep, V] of the last ``keep`` columns only."""
    import torch

    # Positions count real tokens only, as transformers' generate does with left padding.
    positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -ids.shape[1] :]
    with torch.inference_mode():
        return adapter.model(
            input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=keep, **{adapter.cache_name: past}
        )


def cache_name(model: Any) -> str:
    """The name under which ``model`` takes its KV cache and returns it in its output.

    transformers 5.24 renamed ``past_key_values`` to ``cache``. It still takes the old name,
    but warns on every run and will drop it in 5.40. Earlier 5.x releases know only the old name.
    """
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _layers(cache: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer (keys, values) of a transformers cache; only full-attention caches can be padded and joined."""
    from transformers.cache_utils import DynamicLayer

    out = []
    for layer in cache.layers:
        if type(layer) is not DynamicLayer:
            raise ConfigError(
                f"the model's cache has {type(layer).__name__} layers (sliding-window attention); "
                "the chat decoder needs full-attention layers"
            )
        out.append((layer.keys, layer.values))
    return out


def _cache(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> Any:
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=layers) if layers else None


# -- loading -----------------------------------------------------------------------------


# Adapters per model, dtype, device and prompt settings: an adapter with another prompt or
# hint is a few attributes over weights already in memory (spanaug_shared.weights).
_LOADED: dict[tuple[str, str, str, str, str, tuple[Example, ...], str], Adapter] = {}


def load(
    name_or_path: str,
    *,
    dtype: str = "auto",
    device: str = "cpu",
    system: str = DEFAULT_SYSTEM,
    prompt: str = DEFAULT_PROMPT,
    examples: Sequence[Example] = (),
    avoid_hint: str = "",
    prefer_hint: str = "",
    progress: ProgressCallback | None = None,
) -> Adapter:
    """An adapter for a preset, a local folder or GGUF file, or (with network) a hub id.

    A process loads a model's weights once per (model, dtype, device): a second pipeline or
    decoder with the same model shares them, whatever its prompt settings.
    """
    shots = tuple((str(a), str(b)) for a, b in examples)
    key = (name_or_path, resolve_dtype(dtype, device), device, system, prompt, shots, avoid_hint, prefer_hint)
    if key not in _LOADED:
        model, tokenizer = load_weights(name_or_path, dtype, device, progress)
        end_ids = _end_ids(model, tokenizer)
        _LOADED[key] = (
            Seq2SeqAdapter(model, tokenizer, end_ids)
            if model.config.is_encoder_decoder
            else ChatAdapter(model, tokenizer, end_ids, system, prompt, shots, avoid_hint, prefer_hint)
        )
    return _LOADED[key]


def _end_ids(model: Any, tokenizer: Any) -> list[int]:
    """The ids that end an answer: the generation config's EOS ids and the tokenizer's."""
    ids: list[int] = []
    gen = getattr(model, "generation_config", None)
    eos = getattr(gen, "eos_token_id", None) if gen is not None else None
    ids.extend(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.append(tokenizer.eos_token_id)
    return ids

