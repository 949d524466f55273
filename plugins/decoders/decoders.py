"""The registered decoders: ``vdba`` (ours) and ``hf-beam`` (transformers' beam search baseline).

Both turn text constraints into token sequences the model could produce (each phrase
with and without a leading space; case variants come from the expander), decode, and
then check every hypothesis at the word level on its text: one that contains an avoid
phrase or lacks an include phrase is never returned, and ``stats['caught']`` counts
what that check removed (what the token-level constraints missed, e.g. a banned word
produced through another segmentation). With ``same_sentences`` (the default) a
hypothesis with more sentences than its source is not returned either, and
``stats['extra_sentence']`` counts those: a model whose end is held back until an
include phrase is placed tends to finish its paraphrase and then write a second
sentence ("...self-assurance. To paraphrase this, you could say...") to place it. For
the same reason a hypothesis that repeats a word n-gram (``repeat_ngram``, 4) its source
does not repeat is dropped (``stats['repeated']``): having paraphrased a kept phrase, the
model is made to write it again word for word ("...in the Washington region to replace
retiring jurists on federal courts in the Washington area"); and one that writes an include
phrase beside a near copy of it (``echo``, ``stats['echo']``: "...from her neighbor from her
neighbour", the kept phrase paraphrased, then forced in as well).

Scores of a candidate: ``logprob`` is the sum of its token log-probabilities (end token
included), ``norm_logprob`` = ``logprob / length ** length_penalty`` (``score``, the
ranking key), and ``prob`` = ``exp(logprob / length)``, the geometric mean of the
per-token probabilities, a probability-like value in [0, 1]. ``fluency`` is the
per-token log-probability minus the source sentence's own when forced as the answer to the
same prompt: near 0 for a paraphrase the model finds as natural as copying the source,
well below it for text the constraints forced into awkward places ("...from her neighbor
from her neighbour"). The source's value is computed once per sentence. ``recovery`` (off by
default) runs the other way: the source's per-token log-probability as the answer to the
*candidate's* prompt, minus the same baseline. A candidate that dropped a fact ("the deal",
"on Thursday") leaves the model nothing to recover it from, so it scores far below 0.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from spanaug_core.errors import ConfigError
from spanaug_core.flags import flag
from spanaug_core.protocols import DecoderConfig, ProgressCallback, ProgressEvent, RequestSource
from spanaug_core.scheduling import ListSource
from spanaug_core.text import contains_phrase, find_all, is_content_word, tokenize
from spanaug_core.types import Candidate, DecodeRequest
from spanaug_shared.weights import QUANTIZE_HELP, Quantize, check_quantize
from spanaug_decoders.adapters import (
    DEFAULT_AVOID_HINT,
    DEFAULT_AVOID_HINT_CHARS,
    DEFAULT_PREFER_HINT,
    DEFAULT_PROMPT,
    DEFAULT_SYSTEM,
    FEW_SHOT,
    Adapter,
    ChatAdapter,
    avoid_hint_problem,
    prefer_hint_problem,
    load,
)

DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct"

_CACHED_SOURCES = 4096
# A sentence boundary: end punctuation (and closing quotes/brackets), space, then a word.
_SENTENCE_BREAK = re.compile(r"[.!?][\"'”’)\]]*\s+[\"'“‘(\[]*\w")


# A chat model's lead-in before the paraphrase, in the ways it starts: "Here's a revised
# version of the sentence:", "The revised sentence would be:", "The sentence can be
# rephrased as:", "Paraphrase:". A sentence with a colon of its own ("The court announced
# its sentence: ...") starts otherwise.
_LEAD_STARTS = (
    r"here(?:'s| is| are)|sure|certainly|of course|okay|paraphrased?|rewritten|revised|rephrased|reworded"
    r"|(?:the|a|an|my) (?:revised|rewritten|rephrased|reworded|paraphrased|new) (?:sentence|version|text)"
    r"|the sentence (?:can|could|would|might|may|is|was|should|has)\b"
)
_PREAMBLE = re.compile(rf"^\s*(?P<lead>(?:{_LEAD_STARTS})\b[^:\n]{{0,120}}):\s*(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
# A model shown earlier turns (few-shot examples) may run on into an invented next turn,
# at times with a stray letter between the sentence's end and the speaker ("1999.VHuman:").
_TURN = re.compile(r"(?:^|(?<=[\s.!?\"'”’])|(?<=[.!?]\w))(?:Human|User|Assistant|System)\s*:")
_QUOTES = "\"'“”‘’"


def strip_preamble(text: str, source: str) -> str | None:
    """The paraphrase without a chat preamble, quotes around it dropped; None when it has none.

    A lead-in that the source itself starts with is the source's own words, not a preamble.
    An output that is only a lead-in ("Here's a revised version of the sentence:") gives "".
    """
    found = _PREAMBLE.match(text)
    if found is None or source.lower().startswith(found.group("lead").strip().lower()):
        return None
    rest = found.group("rest").strip()
    if len(rest) > 1 and rest[0] in _QUOTES and rest[-1] in _QUOTES:
        rest = rest[1:-1].strip()
    return rest


def sentence_breaks(text: str) -> int:
    """How many sentence boundaries a text has inside it (0 for one sentence); a chat turn's
    speaker ("...was wrong.Human: Can you paraphrase...") starts a sentence too."""
    return len(_SENTENCE_BREAK.findall(text)) + len(_TURN.findall(text))


def repeated_ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """The lower-cased word n-grams that occur more than once in a text."""
    words = [w.lower() for w in tokenize(text)]
    seen: set[tuple[str, ...]] = set()
    repeated: set[tuple[str, ...]] = set()
    for i in range(len(words) - n + 1):
        gram = tuple(words[i : i + n])
        (repeated if gram in seen else seen).add(gram)
    return repeated


def echoes(text: str, phrase: str, similarity: float) -> bool:
    """Whether ``text`` holds ``phrase`` and writes it, or part of it, a second time.

    A near copy of the whole phrase elsewhere (difflib ratio of the lower-cased words >=
    ``similarity``): "...from her neighbor from her neighbour" for the include phrase "from
    her neighbour", which the model had already paraphrased. Or a piece of it twice (three
    words, or two with a content word): "...for what you for what you get", "...at
    mediocre at best" -- the model began the phrase, left it, and was made to write it whole.
    """
    from difflib import SequenceMatcher

    words = [t.lower() for t in tokenize(text)]
    needle = [t.lower() for t in tokenize(phrase)]
    exact = list(find_all(words, needle))
    if not exact:
        return False
    target = " ".join(needle)
    n = len(needle)
    for i in range(len(words) - n + 1):
        if any(i < end and start < i + n for start, end in exact):
            continue
        if SequenceMatcher(None, " ".join(words[i : i + n]), target).ratio() >= similarity:
            return True
    pieces = {
        tuple(needle[i : i + k])
        for k in range(2, n)
        for i in range(n - k + 1)
        if k >= 3 or any(is_content_word(w) for w in needle[i : i + k])
    }
    return any(len(list(find_all(words, piece))) >= 2 for piece in pieces)


class HFDecoderConfig(DecoderConfig):
    """Options shared by the decoders that run a Hugging Face model."""

    model: str | None = Field(
        default=DEFAULT_MODEL,
        description="paraphrase model: a preset name, local folder or GGUF file, or hub id",
        json_schema_extra=flag("--model"),
    )
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        default="auto", description="weights and compute dtype (auto: float32 on cpu, bfloat16 on cuda)"
    )
    device: str = Field(default="cpu", description="torch device (cpu, cuda, cuda:1...)")
    quantize: Quantize = Field(default="none", description=QUANTIZE_HELP)
    max_length: int | None = Field(default=None, ge=1, description="max generated tokens (default: 2x the sentence's tokens + 16; hf-beam: of the batch's longest)")
    length_penalty: float = Field(default=1.0, description="norm_logprob = logprob / length ** length_penalty")
    case_sensitive: bool = Field(default=False, description="word-level constraint check is case-sensitive")
    same_sentences: bool = Field(default=True, description="drop hypotheses with more sentences than their source")
    repeat_ngram: int = Field(default=4, ge=0, description="drop hypotheses repeating a word n-gram their source does not (0: off)")
    echo: float | None = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="drop hypotheses that write an include phrase next to a near copy of it (a kept argument written twice; "
        "difflib similarity >= this, null: off)",
    )
    fluency: bool = Field(
        default=True,
        description="score each candidate's fluency: its per-token log-probability minus the source's (the source "
        "forced as the answer, one extra forward pass per source sentence); the `fluency` filter and rerank read it",
    )
    recovery: bool = Field(
        default=False,
        description="score how well each candidate lets the model recover its source: the source's per-token log-probability "
        "as the answer to the candidate's prompt, minus its own (one extra forward pass per candidate, batched); catches "
        "dropped facts; the `recovery` filter and rerank read it",
    )
    strip_preamble: bool = Field(
        default=True, description="chat models: cut a lead-in such as \"Here's a revised version:\" off an output, then check it"
    )
    system: str = Field(default=DEFAULT_SYSTEM, description="chat models: system message")
    prompt: str = Field(default=DEFAULT_PROMPT, description="chat models: user message template with {text}")
    examples: list[tuple[str, str]] = Field(
        default=list(FEW_SHOT),
        description="chat models: (sentence, paraphrase) turns shown before the sentence (few-shot; [] for none)",
    )
    avoid_hint: str = Field(
        default=DEFAULT_AVOID_HINT,
        description="chat models: said after the sentence when it has avoid phrases, which fill {avoid}; {prefer} "
        "is prefer_hint when the run's lexicon offers words, else nothing (\"\" for no hint)",
    )
    prefer_hint: str = Field(
        default=DEFAULT_PREFER_HINT,
        description="chat models: the avoid hint's {prefer} when the run's lexicon offers words, which fill {words} (\"\" for none)",
    )
    avoid_hint_chars: int = Field(
        default=DEFAULT_AVOID_HINT_CHARS,
        ge=1,
        description="chat models: past this many characters of avoided phrases, the avoid hint names one form of each, "
        "as many as fit (a long prompt widens every row of the batch in memory)",
    )

    @field_validator("avoid_hint", "prefer_hint")
    @classmethod
    def _placeholders(cls, hint: str, info: ValidationInfo) -> str:
        # Checked here, before a model loads: a wrong placeholder would otherwise fail on the first request.
        if problem := (avoid_hint_problem if info.field_name == "avoid_hint" else prefer_hint_problem)(hint):
            raise ValueError(problem)
        return hint

    @model_validator(mode="after")
    def _quantize_runs_here(self) -> HFDecoderConfig:
        try:
            check_quantize(self.quantize, self.dtype, self.device)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self


class _HFDecoder:
    """Loading, constraint encoding and the word-level check shared by both decoders."""

    config: HFDecoderConfig

    def __init__(self, config: HFDecoderConfig, adapter: Adapter | None = None) -> None:
        self.config = config
        self._adapter = adapter
        self.progress: ProgressCallback | None = None
        self.stats: dict[str, int] = {"hypotheses": 0, "caught": 0, "extra_sentence": 0, "repeated": 0, "echo": 0, "preamble": 0}
        # A run revisits a chunk of sources round after round: each one's value is computed once.
        self._source_logprobs = lru_cache(maxsize=_CACHED_SOURCES)(self.source_logprob)

    @property
    def adapter(self) -> Adapter:
        """The model adapter, loaded on first use (a preset is fetched and converted if needed)."""
        if self._adapter is None:
            if self.config.model is None:
                raise ConfigError(f"decoder '{self.name}' needs a model (--model NAME|PATH)")  # type: ignore[attr-defined]
            self._adapter = load(
                self.config.model,
                dtype=self.config.dtype,
                device=self.config.device,
                quantize=self.config.quantize,
                system=self.config.system,
                prompt=self.config.prompt,
                examples=self.config.examples,
                avoid_hint=self.config.avoid_hint,
                prefer_hint=self.config.prefer_hint,
                avoid_hint_chars=self.config.avoid_hint_chars,
                progress=self.progress,
            )
        return self._adapter

    def encode(self, phrases: Sequence[str]) -> list[list[list[int]]]:
        """Per phrase, its alternative token sequences."""
        return [self.adapter.encode_phrase(p) for p in phrases]

    def max_length(self, texts: Sequence[str]) -> int:
        """The generated-token limit for these sentences: ``max_length`` or 2x the longest + 16."""
        if self.config.max_length is not None:
            return self.config.max_length
        longest = max(len(self.adapter.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts)
        return 2 * longest + 16

    def _checked(self, request: DecodeRequest, hyps: list[tuple[tuple[int, ...], float, int]], nbest: int) -> list[Candidate]:
        cs, constraints = self.config.case_sensitive, request.constraints
        breaks = sentence_breaks(request.text) if self.config.same_sentences else None
        n, echo = self.config.repeat_ngram, self.config.echo
        source_repeats = repeated_ngrams(request.text, n) if n else set()
        # Include phrases the source itself writes twice are the source's, not the decoder's.
        watched = [p for p in constraints.include if not echoes(request.text, p, echo)] if echo is not None else []
        kept: list[tuple[str, tuple[str, ...], dict[str, float]]] = []
        seen: set[str] = set()
        for ids, logprob, length in hyps:
            text = self.adapter.decode(ids)
            if self.config.strip_preamble and (stripped := strip_preamble(text, request.text)) is not None:
                # The constraints and checks below then judge the paraphrase alone; a bare
                # lead-in leaves nothing and is dropped.
                self.stats["preamble"] += 1
                text = stripped
            if not text or text in seen:
                continue
            seen.add(text)
            self.stats["hypotheses"] += 1
            banned = any(contains_phrase(text, p, cs) for p in constraints.avoid)
            met = tuple(p for p in constraints.include if contains_phrase(text, p, cs))
            if banned or len(met) < len(set(constraints.include)):
                self.stats["caught"] += 1
                continue
            if breaks is not None and sentence_breaks(text) > breaks:
                self.stats["extra_sentence"] += 1
                continue
            if n and repeated_ngrams(text, n) - source_repeats:
                self.stats["repeated"] += 1
                continue
            if any(echoes(text, p, echo) for p in watched):
                self.stats["echo"] += 1
                continue
            if len(kept) < nbest:
                norm = logprob / max(length, 1) ** self.config.length_penalty
                per_token = logprob / max(length, 1)
                scores = {"logprob": logprob, "norm_logprob": norm, "prob": math.exp(per_token), "length": float(length)}
                if self.config.fluency:
                    scores["fluency"] = per_token - self._source_logprobs(request.text)
                kept.append((text, met, scores))
        if self.config.recovery and kept:
            source = self._source_logprobs(request.text)
            recovered = self.adapter.forced_logprobs([(text, request.text) for text, _, _ in kept])
            for (_, _, scores), (logprob, length) in zip(kept, recovered, strict=True):
                scores["recovery"] = logprob / length - source
        return [Candidate(text=text, tokens=tuple(tokenize(text)), score=scores["norm_logprob"], scores=scores, met=met) for text, met, scores in kept]

    def source_logprob(self, text: str) -> float:
        """Per token, the model's log-probability of answering ``text`` with ``text`` itself."""
        logprob, length = self.adapter.forced_logprob(text, text)
        return logprob / length


