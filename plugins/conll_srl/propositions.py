"""Propositions (a predicate and its arguments) as spans, shared by every SRL format.

Each predicate becomes a ``target`` span (label: its roleset such as ``come.03``, or its
lemma when the format has no sense) and each argument an ``argument`` span; both carry
``group`` = the predicate's column number in the file, which ties them together and
gives writers the column order back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spanaug_core.errors import one_line
from spanaug_core.types import Example, Span


@dataclass
class Proposition:
    """One predicate column: the predicate span, its label and attrs, its argument spans."""

    start: int
    end: int
    label: str
    attrs: dict[str, Any] = field(default_factory=dict)
    arguments: list[Span] = field(default_factory=list)


def argument(start: int, end: int, label: str, error: Callable[[str], Exception], **attrs: Any) -> Span:
    """An argument span. A label the core refuses (one with a control character) raises
    ``error(message)`` instead: an error that names the line the label was read from."""
    try:
        return Span(start=start, end=end, label=label, role="argument", attrs=attrs)
    except ValueError as exc:
        raise error(one_line(exc)) from None


def to_spans(propositions: Sequence[Proposition]) -> list[Span]:
    """The spans of an example: each target followed by its arguments."""
    spans: list[Span] = []
    for column, prop in enumerate(propositions):
        group = str(column)
        spans.append(Span(start=prop.start, end=prop.end, label=prop.label, role="target", group=group, attrs=prop.attrs))
        spans.extend(arg.model_copy(update={"group": group}) for arg in prop.arguments)
    return spans


def from_example(example: Example) -> list[Proposition]:
    """The propositions of an example, predicates in sentence order.

    Arguments whose group names no target belong to no proposition; ``orphans`` counts them
    so a writer can report what it could not place.
    """
    targets = [span for span in example.spans if span.role == "target"]
    by_group = {span.group: Proposition(span.start, span.end, span.label, dict(span.attrs)) for span in targets}
    for span in example.spans:
        if span.role != "target" and span.group in by_group:
            by_group[span.group].arguments.append(span)
    return sorted(by_group.values(), key=lambda p: (p.start, p.end))


def orphans(example: Example) -> int:
    """Spans a writer cannot place: non-targets whose group has no target."""
    groups = {span.group for span in example.spans if span.role == "target"}
    return sum(1 for span in example.spans if span.role != "target" and span.group not in groups)
