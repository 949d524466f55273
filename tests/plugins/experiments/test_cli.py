"""`spanaug experiment learning-curve` and `lexsub` end to end on tiny data with the tiny encoder."""

from __future__ import annotations

import csv
import json

import pytest

from spanaug_shared.postag import find_tagger

SENTENCES = [
    ("the man saw the red car .", [(1, 2, "PER"), (4, 6, "VEH")]),
    ("she bought a blue auto .", [(0, 1, "PER"), (3, 5, "VEH")]),
    ("the cat sat on the mat .", [(1, 2, "ANI")]),
    ("a dog lay on the rug .", [(1, 2, "ANI")]),
    ("he watched the big dog .", [(0, 1, "PER"), (4, 5, "ANI")]),
    ("the woman purchased a small car .", [(1, 2, "PER"), (4, 6, "VEH")]),
]
PARAPHRASES = {0: "the man watched the red car .", 1: "she purchased a blue auto .", 4: "he saw the big dog ."}


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def data(tmp_path):
    gold = [{"id": f"s{i}", "tokens": text.split(), "spans": [{"start": s, "end": e, "label": lab, "role": "entity"} for s, e, lab in spans]}
            for i, (text, spans) in enumerate(SENTENCES)]
    _jsonl(tmp_path / "gold.jsonl", gold)
    run = tmp_path / "run"
    run.mkdir()
    records = [{"id": f"s{i}/it1", "source_id": f"s{i}", "target": None, "iteration": 1, "tokens": text.split(), "text": text,
                "spans": gold[i]["spans"], "scores": {"paraphrase": -0.5, "alignment": 1.0}, "constraints": {}}
               for i, text in PARAPHRASES.items()]
    _jsonl(run / "augmented.jsonl", records)
    return tmp_path


@pytest.fixture
def spanaug(cli):
    return cli("experiments,trainers,jsonl,aligners,filters")


