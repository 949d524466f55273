"""Bracketed proposition columns (CoNLL-2005 and CoNLL-2012) to labeled spans and back.

One column per predicate; a cell is ``*`` with opening brackets before the star and
closing brackets after it: ``(A0*``, ``*``, ``*)``, ``(V*)``, ``(A1*(A2*)``. CoNLL-2004/5
files may repeat the label when closing (``*A0)``); ``close_labels`` reports whether a
column did, so the writer can reproduce it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CELL = re.compile(r"^((?:\([^()*\s]+)*)\*((?:[^()*\s]*\))*)$")
_OPEN = re.compile(r"\(([^()*\s]+)")
_CLOSE = re.compile(r"([^()*\s]*)\)")


class BracketError(ValueError):
    """A column that is not well-formed bracket notation; ``row`` (0-based) is the cell at fault,
    so a reader can name its line in the file."""

    def __init__(self, row: int, message: str) -> None:
        super().__init__(message)
        self.row = row


def is_bracket_cell(cell: str) -> bool:
    """Whether ``cell`` is written in bracket notation (``*``, ``(A0*``, ``*)``...)."""
    return _CELL.match(cell) is not None


def decode_column(cells: Sequence[str]) -> tuple[list[tuple[int, int, str]], bool]:
    """Spans ``(start, end exclusive, label)`` of one column, and whether closings repeat labels.

    Raises BracketError on a cell that is not bracket notation or on unbalanced brackets.
    """
    spans: list[tuple[int, int, str]] = []
    stack: list[tuple[int, str]] = []
    close_labels = False
    for row, cell in enumerate(cells):
        match = _CELL.match(cell)
        if not match:
            raise BracketError(row, f"expected a bracket cell such as '*', '(A0*', '*)' or '(V*)', got {cell!r}")
        for label in _OPEN.findall(match.group(1)):
            stack.append((row, label))
        for closing in _CLOSE.findall(match.group(2)):
            if not stack:
                raise BracketError(row, f"')' closes no open bracket in {cell!r}")
            start, label = stack.pop()
            if closing:
                close_labels = True
                if closing != label:
                    raise BracketError(row, f"'{closing})' closes '({label}' in {cell!r}")
            spans.append((start, row + 1, label))
    if stack:
        start, label = stack[-1]
        raise BracketError(start, f"bracket '({label}' is never closed")
    return sorted(spans), close_labels


def encode_column(spans: Sequence[tuple[int, int, str]], length: int, close_labels: bool = False) -> list[str]:
    """The column's cells for properly nested spans (outer spans open first)."""
    opens = [""] * length
    closes = [""] * length
    # Outer spans first at a shared start, inner spans first at a shared end.
    for start, _end, label in sorted(spans, key=lambda s: (s[0], -s[1])):
        opens[start] += f"({label}"
    for _start, end, label in sorted(spans, key=lambda s: (-s[0], s[1])):
        closes[end - 1] += f"{label if close_labels else ''})"
    return [f"{o}*{c}" for o, c in zip(opens, closes, strict=True)]
