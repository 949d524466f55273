"""Model adapters: one step-by-step scoring interface over Hugging Face models.

The beam search never touches a model directly. It opens a ``Session`` and then, each
step, calls ``add(requests, copies)`` when sentences join (``copies`` rows each are
appended after the current ones, their prompts encoded at the next ``logprobs``),
``logprobs()`` (next-token log-probabilities of every row) and ``advance(rows, tokens)``
(keep hypotheses ``rows``, in that order, each extended by its token). ``rows`` may repeat
or drop hypotheses, so one call both reorders the KV cache with the beam and shrinks the
batch when sentences finish.

Two adapters: ``Seq2SeqAdapter`` for encoder-decoder models (T5, BART, Marian, Pegasus:
the encoder runs once, the decoder reuses its self- and cross-attention cache; sentences
join only an empty session) and ``ChatAdapter`` for decoder-only chat models prompted to
paraphrase (constraints and scores apply only to generated tokens). A chat session
encodes the part of the prompt before the sentence once (the *prefix*: system message,
template and instruction), and every row attends that one copy of its keys and values
(``prefix_attention``) before its own. Its cache of the rest is preallocated
(``_RowCache``): every row writes its next token at one shared column, new sentences join
right-aligned to it (the columns before a row's prompt are masked, so each row attends to
its own tokens only), and the beam's reorder is one gather into a second buffer. ``load``
builds either over weights from ``spanaug_shared.weights`` (a preset, a local folder or
GGUF file, or a hub id).
"""

from __future__ import annotations

import functools
import inspect
import logging
import weakref
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressCallback
from spanaug_core.text import placeholders, tokenize
from spanaug_core.types import DecodeRequest
from spanaug_decoders import prefix_attention
from spanaug_decoders.prefix_attention import SharedPrefix
from spanaug_shared.lemmas import lemmas
from spanaug_shared.weights import Quantize, load_weights, resolve_dtype

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

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
# How many characters of avoided phrases the avoid hint names before it names one form per
# phrase, and then only what fits. Every row of a decoding batch is as wide in the model's
# cache as its longest prompt, so one request whose avoid set has grown to hundreds of long
# phrases once filled 24 GB (docs/results/per-round.md#memory); the measured hint, naming every form,
# is far below this (docs/results/avoid-hint.md).
DEFAULT_AVOID_HINT_CHARS = 240
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


def hint_names(avoid: Sequence[str], budget: int) -> list[str]:
    """The avoided phrases an avoid hint names: each once, case folded ("Bought" and "bought"
    are one word to a reader). When they add up to more than ``budget`` characters, one form
    of each phrase, the first ("weapons of mass destruction" stands for "weapon of masses destructions"),
    in order, as many as fit (the first always). The avoid constraint blocks every form anyway.
    """
    shown = list(dict.fromkeys(" ".join(p.split()).lower() for p in avoid))
    if sum(map(len, shown)) <= budget:
        return shown
    distinct: list[str] = []
    for phrase in shown:
        if not any(_forms_of_one(phrase, other) for other in distinct):
            distinct.append(phrase)
    named: list[str] = []
    used = 0
    for phrase in distinct:
        if named and used + len(phrase) > budget:
            break
        named.append(phrase)
        used += len(phrase)
    return named


def _forms_of_one(a: str, b: str) -> bool:
    """Whether two phrases are the same words but for inflection (word by word, a shared lemma)."""
    words_a, words_b = tokenize(a), tokenize(b)
    return len(words_a) == len(words_b) and all(x == y or lemmas(x) & lemmas(y) for x, y in zip(words_a, words_b))


