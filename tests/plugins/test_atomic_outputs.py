"""Every command docs/reliability.md calls all-or-nothing, stopped midway: no partial file, and
the earlier output of the same name as it was.

Each command is run through ``spanaug`` as a user runs it, over an earlier output (with
``--overwrite`` where the command needs it), and stopped while it writes:
Ctrl-C (KeyboardInterrupt, exit 130) on the second item it writes, or, for the report, a
disk that fills up halfway through the page. At that moment the command must be writing
aside (a ``.NAME.partial-PID`` file or a staging folder beside the target); afterwards the
folder must hold exactly what it held before, byte for byte.
"""

from __future__ import annotations

import csv
import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import spanaug_expanders
import spanaug_jsonl
from doubles import DoublesPlugin, write_examples

from spanaug_core.cli import main
from spanaug_core.config import load_run_config
from spanaug_core.plugins import Registry
from spanaug_core.run import execute
from spanaug_shared.postag import find_tagger

EARLIER = b"an earlier output, to be kept\n"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class Stop:
    """Ctrl-C on the ``at``-th call of ``owner.name``, noting the names in ``folder`` at that moment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, folder: Path, at: int = 2) -> None:
        self.calls, self.seen = 0, []
        self.folder = folder
        original = getattr(owner, name)

        def stopping(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == at:
                self.seen = sorted(p.name for p in folder.iterdir())
                raise KeyboardInterrupt
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, stopping)

    def was_writing_aside(self) -> bool:
        return any(".partial-" in name or name.startswith(".export-") for name in self.seen)


def stopped_midway(spanaug: Callable[..., int], stop: Stop, *args: Any) -> None:
    """Run ``spanaug *args`` with ``stop`` planted; it must exit as Ctrl-C does and change nothing in the stop's folder."""
    before = snapshot(stop.folder)
    assert spanaug(*args) == 130
    assert stop.calls >= 1 and stop.was_writing_aside(), f"not stopped while writing aside: {stop.seen}"
    assert snapshot(stop.folder) == before


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    data = write_examples(tmp_path / "in.jsonl", 6)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x.jsonl").write_bytes(EARLIER)
    return data


@pytest.mark.parametrize("extra", [[], ["--sample", "3"], ["--sample", "3", "--rest", "REST"]], ids=["all", "sample", "sample-and-rest"])
def test_convert(cli, monkeypatch, tmp_path, examples, extra) -> None:
    import spanaug_jsonl.dataset as jsonl

    folder = tmp_path / "out"
    extra = [str(folder / "rest.jsonl") if arg == "REST" else arg for arg in extra]
    if "--rest" in extra:
        (folder / "rest.jsonl").write_bytes(EARLIER)
    # With --rest, the sample is written whole and the rest is stopped: neither may appear.
    stop = Stop(monkeypatch, jsonl, "example_to_json", folder, at=5 if "--rest" in extra else 2)
    stopped_midway(cli("jsonl"), stop, "convert", "--dataset", "jsonl", "--input", examples, "--to", "jsonl",
                   "--output", folder / "x.jsonl", "--overwrite", *extra)


