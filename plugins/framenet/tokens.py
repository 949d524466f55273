"""From tokens back to FrameNet's character offsets.

FrameNet annotates character offsets (``end`` inclusive). The reader splits a sentence
with ``spanaug_core.text.tokenize_with_offsets``, cutting tokens wherever an annotated span
starts or ends inside one, so each span maps to whole tokens. The writer goes the other
way: ``token_offsets`` finds given tokens in a sentence text to turn token spans into
character offsets.
"""

from __future__ import annotations

from collections.abc import Sequence


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
