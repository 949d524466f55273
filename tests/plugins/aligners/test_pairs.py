"""The span-alignment JSONL format: round trips and errors that name file and line."""

from __future__ import annotations

import json

import pytest

from spanaug_core.errors import DataError
from spanaug_aligners.pairs import read_pairs, write_pairs


def _line(**over):
    obj = {"id": "x", "source_tokens": ["a", "cat"], "source_span": [1, 2], "target_tokens": ["the", "dog"],
           "gold_span": [1, 2], "kind": "paraphrased"}
    obj.update(over)
    return json.dumps(obj)


def test_round_trip_keeps_unknown_fields(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(_line(note="hi") + "\n\n" + _line(id="y", gold_span=None) + "\n")
    pairs = list(read_pairs(path, require_gold=True))
    assert [p.gold_span for p in pairs] == [(1, 2), None]
    assert pairs[0].item.source_span == (1, 2)
    out = tmp_path / "o.jsonl"
    assert write_pairs(pairs, out) == 2
    assert [json.loads(x) for x in out.read_text().splitlines()][0] == json.loads(_line(note="hi"))


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "not valid JSON"),
        (_line(source_span=[1, 5]), "source_span"),
        (_line(gold_span=[2, 2]), "gold_span"),
        (_line(target_tokens=[]), "target_tokens"),
    ],
)
def test_errors_name_file_and_line(tmp_path, bad, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(_line() + "\n" + bad + "\n")
    with pytest.raises(DataError, match=rf"bad.jsonl:2: .*{message}"):
        list(read_pairs(path))


def test_missing_gold_is_an_error_only_when_required(tmp_path):
    path = tmp_path / "nogold.jsonl"
    obj = json.loads(_line())
    del obj["gold_span"]
    path.write_text(json.dumps(obj) + "\n")
    assert not next(read_pairs(path)).has_gold
    with pytest.raises(DataError, match="gold_span"):
        list(read_pairs(path, require_gold=True))
