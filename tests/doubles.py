"""Test doubles for the pipeline: a decoder and an aligner whose behaviour is scripted.

``SynonymDecoder`` paraphrases by swapping words for synonyms from a table, honouring
avoid and include phrases like a real constrained decoder must; ``DiffAligner`` aligns a
span to the same position when the paraphrase kept the sentence length, scoring a changed
word higher than an unchanged one. Both record what they were asked, so tests can check
batching and constraints. They are registered by ``DoublesPlugin`` under the names
``synonym`` and ``diff``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from spanaug_core import AlignerConfig, Alignment, AlignItem, Candidate, DecodeRequest, DecoderConfig
from spanaug_core.hookspecs import hookimpl
from spanaug_core.text import contains_phrase, detokenize, tokenize

SYNONYMS = {
    "corroborate": ["confirm", "verify", "support", "back"],
    "confirm": ["verify"],
    "buy": ["purchase", "acquire"],
    "quickly": ["rapidly", "fast"],
}


class SynonymDecoder:
    """Scripted paraphraser: swap one word for a synonym that no avoid phrase bans."""

    name: ClassVar[str] = "synonym"

    class Config(DecoderConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config
        self.calls: list[list[DecodeRequest]] = []

    def decode(self, requests: Sequence[DecodeRequest], nbest: int) -> list[list[Candidate]]:
        self.calls.append(list(requests))
        out = []
        for req in requests:
            tokens = tokenize(req.text)
            cands = []
            for i, tok in enumerate(tokens):
                for syn in SYNONYMS.get(tok.lower(), []):
                    text = detokenize([*tokens[:i], syn, *tokens[i + 1 :]])
                    if any(contains_phrase(text, p) for p in req.constraints.avoid):
                        continue
                    if not all(contains_phrase(text, p) for p in req.constraints.include):
                        continue
                    cands.append(text)
            out.append(
                [
                    Candidate(text=t, tokens=tuple(tokenize(t)), score=-0.1 * (r + 1), scores={"logprob": -1.0 * (r + 1)})
                    for r, t in enumerate(cands[:nbest])
                ]
            )
        return out


class DiffAligner:
    """Scripted aligner: same position if the length is unchanged; a changed word scores 0.9, a kept one 0.6."""

    name: ClassVar[str] = "diff"

    class Config(AlignerConfig):
        threshold: float = 0.5

    def __init__(self, config: Config) -> None:
        self.config = config
        self.calls = 0

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        self.calls += 1
        out = []
        for item in items:
            s, e = item.source_span
            if len(item.target_tokens) != len(item.source_tokens):
                out.append(Alignment(span=None, score=0.0))
                continue
            changed = item.target_tokens[s:e] != item.source_tokens[s:e]
            score = 0.9 if changed else 0.6
            span = (s, e) if score >= self.config.threshold else None
            out.append(Alignment(span=span, score=score, candidates=((s, e, score),)))
        return out


class DoublesPlugin:
    """Registers the doubles, as a third-party plugin would."""

    @hookimpl
    def register_decoders(self, register):  # type: ignore[no-untyped-def]
        register(SynonymDecoder)

    @hookimpl
    def register_aligners(self, register):  # type: ignore[no-untyped-def]
        register(DiffAligner)
