"""string-match: the trivial baseline — the first exact (case-insensitive) occurrence of the span.

It is right whenever the paraphrase kept the span's words and wrong (None) whenever it
rephrased them, which makes it the floor every real aligner has to clear on
``paraphrased`` items and a fast first choice when a decoder did not touch the span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from spanaug_core.protocols import ComponentConfig
from spanaug_core.text import find_copy, find_phrase
from spanaug_core.types import AlignItem, Alignment


def copied(span: tuple[int, int] | None) -> Alignment:
    """The alignment of a span found as a copy of the source span's words: certain (score 1) or None."""
    return Alignment(span=span, score=1.0, candidates=((*span, 1.0),)) if span else Alignment(span=None, score=0.0)


def only_copy(item: AlignItem) -> tuple[int, int] | None:
    """Where the source span's words occur in the target if they occur there exactly once (in their
    own case, else ignoring case): the pipeline's rule for a kept span, :func:`find_copy`."""
    return find_copy(item.target_tokens, item.source_tokens[slice(*item.source_span)], (), unique=True)


class StringMatchAligner:
    """Baseline: the first case-insensitive occurrence of the source span's words in the target."""

    name: ClassVar[str] = "string-match"

    # Not AlignerConfig: a found copy is certain and anything else is None, so a threshold
    # would be an option that does nothing; setting one is refused as unknown.
    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        return [
            copied(find_phrase(item.target_tokens, item.source_tokens[slice(*item.source_span)], case_sensitive=False))
            for item in items
        ]
