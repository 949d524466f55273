"""The adequacy classifier: its features, training, model file and the filter/score (tiny encoder)."""

from __future__ import annotations

import json
import math
import random

import pytest
import torch

from spanaug_core.cli import main
from spanaug_core.errors import ConfigError, DataError
from spanaug_core.protocols import FilterContext, ScoringFilter
from spanaug_core.types import Augmented, Constraints, Example
from spanaug_filters.adequacy import FEATURES, SHIPPED, AdequacyFilter, AdequacyModel, classification_report, fit, pair_features, read_pairs, roc_auc

SOURCE = Example(id="s", tokens=tuple("Catastrophe losses reduced the company 's net income .".split()))


def test_features_see_dropped_content_and_overlap() -> None:
    source = tuple("losses reduced the net income".split())
    whole = tuple("losses lowered the net income".split())
    dropped = tuple("the net income fell".split())
    vectors = {w: v for w, v in zip(sorted(set(source + whole + dropped)), torch.eye(7))}
    vecs = lambda words: torch.stack([vectors[w] for w in words])  # noqa: E731
    kept, lost = (dict(zip(FEATURES, pair_features(source, p, vecs(source), vecs(p)))) for p in (whole, dropped))
    assert kept["bertscore_recall"] == pytest.approx(4 / 5) and lost["bertscore_recall"] == pytest.approx(3 / 5)
    assert kept["unigram_precision"] == pytest.approx(4 / 5) and kept["bigram_recall"] == pytest.approx(2 / 4)
    assert lost["length_ratio"] == pytest.approx(4 / 5) and lost["abs_log_length_ratio"] == pytest.approx(abs(math.log(4 / 5)))
    assert kept["content_recall"] > lost["content_recall"]
    with pytest.raises(ValueError, match="non-empty"):
        pair_features((), whole, vecs(source)[:0], vecs(whole))


def test_fit_separates_a_learnable_signal_and_reports_it() -> None:
    rng = random.Random(0)
    rows, labels = [], []
    for _ in range(400):
        label = rng.random() < 0.5
        rows.append([rng.gauss(1.0 if label else -1.0, 1.0)] + [rng.gauss(0, 1) for _ in FEATURES[1:]])
        labels.append(int(label))
    model = fit(rows, labels, "enc")
    report = classification_report(model, rows, labels)
    assert report["accuracy"] > 0.8 and report["roc_auc"] > 0.85 and report["pairs"] == 400
    assert abs(model.weights[0]) > 5 * max(abs(w) for w in model.weights[1:])
    # Tied probabilities rank a (positive, negative) pair half right: a constant model has AUC 0.5.
    flat = AdequacyModel("enc", tuple([0.0] * len(FEATURES)), tuple([1.0] * len(FEATURES)), tuple([0.0] * len(FEATURES)), 0.0, {})
    assert classification_report(flat, rows, labels)["roc_auc"] == pytest.approx(0.5)
    # A stronger penalty shrinks the weights.
    assert abs(fit(rows, labels, "enc", l2=1000.0).weights[0]) < abs(model.weights[0])


def test_model_file_round_trip_and_errors(tmp_path) -> None:
    model = AdequacyModel("enc", tuple([0.0] * len(FEATURES)), tuple([1.0] * len(FEATURES)), tuple([0.5] * len(FEATURES)), -1.0, {"test": {"accuracy": 0.7}})
    path = tmp_path / "m.json"
    model.save(path)
    assert AdequacyModel.load(path) == model
    assert model.probability([1.0] * len(FEATURES)) == pytest.approx(1 / (1 + math.exp(-(0.5 * len(FEATURES) - 1))))
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="not an adequacy model of this version"):
        AdequacyModel.load(path)
    path.write_text("{")
    with pytest.raises(ConfigError, match="cannot read the model"):
        AdequacyModel.load(path)


def test_the_shipped_model_loads_and_says_how_it_was_trained() -> None:
    model = AdequacyModel.load(SHIPPED)
    assert model.encoder == "all-minilm-l6-v2"
    assert model.report["test"]["pairs"] == 1725 and model.report["test"]["accuracy"] > 0.7


