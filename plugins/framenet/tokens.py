"""Tokenizing FrameNet sentences without ever cutting an annotated character span.

FrameNet annotates character offsets (``end`` inclusive). The sentence is split with the
project's tokenizer, and every token is split again wherever an annotated span starts or
ends inside it, so each span maps to whole tokens. Spans whose edges fall on whitespace
are snapped inward to the tokens they cover. The writer goes the other way:
``token_offsets`` finds given tokens in a sentence text to turn token spans into
character offsets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from spanaug_core.text import tokenize


@dataclass(frozen=True)
class Tokenized:
    """Tokens and their character offsets ``[start, end)`` in the sentence."""

    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]

    def token_span(self, start: int, end_inclusive: int) -> tuple[int, int] | None:
        """Token offsets ``[first, last + 1)`` of the characters ``start..end_inclusive``, or None if it covers no token."""
        first = next((i for i, (s, _) in enumerate(self.offsets) if s >= start), None)
        last = next((i for i in range(len(self.offsets) - 1, -1, -1) if self.offsets[i][1] <= end_inclusive + 1), None)
        if first is None or last is None or last < first:
            return None
        return first, last + 1


def tokenize_with_boundaries(text: str, boundaries: Iterable[int]) -> Tokenized:
    """Tokens of ``text``, also split at every character offset in ``boundaries``."""
    cuts = sorted(set(boundaries))
    tokens: list[str] = []
    offsets: list[tuple[int, int]] = []
    position = 0
    for token in tokenize(text):
        start = text.index(token, position)
        end = start + len(token)
        position = end
        edges = [start, *(c for c in cuts if start < c < end), end]
        for a, b in zip(edges, edges[1:], strict=False):
            tokens.append(text[a:b])
            offsets.append((a, b))
    return Tokenized(tuple(tokens), tuple(offsets))


def token_offsets(text: str, tokens: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """Character offsets ``[start, end)`` of ``tokens`` in ``text``, or None unless ``text`` is
    exactly those tokens in order with only whitespace around them."""
    offsets: list[tuple[int, int]] = []
    position = 0
    for token in tokens:
        start = position
        while start < len(text) and text[start].isspace():
            start += 1
        if not text.startswith(token, start):
            return None
        position = start + len(token)
        offsets.append((start, position))
    return tuple(offsets) if not text[position:].strip() else None
