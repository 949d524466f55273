"""Human judgments: kappa, task building, export -> filled answers -> import -> train, and input errors."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spanaug_core.errors import DataError
from spanaug_core.text import detokenize
from spanaug_core.types import Augmented, Constraints, Example, Span
from spanaug_judge.agreement import fleiss_kappa
from spanaug_judge.answers import aggregate, breakdown, read_answers, write_judgments
from spanaug_judge.tasks import TaskSet, build_tasks, highlight, read_export


def test_fleiss_kappa_of_the_textbook_example() -> None:
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa 0.210.
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    assert round(fleiss_kappa(table), 3) == 0.210
    assert fleiss_kappa([[3, 0], [0, 3]]) == 1.0
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[3, 0], [1, 1]])


def test_highlight_splits_the_detokenized_sentence() -> None:
    tokens = ("He", "said", ",", '"', "yes", '"', ".")
    assert highlight(tokens, (4, 5)) == ('He said, "', "yes", '".')
    assert highlight(tokens, (0, 2)) == ("", "He said", ', "yes".')
    assert "".join(highlight(tokens, (1, 3))) == detokenize(tokens)
    # A hyphen between two words is written without spaces, which depends on the word after
    # it: the span after it must not lose its first letter ("SOCCER -IORENTINA" once).
    assert highlight(("SOCCER", "-", "FIORENTINA", "beat", "Milan"), (2, 3)) == ("SOCCER-", "FIORENTINA", " beat Milan")


def target(start: int, label: str, lu: str) -> Span:
    return Span(start=start, end=start + 1, label=label, role="target", group="1", attrs={"lu": lu})


GOLD = [
    Example(id="g1", tokens=tuple("The panel will corroborate it .".split()),
            spans=(target(3, "Evidence", "corroborate.v"), Span(start=0, end=2, label="Support", role="argument", group="1"))),
    Example(id="g2", tokens=tuple("The tests confirm the theory .".split()), spans=(target(2, "Evidence", "confirm.v"),)),
    Example(id="g3", tokens=tuple("Glaciers move slowly .".split()), spans=(target(1, "Motion", "move.v"),)),
    Example(id="g4", tokens=tuple("The boat drifted away .".split()), spans=(target(2, "Motion", "drift.v"),)),
    Example(id="g5", tokens=tuple("She said it was late .".split()), spans=(target(1, "Statement", "say.v"),)),
    Example(id="g6", tokens=tuple("Records prove the claim .".split()), spans=(target(1, "Evidence", "prove.v"),)),
]


def augmented(source: Example, text: str, iteration: int, alignment: float) -> Augmented:
    tokens = tuple(text.split())
    span = source.spans[0].moved(source.spans[0].start, source.spans[0].end)
    return Augmented(id=f"{source.id}/s0/it{iteration}", source_id=source.id, target=0, iteration=iteration, tokens=tokens,
                     text=detokenize(tokens), spans=(span,), scores={"paraphrase": -0.5, "alignment": alignment},
                     constraints=Constraints(avoid=("corroborate",)))


RECORDS = [
    augmented(GOLD[0], "The panel will confirm it .", 1, 0.9),  # "confirm" rules out g2 as its in-frame control
    augmented(GOLD[0], "The panel will verify it .", 2, 0.4),
    augmented(GOLD[2], "Glaciers travel slowly .", 1, 0.95),
    Augmented(id="g5/it1", source_id="g5", target=None, iteration=1, tokens=("She", "spoke", "."), text="She spoke.",
              spans=(), scores={"paraphrase": -0.3, "alignment": 1.0}, constraints=Constraints()),
]


def test_each_output_is_hidden_among_an_in_frame_and_an_out_of_frame_control() -> None:
    tasks, stats = build_tasks(RECORDS, GOLD, seed=0)
    assert stats.no_span == 1 and len(tasks.tasks) == 3 and not any(stats.missing.values())
    gold_ids = {g.id: g for g in GOLD}
    for task, record in zip(tasks.tasks, RECORDS):
        kinds = {item.kind: item for item in task.items}
        assert sorted(kinds) == ["in-frame", "out-of-frame", "system"] and kinds["system"].source == record.id
        inside, control = kinds["in-frame"], kinds["out-of-frame"]
        assert inside.label == task.label and control.label != task.label
        assert record.source_id not in (inside.source, control.source) and {inside.source, control.source} <= set(gold_ids)
        assert inside.tokens[inside.span[0]] != record.tokens[kinds["system"].span[0]]
    assert {i.kind: i.source for i in tasks.tasks[0].items}["in-frame"] == "g6"
    assert build_tasks(RECORDS, GOLD, seed=0)[0] == tasks
    positions = {[i.kind for i in t.items].index("system") for s in range(6) for t in build_tasks(RECORDS, GOLD, seed=s)[0].tasks}
    assert len(positions) > 1  # the system output is not always in the same place


def test_no_gold_means_system_outputs_alone() -> None:
    tasks, stats = build_tasks(RECORDS, [], sample=2, seed=1)
    assert stats.records == 2 and all([i.kind for i in t.items] == ["system"] for t in tasks.tasks)


@pytest.fixture
def spanaug(cli):
    return cli("judge,jsonl,filters")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run folder whose manifest records its input, the gold examples."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(e.model_dump_json() + "\n" for e in GOLD))
    run = tmp_path / "run"
    run.mkdir()
    (run / "augmented.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in RECORDS))
    manifest = {"config": {"dataset": {"name": "jsonl"}, "input": str(gold), "rewrite_roles": ["target"]}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


SCORES = {  # per task: the system output's three judgments; controls get 80 (in-frame) and 10 (out-of-frame)
    "t1": (80, 70, 30),
    "t2": (20, 30, 10),
    "t3": (90, 85, 95),
}


def fill(tasks: TaskSet, folder: Path) -> list[Path]:
    """Answer files of three annotators: two from the page (JSON lines), one as CSV."""
    files = []
    for k, name in enumerate(("ann1", "ann2", "ann3")):
        answers = [(item.item, SCORES[task.task][k] if item.kind == "system" else 80 if item.kind == "in-frame" else 10)
                   for task in tasks.tasks for item in task.items]
        if name == "ann3":
            path = folder / "ann3.csv"
            with path.open("w", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(["annotator", "item", "score"])
                writer.writerows([name, item, score] for item, score in answers)
        else:
            path = folder / f"answers-{name}.jsonl"
            lines = [{"export": tasks.export, "annotator": name}, *({"item": i, "score": s} for i, s in answers)]
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        files.append(path)
    return files


def test_export_fill_import_train_round_trip(spanaug, run_dir, tmp_path, capsys) -> None:
    out = tmp_path / "judge"
    assert spanaug("judge", "export", run_dir, "--output", out, "--per-item", 3) == 0
    assert "controls from jsonl dataset" in capsys.readouterr().err
    tasks = read_export(out)
    assert len(tasks.tasks) == 3 and tasks.judgments_per_item == 3
    page = (out / "judge.html").read_text()
    assert tasks.export in page and "http" not in page and "in-frame" not in page and '"kind"' not in page
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    shown = {i["item"]: i["before"] + i["inside"] + i["after"] for t in data["tasks"] for i in t["items"]}
    assert shown == {item.item: detokenize(item.tokens) for item in tasks.items().values()}
    rows = list(csv.DictReader((out / "tasks.csv").open()))
    assert [r["task"] for r in rows] == ["t1", "t2", "t3"] and all("<mark>" in r["sentence1"] for r in rows)

    judgments = tmp_path / "judgments.jsonl"
    answer_files = fill(tasks, tmp_path)
    assert spanaug("judge", "import", *answer_files, "--tasks", out, "--output", judgments) == 0
    printed = capsys.readouterr().out
    lines = [json.loads(x) for x in judgments.read_text().splitlines()]
    assert [(j["id"], j["accepted"], j["mean"]) for j in lines] == [
        (RECORDS[0].id, True, 60.0), (RECORDS[1].id, False, 20.0), (RECORDS[2].id, True, 90.0)]
    assert lines[0]["iteration"] == 1 and lines[0]["scores"] == RECORDS[0].scores and len(lines[0]["judgments"]) == 3
    assert re.search(r"system\s.*66\.7%", printed) and re.search(r"in-frame\s.*100\.0%", printed)
    assert re.search(r"out-of-frame\s.*0\.0%", printed)
    assert f"(system items, accept = score >= 50): {fleiss_kappa([[2, 1], [0, 3], [3, 0]]):.4f} over 3 items" in printed

    # Which kinds of spans fail: by a key of the judged span's attrs (the source's LU here) and by iteration.
    results = aggregate(tasks, [a for path in answer_files for a in read_answers(path, tasks)])
    assert breakdown(results, "lu") == {"corroborate.v": (2, 1), "move.v": (1, 1)}
    assert breakdown(results, "iteration") == {"1": (2, 2), "2": (1, 0)} and breakdown(results, "colour") == {"-": (3, 2)}
    assert spanaug("judge", "import", *answer_files, "--tasks", out, "--output", tmp_path / "j-by.jsonl", "--by", "lu", "--by", "colour") == 0
    captured = capsys.readouterr()
    assert "system items by lu" in captured.out and re.search(r"corroborate\.v\s.*\s2\s.*1 \(50\.0%\)", captured.out)
    assert "--by colour: no judged system item has it" in captured.err
    assert "attrs" not in page and "corroborate.v" not in page  # annotators never see the span's attrs

    model = tmp_path / "filter"
    assert spanaug("train", "filter", "--judgments", judgments, "--out", model, "--holdout", 0, "--epochs", 20) == 0
    assert (model / "filter.safetensors").is_file()
    # Answers kept beside the export survive a forced re-export; a cp1252 CSV is one clear line.
    kept = out / "answers-ann1.csv"
    kept.write_bytes(b"annotator,item,score\nann1,x,50\n")
    assert spanaug("judge", "export", run_dir, "--output", out, "--per-item", 3, "--overwrite") == 0
    assert kept.is_file() and (out / "tasks.json").is_file()
    kept.write_bytes(b"annotator,item,score\nJos\xe9,x,50\n")
    assert spanaug("judge", "import", kept, "--tasks", out, "--output", tmp_path / "j2.jsonl") == 2
    assert "answers-ann1.csv:2: not valid utf-8-sig" in capsys.readouterr().err


def test_rejected_records_are_judged_and_the_filters_scored(spanaug, run_dir, tmp_path, capsys) -> None:
    dropped = augmented(GOLD[2], "Glaciers creep slowly .", 2, 0.5)
    lines = [{"source_id": "g3", "target": 0, "iteration": 2, "reason": "adequacy: 0.41 < 0.7", "record": dropped.model_dump(mode="json")},
             {"source_id": "g1", "target": 0, "iteration": 3, "reason": "no-alignment"}]  # a stopped span: nothing to judge
    (run_dir / "rejected.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "judge"
    assert spanaug("judge", "export", run_dir, "--output", out, "--per-item", 2, "--rejected") == 0
    assert "4 tasks for 4 records, 1 of them dropped by the filters" in capsys.readouterr().err
    tasks = read_export(out)
    system = {i.source: i for i in tasks.items().values() if i.kind == "system"}
    assert {k: i.kept for k, i in system.items()} == {RECORDS[0].id: True, RECORDS[1].id: True, RECORDS[2].id: True, dropped.id: False}
    assert '"kept"' not in (out / "judge.html").read_text()  # the page does not tell annotators what the filters did

    # Two of the three kept outputs are accepted, and so is the one the filters dropped.
    wanted = {RECORDS[0].id: 80, RECORDS[1].id: 20, RECORDS[2].id: 90, dropped.id: 70}
    answers = tmp_path / "answers.csv"
    with answers.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["annotator", "item", "score"])
        for name in ("ann1", "ann2"):
            writer.writerows([name, i.item, wanted.get(i.source, 50)] for i in tasks.items().values())
    assert spanaug("judge", "import", answers, "--tasks", out, "--output", tmp_path / "j.jsonl") == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert ("the run's filters kept 3 of the 4 judged outputs (3 accepted, 75.0% unfiltered): precision 66.7% "
            "(2 of the kept accepted), recall 66.7% (2 of the 3 accepted kept)") in printed
    # The judgments say what the filters did, for `train filter` to compare a learned filter with.
    judged = {j["id"]: j["kept"] for j in map(json.loads, (tmp_path / "j.jsonl").read_text().splitlines())}
    assert judged == {RECORDS[0].id: True, RECORDS[1].id: True, RECORDS[2].id: True, dropped.id: False}

    # Without --rejected nothing is said of the filters; a run that wrote no rejected.jsonl is refused.
    plain = tmp_path / "plain"
    assert spanaug("judge", "export", run_dir, "--output", plain, "--per-item", 2) == 0
    assert all(i.kept is not False for i in read_export(plain).items().values())
    (run_dir / "rejected.jsonl").unlink()
    assert spanaug("judge", "export", run_dir, "--output", tmp_path / "none", "--rejected") == 2
    assert "--rejected: no rejected.jsonl here" in capsys.readouterr().err


def entity(start: int, end: int, label: str) -> Span:
    return Span(start=start, end=end, label=label, role="entity")


NER_GOLD = [
    Example(id="n1", tokens=tuple("Smith joined Acme in Paris .".split()), spans=(entity(0, 1, "PER"), entity(2, 3, "ORG"), entity(4, 5, "LOC"))),
    Example(id="n2", tokens=tuple("Jones visited Rome .".split()), spans=(entity(0, 1, "PER"), entity(2, 3, "LOC"))),
    Example(id="n3", tokens=tuple("Globex hired Brown .".split()), spans=(entity(0, 1, "ORG"), entity(2, 3, "PER"))),
]


def test_a_whole_sentence_paraphrase_is_judged_entity_by_entity(spanaug, tmp_path, capsys) -> None:
    # The paraphrase of n1 keeps its three entities: three tasks, each among entity controls.
    tokens = tuple("In Paris , Smith went to work for Acme .".split())
    record = Augmented(id="n1/it1", source_id="n1", target=None, iteration=1, tokens=tokens, text=detokenize(tokens),
                       spans=(entity(1, 2, "LOC"), entity(3, 4, "PER"), entity(8, 9, "ORG")),
                       scores={"paraphrase": -0.4, "alignment": 1.0}, constraints=Constraints())
    tasks, stats = build_tasks([record], NER_GOLD, seed=3)
    assert stats.no_span == 0 and [t.label for t in tasks.tasks] == ["LOC", "PER", "ORG"]
    for task in tasks.tasks:
        kinds = {i.kind: i for i in task.items}
        assert kinds["system"].source == "n1/it1" and kinds["in-frame"].label == task.label != kinds["out-of-frame"].label
        assert all(i.source != "n1" for i in task.items if i.kind != "system")  # never the record's own source

    # A record is accepted only when every entity is: here "Acme" (ORG) is rated down.
    items = tasks.items()
    system = {i.label: i.item for i in items.values() if i.kind == "system"}
    answers = tmp_path / "a.csv"
    answers.write_text("annotator,item,score\n" + "".join(
        f"{name},{i},{20 if i == system['ORG'] else 90}\n" for name in ("a1", "a2") for i in items))
    results = aggregate(tasks, read_answers(answers, tasks))
    out = tmp_path / "j.jsonl"
    assert write_judgments(results, out) == 1
    line = json.loads(out.read_text())
    assert (line["id"], line["accepted"], line["mean"], line["label"]) == ("n1/it1", False, 20.0, "ORG")
    assert [(i["label"], i["mean"]) for i in line["items"]] == [("LOC", 90.0), ("PER", 90.0), ("ORG", 20.0)]

    # Through the commands: entity gold gives the controls, and import counts records as well as items.
    gold, run = tmp_path / "gold.jsonl", tmp_path / "run"
    gold.write_text("".join(e.model_dump_json() + "\n" for e in NER_GOLD))
    run.mkdir()
    (run / "augmented.jsonl").write_text(record.model_dump_json() + "\n")
    assert spanaug("judge", "export", run, "--output", tmp_path / "judge", "--gold", gold, "--per-item", 2, "--seed", 3) == 0
    assert "3 tasks for 1 records, 9 sentences" in capsys.readouterr().err
    assert read_export(tmp_path / "judge").tasks == tasks.tasks
    assert spanaug("judge", "import", answers, "--tasks", tmp_path / "judge", "--output", tmp_path / "j2.jsonl") == 0
    assert "1 judged records, 0 accepted (0.0%)" in " ".join(capsys.readouterr().out.split())


def test_export_without_gold_says_so(spanaug, run_dir, tmp_path, capsys) -> None:
    (run_dir / "manifest.json").unlink()
    out = tmp_path / "judge"
    assert spanaug("judge", "export", run_dir, "--output", out) == 0
    assert "no gold to draw controls from" in capsys.readouterr().err
    assert all(len(t.items) == 1 for t in read_export(out).tasks)
    gold = ("--gold", tmp_path / "gold.jsonl")
    assert spanaug("judge", "export", run_dir, "--output", out, *gold) == 2
    assert "already holds an export" in capsys.readouterr().err
    assert spanaug("judge", "export", run_dir, "--output", out, *gold, "--force") == 0
    assert all(len(t.items) == 3 for t in read_export(out).tasks)


@pytest.mark.parametrize(
    ("name", "content", "where", "message"),
    [
        ("a.jsonl", ['{"export": "zzz", "annotator": "x"}'], ":1:", "for export 'zzz'"),
        ("a.jsonl", ['{"item": "t1-1", "score": 5}'], ":1:", "expected the header"),
        ("a.jsonl", ["HEADER", '{"item": "t1-1", "score": 5}', '{"item": "t9-1", "score": 5}'], ":3:", "not one of the 9 items"),
        ("a.jsonl", ["HEADER", '{"item": "t1-1", "score": 150}'], ":2:", "not a number from 0 to 100"),
        ("a.jsonl", ["HEADER", '{"item": "t1-1", "score": 5}', '{"item": "t1-1", "score": 7}'], ":3:", "again \\(first at .*a.jsonl:2\\)"),
        ("a.jsonl", ["HEADER", '{"item": "t1-1", "score": 5'], ":2:", "invalid JSON"),
        ("a.csv", ["annotator,item", "x,t1-1"], ":1:", "lacks score"),
        ("a.csv", ["annotator,item,score", "x,t1-1,5", "x,t1-2,lots"], ":3:", "'lots' is not a number"),
    ],
)
def test_malformed_answers_name_file_and_line(tmp_path, name: str, content: list[str], where: str, message: str) -> None:
    tasks = build_tasks(RECORDS, GOLD)[0]
    path = tmp_path / name
    header = json.dumps({"export": tasks.export, "annotator": "x"})
    path.write_text("".join((header if line == "HEADER" else line) + "\n" for line in content))
    with pytest.raises(DataError, match=f"{re.escape(name)}{where} .*{message}"):
        aggregate(tasks, read_answers(path, tasks))


def test_import_error_is_one_line(spanaug, run_dir, tmp_path, capsys) -> None:
    out = tmp_path / "judge"
    assert spanaug("judge", "export", run_dir, "--output", out) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("annotator,item,score\nx,t1-1,101\n")
    assert spanaug("judge", "import", bad, "--tasks", out, "--output", tmp_path / "j.jsonl") == 2
    assert "bad.csv:2: score 101.0 of item t1-1 is not a number from 0 to 100" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (checks the page's script syntax)")
def test_page_script_parses(tmp_path) -> None:
    from spanaug_judge.page import render_page

    page = render_page(build_tasks(RECORDS, GOLD)[0])
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(script) == 1
    (tmp_path / "page.js").write_text(script[0])
    result = subprocess.run(["node", "--check", str(tmp_path / "page.js")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