def test_learning_curve_writes_rows_summary_and_plot(spanaug, data, tiny_encoder, capsys) -> None:
    out = data / "curve"
    args = ["experiment", "learning-curve", "--trainer", "ner", "--dataset", "jsonl", "--train", data / "gold.jsonl",
            "--dev", data / "gold.jsonl", "--test", data / "gold.jsonl", "--augmented", data / "run", "--fractions", "0.5,1",
            "--seeds", "2", "--set", f"trainer.encoder={tiny_encoder}", "--set", "trainer.epochs=2", "--set", "trainer.hidden=8",
            "--out", out, "--no-progress"]
    assert spanaug(*args) == 0, capsys.readouterr().err
    printed = capsys.readouterr()
    assert "records 3, kept 3" in printed.err and "test F1 (%), mean ± std over seeds" in printed.out
    with (out / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8
    full = [r for r in rows if r["fraction"] == "1"]
    assert {r["added_examples"] for r in full if r["condition"] == "augmented"} == {"3"}
    assert all(r["gold_examples"] == "6" for r in full) and all(0 <= float(r["test_f1"]) <= 1 for r in rows)
    assert (out / "summary.csv").read_text().count("\n") == 5
    pytest.importorskip("matplotlib")
    assert (out / "learning-curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    recorded = json.loads((out / "experiment.json").read_text())
    assert recorded["seeds"] == 2 and recorded["augmented_counts"]["kept"] == 3

    assert spanaug(*args) == 0  # a rerun trains nothing new
    with (out / "results.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 8
    assert "holds 8 cell(s): none left to train" in capsys.readouterr().err
    fewer = [a if a != "2" else "1" for a in args]
    assert spanaug(*fewer) == 2
    assert "holds another experiment (seeds differ)" in capsys.readouterr().err
    more = [a if a != "2" else "3" for a in args]
    assert spanaug(*more) == 0  # a third seed grows the curve: only its 4 cells are trained
    with (out / "results.csv").open() as fh:
        grown = list(csv.DictReader(fh))
    assert grown[:8] == rows and sorted({r["seed"] for r in grown[8:]}) == ["2"] and len(grown) == 12
    assert json.loads((out / "experiment.json").read_text())["seeds"] == 3
    assert "holds 8 cell(s): training the 4 it lacks, of seed(s) 2" in capsys.readouterr().err

    # A run stopped part way through seed 2: experiment.json already says 3 seeds, and the
    # rerun trains the cells results.csv lacks, and says so.
    with (out / "results.csv").open(newline="") as fh:
        lines = fh.readlines()
    (out / "results.csv").write_text("".join(lines[:-2]), newline="")
    assert spanaug(*more) == 0
    assert "holds 10 cell(s): training the 2 it lacks, of seed(s) 2" in capsys.readouterr().err
    with (out / "results.csv").open() as fh:
        assert [r["seed"] for r in csv.DictReader(fh)][8:] == ["2"] * 4

    # A folder written before --first-seed existed continues as one that began at seed 0.
    recorded = json.loads((out / "experiment.json").read_text())
    del recorded["first_seed"]
    (out / "experiment.json").write_text(json.dumps(recorded))
    assert spanaug(*more) == 0
    # A fourth seed trained in a folder of its own (another machine's share) joins the curve.
    part = data / "curve-part"
    one = [a if a != "3" else "1" for a in more[:-3]]  # less --out OUT --no-progress
    assert spanaug(*one, "--first-seed", "3", "--out", part, "--no-progress") == 0
    with (part / "results.csv").open() as fh:
        assert sorted({r["seed"] for r in csv.DictReader(fh)}) == ["3"]
    assert spanaug("experiment", "summarize", out / "results.csv", part / "results.csv", "--out", data / "joined") == 0
    with (data / "joined" / "results.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 16


def test_learning_curve_errors(spanaug, data, capsys) -> None:
    base = ["experiment", "learning-curve", "--trainer", "ner", "--dataset", "jsonl", "--train", data / "gold.jsonl",
            "--test", data / "gold.jsonl", "--out", data / "o"]
    assert spanaug(*base) == 2
    assert "need --augmented RUN_DIR" in capsys.readouterr().err
    assert spanaug(*base, "--conditions", "gold,paraphrase", "--augmented", data / "run") == 2
    assert "unknown condition" in capsys.readouterr().err
    assert spanaug(*base, "--conditions", "gold", "--fractions", "0,1") == 2
    assert "fractions must lie in (0, 1]" in capsys.readouterr().err
    assert spanaug(*base, "--augmented", data / "run", "--conditions", "gold,filtered", "--filter", "[1, 2]") == 2
    assert "expected a name or a mapping" in capsys.readouterr().err
    assert spanaug(*base, "--augmented", data / "run", "--filter", "paraphrase-score") == 2
    assert "--filter chooses the records of the filtered condition" in capsys.readouterr().err
    assert spanaug(*base, "--augmented", data / "run", "--conditions", "gold,filtered") == 2
    assert "give both or neither" in capsys.readouterr().err
    assert spanaug(*base, "--conditions", "gold", "--set", "trainer.epoch=2") == 2
    assert "unknown option 'epoch'" in capsys.readouterr().err


def test_filters_choose_the_filtered_conditions_records(spanaug, data, tiny_encoder, capsys) -> None:
    args = ["experiment", "learning-curve", "--trainer", "ner", "--dataset", "jsonl", "--train", data / "gold.jsonl",
            "--test", data / "gold.jsonl", "--augmented", data / "run", "--fractions", "1", "--seeds", "1",
            "--conditions", "gold,augmented,filtered", "--filter", "{name: paraphrase-score, min_score: 0}",
            "--set", f"trainer.encoder={tiny_encoder}", "--set", "trainer.epochs=1", "--out", data / "f", "--no-progress"]
    assert spanaug(*args) == 0, capsys.readouterr().err
    assert "dropped by paraphrase-score 3" in capsys.readouterr().err
    with (data / "f" / "results.csv").open() as fh:
        added = {r["condition"]: r["added_examples"] for r in csv.DictReader(fh)}
    assert added == {"gold": "0", "augmented": "3", "filtered": "0"}  # the filter dropped all three, for filtered only


def test_unseen_targets_are_scored_apart(spanaug, tmp_path, tiny_encoder, capsys) -> None:
    # Half the test targets carry a lexical unit no training sentence has: their recall is scored apart.
    def example(i: int, lu: str) -> dict:
        return {"id": f"e{i}", "tokens": "the man saw the red car .".split(),
                "spans": [{"start": 2, "end": 3, "label": "Perception", "role": "target", "group": "1", "attrs": {"lu": lu}}]}

    _jsonl(tmp_path / "train.jsonl", [example(i, "see.v") for i in range(4)])
    _jsonl(tmp_path / "test.jsonl", [example(10 + i, "see.v" if i % 2 else "spot.v") for i in range(4)])
    out = tmp_path / "u"
    args = ["experiment", "learning-curve", "--trainer", "frame-id", "--dataset", "jsonl", "--train", tmp_path / "train.jsonl",
            "--test", tmp_path / "test.jsonl", "--conditions", "gold", "--fractions", "1", "--seeds", "1", "--unseen", "lu",
            "--set", f"trainer.encoder={tiny_encoder}", "--set", "trainer.epochs=1", "--out", out, "--no-progress"]
    assert spanaug(*args) == 0, capsys.readouterr().err
    with (out / "results.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["unseen_targets"] == "2" and 0 <= float(row["unseen_recall"]) <= 1


@pytest.mark.skipif(find_tagger().tagger is None, reason="no POS tagger installed (pip install 'spanaug[pos]')")
def test_lexsub_command_writes_the_baseline(spanaug, tmp_path, capsys) -> None:
    source = {"id": "s1", "tokens": "she bought a car .".split(), "spans": [
        {"start": 1, "end": 2, "label": "Commerce_buy", "role": "target", "group": "1"},
        {"start": 0, "end": 1, "label": "Buyer", "role": "argument", "group": "1"}]}
    _jsonl(tmp_path / "src.jsonl", [source])
    run = tmp_path / "run"
    run.mkdir()
    _jsonl(run / "augmented.jsonl", [{"id": "s1/s0/it1", "source_id": "s1", "target": 0, "iteration": 1,
                                      "tokens": "she purchased a car .".split(), "text": "she purchased a car .",
                                      "spans": [{"start": 1, "end": 2, "label": "Commerce_buy", "role": "target", "group": "1"}],
                                      "scores": {}, "constraints": {}}])
    out = tmp_path / "lexsub.jsonl"
    args = ["experiment", "lexsub", "--augmented", run, "--dataset", "jsonl", "--input", tmp_path / "src.jsonl", "--output", out]
    assert spanaug(*args) == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["tokens"] == ["she", "purchased", "a", "car", "."] and row["meta"]["source_id"] == "s1"
    assert "lexsub: kept 1" in capsys.readouterr().err
    # Written again: refused, then replaced with --overwrite, and nothing left beside it.
    out.write_text("earlier\n")
    assert spanaug(*args) == 2 and out.read_text() == "earlier\n"
    assert capsys.readouterr().err == f"error: {out} exists; pass --overwrite to replace it, or choose another output\n"
    assert spanaug(*args, "--overwrite") == 0 and json.loads(out.read_text()) == row
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lexsub.jsonl", "run", "src.jsonl"]


def test_lexsub_refuses_an_existing_output_before_reading_anything(spanaug, tmp_path, capsys) -> None:
    out = tmp_path / "lexsub.jsonl"
    out.write_text("earlier\n")
    (tmp_path / "run").mkdir()  # no augmented.jsonl, and a source file that is no JSONL: neither is read
    (tmp_path / "src.jsonl").write_text("not json\n")
    assert spanaug("experiment", "lexsub", "--augmented", tmp_path / "run", "--dataset", "jsonl", "--input", tmp_path / "src.jsonl",
                   "--output", out) == 2
    assert capsys.readouterr().err == f"error: {out} exists; pass --overwrite to replace it, or choose another output\n"
    assert out.read_text() == "earlier\n"


def _results(path, rows) -> None:
    from spanaug_experiments.curve import COLUMNS

    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for condition, fraction, seed, f1 in rows:
            writer.writerow([condition, fraction, seed, 6, 0 if condition == "gold" else 3, "0.5", "0.5", "0.5", f1, 3, "1.0", "", ""])


def test_summarize_joins_parts_and_refuses_a_cell_twice(spanaug, tmp_path, capsys) -> None:
    _results(tmp_path / "a.csv", [("gold", "1", s, f"{0.2 + s / 10:.4f}") for s in range(3)])
    _results(tmp_path / "b.csv", [("augmented", "1", s, f"{0.25 + s / 10 + (0.01 if s else 0):.4f}") for s in range(3)])
    out = tmp_path / "joined"
    assert spanaug("experiment", "summarize", tmp_path / "a.csv", tmp_path / "b.csv", "--out", out) == 0, capsys.readouterr().err
    with (out / "results.csv").open() as fh:
        assert [r["condition"] for r in csv.DictReader(fh)] == ["gold"] * 3 + ["augmented"] * 3
    with (out / "paired.csv").open() as fh:
        (row,) = [r for r in csv.DictReader(fh) if r["metric"] == "test_f1"]
    assert (row["condition"], row["runs"]) == ("augmented", "3") and abs(float(row["mean_diff"]) - 0.0567) < 1e-4
    assert (out / "summary.csv").exists() and (out / "learning-curve.png").exists()
    assert "augmented" in capsys.readouterr().out
    # The joined file may be joined again in place; a cell in two parts, or a header of another shape, is refused.
    assert spanaug("experiment", "summarize", out / "results.csv", "--out", out) == 0
    assert spanaug("experiment", "summarize", tmp_path / "a.csv", tmp_path / "a.csv", "--out", tmp_path / "twice") != 0
    assert "cell gold 1 0 (condition, fraction, seed) is already in" in capsys.readouterr().err
    assert spanaug("experiment", "summarize", tmp_path / "a.csv", tmp_path / "b.csv", "--out", out) == 0  # the same join again
    assert spanaug("experiment", "summarize", tmp_path / "a.csv", "--out", out) != 0
    assert "holds other rows than the files joined" in capsys.readouterr().err
    (tmp_path / "bad.csv").write_text("condition,seed\ngold,0\n", encoding="utf-8")
    assert spanaug("experiment", "summarize", tmp_path / "bad.csv", "--out", tmp_path / "bad") != 0
    assert "expected the columns" in capsys.readouterr().err


def test_summarize_checks_every_row_before_writing_anything(spanaug, tmp_path, capsys) -> None:
    _results(tmp_path / "a.csv", [("gold", "1", 0, "0.5"), ("gold", "half", 1, "0.6")])
    out = tmp_path / "joined"
    assert spanaug("experiment", "summarize", tmp_path / "a.csv", "--out", out) == 2
    err = capsys.readouterr().err
    assert "a.csv:3: fraction is 'half'; expected a number above 0, at most 1" in err and "internal error" not in err
    assert not out.exists() or not any(out.iterdir())  # nothing half-written to refuse the corrected rerun
    _results(tmp_path / "a.csv", [("gold", "1", 0, "0.5"), ("gold", "1", 1, "0.6")])
    assert spanaug("experiment", "summarize", tmp_path / "a.csv", "--out", out) == 0, capsys.readouterr().err


def test_summarize_refuses_a_file_without_results_and_a_header_of_another_shape(spanaug, tmp_path, capsys) -> None:
    _results(tmp_path / "empty.csv", [])
    out = tmp_path / "joined"
    assert spanaug("experiment", "summarize", tmp_path / "empty.csv", "--out", out) == 2
    err = capsys.readouterr().err
    assert "empty.csv: holds no results" in err and "No artists" not in err
    assert not out.exists() or not any(out.iterdir())
    (tmp_path / "other.csv").write_text("condition,seed\ngold,0\n", encoding="utf-8")
    assert spanaug("experiment", "summarize", tmp_path / "other.csv", "--out", out) == 2
    err = capsys.readouterr().err
    assert "other.csv:1: expected the columns condition, fraction" in err and "found a header that lacks fraction" in err
    assert "remove" not in err  # the file is the user's input, not a results file of --out's