class VDBADecoder(_HFDecoder):
    """Constrained paraphrasing with multi-state tries and vectorized dynamic beam allocation.

    Decoding is a stream: ``batch_size`` sentences are in flight and a finished one's rows
    go to the next waiting request at once (continuous batching), so the model's batch
    stays full until the input runs out. Each sentence's length limit comes from its own
    text, so what a request gets does not depend on the requests it shared a batch with.
    """

    name: ClassVar[str] = "vdba"

    class Config(HFDecoderConfig):
        prune: float | None = Field(default=None, ge=0, description="drop candidates this far (logprob) below the best finished one")
        sample_top_k: int | None = Field(default=None, ge=1, description="sample among each hypothesis' top-k tokens instead of searching")
        seed: int = Field(default=0, description="random seed for sampling")
        vectorize: bool = Field(default=True, description="decode the batch together (False: one sentence at a time)")
        continuous: bool = Field(
            default=True,
            description="refill a finished sentence's rows with the next request at once (False: fixed batches, the faster choice on a GPU; docs/decoding.md)",
        )
        prefix_cache: bool = Field(default=True, description="chat models: encode the prompt's constant start once and let every row attend that one copy (false: encode every prompt whole)")

    config: Config

    @property
    def repeatable(self) -> bool:
        """Whether a request always gets the same candidates, so the pipeline may reuse them (ConstrainedDecoder):
        searching, yes (each sentence's length limit is its own); sampling, no."""
        return self.config.sample_top_k is None

    def __init__(self, config: Config, adapter: Adapter | None = None) -> None:
        super().__init__(config, adapter)
        # Search steps, and those with all batch_size sentences in flight, with their seconds.
        self.occupancy: dict[str, float] = {"steps": 0, "full_steps": 0, "step_s": 0.0, "full_step_s": 0.0}

    def decode(self, requests: Sequence[DecodeRequest], nbest: int) -> list[list[Candidate]]:
        """Up to ``nbest`` candidates per request, best first, all satisfying their constraints."""
        out: list[list[Candidate]] = [[] for _ in requests]
        done = 0
        for finished in self.stream(ListSource(requests), nbest):
            for key, candidates in finished:
                out[key] = candidates
            done += len(finished)
            if self.progress is not None:
                self.progress(ProgressEvent("decode", done, len(requests), stats=dict(self.stats)))
        return out

    def stream(self, source: RequestSource, nbest: int) -> Iterator[list[tuple[int, list[Candidate]]]]:
        """Decode what ``source`` hands out, yielding the requests finished at each step.

        Requests are taken whenever rows are free, so a caller may add to ``source`` between
        two yields (the next iteration of a span) and the stream ends only when ``source``
        has nothing left and nothing is in flight.
        """
        from spanaug_decoders.tries import NegativeTrie, PositiveTrie
        from spanaug_decoders.vdba import BeamSearch, SearchOptions

        adapter = self.adapter
        options = SearchOptions.of(self.config)
        width = self.config.batch_size if self.config.vectorize else 1
        engine: BeamSearch | None = None
        requests: dict[int, DecodeRequest] = {}
        while True:
            if engine is None or not len(engine):
                engine = BeamSearch(adapter.start(self.config.prefix_cache), adapter.end_ids, options)
            joins = engine.session.joins_running and self.config.continuous
            if len(engine) < width and (joins or not len(engine)):
                for key, request in source.take(width - len(engine)):
                    requests[key] = request
                    engine.add(
                        key,
                        request,
                        PositiveTrie.from_alternatives(self.encode(request.constraints.include)),
                        NegativeTrie([v for alts in self.encode(request.constraints.avoid) for v in alts]),
                        self.max_length([request.text]),
                    )
            if not len(engine):
                return
            t0 = time.perf_counter()
            full = len(engine) == width
            finished = engine.step()
            spent = time.perf_counter() - t0
            self.occupancy["steps"] += 1
            self.occupancy["step_s"] += spent
            if full:
                self.occupancy["full_steps"] += 1
                self.occupancy["full_step_s"] += spent
            if finished:
                yield [
                    (key, self._checked(requests.pop(key), [(h.output, h.logprob, h.length) for h in hyps], nbest))
                    for key, hyps in finished
                ]


