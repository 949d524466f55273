"""framenet writer: jsonl -> FrameNet XML -> reader gives the same examples; what FrameNet cannot hold is an error."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from spanaug_framenet.reader import FrameNetReader
from spanaug_framenet.release import NAMESPACE, SAMPLE
from spanaug_jsonl.dataset import JsonlDataset

from spanaug_core.cli import main
from spanaug_core.errors import DataError, RunStateError
from spanaug_core.types import Augmented, Constraints, Example, Span


def framenet() -> FrameNetReader:
    return FrameNetReader(FrameNetReader.Config())


def convert_to_framenet(jsonl: Path, release: Path) -> int:
    return main(["convert", "--dataset", "jsonl", "--input", str(jsonl), "--to", "framenet", "--output", str(release)])


# "She picked the book up again ." with a discontinuous target, a null instantiation and
# a second FE layer, as the reader gives an LU exemplar.
PICK_UP = {"lu": "pick up.v", "lu_id": "5", "frame_id": "9", "annotation_set": "700", "created": "",
           "pieces": [[1, 2], [4, 5]], "null_instantiations": ["Source:INI"]}
PICKED = Example(
    id="fn-lu5-77",
    tokens=("She", "picked", "the", "book", "up", "again", "."),
    spans=(
        Span(start=1, end=2, label="Taking", group="700", attrs=PICK_UP),
        Span(start=0, end=1, label="Agent", role="argument", group="700"),
        Span(start=2, end=4, label="Theme", role="argument", group="700"),
        Span(start=5, end=6, label="Iteration", role="argument", group="700", attrs={"rank": 2}),
    ),
    meta={"source": "exemplar", "file": "lu5.xml"},
)


def test_embedded_sample_round_trips_through_jsonl_and_framenet_xml(tmp_path: Path) -> None:
    jsonl, release = tmp_path / "sample.jsonl", tmp_path / "fn"
    assert main(["convert", "--dataset", "framenet", "--input", str(SAMPLE), "--to", "jsonl", "--output", str(jsonl)]) == 0
    assert convert_to_framenet(jsonl, release) == 0
    assert list(framenet().read(release)) == list(framenet().read(SAMPLE))
    assert sorted(p.name for p in release.rglob("*") if p.is_file()) == ["frameIndex.xml", "spanaug_sample.xml"]
    document = ET.parse(release / "fulltext" / "spanaug_sample.xml").getroot()
    assert document.tag == f"{{{NAMESPACE}}}fullTextAnnotation"


def test_augmented_and_discontinuous_examples_round_trip(tmp_path: Path) -> None:
    source = next(iter(framenet().read(SAMPLE)))  # "Maria bought a used bicycle from her neighbour last week ."
    record = Augmented(
        id=f"{source.id}/s0/it2", source_id=source.id, target=0, iteration=2,
        tokens=("Maria", "purchased", "a", "used", "bicycle", "from", "her", "neighbour", "last", "week", "."),
        text="Maria purchased a used bicycle from her neighbour last week.", spans=source.spans,
        scores={"paraphrase": -0.4, "alignment": 0.9}, constraints=Constraints(avoid=("bought",)),
    )
    # The pipeline moves a span with its attrs: the source's pieces no longer describe it.
    moved = Example(id="fn-lu5-77/s0/it1", tokens=("Again", ",", "she", "took", "the", "book", "."),
                    spans=(PICKED.spans[0].moved(3, 4), PICKED.spans[1].moved(2, 3), PICKED.spans[2].moved(4, 6)))
    jsonl, release = tmp_path / "in.jsonl", tmp_path / "fn"
    JsonlDataset(JsonlDataset.Config()).write([PICKED, moved], jsonl)
    with jsonl.open("a") as out:  # a line of a run's augmented.jsonl
        out.write(record.model_dump_json() + "\n")
    assert convert_to_framenet(jsonl, release) == 0

    back = {e.id: e for e in framenet().read(release)}
    written = list(JsonlDataset(JsonlDataset.Config()).read(jsonl))
    assert [(e.tokens, e.spans) for e in written[::2]] == [(back[e.id].tokens, back[e.id].spans) for e in written[::2]]
    assert [s.text(back[record.id].tokens) for s in back[record.id].spans] == ["purchased", "Maria", "a used bicycle", "from her neighbour", "last week"]
    target = back[moved.id].spans[0]
    assert (target.start, target.end) == (3, 4) and target.attrs == {k: v for k, v in PICK_UP.items() if k != "pieces"}
    assert back[moved.id].spans[1:] == moved.spans[1:]
    assert sorted(p.name for p in (release / "fulltext").iterdir()) == ["spanaug.xml"]


def test_tokens_the_reader_would_split_are_written_and_counted(tmp_path: Path) -> None:
    example = Example(id="x", tokens=("U.S", "troops", "left"), spans=(Span(start=2, end=3, label="Departing", group="1"),))
    writer = framenet()
    assert writer.write([example], tmp_path / "fn") == 1
    assert writer.warnings == {"examples the reader will tokenize differently": 1}
    (back,) = framenet().read(tmp_path / "fn")
    assert back.meta["text"] == "U.S troops left" and [s.text(back.tokens) for s in back.spans] == ["left"]


def test_what_framenet_cannot_hold_is_an_error_and_what_came_before_stays_readable(tmp_path: Path, capsys) -> None:
    orphan = PICKED.model_copy(update={"id": "fn-2", "spans": (*PICKED.spans, Span(start=6, end=7, label="Theme", role="argument", group="701"))})
    jsonl, release = tmp_path / "in.jsonl", tmp_path / "fn"
    JsonlDataset(JsonlDataset.Config()).write([PICKED, orphan, PICKED], jsonl)
    # The writer closes and indexes what it wrote before the error...
    with pytest.raises(DataError, match="argument span 4 \\(Theme\\) has no target span in its group '701'"):
        framenet().write([PICKED, orphan, PICKED], release)
    assert [e.id for e in framenet().read(release)] == [PICKED.id]  # closed, indexed, no .part left
    assert sorted(p.name for p in (release / "fulltext").iterdir()) == ["spanaug.xml"]
    with pytest.raises(RunStateError, match="already holds a FrameNet release"):
        framenet().write([PICKED], release)
    # ...and `spanaug convert` puts nothing in place when the conversion fails.
    converted = tmp_path / "converted"
    assert convert_to_framenet(jsonl, converted) == 2
    err = " ".join(capsys.readouterr().err.split())
    # The error names the output as the user gave it, not the temporary folder it was written in.
    assert f"error: {converted / 'fulltext' / 'spanaug.xml'}: example 2 ('fn-2'): argument span 4 (Theme) has no target span" in err
    assert not converted.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        ((PICKED.spans[0], PICKED.spans[0].moved(4, 5)), r"spanaug\.xml: example 1 \('e'\): span 1 \(Taking\) is a second target in group '700'"),
        ((Span(start=0, end=1, label="PER", role="entity"),), "role 'entity'; FrameNet holds only targets"),
        ((PICKED.spans[0], PICKED.spans[3].model_copy(update={"attrs": {"rank": "2"}})), "rank '2'; an FE layer rank is a positive integer"),
        ((), "no target span"),
        # XML cannot hold a control character or a lone surrogate in a value, escaped or not.
        ((PICKED.spans[0].model_copy(update={"attrs": {"lu": "take\x01.v"}}),), r"'take\\x01\.v' holds the character U\+0001"),
        ((PICKED.spans[0].model_copy(update={"attrs": {"lu": "take\ud800.v"}}),), r"holds the character U\+D800, which an XML file cannot hold"),
    ],
)
def test_spans_framenet_cannot_hold(tmp_path: Path, spans: tuple[Span, ...], expected: str) -> None:
    with pytest.raises(DataError, match=expected):
        framenet().write([Example(id="e", tokens=PICKED.tokens, spans=spans)], tmp_path / "fn")