def test_read_pairs_reads_mrpc_and_names_bad_lines(tmp_path) -> None:
    good = tmp_path / "pairs.txt"
    good.write_text("\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tA cat sat.\tThe cat sat.\n0\t3\t4\tIt rained.\tShe left.\n", encoding="utf-8")
    pairs = read_pairs(good)
    assert [p.label for p in pairs] == [1, 0] and pairs[0].source == ("A", "cat", "sat", ".")
    bad = tmp_path / "bad.txt"
    bad.write_text("1\t1\t2\tA cat sat.\tThe cat sat.\nyes\t1\t2\tA.\tB.\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.txt:2: expected 5 tab-separated cells"):
        read_pairs(bad)
    empty = tmp_path / "empty.txt"
    empty.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n", encoding="utf-8")
    with pytest.raises(DataError, match="no sentence pairs"):
        read_pairs(empty)


def _record(text: str, **scores: float) -> Augmented:
    return Augmented(
        id="s/s0/it1", source_id="s", target=0, iteration=1, tokens=tuple(text.split()), text=text, spans=(),
        scores={"paraphrase": -0.5, "alignment": 0.8, **scores}, constraints=Constraints(),
    )


def test_filter_scores_candidates_and_checks_records(tiny_encoder) -> None:
    f = AdequacyFilter(AdequacyFilter.Config(encoder=str(tiny_encoder)))
    assert isinstance(f, ScoringFilter)
    paraphrases = [tuple("Catastrophe losses lowered the company 's net income .".split()), tuple("Income fell .".split())]
    scored = f.score(SOURCE, paraphrases)
    assert [set(s) for s in scored] == [{"adequacy"}, {"adequacy"}] and all(0 <= s["adequacy"] <= 1 for s in scored)
    context = FilterContext(source=SOURCE, previous_texts=frozenset())
    # A record scored in the run is judged by its score; one without is scored now, the same way.
    assert f.check(_record("x", adequacy=0.2), context) == "adequacy 0.200 < 0.7"
    assert f.check(_record("x", adequacy=0.9), context) is None
    fresh = _record(" ".join(paraphrases[1]))
    expected = scored[1]["adequacy"]
    assert f.check(fresh, context) == (None if expected >= 0.7 else f"adequacy {expected:.3f} < 0.7")


def test_train_adequacy_command_writes_a_model_the_filter_loads(tmp_path, tiny_encoder, monkeypatch, capsys) -> None:
    rows = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    rng = random.Random(1)
    words = "the a cat dog sat on mat saw small big bird red house ran".split()
    for i in range(40):
        first = " ".join(rng.choice(words) for _ in range(6))
        second = first if i % 2 else " ".join(rng.choice(words) for _ in range(5))
        rows.append(f"{i % 2}\t{i}\t{i}\t{first}\t{second}")
    data = tmp_path / "train.txt"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "adequacy.json"
    assert main(["train", "adequacy", "--train", str(data), "--test", str(data), "--out", str(out), "--encoder", str(tiny_encoder)]) == 0
    model = AdequacyModel.load(out)
    assert model.report["train"]["accuracy"] > 0.9 and model.report["test"] == model.report["train"]
    assert model.report["command"].startswith("spanaug ")  # the command line it was trained with
    capsys.readouterr()
    encoded = []
    monkeypatch.setattr("spanaug_filters.adequacy.pairs_features", lambda *a: encoded.append(a))
    assert main(["train", "adequacy", "--train", str(data), "--out", str(out), "--encoder", str(tiny_encoder)]) != 0
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert not encoded  # refused before any pair was encoded
    f = AdequacyFilter(AdequacyFilter.Config(model=out))
    assert f.model == model


def test_roc_auc_counts_pairs_ranked_right_and_ties_as_half() -> None:
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert roc_auc([0.5, 0.5, 0.9], [False, True, True]) == 0.75
    assert math.isnan(roc_auc([0.2, 0.3], [1, 1]))
    # The learned filter's report uses it too, with accept labels.
    assert roc_auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert roc_auc([0.1, 0.9], [True, False]) == 0.0
    assert roc_auc([0.5, 0.5, 0.2, 0.7], [True, False, False, True]) == pytest.approx(0.875)