class Session(Protocol):
    """Decoding state of a batch: the model's cache and the hypotheses it holds."""

    device: torch.device
    joins_running: bool  # sentences may be added while others decode (else only to an empty session)

    def add(self, requests: Sequence[DecodeRequest], copies: int) -> None:
        """Append ``copies`` rows per sentence after the current rows; their prompts are
        encoded at the next ``logprobs``, which covers them too."""

    def logprobs(self) -> torch.Tensor:
        """FloatTensor [H, V]: next-token log-probabilities (float32) of every row, those
        ``advance`` extended and then those ``add`` appended (each sentence's first
        log-probabilities, once per copy). The caller may change it; it is valid until the
        next call (a session may reuse its memory)."""

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
        # out_features: a quantized linear layer's weight is a method, not a tensor
        self.vocab_size = int(model.get_output_embeddings().out_features)
        self.cache_name = cache_name(model)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @abstractmethod
    def start(self, share_prefix: bool = True) -> Session:
        """An empty session; sentences join it with ``Session.add``.

        ``share_prefix``: chat models encode the prompt prefix once and every row attends
        that one copy (False: encode every prompt whole, as a baseline).
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
        self.pending: tuple[list[str], int] | None = None

    def add(self, requests: Sequence[DecodeRequest], copies: int) -> None:
        self.pending = ([r.text for r in requests], copies)

    def _encode(self, texts: list[str], copies: int) -> torch.Tensor:
        import torch
        from transformers import DynamicCache, EncoderDecoderCache

        enc = self.adapter.tokenizer(texts, return_tensors="pt", padding=True).to(self.device)
        with torch.inference_mode():
            self.encoder_out = self.model.get_encoder()(**enc)
        self.enc_mask = enc["attention_mask"]
        self.cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        self.next_input = torch.full((len(texts), 1), self.start_id, dtype=torch.long, device=self.device)
        first = self._step()
        rows = torch.arange(len(texts), device=self.device).repeat_interleave(copies)
        self._keep_rows(rows)
        return first[rows]

    def logprobs(self) -> torch.Tensor:
        if self.pending is not None:
            texts, copies = self.pending
            self.pending = None
            return self._encode(texts, copies)
        return self._step()

    def _step(self) -> torch.Tensor:
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
# How far, relative to its largest value, shared-prefix attention's output may differ from
# the model's own in any layer of the check: float32 sums taken in another order differ by
# about 1e-6, half-precision ones by a few of the dtype's epsilons (bfloat16's is 8e-3), and
# an attention that gets the model wrong by tenths. Four epsilons, and at least 1e-3.
_PREFIX_EPSILONS = 4


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
    the sentence when its request avoids words ("" for never), naming them as ``hint_names``
    does within ``avoid_hint_chars``; its ``{prefer}`` is ``prefer_hint`` naming the request's
    preferred words (``{words}``), or "" when it has none.
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
        avoid_hint_chars: int = DEFAULT_AVOID_HINT_CHARS,
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
        self.avoid_hint, self.prefer_hint, self.avoid_hint_chars = avoid_hint, prefer_hint, avoid_hint_chars
        self._prefix_ids: list[int] | None = None
        self._prefix_kv: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self._shares_prefix: bool | None = None
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token

    def message(self, text: str, avoid: Sequence[str] = (), prefer: Sequence[str] = ()) -> str:
        """The user's message for one sentence: the prompt, then the avoid hint naming the
        avoided phrases (``hint_names``) and, where it has ``{prefer}``, the preferred words."""
        message = self.prompt.format(text=text)
        if avoid and self.avoid_hint:
            shown = hint_names(avoid, self.avoid_hint_chars)
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
            ids, mask, offset = self.encode_prompts([self.prompt_ids(text) + answer for (text, _), answer in zip(chunk, answers)])
            # Column -1 predicts the end; the len(answer) columns before it, the answer's tokens.
            keep = max(len(a) for a in answers) + 1
            logits = _forward(self, ids, mask, offset, keep).logits
            out += [self._answer_logprob(row[keep - len(answer) - 1 :], answer) for row, answer in zip(logits, answers)]
        return out

    def encode_prompts(self, prompts: Sequence[Sequence[int]], share_prefix: bool = True) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Token rows ready for one forward pass: ids [n, L] and mask [n, L] (0: padding) of
        ``prompts`` less the shared prefix, left-padded, and the prefix's length P (0, and
        the prompts whole, when ``share_prefix`` is off, the model cannot share a prefix, or
        a prompt does not start with it)."""
        import torch

        prefix = self.prefix_ids if share_prefix and self.shares_prefix else []
        if prefix and not all(p[: len(prefix)] == prefix and len(p) > len(prefix) for p in prompts):
            prefix = []
        rests = [p[len(prefix) :] for p in prompts]
        width = max(len(r) for r in rests)
        ids = torch.full((len(prompts), width), int(self.tokenizer.pad_token_id), dtype=torch.long)
        mask = torch.zeros(len(prompts), width, dtype=torch.long)
        for i, rest in enumerate(rests):
            ids[i, width - len(rest) :] = torch.tensor(rest)
            mask[i, width - len(rest) :] = 1
        return ids.to(self.device), mask.to(self.device), len(prefix)

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
        """Per layer, (keys, values) [1, kv heads, P, dim] of ``prefix_ids``: computed once per adapter."""
        import torch

        if self._prefix_kv is None:
            ids = torch.tensor([self.prefix_ids], dtype=torch.long, device=self.device)
            with torch.inference_mode():
                out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
            self._prefix_kv = _layers(getattr(out, self.cache_name))
        return self._prefix_kv

    @property
    def shares_prefix(self) -> bool:
        """Whether rows attend one shared copy of the prefix (``prefix_attention``): the model's
        attention function takes the wrapper, and in every layer it gives what the model's own
        gives (``_prefix_agrees``). Checked once; where it fails, every prompt is encoded
        whole, which costs the prefix's forward pass for each sentence."""
        if self._shares_prefix is None:
            self._shares_prefix = bool(self.prefix_ids) and prefix_attention.install(self.model) and self._prefix_agrees()
            if not self._shares_prefix and self.prefix_ids:
                log.warning(
                    "%s: its attention cannot be given one shared copy of the prompt's prefix; "
                    "every prompt is encoded whole (slower, same output)",
                    type(self.model).__name__,
                )
        return self._shares_prefix

    def _prefix_agrees(self) -> bool:
        """Whether attention to the shared prefix gives, in every layer, what the model's own
        attention gives over a copy of the prefix in the row (a probe prompt; the same
        inputs, so int8's per-batch activation scales, which turn a difference of 1e-6 into
        tenths of a nat, do not enter)."""
        import torch
        from transformers import DynamicCache

        probe, prefix, layers = self.prompt_ids(FEW_SHOT[1][0]), self.prefix_ids, self.prefix_cache()
        if probe[: len(prefix)] != prefix:
            return False
        rest = torch.tensor([probe[len(prefix) :]], device=self.device)
        check = prefix_attention.Probe(len(prefix), [])
        try:
            with torch.inference_mode():
                self.model(
                    input_ids=rest,
                    attention_mask=torch.ones(1, len(probe), dtype=torch.long, device=self.device),
                    position_ids=torch.arange(len(prefix), len(probe), device=self.device)[None],
                    logits_to_keep=1,
                    **{self.cache_name: DynamicCache(ddp_cache_data=layers), prefix_attention.KEYWORD: check},
                )
        except (AttributeError, RuntimeError, TypeError):  # e.g. attention modules without a layer index
            return False
        tolerance = max(1e-3, _PREFIX_EPSILONS * torch.finfo(layers[0][0].dtype).eps)
        return len(check.differences) == len(layers) and max(check.differences) <= tolerance