class HFBeamDecoder(_HFDecoder):
    """Baseline: transformers' beam search with bad_words_ids (avoid phrases only)."""

    name: ClassVar[str] = "hf-beam"

    class Config(HFDecoderConfig):
        pass

    config: Config

    def decode(self, requests: Sequence[DecodeRequest], nbest: int) -> list[list[Candidate]]:
        """Up to ``nbest`` candidates per request, best first, all satisfying their constraints."""
        out: list[list[Candidate]] = []
        size = self.config.batch_size
        for start in range(0, len(requests), size):
            batch = list(requests[start : start + size])
            for request, hyps in zip(batch, self._decode_batch(batch), strict=True):
                out.append(self._checked(request, hyps, nbest))
            if self.progress is not None:
                self.progress(ProgressEvent("decode", len(out), len(requests), stats=dict(self.stats)))
        return out

    def _decode_batch(self, batch: list[DecodeRequest]) -> list[list[tuple[tuple[int, ...], float, int]]]:
        """Per request, finished hypotheses as (token ids, logprob, length), best first.

        The ids include the end token that finished a hypothesis (``Adapter.decode`` drops
        special tokens and cuts at the line break).
        """
        import torch

        if any(r.constraints.include for r in batch):
            raise ConfigError("decoder 'hf-beam' supports avoid phrases only; use --decoder vdba for include phrases")
        adapter = self.adapter
        results: dict[int, list[tuple[tuple[int, ...], float, int]]] = {}
        # transformers takes one bad_words_ids list per generate call: group requests that share theirs.
        by_avoid: dict[tuple[str, ...], list[int]] = {}
        for i, r in enumerate(batch):
            by_avoid.setdefault(tuple(sorted(r.constraints.avoid)), []).append(i)
        k = self.config.beam_size
        for avoid, idxs in by_avoid.items():
            texts = [batch[i].text for i in idxs]
            # Each request's own avoid list, in its order: the prompt vdba would give it.
            sources = (
                [adapter.render(batch[i].text, batch[i].constraints.avoid, batch[i].constraints.prefer) for i in idxs]
                if isinstance(adapter, ChatAdapter)
                else texts
            )
            enc = adapter.tokenizer(sources, return_tensors="pt", padding=True, add_special_tokens=not isinstance(adapter, ChatAdapter))
            enc = enc.to(adapter.device)
            bad = [v for alts in self.encode(avoid) for v in alts]
            with torch.inference_mode():
                out = adapter.model.generate(
                    **enc,
                    num_beams=k,
                    num_return_sequences=k,
                    do_sample=False,
                    max_new_tokens=self.max_length(texts),
                    length_penalty=self.config.length_penalty,
                    early_stopping=True,
                    bad_words_ids=bad or None,
                    eos_token_id=adapter.end_ids,
                    pad_token_id=adapter.tokenizer.pad_token_id,
                    return_dict_in_generate=True,
                    output_scores=True,
                )
            is_seq2seq = adapter.model.config.is_encoder_decoder
            # Generated ids start after the prompt (decoder-only) or the decoder start token.
            first = 1 if is_seq2seq else enc["input_ids"].shape[1]
            ends = set(adapter.end_ids)  # a chat model's line-break tokens make this list long
            for j, i in enumerate(idxs):
                hyps = []
                for r in range(j * k, (j + 1) * k):
                    ids: list[int] = []
                    for tok in out.sequences[r, first:].tolist():
                        ids.append(tok)  # an end token too: it may carry text before a line break
                        if tok in ends:
                            break
                    length = len(ids)
                    norm = float(out.sequences_scores[r])
                    hyps.append((tuple(ids), norm * max(length, 1) ** self.config.length_penalty, length))
                results[i] = hyps
        return [results[i] for i in range(len(batch))]
