"""A FrameNet XML release on disk: where it is, its frames and LUs, its annotated sentences.

1.5 and 1.7 share one schema (``frameIndex.xml``, ``frame/``, ``lu/``, ``fulltext/``), as
does NLTK's ``framenet_v15``/``framenet_v17`` folder. ``find_release`` resolves a user's
path (or NLTK's data path when none is given); ``read_file`` streams the annotated
sentences of one full-text document or LU exemplar file as plain records the reader
turns into examples; ``frames`` lists the frames with their created dates without
parsing the frame files past their opening tags, so that a caller can choose frames and
LUs before it opens any annotation file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from spanaug_core.errors import DataError
from spanaug_core.files import undecodable

SAMPLE = Path(__file__).parent / "sample"
NAMESPACE = "http://framenet.icsi.berkeley.edu"
# An example's id is this plus its sentence's ID (exemplars: plus ``lu<LU ID>-`` first).
ID_PREFIX = "fn-"
NLTK_FOLDERS = ("framenet_v17", "framenet_v15")


def local(tag: str) -> str:
    """An element's tag without its XML namespace."""
    return tag.rsplit("}", 1)[-1]


def parse_date(text: str | None) -> datetime:
    """FrameNet's ``cDate`` (``03/05/2008 03:58:07 PST Wed``); undated sorts last."""
    if not text:
        return datetime.max
    try:
        return datetime.strptime(text[:19], "%m/%d/%Y %H:%M:%S")
    except ValueError:
        return datetime.max


def is_release(folder: Path) -> bool:
    return (folder / "frameIndex.xml").is_file() or (folder / "frame").is_dir()


def find_release(path: Path | None) -> Path:
    """The release folder for ``path``: the folder itself, a ``fndata-*`` inside it, or
    (``path`` None) NLTK's ``framenet_v17``/``framenet_v15`` on its data path, else the
    embedded sample."""
    if path is not None:
        candidates = [path, *sorted(path.glob("fndata-*")), *(path / name for name in NLTK_FOLDERS)] if path.is_dir() else []
        for folder in candidates:
            if is_release(folder):
                return folder
        raise DataError("expected a FrameNet release folder (with frameIndex.xml, frame/, lu/, fulltext/)", path=path)
    try:
        import nltk.data

        roots = [Path(p) for p in nltk.data.path]
    except ImportError:
        roots = []
    for root in roots:
        for name in NLTK_FOLDERS:
            if is_release(root / "corpora" / name):
                return root / "corpora" / name
    return SAMPLE


@dataclass(frozen=True)
class Label:
    """A labeled character span (``end`` inclusive) or a null instantiation (no offsets)."""

    name: str
    start: int | None
    end: int | None
    itype: str | None = None


@dataclass
class AnnotationSet:
    """One frame annotation: target pieces and frame-element labels (by FE layer rank)."""

    id: str
    frame: str
    frame_id: str
    lu: str
    lu_id: str
    created: str
    targets: list[Label] = field(default_factory=list)
    elements: list[tuple[int, Label]] = field(default_factory=list)


@dataclass
class Sentence:
    """An annotated sentence with where it came from."""

    id: str
    text: str
    source: str  # "fulltext" or "exemplar"
    file: Path
    annotation_sets: list[AnnotationSet]


def _labels(layer: ET.Element, where: str, path: Path) -> Iterator[Label]:
    """The labels of a layer; a label without a name, or with one offset of two, is a DataError."""
    for number, label in enumerate(layer, start=1):
        name, start, end = label.get("name"), label.get("start"), label.get("end")
        at = f"{where}, label {number}"
        if not name:
            raise DataError(f"{at}: expected a name attribute (the FE or target label)", path=path)
        if (start is None) != (end is None):
            missing = "end" if end is None else "start"
            raise DataError(f"{at} ({name}): has {'start' if end is None else 'end'} but no {missing}; expected both, "
                            "or neither for a null instantiation", path=path)
        try:
            offsets = (int(start), int(end)) if start is not None and end is not None else (None, None)
        except ValueError:
            raise DataError(f"{at} ({name}): expected integer character offsets, got start={start!r} end={end!r}", path=path) from None
        yield Label(name, *offsets, label.get("itype"))


