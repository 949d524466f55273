"""framenet: the embedded sample, annotation-preserving tokenization, and robustness on bad releases."""

from __future__ import annotations

import re
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


@pytest.mark.parametrize(
    ("offsets", "counted"),
    [('start="0" end="40"', "labels outside their sentence"), ('start="3" end="1"', "labels that end before they start")],
)
def test_a_frame_element_out_of_place_is_dropped_and_counted_once(tmp_path: Path, offsets: str, counted: str) -> None:
    release = write_release(tmp_path / "fn", frame_id="7")
    doc = release / "fulltext" / "doc.xml"
    text = doc.read_text()
    assert 'start="0" end="4" name="Theme"' in text
    doc.write_text(text.replace('start="0" end="4" name="Theme"', f'{offsets} name="Theme"'))
    reader = FrameNetReader(FrameNetReader.Config())
    (example,) = reader.read(release)
    # Not stretched to the sentence's end, nor counted again as covering no token.
    assert [(s.role, s.label) for s in example.spans] == [("target", "Motion")]
    assert reader.warnings == {counted: 1}


def test_a_parse_error_is_blamed_on_its_own_line(tmp_path: Path) -> None:
    release = write_release(tmp_path / "fn", frame_id="7")
    doc = release / "fulltext" / "doc.xml"
    # A tag left open on line 1 and a Latin-1 byte on line 2: the error is the tag's.
    doc.write_bytes(doc.read_bytes().replace(b"</text>", b"</txt>") + b"\n<!-- caf\xe9 -->\n")
    with pytest.raises(DataError, match=r"doc\.xml: not well-formed FrameNet XML: mismatched tag"):
        list(FrameNetReader(FrameNetReader.Config()).read(release))
    doc.write_bytes(doc.read_bytes().replace(b"</txt>", b"</text>").replace(b"Boats", b"Bo\xe9ts"))
    with pytest.raises(DataError, match=r"doc\.xml:1: not valid utf-8: byte b'\\xe9'"):
        list(FrameNetReader(FrameNetReader.Config()).read(release))


def test_release_lookup(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "fndata-1.7")
    assert find_release(tmp_path) == tmp_path / "fndata-1.7"
    with pytest.raises(DataError, match="expected a FrameNet release folder"):
        find_release(tmp_path / "fndata-1.7" / "fulltext")


def test_split_reads_das_and_smith_documents(tmp_path: Path) -> None:
    release = shutil.copytree(SAMPLE, tmp_path / "fn")
    sample = release / "fulltext" / "spanaug_sample.xml"
    for number, name in enumerate(("KBEval__atm", "Miscellaneous__Hijack"), start=1):  # a test and a dev document
        # Sentences of their own: a sentence listed again would be read once.
        text = re.sub(r'(<sentence [^>]* ID=")', rf"\g<1>{number}", sample.read_text(encoding="utf-8"))
        (release / "fulltext" / f"{name}.xml").write_text(text, encoding="utf-8")

    def files(split: str, source: str = "both") -> list[str]:
        reader = FrameNetReader(FrameNetReader.Config(split=split, source=source))
        return sorted({e.meta["file"] for e in reader.read(release)})

    assert files("test") == ["KBEval__atm.xml"] and files("dev") == ["Miscellaneous__Hijack.xml"]
    train = files("train")
    assert "spanaug_sample.xml" in train and not {"KBEval__atm.xml", "Miscellaneous__Hijack.xml"} & set(train)
    assert len(files("all")) == len(train) + 2
    assert split_of("KBEval__atm", "exemplar") == "train"  # LU exemplar files are always training data
    assert (len(TEST_DOCUMENTS), len(DEV_DOCUMENTS)) == (23, 8)


def _sentence(ident: str, text: str, *sets: str) -> str:
    return f'<sentence ID="{ident}"><text>{text}</text>{"".join(sets)}</sentence>'


def _set(ident: str, target: tuple[int, int], fe: tuple[str, int, int], frame: bool = True) -> str:
    """An annotation set; ``frame``: a full-text set, which names its frame and LU (an exemplar's LU is its file's)."""
    names = ' luID="1" luName="drift.v" frameID="7" frameName="Motion"' if frame else ""
    return (
        f'<annotationSet ID="{ident}" cDate="01/0{ident[-1]}/2003 10:00:00 PST Mon"{names}>'
        f'<layer rank="1" name="Target"><label start="{target[0]}" end="{target[1]}" name="Target"/></layer>'
        f'<layer rank="1" name="FE"><label start="{fe[1]}" end="{fe[2]}" name="{fe[0]}"/></layer></annotationSet>'
    )


