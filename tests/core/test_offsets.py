"""Offsets are integers: a string, a fraction, a whole float or a bool is refused, never rounded."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from spanaug_core.types import Example, Span


@pytest.mark.parametrize("offset", ["1", 1.5, 1.0, True])
def test_a_token_offset_that_is_no_integer_is_refused(offset) -> None:
    with pytest.raises(ValidationError, match=f"expected an integer token offset, got {offset!r}"):
        Span(start=offset, end=2, label="x")
    with pytest.raises(ValidationError, match=f"expected an integer token offset, got {offset!r}"):
        Span(start=0, end=offset, label="x")


@pytest.mark.parametrize("offset", ["4", 4.5, 4.0, True])
@pytest.mark.parametrize("edge", ["start", "end"])
def test_a_character_offset_that_is_no_integer_is_refused(offset, edge) -> None:
    span = {"start": 4, "end": 7, "label": "Animal", edge: offset}
    with pytest.raises(ValueError, match=rf"spans\[1\]: expected an integer character offset for {edge}, got {offset!r}"):
        Example.from_text("e", "the cat sat", [{"start": 0, "end": 3, "label": "D"}, span])
    assert Example.from_text("e", "the cat sat", [{"start": 4, "end": 7, "label": "Animal"}]).spans == (Span(start=1, end=2, label="Animal"),)
