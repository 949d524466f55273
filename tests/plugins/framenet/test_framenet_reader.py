"""framenet: the embedded sample, annotation-preserving tokenization, and robustness on bad releases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from spanaug_framenet.reader import FrameNetReader
from spanaug_framenet.release import SAMPLE, find_release
from spanaug_framenet.splits import DEV_DOCUMENTS, TEST_DOCUMENTS, split_of

from spanaug_core.errors import DataError
from spanaug_core.text import tokenize_with_offsets

NS = 'xmlns="http://framenet.icsi.berkeley.edu"'


def test_embedded_sample_reads_with_frames_lus_and_elements() -> None:
    reader = FrameNetReader(FrameNetReader.Config())
    examples = list(reader.read(SAMPLE))
    assert len(examples) == 31 and not reader.warnings
    frames = {s.label for e in examples for s in e.spans if s.role == "target"}
    assert frames == {"Commerce_buy", "Arriving", "Statement", "Giving", "Killing", "Motion"}
    first = examples[0]
    target = next(s for s in first.spans if s.role == "target")
    assert (target.text(first.tokens), target.attrs["lu"], target.group) == ("bought", "buy.v", target.attrs["annotation_set"])
    assert [(s.label, s.text(first.tokens)) for s in first.spans if s.role == "argument"] == [
        ("Buyer", "Maria"), ("Goods", "a used bicycle"), ("Seller", "from her neighbour"), ("Time", "last week")
    ]
    nulls = [s.attrs.get("null_instantiations") for e in examples for s in e.spans if s.attrs.get("null_instantiations")]
    assert nulls == [["Speaker:DNI"]]


def test_frame_filter_keeps_only_those_annotation_sets() -> None:
    examples = list(FrameNetReader(FrameNetReader.Config(frames=("Motion",))).read(SAMPLE))
    assert len(examples) == 5
    assert {s.label for e in examples for s in e.spans if s.role == "target"} == {"Motion"}


def test_tokens_split_at_annotated_edges_only() -> None:
    text = "Her reelection, they said."
    # a target on "election" inside "reelection" (characters 6..13, end inclusive)
    tokenized = tokenize_with_offsets(text, [6, 14])
    assert tokenized.tokens == ("Her", "re", "election", ",", "they", "said", ".")
    assert tokenized.token_span(6, 14) == (2, 3)
    assert tokenized.token_span(3, 4) is None  # a label on the space alone covers no token


def write_release(root: Path, frame_id: str) -> Path:
    (root / "fulltext").mkdir(parents=True)
    (root / "frameIndex.xml").write_text(f'<frameIndex {NS}><frame ID="7" name="Motion"/></frameIndex>')
    (root / "fulltext" / "doc.xml").write_text(
        f'<fullTextAnnotation {NS}><sentence ID="1"><text>Boats drift .</text>'
        f'<annotationSet ID="5" luID="1" luName="drift.v" frameID="{frame_id}" frameName="Motion">'
        '<layer rank="1" name="Target"><label start="6" end="10" name="Target"/></layer>'
        '<layer rank="1" name="FE"><label start="0" end="4" name="Theme"/></layer>'
        "</annotationSet></sentence></fullTextAnnotation>"
    )
    return root


def test_unknown_frame_id_is_skipped_and_counted_or_strictly_rejected(tmp_path: Path) -> None:
    release = write_release(tmp_path / "fn", frame_id="999")
    reader = FrameNetReader(FrameNetReader.Config())
    assert list(reader.read(release)) == []
    assert reader.warnings == {"annotation sets with an unknown frame id": 1}
    with pytest.raises(DataError, match=r"doc\.xml: sentence 1: annotation set 5: frame id '999' is not in the frame index"):
        list(FrameNetReader(FrameNetReader.Config(strict=True)).read(release))
    good = write_release(tmp_path / "ok", frame_id="7")
    (example,) = FrameNetReader(FrameNetReader.Config()).read(good)
    assert [(s.role, s.label, s.text(example.tokens)) for s in example.spans] == [("target", "Motion", "drift"), ("argument", "Theme", "Boats")]


def test_release_lookup(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "fndata-1.7")
    assert find_release(tmp_path) == tmp_path / "fndata-1.7"
    with pytest.raises(DataError, match="expected a FrameNet release folder"):
        find_release(tmp_path / "fndata-1.7" / "fulltext")


def test_split_reads_das_and_smith_documents(tmp_path: Path) -> None:
    release = shutil.copytree(SAMPLE, tmp_path / "fn")
    sample = release / "fulltext" / "spanaug_sample.xml"
    for name in ("KBEval__atm", "Miscellaneous__Hijack"):  # a test and a dev document
        shutil.copy(sample, release / "fulltext" / f"{name}.xml")

    def files(split: str, source: str = "both") -> list[str]:
        reader = FrameNetReader(FrameNetReader.Config(split=split, source=source))
        return sorted({e.meta["file"] for e in reader.read(release)})

    assert files("test") == ["KBEval__atm.xml"] and files("dev") == ["Miscellaneous__Hijack.xml"]
    train = files("train")
    assert "spanaug_sample.xml" in train and not {"KBEval__atm.xml", "Miscellaneous__Hijack.xml"} & set(train)
    assert len(files("all")) == len(train) + 2
    assert split_of("KBEval__atm", "exemplar") == "train"  # LU exemplar files are always training data
    assert (len(TEST_DOCUMENTS), len(DEV_DOCUMENTS)) == (23, 8)
