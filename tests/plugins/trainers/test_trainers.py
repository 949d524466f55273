"""The ner and srl trainers on tiny fixtures with a tiny random BERT: learning, saving, predicting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spanaug_conll_srl.dataset import ConllSrl
from spanaug_ner.conll_ner import ConllNer
from spanaug_trainers.trainers import NerTrainer, SrlTrainer

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressEvent, Trainer
from spanaug_core.types import Example, Span

FAST = {"hidden": 16, "lr": 0.01, "batch_size": 2, "dropout": 0.0}


def _spans(example: Example, role: str) -> list[tuple[int, int, str, str | None]]:
    return [(s.start, s.end, s.label, s.group) for s in example.spans if s.role == role]


@pytest.fixture(scope="module")
def ner_model(tiny_encoder: Path, ner_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[NerTrainer, Path, dict]:
    """A ner model trained for a few epochs (the trainer that made it, its folder, its metrics)."""
    examples = list(ConllNer(ConllNer.Config()).read(ner_file))
    trainer = NerTrainer(NerTrainer.Config(encoder=str(tiny_encoder), epochs=8, patience=8, **FAST))
    events: list[ProgressEvent] = []
    out = tmp_path_factory.mktemp("ner-model")
    metrics = trainer.train(examples, examples, out, events.append)
    assert [e.done for e in events if e.stage == "epoch"] == list(range(1, 9))
    assert any(e.stage == "encode" for e in events)
    return trainer, out, metrics


def test_ner_training_lowers_the_loss_and_saves_a_model(ner_model) -> None:
    trainer, out, metrics = ner_model
    assert isinstance(trainer, Trainer)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    config = json.loads((out / "config.json").read_text())
    assert config["trainer"] == "ner" and config["tags"] == ["O", "B-ANI", "I-ANI", "B-PER", "I-PER", "B-VEH", "I-VEH"]
    losses = config["training"]["losses"]
    assert losses[-1] < losses[0] * 0.75
    assert {"dev_f1", "dev_precision", "dev_recall", "best_epoch", "epochs_run", "train_loss"} <= metrics.keys()
    assert metrics["dev_f1"] == pytest.approx(max(config["training"]["dev_f1"]), abs=1e-5)  # the best epoch was kept


def test_saved_model_predicts_what_the_trained_one_did(ner_model, tiny_encoder, ner_file, tmp_path) -> None:
    trainer, out, metrics = ner_model
    dataset = ConllNer(ConllNer.Config())
    examples = list(dataset.read(ner_file))
    in_memory = list(trainer.predict(out, examples))
    fresh = NerTrainer(NerTrainer.Config())  # loads from disk; its own encoder option is not used
    reloaded = list(fresh.predict(out, examples))
    assert [_spans(e, "entity") for e in reloaded] == [_spans(e, "entity") for e in in_memory]
    assert [e.meta for e in reloaded] == [e.meta for e in examples]  # layout kept for the writer
    assert fresh.evaluate(out, examples)["f1"] == pytest.approx(metrics["dev_f1"])
    dataset.write(reloaded, tmp_path / "pred.conll")
    back = list(dataset.read(tmp_path / "pred.conll"))
    assert [_spans(e, "entity") for e in back] == [_spans(e, "entity") for e in reloaded]


def test_ner_prediction_keeps_other_spans() -> None:
    trainer = NerTrainer(NerTrainer.Config())
    example = Example(id="x", tokens=("a", "b", "c"), spans=(Span(start=0, end=1, label="T", role="target"),
                                                             Span(start=2, end=3, label="PER", role="entity")))
    out = trainer.with_predictions(example, [[(1, 3, "LOC")]])
    assert [(s.start, s.end, s.label, s.role) for s in out.spans] == [(0, 1, "T", "target"), (1, 3, "LOC", "entity")]


def test_srl_learns_each_predicates_arguments(tiny_encoder, srl_file, tmp_path) -> None:
    dataset = ConllSrl(ConllSrl.Config())
    examples = list(dataset.read(srl_file))
    trainer = SrlTrainer(SrlTrainer.Config(encoder=str(tiny_encoder), epochs=25, patience=25, **FAST))
    assert [inst.marker for inst in trainer.instances(examples[0])] == [(1, 2), (5, 6)]
    metrics = trainer.train(examples, examples, tmp_path / "srl")
    config = json.loads((tmp_path / "srl" / "config.json").read_text())
    assert config["indicator_dim"] == 16 and config["training"]["losses"][-1] < config["training"]["losses"][0] / 4
    assert metrics["dev_f1"] > 0.8  # four predicates, one sentence with two: the indicator tells them apart
    predicted = list(SrlTrainer(SrlTrainer.Config()).predict(tmp_path / "srl", examples))
    for gold, pred in zip(examples, predicted):
        assert _spans(pred, "target") == _spans(gold, "target")
        for start, end, _, group in _spans(pred, "argument"):
            target = next(t for t in pred.spans if t.role == "target" and t.group == group)
            assert end <= target.start or target.end <= start  # never over the predicate
    assert trainer.evaluate(tmp_path / "srl", examples)["f1"] == pytest.approx(metrics["dev_f1"])
    dataset.write(predicted, tmp_path / "pred.props")  # predictions are writable as CoNLL-2005
    assert len(list(dataset.read(tmp_path / "pred.props"))) == len(examples)


def test_user_errors(ner_model, tmp_path) -> None:
    _, out, _ = ner_model
    with pytest.raises(ConfigError, match="holds a 'ner' model"):
        list(SrlTrainer(SrlTrainer.Config()).predict(out, [Example(id="x", tokens=("a",))]))
    with pytest.raises(ConfigError, match="not a saved tagger"):
        list(NerTrainer(NerTrainer.Config()).predict(tmp_path, [Example(id="x", tokens=("a",))]))
    with pytest.raises(ConfigError, match="nothing to learn"):
        NerTrainer(NerTrainer.Config()).train([Example(id="x", tokens=("a",))], None, tmp_path / "m")


def test_dev_every_gold_counts_the_instances_of_examples_that_are_not_paraphrases(tiny_encoder, ner_file, tmp_path) -> None:
    examples = list(ConllNer(ConllNer.Config()).read(ner_file))
    paras = [e.model_copy(update={"id": f"{e.id}/p", "meta": {**e.meta, "source_id": e.id}}) for e in examples]
    trainer = NerTrainer(NerTrainer.Config(encoder=str(tiny_encoder), epochs=1, dev_every="gold", **FAST))
    metrics = trainer.train([*examples, *paras], examples, tmp_path / "m")
    gold_steps = -(-len(examples) // FAST["batch_size"])
    assert metrics["dev_every"] == gold_steps and metrics["steps_run"] == -(-2 * len(examples) // FAST["batch_size"])
    training = json.loads((tmp_path / "m" / "config.json").read_text())["training"]
    assert len(training["dev_f1"]) == -(-metrics["steps_run"] // gold_steps)  # every gold pass, and the end
    with pytest.raises(ConfigError, match="every training example is one"):
        trainer.train(paras, examples, tmp_path / "p")
    with pytest.raises(ValueError):
        NerTrainer.Config(dev_every="often")


def test_early_stopping_waits_for_min_epochs_min_steps_and_a_first_hit() -> None:
    import torch
    from spanaug_trainers.training import FitOptions, run_epochs

    dev_f1 = [0.0, 0.0, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]

    def epochs(epoch_steps: int = 5, **options: int) -> dict:
        scores = iter([*dev_f1, *[0.1] * 20])
        fit = FitOptions(epochs=10, lr=0.1, batch_size=1, clip=1.0, seed=0, device="cpu", **options)
        steps = lambda: iter([(1.0, 1.0)] * epoch_steps)  # noqa: E731
        return run_epochs(torch.nn.Linear(1, 1), steps, lambda: {"all": {"f1": next(scores)}}, fit, lambda event: None, epoch_steps)

    assert (epochs(patience=1)["epochs_run"], epochs(patience=1)["best_epoch"]) == (4, 3)  # F1 0 never stops it
    assert epochs(patience=1, min_epochs=7)["epochs_run"] == 7
    assert epochs(patience=1, min_steps=31)["epochs_run"] == 7  # 6 epochs of 5 steps are 30: one more
    assert epochs(patience=1, min_steps=31, epoch_steps=2) == epochs(patience=1, min_epochs=16, epoch_steps=2)
    assert epochs(patience=1, min_steps=31, epoch_steps=2)["epochs_run"] == 16  # past epochs=10 to reach the floor
    assert epochs(patience=1, min_steps=31, epoch_steps=2)["steps_run"] == 32
    assert epochs(min_steps=31, epoch_steps=2, patience=30)["epochs_run"] == 16  # the cap is the floor when it is higher


def test_dev_every_scores_dev_every_so_many_steps_and_patience_counts_scores() -> None:
    import torch
    from spanaug_trainers.training import FitOptions, run_epochs

    def run(dev_f1: list[float], epoch_steps: int = 5, **options: int) -> tuple[dict, list[int]]:
        scores, at, done = iter(dev_f1), [], [0]

        def steps():
            for _ in range(epoch_steps):
                done[0] += 1
                yield 2.0, 2.0

        def score():
            at.append(done[0])
            return {"all": {"f1": next(scores)}}

        fit = FitOptions(epochs=4, lr=0.1, batch_size=1, clip=1.0, seed=0, device="cpu", **options)
        return run_epochs(torch.nn.Linear(1, 1), steps, score, fit, lambda event: None, epoch_steps), at

    summary, at = run([0.1, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2], dev_every=2, patience=2)
    assert at == [2, 4, 6, 8]  # mid-epoch; it stops at the second score without a better F1
    assert (summary["steps_run"], summary["epochs_run"], summary["best_step"], summary["best_epoch"], summary["best_check"]) == (8, 2, 4, 1, 1)
    assert summary["losses"] == [1.0, 1.0]  # the stopped epoch's loss is over the steps it ran
    # min_steps holds it to step 12, and the cap (4 epochs of 5 steps) is in steps too
    assert run([0.1, 0.3, *[0.2] * 20], dev_every=2, patience=2, min_steps=12)[1] == [2, 4, 6, 8, 10, 12]
    assert run([0.1, *[0.2 + k / 100 for k in range(20)]], dev_every=3, patience=2)[1] == [3, 6, 9, 12, 15, 18, 20]
    assert run([0.1, 0.2, 0.3], dev_every=7, patience=5)[1] == [7, 14, 20]  # the end of training is scored too
    summary, at = run([0.4], dev_every=50, patience=5)  # past the whole run: scored once, at its end
    assert at == [20] and summary["best_step"] == 20 and summary["dev"] == {"all": {"f1": 0.4}}
