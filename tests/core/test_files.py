"""Outputs all or nothing, inputs with errors that name the file, line and byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from spanaug_core.cli import main
from spanaug_core.errors import DataError, SpanaugError
from spanaug_core.files import atomic_output, input_file, output_target, read_lines, read_text


def test_an_output_appears_only_when_its_writer_finished(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.txt"  # the missing folder is created
    with pytest.raises(RuntimeError):
        with atomic_output(target) as partial:
            partial.write_text("half")
            raise RuntimeError("the writer failed")
    assert not target.exists() and list(target.parent.iterdir()) == []
    with atomic_output(target) as partial:
        partial.write_text("whole")
    assert target.read_text() == "whole"
    with pytest.raises(SpanaugError, match="out.txt exists; pass --overwrite"):
        with atomic_output(target):
            pass
    with atomic_output(target, overwrite=True) as partial:
        partial.write_text("again")
    assert target.read_text() == "again"


def test_a_folder_output_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "release"
    target.mkdir()
    (target / "old.xml").write_text("old")
    with atomic_output(target, overwrite=True) as partial:
        partial.mkdir()
        (partial / "new.xml").write_text("new")
    assert [p.name for p in target.iterdir()] == ["new.xml"]


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"\xef\xbb\xbffirst\nsecond\n")
    assert list(read_lines(path)) == [(1, "first\n"), (2, "second\n")]
    assert read_text(path) == "first\nsecond\n"
    path.write_bytes(b"\xef\xbb\xbfcaf\xe9\n")  # latin-1 has no mark: its first bytes stay text
    assert read_text(path, "latin-1").startswith("\xef\xbb\xbf")


def test_an_empty_folder_is_no_output_to_refuse(tmp_path: Path) -> None:
    (tmp_path / "made-ahead").mkdir()
    with atomic_output(tmp_path / "made-ahead") as partial:
        partial.mkdir()
        (partial / "model.json").write_text("{}")
    assert [p.name for p in (tmp_path / "made-ahead").iterdir()] == ["model.json"]
    with pytest.raises(SpanaugError, match="exists; pass --overwrite"):
        output_target(tmp_path / "made-ahead")


def test_undecodable_bytes_name_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"fine\n" * 5000 + b"caf\xe9 latin-1\n")
    with pytest.raises(DataError, match=r"in.txt:5001: not valid utf-8: byte b'\\xe9' at column 4"):
        list(read_lines(path))
    with pytest.raises(DataError, match="is a folder; expected a file"):
        input_file(tmp_path)
    with pytest.raises(DataError, match="nope.txt: no such file"):
        input_file(tmp_path / "nope.txt")


def test_convert_refuses_bad_bytes_and_existing_outputs_and_leaves_nothing_partial(tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.conll"
    source.write_bytes(b"EU B-ORG\nrejects O\n\nA O\nb\xffad O\n")
    out = tmp_path / "out.jsonl"
    assert main(["convert", "--dataset", "conll-ner", "--input", str(source), "--to", "jsonl", "--output", str(out)]) == 2
    assert "in.conll:5: not valid utf-8" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.conll"]
    source.write_bytes(b"EU B-ORG\nrejects O\n\n")
    args = ["convert", "--dataset", "conll-ner", "--input", str(source), "--to", "jsonl", "--output", str(out)]
    assert main(args) == 0
    assert main(args) == 2 and "out.jsonl exists; pass --overwrite" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    assert main(["convert", "--dataset", "conll-ner", "--input", str(tmp_path), "--to", "jsonl", "--output", str(out), "--overwrite"]) == 2
    assert "is a folder; expected a file" in capsys.readouterr().err


def test_a_file_never_replaces_a_folder_and_dot_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "important.txt").write_text("keep me")
    with pytest.raises(SpanaugError, match="results is a folder"):
        with atomic_output(folder, overwrite=True) as partial:
            partial.write_text("a file")
    assert (folder / "important.txt").read_text() == "keep me" and [p.name for p in tmp_path.iterdir()] == ["results"]
    with pytest.raises(SpanaugError, match="name a file or a new folder"):
        with atomic_output(Path("."), overwrite=True):
            pass
