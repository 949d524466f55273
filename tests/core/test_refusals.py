"""Every refusal of docs/reliability.md, through the command line, for every reader: ``run``,
``convert`` and ``convert --sample`` each exit 2 with one line that names the file (and the
line, or the FrameNet sentence) and says what was found, and write no record.

A run's dataset may print its suggested settings before it starts ("skip_pos = [...]: the
conll-srl dataset's suggestion"); those notes are not part of the error and are set aside.
Duplicate ids are tested with the readers whose ids come from the data (jsonl's ``id``, an
hf id column); FrameNet renames a sentence listed twice with other annotations, counted
(docs/datasets.md), the others number their sentences, and the spacy dataset names each doc
by its file and position, so theirs cannot repeat.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any
from pathlib import Path

import pytest

from spanaug_core.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "plugins" / "framenet" / "sample"
FULLTEXT = Path("fulltext") / "spanaug_sample.xml"


def _jsonl(*objects: dict) -> str:
    return "".join(json.dumps(obj) + "\n" for obj in objects)


def _conllu(ident: str = "2", label: str = "ARG0") -> str:
    def row(i: str, form: str, sense: str, arg: str) -> str:
        return "\t".join([i, form, form.lower(), "X", "X", "_", "0", "root", "0:root", "_", sense, arg])

    return "\n".join([row("1", "Cats", "_", label), row(ident, "purr", "purr.01", "V"), ""]) + "\n"


def _release(replace: tuple[bytes, bytes]) -> Callable[[Path], Path]:
    """A copy of the embedded FrameNet sample with one edit in its full-text file."""

    def make(tmp_path: Path) -> Path:
        release = tmp_path / "fn"
        shutil.copytree(SAMPLE, release)
        xml = release / FULLTEXT
        data = xml.read_bytes()
        assert replace[0] in data
        xml.write_bytes(data.replace(*replace, 1))
        return release

    return make


def _file(name: str, content: str | bytes) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        path = tmp_path / name
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
        return path

    return make


def _docbin(label: str) -> Any:
    """A spaCy DocBin of one doc with one entity labelled ``label``."""
    from spacy.tokens import Doc, DocBin, Span
    from spacy.vocab import Vocab

    doc = Doc(Vocab(), words=["EU", "rejects"])
    doc.ents = [Span(doc, 0, 1, label=label)]
    docbin = DocBin()
    docbin.add(doc)
    return docbin


def _control_label_docbin(tmp_path: Path) -> Path:
    path = tmp_path / "in.spacy"
    _docbin("O\x01RG").to_disk(path)
    return path


def _damaged_docbin(tmp_path: Path) -> Path:
    """A DocBin whose string table lost its strings: it loads, and its first doc cannot be rebuilt."""
    import zlib

    import srsly

    docbin = _docbin("ORG")
    message = srsly.msgpack_loads(zlib.decompress(docbin.to_bytes()))
    message["strings"] = []
    path = tmp_path / "in.spacy"
    path.write_bytes(zlib.compress(srsly.msgpack_dumps(message)))
    return path


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


X = {"id": "a", "tokens": ["x", "y"]}
SPAN = {"end": 1, "label": "L"}
# (dataset, input maker, the file the error must name (relative to tmp_path), what it must say)
CASES = {
    "jsonl-not-utf8": ("jsonl", _file("in.jsonl", b'{"id": "a", "text": "caf\xe9"}\n'), "in.jsonl:1", r"not valid utf-8: byte b'\\xe9'"),
    "jsonl-nul": ("jsonl", _file("in.jsonl", _jsonl({"id": "a", "tokens": ["E\x00U"]})), "in.jsonl:1", r"control character U\+0000"),
    "jsonl-empty-label": ("jsonl", _file("in.jsonl", _jsonl({**X, "spans": [{"start": 0, "end": 1, "label": ""}]})), "in.jsonl:1", "label: String should have at least 1 character"),
    "jsonl-string-offset": ("jsonl", _file("in.jsonl", _jsonl({**X, "spans": [{"start": "0", **SPAN}]})), "in.jsonl:1", "expected an integer token offset, got '0'"),
    "jsonl-fraction": ("jsonl", _file("in.jsonl", _jsonl({**X, "spans": [{"start": 0.5, **SPAN}]})), "in.jsonl:1", "expected an integer token offset, got 0.5"),
    "jsonl-whole-float": ("jsonl", _file("in.jsonl", _jsonl({**X, "spans": [{"start": 0.0, **SPAN}]})), "in.jsonl:1", "expected an integer token offset, got 0.0"),
    "jsonl-duplicate-id": ("jsonl", _file("in.jsonl", _jsonl(X, {"id": "b", "tokens": ["z"]}, X)), "in.jsonl", "example 3 has the id 'a' of example 1"),
    "jsonl-folder": ("jsonl", _folder, "data", "is a folder; expected a file"),
    "jsonl-meta-not-an-object": ("jsonl", _file("in.jsonl", _jsonl({**X, "meta": 5})), "in.jsonl:1", "expected 'meta' to be a JSON object, got int"),
    "jsonl-id-an-object": ("jsonl", _file("in.jsonl", _jsonl({**X, "id": {"x": 1}})), "in.jsonl:1", "expected 'id' to be a string or a number, got dict"),
    "jsonl-label-newline": ("jsonl", _file("in.jsonl", _jsonl({**X, "spans": [{"start": 0, "end": 1, "label": "L\nM"}]})), "in.jsonl:1", r"label 'L\\nM' contains the control character U\+000A"),
    "conll-ner-nul": ("conll-ner", _file("in.conll", "E\x00U B-ORG\nrejects O\n\n"), "in.conll:1", r"control character U\+0000"),
    "conll-ner-empty-chunk": ("conll-ner", _file("in.conll", "EU B-\nrejects O\n\n"), "in.conll:1", "expected a chunk tag"),
    "conll-ner-bad-chunk": ("conll-ner", _file("in.conll", "EU B-ORG\nrejects X-PER\n\n"), "in.conll:2", "expected a chunk tag .*got 'X-PER'"),
    "conll-ner-not-utf8": ("conll-ner", _file("in.conll", b"EU B-ORG\nr\xffejects O\n\n"), "in.conll:2", r"not valid utf-8: byte b'\\xff' at column 2"),
    "conll-ner-folder": ("conll-ner", _folder, "data", "is a folder; expected a file"),
    "conllu-id-0": ("conll-srl", _file("in.conllu", _conllu("0")), "in.conllu:2", "expected word id 2"),
    "conllu-id-999": ("conll-srl", _file("in.conllu", _conllu("999")), "in.conllu:2", "expected word id 2"),
    "conllu-id-abc": ("conll-srl", _file("in.conllu", _conllu("abc")), "in.conllu:2", "expected a word id .* got 'abc'"),
    "conllu-empty-argument": ("conll-srl", _file("in.conllu", _conllu(label="")), "in.conllu:1", "found an empty cell"),
    "conll05-unclosed-bracket": ("conll-srl", _file("in.txt", "The\t-\t(A0*\ncat\t-\t*\nsat\tsit\t(V*)\n\n"), "in.txt:1", "bracket '\\(A0' is never closed"),
    "conll05-stray-bracket": ("conll-srl", _file("in.txt", "The\t-\t(*)\ncat\t-\t*\nsat\tsit\t(V*)\n\n"), "in.txt:1", "expected a bracket cell .* got '\\(\\*\\)'"),
    "conll-srl-not-utf8": ("conll-srl", _file("in.txt", b"The\t-\t(A0*)\nc\xffat\t-\t*\nsat\tsit\t(V*)\n\n"), "in.txt:2", "not valid utf-8"),
    "conll-srl-folder": ("conll-srl", _folder, "data", "is a folder; expected a file"),
    "framenet-no-name": ("framenet", _release((b'name="Buyer"', b"")), str("fn" / FULLTEXT), "sentence 101, .*label 1: expected a name attribute"),
    "framenet-one-offset": ("framenet", _release((b'end="4" start="0" name="Buyer"', b'start="0" name="Buyer"')), str("fn" / FULLTEXT), "has start but no end"),
    "framenet-fraction": ("framenet", _release((b'start="0" name="Buyer"', b'start="0.5" name="Buyer"')), str("fn" / FULLTEXT), "expected integer character offsets, got start='0.5'"),
    "framenet-not-utf8": ("framenet", _release((b"Maria bought", b"Maria b\xffought")), str("fn" / FULLTEXT), r":\d+: not valid utf-8: byte b'\\xff'"),
    "framenet-control-label": ("framenet", _release((b'frameName="Commerce_buy"', b'frameName="Commerce_buy&#10;x"')), str("fn" / FULLTEXT),
                               r"sentence 101: annotation set \d+: label: .*control character U\+000A"),
    "framenet-a-file": ("framenet", _file("release.xml", "<x/>"), "release.xml", "expected a FrameNet release folder"),
    "hf-duplicate-id": ("hf", _file("in.jsonl", _jsonl({**X, "ner_tags": ["O", "O"]}, {**X, "ner_tags": ["O", "O"]})), "in.jsonl", "example 2 has the id 'a' of example 1"),
    "hf-bad-chunk": ("hf", _file("in.jsonl", _jsonl({**X, "ner_tags": ["O", "X-PER"]})), "in.jsonl: line 1", "token 1: expected a chunk tag"),
    "hf-not-utf8": ("hf", _file("in.jsonl", b'{"id": "a", "tokens": ["x\xff"], "ner_tags": ["O"]}\n'), "in.jsonl:1", "not valid utf-8"),
    "spacy-not-a-docbin": ("spacy", _file("in.spacy", b"not a docbin"), "in.spacy", "not a DocBin"),
    "spacy-damaged-strings": ("spacy", _damaged_docbin, "in.spacy", "doc 0: a damaged DocBin"),
    "spacy-control-label": ("spacy", _control_label_docbin, "in.spacy", r"doc 0: label: .*control character U\+0001"),
    "hf-control-label": ("hf", _file("in.jsonl", _jsonl({**X, "ner_tags": ["B-O\x01RG", "O"]})), "in.jsonl: line 1", r"control character U\+0001"),
    "spacy-empty-folder": ("spacy", _folder, "data", "holds no .spacy file"),
}
COMMANDS = {"run": [], "convert": [], "convert --sample": ["--sample", "1"]}


def _spanaug(command: str, dataset: str, source: Path, out: Path) -> int:
    if command == "run":
        return main(["run", "--dataset", dataset, "--input", str(source), "--decoder", "synonym", "--aligner", "diff",
                     "--output", str(out), "--no-progress"])
    return main(["convert", "--dataset", dataset, "--input", str(source), "--to", "jsonl", "--output", str(out), *COMMANDS[command]])


def _error_lines(err: str) -> list[str]:
    """stderr less a dataset's notes: its suggested settings, and options its input fills in."""
    return [line for line in err.splitlines() if not re.search(r": the [\w-]+ dataset's (suggestion|input) \(", line)]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_is_one_line_naming_the_file_and_writes_no_record(tmp_path, capsys, doubles_cli, command, case) -> None:
    dataset, make, named, message = CASES[case]
    pytest.importorskip({"hf": "datasets", "spacy": "spacy"}.get(dataset, "json"))
    source = make(tmp_path)
    out = tmp_path / ("out" if command == "run" else "out.jsonl")
    assert _spanaug(command, dataset, source, out) == 2
    (line,) = _error_lines(capsys.readouterr().err)
    assert line.startswith(f"error: {tmp_path / named}") and "internal error" not in line, line
    assert re.search(message, line), line
    if command == "run" and out.exists():
        # The run failed: its folder holds no record and a manifest that says why (and may be reused).
        # (An input refused while the run's settings are read, before the folder is made, leaves none.)
        assert (out / "augmented.jsonl").read_bytes() == b""
        assert json.loads((out / "manifest.json").read_text())["status"] == "failed"
    else:
        assert not out.exists()


def test_the_console_script_prints_the_refusal_on_one_line_however_narrow_the_terminal(tmp_path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(_jsonl(X, X))
    env = {**os.environ, "COLUMNS": "30"}
    done = subprocess.run([sys.executable, "-m", "spanaug_core.cli", "convert", "--dataset", "jsonl", "--input", str(source),
                           "--to", "jsonl", "--output", str(tmp_path / "o.jsonl")], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {source}: example 2 has the id 'a' of example 1; ids must be unique"]
