"""The learning-curve figure's title fits its width: a long one is broken into lines, not cut."""

from __future__ import annotations

from spanaug_experiments.plot import TITLE_WIDTH, title_lines


def test_a_long_title_is_broken_into_lines_that_fit_and_keeps_every_word() -> None:
    title = "frame-id, a pool of 272 sentences: four-conditions, gold and filtered with more seeds"
    lines = title_lines(title).split("\n")
    assert len(lines) == 2 and all(len(line) <= TITLE_WIDTH for line in lines)
    assert " ".join(lines) == title
    assert title_lines("ner, 40 sentences") == "ner, 40 sentences"
