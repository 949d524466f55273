"""The jsonl dataset: round trip, text lines, augmented lines, and errors with file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spanaug_core.errors import ConfigError, DataError
from spanaug_core.types import Example, Span
from spanaug_jsonl.dataset import JsonlDataset


@pytest.fixture
def ds() -> JsonlDataset:
    return JsonlDataset(JsonlDataset.Config())


def test_round_trip(tmp_path: Path, ds: JsonlDataset) -> None:
    examples = [
        Example(
            id="fn-1",
            tokens=("The", "panel", "will", "corroborate", "it", "."),
            spans=(Span(start=3, end=4, label="Evidence", group="as1", attrs={"lu": "corroborate.v"}),),
            meta={"doc": 7},
        ),
        Example(id="fn-2", tokens=("Hi", "."), spans=()),
    ]
    path = tmp_path / "x.jsonl"
    assert ds.write(examples, path) == 2
    assert list(ds.read(path)) == examples
    assert ds.count(path) == 2
    first = json.loads(path.read_text().splitlines()[0])
    assert first["spans"][0] == {"start": 3, "end": 4, "label": "Evidence", "role": "target", "group": "as1", "attrs": {"lu": "corroborate.v"}}


def test_text_lines_and_augmented_lines(tmp_path: Path, ds: JsonlDataset) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(
        '{"id": "a", "text": "He didn\'t go."}\n\n'
        '{"id": "b/s0/it1", "source_id": "b", "iteration": 1, "tokens": ["x"], "spans": [], "scores": {"alignment": 0.9}}\n'
    )
    a, b = ds.read(path)
    assert a.tokens == ("He", "did", "n't", "go", ".")
    assert b.meta == {"source_id": "b", "iteration": 1, "scores": {"alignment": 0.9}}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"x.jsonl:2: invalid JSON"),
        ("[1, 2]", r"x.jsonl:2: expected a JSON object, got list"),
        ('{"id": "z"}', r"x.jsonl:2: expected 'tokens'"),
        ('{"id": "z", "tokens": ["a"], "spans": [{"start": 0, "end": 3, "label": "L"}]}', r"x.jsonl:2: .*spans\[0\] \(0, 3\) ends after the last token"),
        ('{"id": "z", "tokens": ["a", "b"], "spans": [{"start": 1, "end": 1, "label": "L"}]}', r"x.jsonl:2: .*spans.0.*end \(1\) must be greater than start"),
        ('{"id": "z", "tokens": ["a b"]}', r"x.jsonl:2: .*token 0 \('a b'\) is empty or contains whitespace"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, ds: JsonlDataset, line: str, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "ok", "tokens": ["fine"]}\n' + line + "\n")
    reader = ds.read(path)
    assert next(reader).id == "ok"  # lines before the bad one were already streamed
    with pytest.raises(DataError, match=message):
        next(reader)


def test_a_byte_order_mark_is_not_text_and_an_unknown_encoding_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "tokens": ["x"]}\n')  # as Windows editors save UTF-8
    assert [e.id for e in JsonlDataset(JsonlDataset.Config()).read(path)] == ["a"]
    for encoding in ("utf-9", "rot13"):  # rot13 is a codec, and no text encoding
        with pytest.raises(ValueError, match="unknown text encoding; expected a Python codec name"):
            JsonlDataset.Config(encoding=encoding)
    path.write_text('{"id": null, "tokens": ["x"]}\n')  # null is no id: the line's own is given
    assert [e.id for e in JsonlDataset(JsonlDataset.Config()).read(path)] == ["bom-1"]


def test_missing_input(tmp_path: Path, ds: JsonlDataset) -> None:
    with pytest.raises(ConfigError, match="needs an input file"):
        list(ds.read(None))
    with pytest.raises(DataError, match="no such file"):
        list(ds.read(tmp_path / "none.jsonl"))
