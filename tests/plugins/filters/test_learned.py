"""The learned filter: judgments file, training, P/R weighting, saved folder, filter, command."""

from __future__ import annotations

import json
import random

import pytest

from spanaug_core.errors import ConfigError, DataError
from spanaug_core.protocols import FilterContext
from spanaug_core.types import Augmented, Constraints, Example
from spanaug_shared.judgments import Judgment, read_judgments
from spanaug_filters.learned import SCORE_FEATURES, LearnedFilter
from spanaug_filters.learned_net import TrainOptions, evaluate, load_filter, save_filter, split, train_filter


def synthetic(n: int, seed: int, prefix: str = "r") -> list[Judgment]:
    """Judgments whose acceptance rises with the scores and falls with the iteration, with noise; each its own source."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        iteration, alignment, paraphrase = rng.randint(1, 10), rng.random(), rng.uniform(-2.0, 0.0)
        latent = 4 * (alignment - 0.5) - 0.4 * (iteration - 5) + 1.5 * (paraphrase + 1) + rng.gauss(0, 1)
        rows.append(Judgment(id=f"{prefix}{i}", iteration=iteration, scores={"paraphrase": paraphrase, "alignment": alignment},
                             accepted=latent > 0))
    return rows


def record(iteration: int, **scores: float) -> Augmented:
    return Augmented(id="s/s0/it1", source_id="s", target=0, iteration=iteration, tokens=("a",), text="a", spans=(),
                     scores=scores, constraints=Constraints())


CONTEXT = FilterContext(source=Example(id="s", tokens=("a",)), previous_texts=frozenset())


def test_training_lowers_the_loss_and_beats_chance() -> None:
    net, summary = train_filter(synthetic(400, 0), TrainOptions(epochs=300))
    assert summary["losses"][-1] < 0.8 * summary["losses"][0]
    assert summary["train_items"] == 320 and summary["holdout_items"] == 80
    scores = evaluate(net, synthetic(1000, 1), 0.5)
    assert scores["f1"] > 0.8 and scores["precision"] > scores["unfiltered_precision"] + 0.2


@pytest.mark.parametrize(
    ("record_id", "source"),
    [("fn-12/s0/it3", "fn-12"), ("fn-12/s0/it3.2", "fn-12"), ("eng.train#7/it2", "eng.train#7"), ("a/b/s10/it1", "a/b"),
     ("r7", "r7"), ("x/s1", "x/s1"), ("v1.2", "v1.2")],
)
def test_a_judgment_knows_its_source(record_id: str, source: str) -> None:
    assert Judgment(id=record_id, iteration=1, scores={}, accepted=True).source == source


def test_held_out_judgments_share_no_source_with_training() -> None:
    # Four outputs per source, as iterations 1-4 of one sentence are: a split one by one
    # would put some of a sentence's outputs on each side.
    judgments = [j.model_copy(update={"id": f"src{i // 4}/s0/it{i % 4 + 1}"}) for i, j in enumerate(synthetic(200, 0))]
    train, held = split(judgments, 0.2, seed=3)
    assert {j.source for j in train}.isdisjoint({j.source for j in held})
    assert len(held) == 40 and len(train) + len(held) == 200
    assert split(judgments, 0.0, seed=3) == (judgments, [])


def test_test_judgments_from_training_sources_are_left_out() -> None:
    judgments = synthetic(200, 0)
    test = synthetic(100, 1, prefix="t") + judgments[:30]
    _, summary = train_filter(judgments, TrainOptions(holdout=0.0, epochs=100), test=test)
    assert summary["holdout"] is None and summary["test_items"] == 100 and summary["test_shared_sources"] == 30
    assert summary["test"]["items"] == 100 and summary["test"]["auc"] > 0.8
    net, _ = train_filter(judgments, TrainOptions(holdout=0.0, epochs=10))
    assert evaluate(net, [j for j in test if j.accepted], 0.5)["auc"] is None  # one class: no ranking to score
    assert summary["test"]["run_filters"] is None  # the judgments do not say what the run's filters kept
    # When they do, the run's filters are scored beside the learned one: here they kept the first half.
    flagged = [j.model_copy(update={"kept": i < 50}) for i, j in enumerate(test[:100])]
    _, summary = train_filter(judgments, TrainOptions(holdout=0.0, epochs=100), test=flagged)
    run = summary["test"]["run_filters"]
    accepted_first_half = sum(j.accepted for j in flagged[:50])
    assert run["kept"] == 0.5 and run["precision"] == accepted_first_half / 50
    assert run["recall"] == accepted_first_half / sum(j.accepted for j in flagged)


def test_weighting_moves_precision_and_recall() -> None:
    judgments, test = synthetic(600, 0), synthetic(2000, 2)
    scores = {
        weighting: evaluate(train_filter(judgments, TrainOptions(weighting=weighting, epochs=300))[0], test, 0.5)
        for weighting in ("precision", "balanced", "recall")
    }
    assert scores["precision"]["precision"] > scores["balanced"]["precision"] > scores["recall"]["precision"]
    assert scores["recall"]["recall"] > scores["balanced"]["recall"] > scores["precision"]["recall"]
    assert scores["precision"]["kept"] < scores["balanced"]["kept"] < scores["recall"]["kept"]


def test_one_class_cannot_be_learned() -> None:
    only = [j.model_copy(update={"accepted": True}) for j in synthetic(20, 0)]
    with pytest.raises(ConfigError, match="all accepted"):
        train_filter(only)


def test_saved_filter_decides_records(tmp_path) -> None:
    net, summary = train_filter(synthetic(300, 0), TrainOptions(epochs=200))
    save_filter(net, tmp_path / "f", summary)
    assert load_filter(tmp_path / "f").probabilities([[1, -0.5, 0.9]]) == pytest.approx(net.probabilities([[1, -0.5, 0.9]]))
    keep = LearnedFilter(LearnedFilter.Config(model=tmp_path / "f"))
    assert keep.check(record(1, paraphrase=-0.2, alignment=0.99), CONTEXT) is None
    bad = record(10, paraphrase=-1.9, alignment=0.05)
    p = keep.probability(bad.iteration, bad.scores)
    assert keep.check(bad, CONTEXT) == f"learned probability {p:.3f} < 0.5"
    assert keep.check(record(1, paraphrase=-0.2), CONTEXT) == "no 'alignment' score"


def test_filter_needs_a_trained_folder(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not a trained filter"):
        LearnedFilter(LearnedFilter.Config(model=tmp_path))
    unset = LearnedFilter(LearnedFilter.Config())  # the default builds; the first record says what is missing
    with pytest.raises(ConfigError, match="needs model=FOLDER"):
        unset.check(record(1, paraphrase=-0.2, alignment=0.9), CONTEXT)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "a", "iteration": 1, "scores": {"paraphrase": -1, "alignment": 0.5}, "accepted": true', "invalid JSON"),
        ('{"id": "a", "iteration": 1, "scores": {"paraphrase": -1}, "accepted": true}', "scores lack alignment"),
        ('{"id": "a", "iteration": 1, "scores": {"paraphrase": -1, "alignment": 0.5}, "accepted": "yes"}', "accepted:"),
        ('{"id": "a", "iteration": 0, "scores": {"paraphrase": -1, "alignment": 0.5}, "accepted": true}', "iteration:"),
    ],
)
def test_malformed_judgments_name_file_and_line(tmp_path, line: str, message: str) -> None:
    path = tmp_path / "j.jsonl"
    good = '{"id": "b", "iteration": 2, "scores": {"paraphrase": -1, "alignment": 0.5}, "accepted": false, "mean": 20}'
    path.write_text(f"{good}\n\n{line}\n")
    with pytest.raises(DataError, match=f"j.jsonl:3: .*{message}"):
        read_judgments(path, SCORE_FEATURES)


@pytest.fixture
def spanaug(cli):
    return cli("filters")


def test_train_filter_command(spanaug, tmp_path, capsys) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in synthetic(200, 0)))
    out = tmp_path / "p-filter"
    assert spanaug("train", "filter", "--judgments", path, "--out", out, "--weighting", "precision", "--epochs", 100) == 0
    printed = capsys.readouterr()
    assert "precision filter on 40 held-out judgments" in printed.out and "unfiltered" in printed.out
    config = json.loads((out / "config.json").read_text())
    assert config["training"]["options"]["weighting"] == "precision" and config["training"]["holdout"]["items"] == 40
    assert LearnedFilter(LearnedFilter.Config(model=out)).check(record(1, paraphrase=-0.2, alignment=0.99), CONTEXT) is None
    test = tmp_path / "other-run.jsonl"
    other = [j.model_copy(update={"kept": j.scores["alignment"] > 0.3}) for j in synthetic(50, 1, prefix="t")]
    test.write_text("".join(j.model_dump_json(exclude_none=True) + "\n" for j in other + synthetic(10, 0)))
    assert spanaug("train", "filter", "--judgments", path, "--test", test, "--out", out, "--epochs", 100, "--overwrite") == 0
    printed = capsys.readouterr()
    assert "held-out" not in printed.out and "on 50 judgments of" in printed.out  # --test alone: no share held out
    assert "the run's filters" in printed.out  # the test judgments say what the run kept
    assert "10 of the 60 judgments" in printed.err and "ROC AUC" in printed.err
    assert json.loads((out / "config.json").read_text())["training"]["train_items"] == 200
    path.write_text(path.read_text() + '{"id": "x"}\n')
    assert spanaug("train", "filter", "--judgments", path, "--out", out, "--overwrite") == 2
    assert "judgments.jsonl:201: not a judgment" in capsys.readouterr().err


def test_train_filter_refuses_an_existing_out_before_training(spanaug, tmp_path, monkeypatch, capsys) -> None:
    import spanaug_filters.learned_net as learned_net

    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(j.model_dump_json() + "\n" for j in synthetic(100, 0)))
    out = tmp_path / "filter"
    args = ["train", "filter", "--judgments", path, "--out", out, "--epochs", 20]
    assert spanaug(*args) == 0
    saved = (out / "config.json").read_text()
    real, calls = learned_net.train_filter, []
    monkeypatch.setattr(learned_net, "train_filter", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert spanaug(*args, "--seed", 1) == 2
    assert f"{out} exists; pass --overwrite" in " ".join(capsys.readouterr().err.split())
    assert not calls and (out / "config.json").read_text() == saved
    (out / "notes.txt").write_text("an earlier filter's\n")
    assert spanaug(*args, "--seed", 1, "--overwrite") == 0 and calls
    # The folder is replaced whole: nothing of the earlier one is left in it, nothing aside.
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "filter.safetensors"]
    assert json.loads((out / "config.json").read_text())["training"]["options"]["seed"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["filter", "judgments.jsonl"]
