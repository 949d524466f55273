"""entity-tagger: a record passes only when the tagger finds each entity with its boundaries and a mapped type.

The tagger here is a rule-based spaCy pipeline saved to a folder (an ``entity_ruler`` in the
place of the ``ner`` component), so the tests know what it finds and need no trained model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spanaug_core.errors import ConfigError, SpanaugError
from spanaug_core.plugins import create
from spanaug_core.types import Augmented, Constraints, Span

spacy = pytest.importorskip("spacy")

from spanaug_ner.entity_tagger import EntityTaggerFilter  # noqa: E402


@pytest.fixture(scope="module")
def ruler(tmp_path_factory: pytest.TempPathFactory) -> str:
    nlp = spacy.blank("en")
    rules = nlp.add_pipe("entity_ruler", name="ner")
    rules.add_patterns([
        {"label": "GPE", "pattern": "Albania"},
        {"label": "NORP", "pattern": "Albanian"},
        {"label": "GPE", "pattern": [{"LOWER": "new"}, {"LOWER": "york"}]},
        {"label": "ORG", "pattern": [{"LOWER": "new"}, {"LOWER": "york"}, {"LOWER": "yankees"}]},
        {"label": "PERSON", "pattern": "Pivotal"},
    ])
    folder = tmp_path_factory.mktemp("ruler")
    nlp.to_disk(folder)
    return str(folder)


def out(text: str, *spans: tuple[int, int, str], role: str = "entity") -> Augmented:
    return Augmented(
        id="s/it1", source_id="s", target=None, iteration=1, tokens=tuple(text.split()), text=text,
        spans=tuple(Span(start=a, end=b, label=label, role=role) for a, b, label in spans), scores={}, constraints=Constraints(),
    )


def test_keeps_what_the_tagger_finds_as_marked_and_says_why_it_drops_the_rest(ruler: str) -> None:
    f = EntityTaggerFilter(EntityTaggerFilter.Config(model=ruler))
    assert f.check(out("He left Albania for New York .", (2, 3, "LOC"), (4, 6, "LOC")), None) is None  # type: ignore[arg-type]
    # A type outside the label's mapping, a name the tagger reads as part of a longer one, and none at all.
    assert f.check(out("The Albanian book .", (1, 2, "LOC")), None) == "LOC 'Albanian' is tagged NORP"  # type: ignore[arg-type]
    assert f.check(out("New York Yankees won .", (0, 2, "LOC")), None) == (  # type: ignore[arg-type]
        "LOC 'New York' is tagged as part of 'New York Yankees' (ORG)"
    )
    assert f.check(out("He met Kohl .", (2, 3, "PER")), None) == "PER 'Kohl' is not an entity to the tagger"  # type: ignore[arg-type]
    # Every entity must pass, not just one.
    assert f.check(out("Albania beat Kohl .", (0, 1, "LOC"), (2, 3, "PER")), None) is not None  # type: ignore[arg-type]
    # Only the named roles are checked; a record without them passes.
    assert f.check(out("He met Kohl .", (2, 3, "PER"), role="argument"), None) is None  # type: ignore[arg-type]


def test_labels_map_to_the_tagger_types_a_user_gives(ruler: str) -> None:
    wnut = EntityTaggerFilter(EntityTaggerFilter.Config(model=ruler, labels={"location": ["GPE", "LOC"], "person": ["PERSON"]}))
    assert wnut.check(out("Pivotal left Albania .", (0, 1, "person"), (2, 3, "location")), None) is None  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"label 'corporation' \(record s/it1\) is not in option 'labels' \(location, person\)"):
        wnut.check(out("Albania Inc .", (0, 2, "corporation")), None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"gives person no type the tagger has \(.* has GPE, NORP, ORG, PERSON\)"):
        EntityTaggerFilter(EntityTaggerFilter.Config(model=ruler, labels={"person": ["PERSN"]}))
    with pytest.raises(ConfigError, match="gives PER no type the tagger has"):
        EntityTaggerFilter(EntityTaggerFilter.Config(model=ruler, labels={"PER": []}))


def test_a_missing_or_wrong_tagger_fails_before_any_decoding(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot load spaCy pipeline"):
        EntityTaggerFilter(EntityTaggerFilter.Config(model=str(tmp_path / "nowhere")))
    blank = spacy.blank("en")
    blank.to_disk(tmp_path / "blank")
    with pytest.raises(ConfigError, match="has no 'ner' component"):
        EntityTaggerFilter(EntityTaggerFilter.Config(model=str(tmp_path / "blank")))


def test_registered_under_its_name(ruler: str) -> None:
    f = create("filter", "entity-tagger", model=ruler)
    assert f.check(out("Albania .", (0, 1, "LOC")), None) is None
    with pytest.raises(SpanaugError, match="roles"):
        create("filter", "entity-tagger", model=ruler, roles=[])
