"""Span scores on hand-made cases: NER entities (agreeing with seqeval) and CoNLL-2005 arguments."""

from __future__ import annotations

import random

import pytest
from spanaug_shared.tagging import decode
from spanaug_trainers.bio import Instance, TagSet, non_overlapping
from spanaug_trainers.metrics import conll05_units, entity_units, span_scores


def test_entity_scores_by_hand() -> None:
    gold = [[(0, 2, "PER"), (3, 4, "LOC")], []]
    pred = [[(0, 2, "PER"), (3, 5, "LOC")], [(6, 7, "ORG")]]
    scores = span_scores([entity_units(g) for g in gold], [entity_units(p) for p in pred])
    assert scores["all"]["precision"] == pytest.approx(1 / 3)
    assert scores["all"]["recall"] == pytest.approx(1 / 2)
    assert scores["all"]["f1"] == pytest.approx(0.4)
    assert scores["PER"]["f1"] == 1.0 and scores["LOC"]["f1"] == 0.0 and scores["ORG"]["precision"] == 0.0
    assert (scores["all"]["gold"], scores["all"]["predicted"], scores["all"]["correct"]) == (2.0, 3.0, 1.0)
    assert span_scores([[]], [[]])["all"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "gold": 0.0, "predicted": 0.0, "correct": 0.0}
    with pytest.raises(ValueError, match="2 gold instances but 1 predicted"):
        span_scores([[], []], [[]])


def test_entity_scores_equal_seqeval_on_random_tags() -> None:
    seqeval = pytest.importorskip("seqeval.metrics")
    rng = random.Random(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    # Random (often ill-formed) sequences: the lenient reading must count what seqeval counts.
    gold = [[rng.choice(tags) for _ in range(rng.randint(1, 9))] for _ in range(300)]
    pred = [[t if rng.random() < 0.7 else rng.choice(tags) for t in seq] for seq in gold]
    ours = span_scores([entity_units(decode(g)) for g in gold], [entity_units(decode(p)) for p in pred])["all"]
    assert ours["f1"] == pytest.approx(seqeval.f1_score(gold, pred))
    assert ours["precision"] == pytest.approx(seqeval.precision_score(gold, pred))
    assert ours["recall"] == pytest.approx(seqeval.recall_score(gold, pred))


def test_conll05_joins_continuations() -> None:
    # "[A1 The rule] , [A0 he] said , [C-A1 is wrong]"
    gold = [(0, 2, "A1"), (3, 4, "A0"), (6, 8, "C-A1")]
    assert conll05_units(gold) == [("A1", ((0, 2), (6, 8))), ("A0", ((3, 4),))]
    missing_piece = [(0, 2, "A1"), (3, 4, "A0")]
    scores = span_scores([conll05_units(gold)], [conll05_units(missing_piece)])["all"]
    assert (scores["precision"], scores["recall"]) == (0.5, 0.5)  # A1 without its C-A1 piece is wrong
    assert span_scores([conll05_units(gold)], [conll05_units(gold)])["all"]["f1"] == 1.0
    # A continuation with nothing to continue stands alone, R- arguments are their own.
    assert conll05_units([(1, 2, "C-A2"), (3, 4, "R-A0")]) == [("C-A2", ((1, 2),)), ("R-A0", ((3, 4),))]


def test_bio_tags_round_trip_and_overlaps() -> None:
    tagset = TagSet(["PER", "LOC"])
    assert tagset.tags == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    ids = tagset.encode([(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")], 6)
    assert [tagset.tags[i] for i in ids] == ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "O"]
    assert tagset.decode(ids) == [(0, 2, "PER"), (2, 3, "PER"), (4, 5, "LOC")]
    assert TagSet.from_tags(tagset.tags).tags == tagset.tags
    with pytest.raises(ValueError):
        TagSet.from_tags(["O", "I-X", "B-X"])
    kept, dropped = non_overlapping([(2, 4, "A1"), (0, 3, "A0"), (5, 6, "A2"), (6, 7, "AM")], avoid=(5, 6))
    assert kept == [(0, 3, "A0"), (6, 7, "AM")] and dropped == 2
    assert Instance(tokens=("a", "b", "c"), marker=(1, 2)).indicator() == [0, 1, 0]