class _ChatSession:
    joins_running = True

    def __init__(self, adapter: ChatAdapter, share_prefix: bool) -> None:
        self.adapter, self.model, self.device = adapter, adapter.model, adapter.device
        self.share_prefix = share_prefix
        self.cache: _RowCache | None = None
        self.pending: list[tuple[list[DecodeRequest], int]] = []
        self.next_input: torch.Tensor | None = None  # [H, 1]
        self.buffer: torch.Tensor | None = None  # what logprobs returns, reused
        self.prefilled = 0  # prompt tokens run through the model (with a shared prefix, only the rest)

    def add(self, requests: Sequence[DecodeRequest], copies: int) -> None:
        self.pending.append((list(requests), copies))

    def logprobs(self) -> torch.Tensor:
        import torch

        live = self.cache.rows if self.cache is not None else 0
        logits = None
        if live:
            assert self.cache is not None and self.next_input is not None
            logits = self.cache.forward(self.adapter, self.next_input).logits[:, -1]
        firsts = [self._prefill(requests, copies) for requests, copies in self.pending]
        self.pending = []
        assert self.cache is not None
        vocab = (logits if logits is not None else firsts[0][0]).shape[-1]
        out = self._out(self.cache.rows, vocab)
        if logits is not None:
            torch.log_softmax(logits.float(), dim=-1, out=out[:live])
        row = live
        for first, rows in firsts:
            # Each sentence's first log-probabilities, once per copy: rows ``rows`` of ``first``.
            torch.index_select(torch.log_softmax(first.float(), dim=-1), 0, rows, out=out[row : row + len(rows)])
            row += len(rows)
        return out

    def _out(self, rows: int, vocab: int) -> torch.Tensor:
        """The log-probability buffer [rows, vocab], reused from step to step: a fresh tensor of
        a hundred megabytes costs a CPU more to fault in than log-softmax costs to fill it."""
        import torch

        if self.buffer is None or self.buffer.shape[0] < rows or self.buffer.shape[1] != vocab:
            self.buffer = torch.empty(max(rows, 2 * (0 if self.buffer is None else self.buffer.shape[0])), vocab, device=self.device)
        return self.buffer[:rows]

    def _prefill(self, requests: list[DecodeRequest], copies: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode new prompts and append ``copies`` rows each: their last logits [n, V] and the row of each copy."""
        import torch

        prompts = [self.adapter.prompt_ids(r.text, r.constraints.avoid, r.constraints.prefer) for r in requests]
        ids, mask, offset = self.adapter.encode_prompts(prompts, self.share_prefix)
        out = _forward(self.adapter, ids, mask, offset, 1)
        self.prefilled += int(mask.sum())
        rows = torch.arange(len(requests), device=self.device).repeat_interleave(copies)
        layers = [(k[rows], v[rows]) for k, v in _layers(getattr(out, self.adapter.cache_name))]
        if self.cache is None:
            prefix = self.adapter.prefix_cache() if self.share_prefix and self.adapter.shares_prefix else None
            self.cache = _RowCache(layers[0][0], len(layers), prefix)
        self.cache.join(layers, mask[rows], offset)
        return out.logits[:, -1], rows

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        assert self.cache is not None
        self.cache.advance(rows)
        self.next_input = tokens[:, None]


class _RowCache:
    """A chat session's KV cache, preallocated: per layer keys and values [R, heads, T, dim].

    With ``prefix`` (the adapter's ``prefix_cache``), rows that share it hold only the
    columns after it and attend it through ``prefix_attention``.

    Rows 0..H-1 are the live hypotheses. Every row writes its next token at column ``end``;
    columns ``start``..``end`` are those some live row uses (``mask`` marks each row's own).
    A joining row's prompt is placed to end at ``end``, so rows of different ages share the
    columns from then on. Keys and values live in two buffers: the beam's reorder gathers
    the live columns of the rows it keeps from one into the other, one copy and no
    allocation (a cache grown by concatenation copies itself twice a step). The buffers
    grow when rows or columns run out: rows doubling, columns by a quarter.
    """

    def __init__(self, like: torch.Tensor, layers: int, prefix: list[tuple[torch.Tensor, torch.Tensor]] | None = None) -> None:
        self.layers, self.rows, self.prefix = layers, 0, prefix
        self.heads, self.dim, self.dtype, self.device = like.shape[1], like.shape[3], like.dtype, like.device
        self.buffers: list[list[torch.Tensor]] = []  # two buffers, each [keys 0, values 0, keys 1, ...]
        self.mask: torch.Tensor | None = None  # [R, T] long; 0 marks a column a row does not use
        self.positions: torch.Tensor | None = None  # [R]: the position of each row's next token
        self.shared: torch.Tensor | None = None  # [R] bool: the row's prompt starts with the shared prefix
        self.start = self.end = 0

    def layer(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values [R, heads, T, dim] of layer ``index`` in the current buffer."""
        return self.buffers[0][2 * index], self.buffers[0][2 * index + 1]

    def _reserve(self, rows: int, before: int, after: int) -> None:
        """Room for ``rows`` rows, ``before`` columns before ``end`` and ``after`` from it on.

        The live columns move to the left edge (room for a longer prompt before them, for
        the tokens to come after). Where the buffers are large enough they move through the
        second buffer, as a reorder does; only rows or columns that do not fit allocate.
        """
        import torch

        r, t = (0, 0) if self.mask is None else self.mask.shape
        if rows <= r and before <= self.end and self.end + after <= t:
            return
        width = self.end - self.start if self.rows else 0
        end = max(before, width)
        old, new = slice(self.start, self.end), slice(end - width, end)
        if rows <= r and end + after <= t:
            assert self.mask is not None
            for kept, moved in zip(*self.buffers, strict=True):
                moved[: self.rows, :, new] = kept[: self.rows, :, old]
            self.buffers.reverse()
            # Columns left of a row's own stay 0: a longer prompt joining may bring them into attention.
            kept_mask = self.mask[: self.rows, old].clone()
            self.mask[: self.rows] = 0
            self.mask[: self.rows, new] = kept_mask
            self.start, self.end = end - width, end
            return
        new_r = r if rows <= r else max(rows, 2 * r, 8)
        # A quarter more, not double: two buffers of a cache a few hundred columns wide are most of a
        # CPU run's memory, and the columns a batch uses grow slowly once sentences come and go.
        new_t = t if end + after <= t else max(t + t // 4, end + after + max(width // 4, 64))
        buffers = [[torch.zeros(new_r, self.heads, new_t, self.dim, dtype=self.dtype, device=self.device) for _ in range(2 * self.layers)] for _ in range(2)]
        mask = torch.zeros(new_r, new_t, dtype=torch.long, device=self.device)
        positions = torch.zeros(new_r, dtype=torch.long, device=self.device)
        shared = torch.zeros(new_r, dtype=torch.bool, device=self.device)
        if self.rows:
            assert self.mask is not None and self.positions is not None and self.shared is not None
            for moved, kept in zip(buffers[0], self.buffers[0], strict=True):
                moved[: self.rows, :, new] = kept[: self.rows, :, old]
            mask[: self.rows, new] = self.mask[: self.rows, old]
            positions[: self.rows] = self.positions[: self.rows]
            shared[: self.rows] = self.shared[: self.rows]
        self.buffers, self.mask, self.positions, self.shared = buffers, mask, positions, shared
        self.start, self.end = end - width, end

    def join(self, layers: list[tuple[torch.Tensor, torch.Tensor]], mask: torch.Tensor, offset: int) -> None:
        """Append rows: per layer (keys, values) [n, heads, T', dim] and their ``mask`` [n, T']
        (0: padding), the tokens after the shared prefix's ``offset`` (0: the whole prompt)."""
        n, width = mask.shape
        self._reserve(self.rows + n, width, 1)
        assert self.mask is not None and self.positions is not None and self.shared is not None
        rows, columns = slice(self.rows, self.rows + n), slice(self.end - width, self.end)
        for index, (keys, values) in enumerate(layers):
            key_buffer, value_buffer = self.layer(index)
            key_buffer[rows, :, columns] = keys
            value_buffer[rows, :, columns] = values
        self.mask[rows] = 0
        self.mask[rows, columns] = mask
        self.positions[rows] = mask.sum(1) + offset
        self.shared[rows] = offset > 0
        self.start = min(self.start, self.end - width) if self.rows else self.end - width
        self.rows += n

    def forward(self, adapter: ChatAdapter, ids: torch.Tensor) -> Any:
        """The model over ``ids`` [H, 1], one new token per live row, written at column ``end``."""
        import torch

        self._reserve(self.rows, 0, 1)
        assert self.mask is not None and self.positions is not None
        h = self.rows
        self.mask[:h, self.end] = 1
        mask = self.mask[:h, self.start : self.end + 1]
        extra: dict[str, Any] = {adapter.cache_name: _column_cache_class()(self, h)}
        if self.prefix is not None:
            assert self.shared is not None
            extra[prefix_attention.KEYWORD] = SharedPrefix(self.prefix, mask.bool(), self.shared[:h])
        with torch.inference_mode():
            out = adapter.model(
                input_ids=ids, attention_mask=mask, position_ids=self.positions[:h, None], use_cache=True, logits_to_keep=1, **extra
            )
        self.positions[:h] += 1
        self.end += 1
        return out

    def advance(self, rows: torch.Tensor) -> None:
        """Keep rows ``rows`` (LongTensor [H']), in that order."""
        import torch

        assert self.mask is not None and self.positions is not None and self.shared is not None
        h, live = len(rows), slice(self.start, self.end)
        source, target = self.buffers
        for old, new in zip(source, target, strict=True):
            torch.index_select(old[: self.rows, :, live], 0, rows, out=new[:h, :, live])
        self.buffers = [target, source]
        self.mask[:h] = self.mask[rows]
        self.positions[:h] = self.positions[rows]
        self.shared[:h] = self.shared[rows]
        shrunk, self.rows = h < self.rows, h
        if shrunk and h:
            # Columns no remaining row uses leave attention (rows that joined late were
            # padded to rows that have left). Only a finished sentence frees columns.
            used = self.mask[:h, live].any(0).nonzero()
            self.start += int(used[0]) if len(used) else self.end - self.start


@functools.cache
def _column_cache_class() -> type:
    """A transformers ``Cache`` over a ``_RowCache`` (built on first use: transformers is
    imported only by a session that decodes)."""
    from transformers.cache_utils import Cache, DynamicLayer

    class ColumnLayer(DynamicLayer):
        """One layer as transformers sees it: ``update`` writes the new keys and values at the
        shared column and returns the live columns, as views of the buffers."""

        def __init__(self, rows: _RowCache, h: int, index: int) -> None:
            super().__init__()
            self.row_cache, self.h, self.index = rows, h, index
            self.keys, self.values = rows.layer(index)
            self.is_initialized, self.device = True, self.keys.device

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
            c, h, width = self.row_cache, self.h, key_states.shape[2]
            keys, values = c.layer(self.index)
            keys[:h, :, c.end : c.end + width] = key_states
            values[:h, :, c.end : c.end + width] = value_states
            return keys[:h, :, c.start : c.end + width], values[:h, :, c.start : c.end + width]

        def get_seq_length(self) -> int:
            return self.row_cache.end - self.row_cache.start

    class ColumnCache(Cache):
        def __init__(self, rows: _RowCache, h: int) -> None:
            super().__init__(layers=[ColumnLayer(rows, h, i) for i in range(rows.layers)])

    return ColumnCache


def _forward(adapter: ChatAdapter, ids: torch.Tensor, mask: torch.Tensor, offset: int, keep: int) -> Any:
    """A chat model's forward pass over ``ids`` [n, L] (``mask`` [n, L], 0 marks padding) after
    the shared prefix's first ``offset`` tokens (0: none), with logits [n, keep, V] of the
    last ``keep`` columns only."""
    import torch

    # Positions count real tokens only, as transformers' generate does with left padding.
    positions = (mask.cumsum(-1) - 1).clamp(min=0) + offset
    extra = {}
    if offset:
        shared = torch.ones(len(ids), dtype=torch.bool, device=ids.device)
        extra[prefix_attention.KEYWORD] = SharedPrefix(adapter.prefix_cache(), mask.bool(), shared)
    with torch.inference_mode():
        return adapter.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=keep, **extra)


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


# -- loading -----------------------------------------------------------------------------


# Adapters per model, dtype, device and prompt settings: an adapter with another prompt or
# hint is a few attributes over weights already in memory (spanaug_shared.weights).
_LOADED: dict[tuple[str, str, str, str, str, str, tuple[Example, ...], str, str], Adapter] = {}


def load(
    name_or_path: str,
    *,
    dtype: str = "auto",
    device: str = "cpu",
    quantize: Quantize = "none",
    system: str = DEFAULT_SYSTEM,
    prompt: str = DEFAULT_PROMPT,
    examples: Sequence[Example] = (),
    avoid_hint: str = "",
    prefer_hint: str = "",
    avoid_hint_chars: int = DEFAULT_AVOID_HINT_CHARS,
    progress: ProgressCallback | None = None,
) -> Adapter:
    """An adapter for a preset, a local folder or GGUF file, or (with network) a hub id.

    A process loads a model's weights once per (model, dtype, device, quantization): a second pipeline or
    decoder with the same model shares them, whatever its prompt settings.
    """
    shots = tuple((str(a), str(b)) for a, b in examples)
    key = (name_or_path, resolve_dtype(dtype, device), device, quantize, system, prompt, shots, avoid_hint, prefer_hint, avoid_hint_chars)
    if key not in _LOADED:
        model, tokenizer = load_weights(name_or_path, dtype, device, progress, quantize)
        end_ids = _end_ids(model, tokenizer)
        _LOADED[key] = (
            Seq2SeqAdapter(model, tokenizer, end_ids)
            if model.config.is_encoder_decoder
            else ChatAdapter(model, tokenizer, end_ids, system, prompt, shots, avoid_hint, prefer_hint, avoid_hint_chars)
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

