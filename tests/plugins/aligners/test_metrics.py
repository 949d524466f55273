"""Exact, soft and None P/R/F1 and the threshold sweep, on hand-made cases."""

from __future__ import annotations

import pytest

from spanaug_aligners.metrics import best_threshold, evaluate, none_rate_threshold


def test_exact_and_soft_counts():
    rows = [
        ((2, 4), (2, 4), "paraphrased"),  # exact hit, 2 of 2 tokens
        ((2, 3), (2, 4), "paraphrased"),  # miss, overlap 1 (pred 1 token, gold 2)
        (None, (0, 1), "identical"),  # no answer: recall only
        ((5, 6), None, "unaligned"),  # answer where nothing aligns: precision only
    ]
    s = evaluate(rows)["all"]
    assert s["items"] == 4
    assert s["exact_p"] == pytest.approx(1 / 3)  # 1 hit / 3 predictions
    assert s["exact_r"] == pytest.approx(1 / 3)  # 1 hit / 3 gold spans
    assert s["soft_p"] == pytest.approx(3 / 4)  # overlap 2+1 / predicted tokens 2+1+1
    assert s["soft_r"] == pytest.approx(3 / 5)  # overlap 3 / gold tokens 2+2+1
    assert s["soft_f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)


def test_none_precision_and_recall():
    rows = [
        (None, None, "unaligned"),  # right None
        ((1, 2), None, "unaligned"),  # an answer where nothing aligns: a missed None
        (None, (0, 1), "paraphrased"),  # a wrong None
        (None, (2, 3), "paraphrased"),  # another
        ((0, 1), (0, 1), "identical"),
    ]
    s = evaluate(rows)["all"]
    assert s["none_p"] == pytest.approx(1 / 3)  # 1 right of 3 None answers
    assert s["none_r"] == pytest.approx(1 / 2)  # 1 of 2 null-gold items
    assert evaluate([((0, 1), (0, 1), None)])["all"]["none_r"] == 0.0  # no null gold, no None: zero, not an error


def test_per_kind_groups():
    scores = evaluate([((0, 1), (0, 1), "identical"), ((1, 2), (3, 4), "paraphrased")])
    assert scores["identical"]["exact_f1"] == 1.0
    assert scores["paraphrased"]["exact_f1"] == 0.0
    assert scores["paraphrased"]["soft_p"] == 0.0
    assert scores["all"]["exact_f1"] == 0.5


def test_no_predictions_is_zero_not_error():
    assert evaluate([(None, (0, 1), None)])["all"]["exact_f1"] == 0.0
    assert evaluate([])["all"]["items"] == 0


def test_best_threshold_drops_wrong_low_scores():
    rows = [((0, 1), 0.9, (0, 1)), ((1, 2), 0.8, (1, 2)), ((2, 3), 0.3, None), ((3, 4), 0.2, (0, 2))]
    threshold, f1 = best_threshold(rows)
    # Keeping the top two: P = 1, R = 2/3 -> F1 0.8; keeping more only adds false positives.
    assert threshold == 0.8
    assert f1 == pytest.approx(0.8)


def test_none_rate_threshold_answers_none_as_often_as_gold_is_null():
    rows = [((0, 1), 0.9, (0, 1)), ((1, 2), 0.8, (1, 2)), ((2, 3), 0.3, None), ((3, 4), 0.2, (0, 2)), (None, 0.0, None)]
    # Two null golds in five rows, and one row has no span: the three best spans are kept.
    assert none_rate_threshold(rows) == 0.3
    assert none_rate_threshold([((0, 1), 0.4, None)]) == 1.0
    assert none_rate_threshold([(None, 0.0, (0, 1)), ((0, 1), 0.5, (0, 1))]) == 0.0
