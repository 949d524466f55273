"""Word-alignment gold to span items: consistency rule, null gold, kinds, readers."""

from __future__ import annotations

import json

import pytest

from spanaug_core.errors import DataError
from spanaug_aligners.convert import WordAligned, convert, gold_for, read_jacana_json, read_multimwa, span_pairs

# "the senate majority leader said" -> "the majority leader of the senate stated"
PAIR = WordAligned(
    id="p",
    source=("the", "senate", "majority", "leader", "said", "yesterday"),
    target=("the", "majority", "leader", "of", "the", "senate", "stated"),
    links=frozenset({(0, 0), (1, 5), (2, 1), (3, 2), (4, 6)}),
)


def test_gold_is_tight_and_consistent():
    assert gold_for(PAIR, 2, 4) == (True, (1, 3))  # "majority leader"
    assert gold_for(PAIR, 4, 5) == (True, (6, 7))  # "said" -> "stated"
    # "senate majority" would cover target 1..5, which holds "leader" (linked outside): unusable.
    assert gold_for(PAIR, 1, 3) == (False, None)
    assert gold_for(PAIR, 5, 6) == (True, None)  # unlinked -> null gold


def test_items_kinds_and_filters():
    items = {p.item.source_span: p for p in span_pairs(PAIR)}
    assert items[(4, 5)].kind == "paraphrased"
    assert items[(2, 4)].kind == "identical"
    assert items[(5, 6)].kind == "unaligned" and items[(5, 6)].gold_span is None
    assert (0, 1) not in items  # "the" alone is no content word
    assert (1, 3) not in items  # inconsistent
    for pair in items.values():
        s, e = pair.item.source_span
        assert 1 <= e - s <= 3
        if pair.gold_span:  # every gold obeys the consistency rule
            t0, t1 = pair.gold_span
            assert all(s <= i < e for i, j in PAIR.links if t0 <= j < t1)


def test_sampling_is_seeded_and_per_pair():
    once = [p.id for p in convert([PAIR], max_per_pair=3, seed=7)]
    assert len(once) == 3 and once == [p.id for p in convert([PAIR], max_per_pair=3, seed=7)]
    assert len(list(convert([PAIR]))) > 3


def test_read_multimwa(tmp_path):
    path = tmp_path / "x-dev.tsv"
    path.write_text("0:0\ta big cat\tN/A\tthe large cat\tN/A\t1\t1\t0-0 2-2\t1-1\t\n")
    (pair,) = read_multimwa(path)
    assert pair.source == ("a", "big", "cat") and pair.links == {(0, 0), (2, 2), (1, 1)}
    path.write_text("0:0\ta big cat\tN/A\tthe large cat\tN/A\t1\t1\t0-9\t\t\n")
    with pytest.raises(DataError, match=r"x-dev.tsv:1: .*outside"):
        list(read_multimwa(path))


def test_read_jacana_json_list_and_lines(tmp_path):
    rec = {"source": "a big cat", "target": "the large cat", "sureAlign": "0-0 2-2", "possibleAlign": "1-1"}
    as_list, as_lines = tmp_path / "a.json", tmp_path / "b.json"
    as_list.write_text(json.dumps([rec]))
    as_lines.write_text(json.dumps(rec) + "\n")
    assert next(read_jacana_json(as_list)).links == next(read_jacana_json(as_lines)).links == {(0, 0), (1, 1), (2, 2)}


@pytest.mark.real_data
def test_multimwa_dev_converts_consistently(shared_member):
    pairs = list(read_multimwa(shared_member("multimwa_train_dev.tar.xz", "mtref-dev.tsv")))
    assert len(pairs) == 800
    items = list(convert(pairs))
    kinds = {k: sum(p.kind == k for p in items) for k in ("identical", "paraphrased", "unaligned")}
    assert all(v > 100 for v in kinds.values())