def test_convert_failing_on_a_bad_line_keeps_the_earlier_output(cli, tmp_path, capsys) -> None:
    source = write_examples(tmp_path / "in.jsonl", 4)
    source.write_text(source.read_text() + '{"id": "s9", "tokens": []}\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x.jsonl").write_bytes(EARLIER)
    before = snapshot(tmp_path / "out")
    assert cli("jsonl")("convert", "--dataset", "jsonl", "--input", source, "--to", "jsonl", "--output", tmp_path / "out" / "x.jsonl", "--overwrite") == 2
    assert "in.jsonl:5" in capsys.readouterr().err and snapshot(tmp_path / "out") == before


ITEMS = [
    {"id": "a", "source_tokens": ["the", "red", "car"], "source_span": [1, 3], "target_tokens": ["a", "red", "car", "left"], "gold_span": [1, 3]},
    {"id": "b", "source_tokens": ["he", "bought", "it"], "source_span": [1, 2], "target_tokens": ["he", "purchased", "it"], "gold_span": [1, 2]},
    {"id": "c", "source_tokens": ["he", "left", "now"], "source_span": [2, 3], "target_tokens": ["he", "left"], "gold_span": None},
]


@pytest.mark.parametrize("command", ["align", "eval align", "convert word-alignments"])
def test_the_aligners_commands(cli, monkeypatch, tmp_path, command) -> None:
    import spanaug_aligners.pairs as pairs

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(EARLIER)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    tsv = tmp_path / "w-dev.tsv"
    tsv.write_text("0:0\tthe man bought a car\tN/A\tthe man purchased an auto\tN/A\t1\t1\t0-0 1-1 2-2 3-3 4-4\t\t\n")
    args = {
        "align": ["align", "--aligner", "string-match", "--input", items],
        "eval align": ["eval", "align", "--aligner", "string-match", "--gold", items],
        "convert word-alignments": ["convert", "word-alignments", "--format", "multimwa", tsv],
    }[command]
    stopped_midway(cli("aligners"), Stop(monkeypatch, pairs, "pair_line", folder), *args, "--output", folder / "x.jsonl", "--overwrite")


NER = "".join(f"{w} X X {t}\n" for w, t in [("the", "O"), ("man", "B-PER"), ("saw", "O"), ("a", "O"), ("red", "B-VEH"), ("car", "I-VEH")])


def test_predict(cli, monkeypatch, tmp_path, tiny_encoder) -> None:
    import spanaug_jsonl.dataset as jsonl

    data = tmp_path / "ner.conll"
    data.write_text("\n".join([NER] * 4) + "\n")
    spanaug = cli("trainers,ner,jsonl")
    model = tmp_path / "model"
    assert spanaug("train", "--trainer", "ner", "--dataset", "conll-ner", "--train", data, "--out", model,
                   "--set", f"trainer.encoder={tiny_encoder}", "--set", "trainer.epochs=1", "--set", "trainer.hidden=8", "--no-progress") == 0
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(EARLIER)
    stopped_midway(spanaug, Stop(monkeypatch, jsonl, "example_to_json", folder), "predict", "--model", model, "--dataset", "conll-ner",
                   "--input", data, "--to", "jsonl", "--output", folder / "x.jsonl", "--overwrite")


def test_decode(doubles_cli, monkeypatch, tmp_path) -> None:
    import spanaug_decoders.commands as decode

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(EARLIER)
    stopped_midway(lambda *args: main([str(a) for a in args]), Stop(monkeypatch, decode, "_result_line", folder), "decode",
                   "--decoder", "synonym", "--no-expand", "they buy it", "we buy a car", "--output", folder / "x.jsonl", "--overwrite")


@pytest.mark.skipif(find_tagger().tagger is None, reason="no POS tagger installed (pip install 'spanaug[pos]')")
def test_experiment_lexsub(cli, monkeypatch, tmp_path) -> None:
    import spanaug_jsonl.dataset as jsonl

    sources = [("she bought a car .", "she purchased a car ."), ("he bought a house .", "he purchased a house .")]
    (tmp_path / "src.jsonl").write_text("".join(
        json.dumps({"id": f"s{i}", "tokens": text.split(), "spans": [{"start": 1, "end": 2, "label": "Commerce_buy", "role": "target"}]}) + "\n"
        for i, (text, _) in enumerate(sources)))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "augmented.jsonl").write_text("".join(
        json.dumps({"id": f"s{i}/it1", "source_id": f"s{i}", "target": 0, "iteration": 1, "tokens": text.split(), "text": text,
                    "spans": [{"start": 1, "end": 2, "label": "Commerce_buy", "role": "target"}], "scores": {}, "constraints": {}}) + "\n"
        for i, (_, text) in enumerate(sources)))
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(EARLIER)
    stopped_midway(cli("experiments,jsonl"), Stop(monkeypatch, jsonl, "example_to_json", folder), "experiment", "lexsub",
                   "--augmented", tmp_path / "run", "--dataset", "jsonl", "--input", tmp_path / "src.jsonl",
                   "--output", folder / "x.jsonl", "--overwrite")