def write_quirky_release(root: Path, documents: dict[str, str], lus: dict[str, str]) -> Path:
    """A release of full-text ``documents`` and LU files ``lus`` (name -> the sentences' XML) for the Motion frame."""
    (root / "fulltext").mkdir(parents=True)
    (root / "lu").mkdir()
    (root / "frameIndex.xml").write_text(f'<frameIndex {NS}><frame ID="7" name="Motion"/></frameIndex>')
    for name, sentences in documents.items():
        (root / "fulltext" / f"{name}.xml").write_text(f"<fullTextAnnotation {NS}>{sentences}</fullTextAnnotation>")
    for lu_id, sentences in lus.items():
        body = f'<subCorpus name="a">{sentences}</subCorpus>' if sentences else ""
        (root / "lu" / f"lu{lu_id}.xml").write_text(f'<lexUnit {NS} name="drift.v" ID="{lu_id}" frame="Motion" frameID="7">{body}</lexUnit>')
    return root


DRIFT = "Boats drift and rafts drift ."


def test_a_sentence_listed_again_is_read_once_or_kept_under_a_new_id(tmp_path: Path) -> None:
    # FrameNet 1.5 lists 19 exemplar sentences twice, under two subcorpora of one LU (lu10940.xml:
    # sentence 299803), each time with another annotation set.
    same = _sentence("5", DRIFT, _set("11", (6, 10), ("Theme", 0, 4), frame=False))
    again = _sentence("5", DRIFT, _set("12", (6, 10), ("Theme", 0, 4), frame=False))  # another set id and date, same labels
    other = _sentence("5", DRIFT, _set("13", (22, 26), ("Theme", 16, 20), frame=False))  # the second "drift"
    release = write_quirky_release(tmp_path / "fn", {}, {"1": same + again + other + other, "2": same})
    reader = FrameNetReader(FrameNetReader.Config())
    examples = list(reader.read(release))
    assert [e.id for e in examples] == ["fn-lu1-5", "fn-lu1-5-2", "fn-lu2-5"]
    assert [next(s.text(e.tokens) for s in e.spans if s.role == "argument") for e in examples] == ["Boats", "rafts", "Boats"]
    assert examples[1].spans[0].attrs["annotation_set"] == "13" and examples[1].meta["sentence_id"] == "5"
    assert reader.warnings == {
        "sentences listed again with the same annotations, read once": 2,
        "sentences listed again with other annotations, kept as <id>-2": 1,
    }


def test_a_document_listed_twice_is_read_once_and_a_new_id_never_takes_one_the_release_has(tmp_path: Path) -> None:
    first = _sentence("5", DRIFT, _set("11", (6, 10), ("Theme", 0, 4)))
    other = _sentence("5", DRIFT, _set("13", (22, 26), ("Theme", 16, 20)))
    named = _sentence("5-2", "Logs drift .", _set("14", (5, 9), ("Theme", 0, 3)))
    release = write_quirky_release(tmp_path / "fn", {"a": first + named, "b": first + named + other}, {})
    reader = FrameNetReader(FrameNetReader.Config())
    assert [e.id for e in reader.read(release)] == ["fn-5", "fn-5-2", "fn-5-3"]
    assert reader.warnings == {
        "sentences listed again with the same annotations, read once": 2,
        "sentences listed again with other annotations, kept as <id>-2": 1,
    }


def test_full_text_and_exemplars_number_their_sentences_apart(tmp_path: Path) -> None:
    # FrameNet 1.5: 847 exemplar sentences carry the ID of a full-text sentence, with another text.
    document = _sentence("5", DRIFT, _set("11", (6, 10), ("Theme", 0, 4)))
    exemplar = _sentence("5", "Logs drift .", _set("12", (5, 9), ("Theme", 0, 3), frame=False))
    release = write_quirky_release(tmp_path / "fn", {"a": document}, {"1": exemplar})
    reader = FrameNetReader(FrameNetReader.Config())
    assert [(e.id, e.meta["text"]) for e in reader.read(release)] == [("fn-5", DRIFT), ("fn-lu1-5", "Logs drift .")]
    assert not reader.warnings


def test_an_empty_file_is_skipped_and_counted_or_strictly_rejected(tmp_path: Path) -> None:
    release = write_quirky_release(tmp_path / "fn", {"a": _sentence("5", DRIFT, _set("11", (6, 10), ("Theme", 0, 4)))}, {"1": ""})
    (release / "lu" / "lu1.xml").write_text("")
    (release / "lu" / "lu2.xml").write_text(f'<lexUnit {NS} name="drift.v" ID="2" frame="Motion" frameID="7"/>')  # no sentences: nothing to repair
    reader = FrameNetReader(FrameNetReader.Config())
    assert [e.id for e in reader.read(release)] == ["fn-5"]
    assert reader.warnings == {"empty files": 1}
    with pytest.raises(DataError, match=r"lu1\.xml: the file is empty; expected FrameNet XML"):
        list(FrameNetReader(FrameNetReader.Config(strict=True)).read(release))
