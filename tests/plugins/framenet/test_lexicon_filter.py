"""The frame-lexicon filter against the embedded sample release (Commerce_buy lists buy.v, purchase.v, purchase.n)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from spanaug_framenet.lexicon import FrameLexiconFilter
from spanaug_framenet.release import SAMPLE

from spanaug_core.errors import DataError
from spanaug_core.protocols import FilterContext
from spanaug_core.types import Augmented, Constraints, Example, Span

SOURCE = Example(
    id="s",
    tokens=("Maria", "bought", "a", "bike", "."),
    spans=(Span(start=1, end=2, label="Commerce_buy", role="target", group="1"), Span(start=0, end=1, label="Buyer", role="argument", group="1")),
)


def record(tokens: tuple[str, ...], at: tuple[int, int] | None, label: str = "Commerce_buy") -> Augmented:
    spans = [Span(start=0, end=1, label="Buyer", role="argument", group="1")]
    if at is not None:
        spans.append(Span(start=at[0], end=at[1], label=label, role="target", group="1"))
    return Augmented(
        id="s/s0/it1", source_id="s", target=0 if at is not None else None, iteration=1, tokens=tokens,
        text=" ".join(tokens), spans=tuple(spans), scores={}, constraints=Constraints(),
    )


def check(rec: Augmented, source: Example = SOURCE) -> str | None:
    flt = FrameLexiconFilter(FrameLexiconFilter.Config(release=SAMPLE))
    return flt.check(rec, FilterContext(source=source, previous_texts=frozenset()))


def test_an_inflected_lexical_unit_of_the_frame_is_kept() -> None:
    assert check(record(("Maria", "purchased", "a", "bike", "."), (1, 2))) is None
    assert check(record(("Maria", "made", "a", "purchase", "."), (3, 4))) is None


def test_a_word_the_frame_does_not_list_is_dropped_with_the_reason() -> None:
    assert check(record(("Maria", "acquired", "a", "bike", "."), (1, 2))) == "'acquired' is not a lexical unit of Commerce_buy"
    # The word must be the trigger: "bike" is no LU although the sentence has "purchased".
    assert check(record(("Maria", "purchased", "a", "bike", "."), (3, 4))) == "'bike' is not a lexical unit of Commerce_buy"


def test_a_frame_the_release_lacks_is_dropped_and_a_whole_sentence_record_is_kept() -> None:
    other = SOURCE.model_copy(update={"spans": (Span(start=1, end=2, label="Getting", role="target", group="1"), SOURCE.spans[1])})
    assert check(record(("Maria", "got", "a", "bike", "."), (1, 2), label="Getting"), other) == "the release has no lexical units for frame 'Getting'"
    assert check(record(("Maria", "bought", "a", "bike", "."), None)) is None


def test_a_folder_that_is_no_release_fails_when_the_filter_is_built(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="expected a FrameNet release folder"):
        FrameLexiconFilter(FrameLexiconFilter.Config(release=tmp_path))


def test_a_framenet_run_gets_the_frames_words_and_the_filter_without_asking() -> None:
    """Judged on the same sentences, records were good far more often with both (docs/results/framenet-lexicon.md)."""
    from spanaug_core.config import RunConfig
    from spanaug_core.run import with_suggested_settings

    config, applied = with_suggested_settings(RunConfig(dataset={"name": "framenet"}))
    assert config.lexicon.name == "framenet" and [f.name for f in config.filters] == ["frame-lexicon"]
    assert set(applied) == {"lexicon", "filters"}
    mine, applied = with_suggested_settings(RunConfig(dataset={"name": "framenet"}, filters=[{"name": "copy"}]))
    assert [f.name for f in mine.filters] == ["copy"] and "filters" not in applied  # filters the run names win


def test_max_frames_drops_a_trigger_other_frames_list_too(tmp_path: Path) -> None:
    """A copy of the sample in which Giving lists buy.v as well: two frames list it, one purchase.v."""
    release = tmp_path / "release"
    shutil.copytree(SAMPLE, release)
    giving = release / "frame" / "Giving.xml"
    unit = '<lexUnit status="Finished_Initial" POS="V" name="buy.v" ID="3999" cDate="02/01/2001 12:01:00 PST Thu"/>'
    giving.write_text(giving.read_text().replace("<lexUnit ", unit + "\n    <lexUnit ", 1))
    source = SOURCE.model_copy(update={"tokens": ("Maria", "got", "a", "bike", ".")})
    context = FilterContext(source=source, previous_texts=frozenset())

    def verdict(word: str, max_frames: int | None) -> str | None:
        flt = FrameLexiconFilter(FrameLexiconFilter.Config(release=release, max_frames=max_frames))
        return flt.check(record(("Maria", word, "a", "bike", "."), (1, 2)), context)

    assert verdict("bought", None) is None and verdict("bought", 2) is None
    assert verdict("bought", 1) == "'bought' is a lexical unit of 2 frames (max_frames 1)"
    assert verdict("purchased", 1) is None
    assert verdict("acquired", 1) == "'acquired' is not a lexical unit of Commerce_buy"
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        FrameLexiconFilter.Config(release=release, max_frames=0)
