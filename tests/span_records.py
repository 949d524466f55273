"""One FrameNet-like source sentence and records rewriting its target, for the span filters' tests."""

from __future__ import annotations

from spanaug_core.types import Augmented, Constraints, Example, Span

SOURCE = Example(
    id="s",
    tokens=("Maria", "bought", "a", "car", "last", "month", "."),
    spans=(Span(start=1, end=2, label="Commerce_buy", role="target", group="1"), Span(start=0, end=1, label="Buyer", role="argument", group="1")),
)


def record(tokens: str, at: tuple[int, int] | None, model: str | None = None) -> Augmented:
    """A record of SOURCE's target with these tokens, its new target at ``at`` (None: a whole-sentence record)."""
    words = tuple(tokens.split())
    spans = [Span(start=0, end=1, label="Buyer", role="argument", group="1")]
    if at is not None:
        spans.append(Span(start=at[0], end=at[1], label="Commerce_buy", role="target", group="1"))
    return Augmented(
        id="s/s0/it1", source_id="s", target=0 if at is not None else None, iteration=1, tokens=words,
        text=" ".join(words), spans=tuple(spans), scores={}, constraints=Constraints(),
        components={"model": model} if model else {},
    )
