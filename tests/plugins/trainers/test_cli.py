"""`spanaug train --trainer` and `spanaug predict` end to end on the 6-sentence CoNLL fixture."""

from __future__ import annotations

import json

import pytest
from spanaug_ner.conll_ner import ConllNer
from spanaug_trainers.trainers import NerTrainer



@pytest.fixture
def spanaug(cli):
    return cli("trainers,ner,jsonl,aligners")


def test_train_then_predict_round_trip(spanaug, tiny_encoder, ner_file, tmp_path, capsys) -> None:
    out = tmp_path / "model"
    sets = ["--set", f"trainer.encoder={tiny_encoder}", "--set", "trainer.epochs=3", "--set", "trainer.hidden=8"]
    code = spanaug("train", "--trainer", "ner", "--dataset", "conll-ner", "--train", ner_file, "--dev", ner_file,
                   "--test", ner_file, "--out", out, *sets, "--no-progress")
    assert code == 0, capsys.readouterr().err
    assert "ner model saved" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["test_f1"] == pytest.approx(metrics["dev_f1"])  # same file, the saved best epoch
    assert metrics["epochs_run"] == 3.0 and metrics["test_gold"] == 10.0

    predicted = tmp_path / "pred.conll"
    assert spanaug("predict", "--model", out, "--dataset", "conll-ner", "--input", ner_file, "--output", predicted) == 0
    reader = ConllNer(ConllNer.Config())
    gold, back = list(reader.read(ner_file)), list(reader.read(predicted))
    assert [e.tokens for e in back] == [e.tokens for e in gold]
    expected = list(NerTrainer(NerTrainer.Config()).predict(out, gold))
    assert [e.spans for e in back] == [e.spans for e in expected]
    assert predicted.read_text().startswith("-DOCSTART- -X- -X- O\n\nthe X X ")  # the input's layout

    as_jsonl = tmp_path / "pred.jsonl"
    assert spanaug("predict", "--model", out, "--dataset", "conll-ner", "--input", ner_file, "--output", as_jsonl, "--to", "jsonl") == 0
    rows = [json.loads(line) for line in as_jsonl.read_text().splitlines()]
    assert len(rows) == 6 and rows[0]["tokens"][:2] == ["the", "man"]


def test_train_without_dev_keeps_the_last_epoch(spanaug, tiny_encoder, ner_file, tmp_path) -> None:
    out = tmp_path / "m"
    assert spanaug("train", "--trainer", "ner", "--dataset", "conll-ner", "--train", ner_file, "--out", out,
                   "--set", f"trainer.encoder={tiny_encoder}", "--set", "trainer.epochs=2", "--no-progress") == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["best_epoch"] == 2.0 and "dev_f1" not in metrics


def test_train_group_errors_and_subcommands(spanaug, ner_file, tmp_path, capsys) -> None:
    assert spanaug("train", "--trainer", "ner") == 2
    assert "missing --dataset, --train, --out" in capsys.readouterr().err
    base = ["train", "--trainer", "ner", "--dataset", "conll-ner", "--train", ner_file, "--out", tmp_path / "m", "--no-progress"]
    assert spanaug(*base, "--set", "trainer.epoch=3") == 2
    assert "unknown option 'epoch'" in capsys.readouterr().err
    assert spanaug(*base, "--set", "model.x=1") == 2
    assert "--set model: expected trainer.OPTION=VALUE or dataset.OPTION=VALUE" in capsys.readouterr().err
    assert spanaug(*base, "--set", "trainer=srl") == 2
    assert "--set trainer: expected" in capsys.readouterr().err
    assert spanaug("train", "--trainer", "nerr", "--dataset", "conll-ner", "--train", ner_file, "--out", tmp_path / "m") == 2
    assert "Did you mean 'ner'?" in capsys.readouterr().err
    # A folder holding an earlier model is not trained into again unless asked.
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    assert spanaug(*base) == 2
    assert "holds files (an earlier model?); pass --overwrite" in capsys.readouterr().err
    assert spanaug("train", "--overwrite", "aligner", "--help") == 2
    assert "--overwrite goes after the sub-command: spanaug train aligner" in capsys.readouterr().err
    assert spanaug("predict", "--model", tmp_path, "--dataset", "conll-ner", "--input", ner_file, "--output", tmp_path / "p") == 2
    assert "not a trained model folder" in capsys.readouterr().err
    # The plugins' sub-commands of `train` still work beside --trainer.
    assert spanaug("train", "aligner", "--help") == 0
    assert "bert-span head" in capsys.readouterr().out
