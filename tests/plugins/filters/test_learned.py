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
from spanaug_filters.learned_net import TrainOptions, evaluate, load_filter, save_filter, train_filter


def synthetic(n: int, seed: int) -> list[Judgment]:
    """Judgments whose acceptance rises with the scores and falls with the iteration, with noise."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        iteration, alignment, paraphrase = rng.randint(1, 10), rng.random(), rng.uniform(-2.0, 0.0)
        latent = 4 * (alignment - 0.5) - 0.4 * (iteration - 5) + 1.5 * (paraphrase + 1) + rng.gauss(0, 1)
        rows.append(Judgment(id=f"r{i}", iteration=iteration, scores={"paraphrase": paraphrase, "alignment": alignment},
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
    path.write_text(path.read_text() + '{"id": "x"}\n')
    assert spanaug("train", "filter", "--judgments", path, "--out", out) == 2
    assert "judgments.jsonl:201: not a judgment" in capsys.readouterr().err
