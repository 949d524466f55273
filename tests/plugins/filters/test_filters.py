"""The built-in filters, one criterion each."""

from __future__ import annotations

from spanaug_core.protocols import FilterContext
from spanaug_core.types import Augmented, Constraints, Example
from spanaug_filters.basic import AlignmentScoreFilter, CopyFilter, MaxIterationFilter, ParaphraseScoreFilter

SOURCE = Example(id="s", tokens=("The", "panel", "will", "corroborate", "it", "."))


def record(text: str, iteration: int = 1, **scores: float) -> Augmented:
    return Augmented(
        id="s/s0/it1", source_id="s", target=0, iteration=iteration, tokens=tuple(text.split()), text=text,
        spans=(), scores={"paraphrase": -0.5, "alignment": 0.8, **scores}, constraints=Constraints(),
    )


def ctx(*previous: str) -> FilterContext:
    return FilterContext(source=SOURCE, previous_texts=frozenset(previous))


def test_max_iteration() -> None:
    f = MaxIterationFilter(MaxIterationFilter.Config(max_iteration=2))
    assert f.check(record("a", iteration=2), ctx()) is None
    assert f.check(record("a", iteration=3), ctx()) == "iteration 3 > 2"


def test_score_thresholds() -> None:
    para = ParaphraseScoreFilter(ParaphraseScoreFilter.Config(min_score=-0.4))
    assert para.check(record("a"), ctx()) == "paraphrase score -0.5 < -0.4"
    assert para.check(record("a", paraphrase=-0.3), ctx()) is None
    align = AlignmentScoreFilter(AlignmentScoreFilter.Config())
    assert align.check(record("a", alignment=0.49), ctx()) == "alignment score 0.49 < 0.5"
    assert align.check(record("a"), ctx()) is None


def test_copy() -> None:
    f = CopyFilter(CopyFilter.Config())
    assert f.check(record("the panel will corroborate it."), ctx()) == "identical to the source"
    assert f.check(record("The panel will confirm it."), ctx("The panel will confirm it .")) == "identical to an earlier output"
    assert f.check(record("The panel will confirm it."), ctx("The panel will verify it.")) is None
    strict = CopyFilter(CopyFilter.Config(case_sensitive=True))
    assert strict.check(record("the panel will corroborate it."), ctx()) is None
