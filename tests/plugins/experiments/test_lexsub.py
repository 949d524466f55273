"""The lexical-substitution baseline: the aligned span put back into the source, same POS only."""

from __future__ import annotations

import pytest

from spanaug_core.errors import ConfigError
from spanaug_core.types import Augmented, Constraints, Example, Span
from spanaug_shared.postag import TaggerChoice
from spanaug_experiments.lexsub import lexical_substitutions, substitute

SOURCE = Example(id="s1", tokens=("she", "bought", "a", "car", "on", "monday", "."), spans=(
    Span(start=1, end=2, label="Commerce_buy", role="target", group="g1"),
    Span(start=0, end=1, label="Buyer", role="argument", group="g1"),
    Span(start=2, end=4, label="Goods", role="argument", group="g1"),
    Span(start=5, end=6, label="Calendric_unit", role="target", group="g2"),
))
TAGS = {"she": "PRP", "bought": "VBD", "purchased": "VBD", "paid": "VBD", "for": "IN", "a": "DT", "car": "NN",
        "on": "IN", "monday": "NNP", ".": ".", "got": "VBD", "the": "DT", "auto": "NN", "acquired": "VBN"}


def fake_tagger(batch):
    return [[TAGS.get(w, "NN") for w in tokens] for tokens in batch]


def record(rid: str, tokens: str, start: int, end: int, target: int | None = 0) -> Augmented:
    words = tuple(tokens.split())
    spans = (Span(start=start, end=end, label="Commerce_buy", role="target", group="g1"),) if target is not None else ()
    return Augmented(id=rid, source_id="s1", target=target, iteration=1, tokens=words, text=tokens, spans=spans,
                     scores={}, constraints=Constraints())


def test_substitute_moves_the_group_and_drops_other_groups() -> None:
    new = substitute(SOURCE, 0, ("paid", "for"))
    assert new.tokens == ("she", "paid", "for", "a", "car", "on", "monday", ".")
    assert [(s.label, s.start, s.end) for s in new.spans] == [("Commerce_buy", 1, 3), ("Buyer", 0, 1), ("Goods", 3, 5)]


def test_same_pos_substitutions_are_kept_and_the_rest_counted() -> None:
    records = [
        record("r1", "she purchased a car on monday .", 1, 2),      # VBD for VBD: kept
        record("r2", "she paid for a car on monday .", 1, 3),       # VBD IN for VBD: dropped
        record("r3", "the car was acquired by her .", 3, 4),        # VBN for VBD: dropped
        record("r4", "she bought the auto .", 1, 2),                # same word: nothing new
        record("r5", "she got a car .", 1, 2),                      # VBD: kept
        record("r6", "she got an auto .", 1, 2),                    # same substitution again: a duplicate
        record("r7", "she purchased a car .", 0, 0, target=None),   # a whole-sentence paraphrase: no span
        Augmented(id="r8", source_id="nowhere", target=0, iteration=1, tokens=("x",), text="x", spans=(), scores={},
                  constraints=Constraints()),
    ]
    out = lexical_substitutions(records, {"s1": SOURCE}, tagger=fake_tagger)
    assert [e.id for e in out.examples] == ["r1/lexsub", "r5/lexsub"]
    assert out.examples[0].tokens == ("she", "purchased", "a", "car", "on", "monday", ".")
    assert out.examples[0].meta == {"source_id": "s1", "lexsub": True}
    assert out.dropped == {"POS tags differ": 2, "same words as the source": 1, "duplicate": 1,
                           "no single rewritten span": 1, "source not found": 1}


def test_no_tagger_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setattr("spanaug_experiments.lexsub.find_tagger", lambda: TaggerChoice(None, "no POS tagger is installed"))
    with pytest.raises(ConfigError, match="keeps same-POS substitutions only, but no POS tagger is installed"):
        lexical_substitutions([record("r1", "she purchased a car .", 1, 2)], {"s1": SOURCE})