def _annotation_set(element: ET.Element, lu: tuple[str, str, str, str] | None, where: str, path: Path) -> AnnotationSet | None:
    """A frame annotation set (None for part-of-speech/NER-only sets).

    ``lu`` is (lu name, lu id, frame, frame id) of an exemplar file; full-text sets name
    their own.
    """
    name, lu_id, frame, frame_id = lu or (
        element.get("luName", ""),
        element.get("luID", ""),
        element.get("frameName", ""),
        element.get("frameID", ""),
    )
    # Full-text frame annotations name their LU; the others there are part-of-speech,
    # NER or WSL layers. In exemplar files the LU is the file's.
    if lu is None and not element.get("luName") and not element.get("frameName"):
        return None
    aset = AnnotationSet(element.get("ID", ""), frame, frame_id, name, lu_id, element.get("cDate", ""))
    for layer in element:
        if local(layer.tag) != "layer":
            continue
        at = f"{where}, annotationSet {aset.id or '?'}, layer {layer.get('name')}"
        if layer.get("name") == "Target":
            aset.targets.extend(_labels(layer, at, path))
        elif layer.get("name") == "FE":
            rank = layer.get("rank", "1")
            if not rank.isdigit():
                raise DataError(f"{at}: expected an integer rank, got {rank!r}", path=path)
            aset.elements.extend((int(rank), label) for label in _labels(layer, at, path))
    if lu is not None and not aset.targets and not aset.elements:
        return None  # an exemplar's part-of-speech layers (status UNANN)
    return aset


_DECLARED = re.compile(rb"""<\?xml[^>]*encoding=["']([\w.-]+)["']""")


def _not_xml(path: Path, exc: ET.ParseError) -> DataError:
    """Why ``path`` does not parse: in a UTF-8 file (FrameNet's are), bytes on the failing line
    that are not UTF-8 are the likeliest cause; else expat's own words."""
    line, _ = exc.position
    with path.open("rb") as handle:
        declared = _DECLARED.match(handle.read(200))
    utf8 = declared is None or declared.group(1).decode().lower().replace("_", "-") in ("utf-8", "utf8")
    found = undecodable(path, "utf-8", line, through=line) if utf8 else None
    return found or DataError(f"not well-formed FrameNet XML: {exc}", path=path)


def read_file(path: Path, source: str) -> Iterator[Sentence]:
    """The sentences of one full-text document or one LU exemplar file."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise _not_xml(path, exc) from None
    lu = None
    if local(root.tag) == "lexUnit":
        lu = (root.get("name", ""), root.get("ID", ""), root.get("frame", ""), root.get("frameID", ""))
    namespace = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    for sentence in root.iter(namespace + "sentence"):  # the tree's own search: an LU file has ~100 elements a sentence
        text = next((child.text or "" for child in sentence if local(child.tag) == "text"), "")
        sets = [
            aset
            for child in sentence
            if local(child.tag) == "annotationSet"
            and (aset := _annotation_set(child, lu, f"sentence {sentence.get('ID', '?')}", path)) is not None
        ]
        if sets:
            yield Sentence(sentence.get("ID", ""), text, source, path, sets)


@dataclass(frozen=True)
class FrameInfo:
    """A frame of the release: id, name and created date, and the file that defines it."""

    id: str
    name: str
    created: datetime
    path: Path

    def lexical_units(self) -> list[LexicalUnit]:
        """The frame's LUs, from its frame file."""
        return [
            LexicalUnit(e.get("name", ""), e.get("ID", ""), parse_date(e.get("cDate")), _sentences(e))
            for e in ET.parse(self.path).getroot()
            if local(e.tag) == "lexUnit"
        ]


class LexicalUnit(NamedTuple):
    """A frame's LU: ``name`` as ``buy.v``, and ``sentences``, the corpus sentences FrameNet
    found for it (its ``sentenceCount total``; 0 where the file does not say), a measure of
    how common the word is in that sense."""

    name: str
    id: str
    created: datetime
    sentences: int


def _sentences(lu: ET.Element) -> int:
    count = next((c for c in lu if local(c.tag) == "sentenceCount"), None)
    return int(count.get("total", 0)) if count is not None else 0


def frame_ids(release: Path) -> dict[str, str]:
    """Frame id -> name from ``frameIndex.xml`` (or the frame files when there is no index)."""
    index = release / "frameIndex.xml"
    if index.is_file():
        return {e.get("ID", ""): e.get("name", "") for e in ET.parse(index).getroot() if local(e.tag) == "frame"}
    return {info.id: info.name for info in frames(release)}


def frames(release: Path) -> Iterator[FrameInfo]:
    """Every frame file of the release, read up to its opening tag only.

    FrameNet 1.5's frame index has no created dates, so they come from the frame files,
    whose definitions, FEs and LUs need not be parsed for that.
    """
    for path in sorted((release / "frame").glob("*.xml")):
        root = _opening_tag(path)
        yield FrameInfo(root.get("ID", ""), root.get("name", ""), parse_date(root.get("cDate")), path)


def _opening_tag(path: Path) -> ET.Element:
    """The root element of an XML file with its attributes, parsing no further than its tag."""
    parser = ET.XMLPullParser(events=("start",))
    with path.open("rb") as handle:
        while chunk := handle.read(4096):
            try:
                parser.feed(chunk)
            except ET.ParseError as exc:
                raise _not_xml(path, exc) from None
            for _, element in parser.read_events():
                return element
    raise DataError("expected an XML element, found none", path=path)


def lu_file(release: Path, lu_id: str) -> Path:
    """Where a release keeps the exemplars of the LU with this id."""
    return release / "lu" / f"lu{lu_id}.xml"