def test_convert_framenet_seed(cli, monkeypatch, tmp_path) -> None:
    import spanaug_core.files as files
    from spanaug_framenet.release import SAMPLE

    spanaug = cli("framenet")
    folder = tmp_path / "seed"
    args = ["convert", "framenet-seed", "--input", SAMPLE, "--output", folder, "--frames", 3, "--lus", 1, "--annotations", 2]
    assert spanaug(*args) == 0
    (folder / "notes.txt").write_bytes(EARLIER)
    # Both files are written aside, then moved in: stopped as the first is moved.
    stopped_midway(spanaug, Stop(monkeypatch, files.os, "replace", folder, at=1), *args, "--overwrite")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished run over the scripted doubles: records, rejections, a manifest naming its input."""
    registry = Registry(entry_points=False)
    for plugin, name in ((spanaug_jsonl, "jsonl"), (spanaug_expanders, "expanders"), (DoublesPlugin(), "doubles")):
        registry.add_plugin(plugin, name)
    flags = {"dataset.name": "jsonl", "input": str(write_examples(tmp_path / "in.jsonl", 6)), "decoder.name": "synonym",
             "aligner.name": "diff", "output": str(tmp_path / "run"), "iterations": 2}
    execute(load_run_config(None, flags), registry=registry)
    return tmp_path / "run"


def test_judge_export_keeps_the_earlier_export_and_the_answers_beside_it(cli, monkeypatch, tmp_path, run_dir) -> None:
    import spanaug_core.files as files

    spanaug = cli("judge,jsonl")
    folder = tmp_path / "judge"
    assert spanaug("judge", "export", run_dir, "--output", folder, "--per-item", 1) == 0
    (folder / "answers-ann1.csv").write_text("annotator,item,score\n")
    # The three files are written aside, then moved in: stopped as the first is moved.
    stopped_midway(spanaug, Stop(monkeypatch, files.os, "replace", folder, at=1), "judge", "export", run_dir, "--output", folder,
                   "--per-item", 1, "--seed", 1, "--overwrite")


def test_judge_import(cli, monkeypatch, tmp_path, run_dir) -> None:
    import spanaug_judge.answers as answers
    from spanaug_judge.tasks import read_export

    spanaug = cli("judge,jsonl")
    exported = tmp_path / "judge"
    assert spanaug("judge", "export", run_dir, "--output", exported, "--per-item", 1) == 0
    tasks = read_export(exported)
    assert len(tasks.tasks) >= 2
    filled = tmp_path / "ann1.csv"
    with filled.open("w", newline="") as fh:
        csv.writer(fh).writerows([["annotator", "item", "score"], *(["ann1", item, 70] for item in tasks.items())])
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(EARLIER)
    stopped_midway(spanaug, Stop(monkeypatch, answers, "_item_line", folder), "judge", "import", filled, "--tasks", exported,
                   "--output", folder / "x.jsonl", "--overwrite")


def test_report_on_a_full_disk_keeps_the_earlier_report(cli, monkeypatch, run_dir, capsys) -> None:
    (run_dir / "report.html").write_bytes(EARLIER)
    before, seen = snapshot(run_dir), []
    write_text = Path.write_text

    def half_then_full(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        if not self.name.startswith(".report.html.partial-"):
            return write_text(self, text, *args, **kwargs)
        write_text(self, text[: len(text) // 2], *args, **kwargs)
        seen.extend(p.name for p in run_dir.iterdir())
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full)
    assert cli("report,jsonl")("report", run_dir) == 2
    assert capsys.readouterr().err == f"error: cannot write {run_dir / 'report.html'}: No space left on device\n"
    assert seen and snapshot(run_dir) == before
