"""The plugin's commands end to end through `spanaug` (only this plugin loaded)."""

from __future__ import annotations

import json

import pytest



@pytest.fixture
def spanaug(cli):
    return cli("aligners")


def _items(path):
    rows = [
        {"id": "a", "source_tokens": ["the", "red", "car"], "source_span": [1, 3],
         "target_tokens": ["a", "red", "car", "left"], "gold_span": [1, 3], "kind": "identical"},
        {"id": "b", "source_tokens": ["he", "bought", "it"], "source_span": [1, 2],
         "target_tokens": ["he", "purchased", "it"], "gold_span": [1, 2], "kind": "paraphrased"},
        {"id": "c", "source_tokens": ["he", "left", "quickly"], "source_span": [2, 3],
         "target_tokens": ["he", "left"], "gold_span": None, "kind": "unaligned"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_and_align(spanaug, tmp_path, capsys):
    gold = _items(tmp_path / "gold.jsonl")
    assert spanaug("eval", "align", "--aligner", "string-match", "--gold", gold, "--output", tmp_path / "p.jsonl",
                   "--metrics", tmp_path / "m.json") == 0
    assert "identical" in capsys.readouterr().out
    scores = json.loads((tmp_path / "m.json").read_text())["scores"]
    assert scores["all"]["exact_p"] == 1.0 and scores["all"]["exact_r"] == 0.5
    preds = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [p["pred_span"] for p in preds] == [[1, 3], None, None]
    assert spanaug("align", "--aligner", "fast-align", "--input", gold, "--output", tmp_path / "a.jsonl") == 0
    aligned = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert len(aligned) == 3 and all("pred_span" in a and 0 <= a["score"] <= 1 for a in aligned)


def test_eval_align_refuses_existing_outputs_before_aligning(spanaug, tmp_path, monkeypatch, capsys):
    import spanaug_aligners.cli as commands

    gold = _items(tmp_path / "gold.jsonl")
    metrics, output = tmp_path / "m.json", tmp_path / "p.jsonl"
    metrics.write_text("earlier\n")
    made = []
    real = commands._aligner
    monkeypatch.setattr(commands, "_aligner", lambda *args: made.append(args) or real(*args))
    args = ["eval", "align", "--aligner", "string-match", "--gold", gold, "--metrics", metrics]
    assert spanaug(*args) == 2
    assert f"{metrics} exists; pass --overwrite" in " ".join(capsys.readouterr().err.split())
    assert metrics.read_text() == "earlier\n" and not made  # refused before the aligner was made
    output.write_text("earlier\n")
    assert spanaug(*args, "--output", output) == 2 and not made
    assert spanaug(*args, "--output", output, "--overwrite") == 0 and made
    assert json.loads(metrics.read_text())["aligner"] == "string-match" and output.read_text() != "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.jsonl", "m.json", "p.jsonl"]  # no temporary left


def test_bad_input_is_one_error_line(spanaug, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    assert spanaug("eval", "align", "--aligner", "string-match", "--gold", bad) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def test_convert_word_alignments(spanaug, tmp_path):
    tsv = tmp_path / "w-dev.tsv"
    tsv.write_text("0:0\tthe man bought a car\tN/A\tthe man purchased an auto\tN/A\t1\t1\t0-0 1-1 2-2 3-3 4-4\t\t\n")
    out = tmp_path / "items.jsonl"
    assert spanaug("convert", "word-alignments", "--format", "multimwa", tsv, "--output", out) == 0
    items = {tuple(json.loads(x)["source_span"]): json.loads(x) for x in out.read_text().splitlines()}
    assert items[(2, 3)]["gold_span"] == [2, 3] and items[(2, 3)]["kind"] == "paraphrased"
    assert items[(1, 2)]["kind"] == "identical"
    long = tmp_path / "long.jsonl"
    assert spanaug("convert", "word-alignments", "--format", "multimwa", tsv, "--output", long, "--min-len", "4", "--max-len", "5") == 0
    spans = sorted(tuple(json.loads(x)["source_span"]) for x in long.read_text().splitlines())
    assert spans == [(0, 4), (0, 5), (1, 5)]
    assert spanaug("convert", "word-alignments", "--format", "multimwa", tsv, "--output", long, "--overwrite", "--min-len", "4") == 2


def test_a_heads_threshold_placed_by_the_rate_of_none(spanaug, tmp_path, tiny_encoder, capsys):
    items = _items(tmp_path / "items.jsonl")
    head = tmp_path / "head"
    assert spanaug("train", "aligner", "--data", items, "--dev", items, "--out", head, "--encoder", str(tiny_encoder),
                   "--hidden", "8", "--epochs", "1", "--no-links", "--cache-dir", tmp_path / "cache") == 0
    trained = json.loads((head / "config.json").read_text())
    assert spanaug("train", "aligner-threshold", head, "--dev", items, "--set", "copies=false") == 0
    config = json.loads((head / "config.json").read_text())
    calibration = config["calibration"]
    assert calibration["rule"] == "none-rate" and calibration["data"] == "items.jsonl" and calibration["items"] == 3
    assert calibration["previous_threshold"] == trained["threshold"]
    assert {"none_p", "none_r", "exact_f1"} <= set(calibration["dev"]["all"])
    # One item of three has no gold span: the head at its new threshold answers None once.
    predictions = tmp_path / "p.jsonl"
    assert spanaug("eval", "align", "--aligner", "bert-span", "--gold", items, "--set", f"head={head}", "--set", "copies=false",
                   "--output", predictions) == 0
    answers = [json.loads(x)["pred_span"] for x in predictions.read_text().splitlines()]
    assert sum(a is None for a in answers) == 1
    assert "threshold" in capsys.readouterr().err
    assert spanaug("train", "aligner-threshold", tmp_path, "--dev", items) == 2
    assert "is not a bert-span head" in capsys.readouterr().err


def test_train_aligner_refuses_an_existing_head_before_training(spanaug, tmp_path, tiny_encoder, monkeypatch, capsys):
    import spanaug_aligners.train as train

    items = _items(tmp_path / "items.jsonl")
    head = tmp_path / "head"
    args = ["train", "aligner", "--data", items, "--dev", items, "--out", head, "--encoder", str(tiny_encoder),
            "--hidden", "8", "--epochs", "1", "--no-links", "--cache-dir", tmp_path / "cache"]
    assert spanaug(*args) == 0
    trained = (head / "config.json").read_text()
    real, calls = train.train_head, []
    monkeypatch.setattr(train, "train_head", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert spanaug(*args, "--seed", "1") == 2
    assert f"{head} exists; pass --overwrite" in " ".join(capsys.readouterr().err.split())
    assert not calls and (head / "config.json").read_text() == trained
    (head / "notes.txt").write_text("an earlier head's\n")
    assert spanaug(*args, "--seed", "1", "--overwrite") == 0 and calls
    # The folder is replaced whole: nothing of the earlier one is left in it, nothing aside.
    assert sorted(p.name for p in head.iterdir()) == ["config.json", "head.safetensors"]
    assert json.loads((head / "config.json").read_text())["training"]["options"]["seed"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "head", "items.jsonl"]
