"""Examples written as a FrameNet release folder that the ``framenet`` reader reads back.

Each example becomes a ``<sentence>`` of a full-text document, ``fulltext/NAME.xml``:
examples read from a full-text document go back to that document, all others (LU
exemplars, augmented and hand-made examples) to the writer's ``document``. A target span
and the argument spans of its group become an ``<annotationSet>`` whose ID is the group,
with a Target layer and FE layers in character offsets (``end`` inclusive); the span
attrs the reader sets (LU name and id, frame id, created date, target pieces, null
instantiations, FE rank) are written back, and the sentence ID is the example id less
the reader's prefix, so reading the folder gives back the same ids, tokens and spans.
``frameIndex.xml`` lists the frames used.

A document is written sentence by sentence to ``NAME.xml.part`` and renamed when it is
closed; the writer closes every document and writes the frame index however it stops (an
error, Ctrl-C), so the folder is always a readable release of what was written so far.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from spanaug_framenet.release import ID_PREFIX, NAMESPACE, is_release
from spanaug_framenet.tokens import token_offsets

from spanaug_core.errors import DataError, RunStateError
from spanaug_core.files import user_path
from spanaug_core.text import detokenize, tokenize_with_offsets
from spanaug_core.types import Example, Span

log = logging.getLogger(__name__)

INDENT = "    "
DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


class _Document:
    """A full-text document being written: sentences go to ``NAME.xml.part`` until ``close``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.part = path.with_name(path.name + ".part")
        self.handle = self.part.open("w", encoding="utf-8")
        # FrameNet's schema asks for a header; corpus and document ids are not the examples' to give.
        self.handle.write(f'{DECLARATION}<fullTextAnnotation xmlns="{NAMESPACE}">\n{INDENT}<header/>\n')

    def add(self, sentence: ET.Element) -> None:
        ET.indent(sentence, space=INDENT, level=1)
        self.handle.write(INDENT + ET.tostring(sentence, encoding="unicode") + "\n")

    def close(self) -> None:
        self.handle.write("</fullTextAnnotation>\n")
        self.handle.close()
        os.replace(self.part, self.path)


def write_release(examples: Iterable[Example], folder: Path, document: str, warnings: Counter[str]) -> int:
    """Write ``examples`` into a new FrameNet release ``folder``; returns how many were written.

    ``document`` names the full-text document of examples not read from one; what the
    reader will not give back exactly is counted in ``warnings``.
    """
    fulltext = folder / "fulltext"
    if is_release(folder) or any(fulltext.glob("*.xml")):
        # Adding to a release (FrameNet's own, or an earlier conversion) would mix two datasets.
        raise RunStateError(f"{user_path(folder)} already holds a FrameNet release; write into a new or empty folder")
    fulltext.mkdir(parents=True, exist_ok=True)
    documents: dict[str, _Document] = {}
    frames: dict[str, str] = {}
    count = 0
    try:
        for number, example in enumerate(examples, start=1):
            name = _document_name(example, document)
            try:
                sentence, used = _sentence(example, frames, warnings)
            except ValueError as exc:
                raise DataError(f"example {number} ({example.id!r}): {exc}", path=user_path(fulltext / name)) from None
            frames.update(used)
            if name not in documents:
                documents[name] = _Document(fulltext / name)
            documents[name].add(sentence)
            count = number
    finally:
        for opened in documents.values():
            opened.close()
        _write_index(folder, frames)
    if warnings:
        log.warning("%s: %s", folder, ", ".join(f"{n} {what}" for what, n in sorted(warnings.items())))
    return count


def _document_name(example: Example, default: str) -> str:
    file = example.meta.get("file")
    if example.meta.get("source") == "fulltext" and isinstance(file, str) and file.endswith(".xml") and Path(file).name == file:
        return file
    return f"{default}.xml"


def _annotation_sets(example: Example) -> list[tuple[str, Span, list[tuple[int, Span]]]]:
    """``(set ID, target, [(index, argument)...])`` per target, in the order of the targets."""
    targets: dict[str | None, Span] = {}
    arguments: dict[str | None, list[tuple[int, Span]]] = {}
    for i, span in enumerate(example.spans):
        if span.role == "target":
            if span.group in targets:
                raise ValueError(f"span {i} ({span.label}) is a second target in group {span.group!r}; an annotation set has one target")
            targets[span.group] = span
        elif span.role == "argument":
            arguments.setdefault(span.group, []).append((i, span))
        else:
            raise ValueError(f"span {i} ({span.label}) has role {span.role!r}; FrameNet holds only targets and their frame elements (role argument)")
    for group, items in arguments.items():
        if group not in targets:
            i, span = items[0]
            raise ValueError(f"argument span {i} ({span.label}) has no target span in its group {group!r}; FrameNet ties every frame element to a target")
    if not targets:
        raise ValueError("it has no target span; FrameNet keeps only sentences with an annotated target")
    # An ungrouped target (data from elsewhere) gets the first set ID no group uses.
    free = next(str(n) for n in itertools.count(1) if str(n) not in targets)
    return [(group if group is not None else free, target, arguments.get(group, [])) for group, target in targets.items()]


def _pieces(target: Span, length: int) -> list[tuple[int, int]]:
    """The token ranges of a target: its ``pieces`` when discontinuous, else the span itself."""
    pieces = target.attrs.get("pieces")
    # An augmented span keeps its source's attrs: pieces that do not start at the span are the source's.
    if isinstance(pieces, list) and pieces and pieces[0] == [target.start, target.end] and all(_token_range(p, length) for p in pieces):
        return [(p[0], p[1]) for p in pieces]
    return [(target.start, target.end)]


def _token_range(value: Any, length: int) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value) and 0 <= value[0] < value[1] <= length


def _text(example: Example, ranges: list[tuple[int, int]], warnings: Counter[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A sentence text for the tokens, and each token's character offsets in it.

    The reader re-tokenizes the text, splitting at annotated edges; the first text from
    which it gets these tokens back wins: the example's own text, the detokenized tokens,
    the tokens joined by spaces (which the tokenizer may still split further: counted).
    """
    joined = " ".join(example.tokens)
    for text in (example.meta.get("text"), detokenize(example.tokens), joined):
        offsets = token_offsets(text, example.tokens) if isinstance(text, str) else None
        if offsets is None:
            continue
        edges = [edge for start, end in ranges for edge in (offsets[start][0], offsets[end - 1][1])]
        if tokenize_with_offsets(text, edges).tokens == example.tokens:
            return text, offsets
    warnings["examples the reader will tokenize differently"] += 1
    log.debug("%s: the tokenizer splits some token of %r", example.id, joined)
    return joined, token_offsets(joined, example.tokens) or ()


def _sentence(example: Example, frames: dict[str, str], warnings: Counter[str]) -> tuple[ET.Element, dict[str, str]]:
    """The ``<sentence>`` of one example and the frames (id -> name) it uses.

    Raises ValueError for what FrameNet cannot express.
    """
    sets = _annotation_sets(example)
    pieces = {set_id: _pieces(target, len(example.tokens)) for set_id, target, _ in sets}
    ranges = [r for rs in pieces.values() for r in rs] + [(s.start, s.end) for _, _, args in sets for _, s in args]
    text, offsets = _text(example, ranges, warnings)

    def label(start: int, end: int, name: str) -> dict[str, str]:
        return {"start": str(offsets[start][0]), "end": str(offsets[end - 1][1] - 1), "name": name}

    used: dict[str, str] = {}
    sentence = ET.Element("sentence", ID=example.id.removeprefix(ID_PREFIX))
    ET.SubElement(sentence, "text").text = text
    for set_id, target, arguments in sets:
        frame_id = str(target.attrs.get("frame_id") or target.label)
        known = frames.get(frame_id) or used.get(frame_id)
        if known not in (None, target.label):
            raise ValueError(f"frame id {frame_id} names both {known} and {target.label}; a frame index holds one name per id")
        used[frame_id] = target.label
        attrs = {"ID": set_id, "frameName": target.label, "frameID": frame_id, "luName": target.attrs.get("lu"),
                 "luID": target.attrs.get("lu_id"), "cDate": target.attrs.get("created")}
        aset = ET.SubElement(sentence, "annotationSet", {key: str(value) for key, value in attrs.items() if value not in (None, "")})
        layer = ET.SubElement(aset, "layer", rank="1", name="Target")
        for start, end in pieces[set_id]:
            ET.SubElement(layer, "label", label(start, end, "Target"))
        _frame_elements(aset, target, arguments, label)
    _check_xml_characters(sentence)
    return sentence, used


# XML 1.0 cannot hold these characters, escaped or not (nor UTF-8 a lone surrogate): a file
# with one is not XML, and the reader would refuse what the writer wrote.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _check_xml_characters(sentence: ET.Element) -> None:
    """Raise ValueError for a text or attribute value of ``sentence`` that XML cannot hold."""
    for node in sentence.iter():
        for value in (node.text or "", *node.attrib.values()):
            found = _NOT_XML.search(value)
            if found:
                raise ValueError(f"{value!r} holds the character U+{ord(found.group()):04X}, which an XML file cannot hold")


def _frame_elements(aset: ET.Element, target: Span, arguments: list[tuple[int, Span]], label: Callable[[int, int, str], dict[str, str]]) -> None:
    """FE layers: one per run of arguments of the same rank (so the reader keeps their order), nulls in rank 1."""
    layers: list[tuple[int, ET.Element]] = []
    for i, span in arguments:
        rank = span.attrs.get("rank", 1)
        if not isinstance(rank, int) or rank < 1:
            raise ValueError(f"argument span {i} ({span.label}) has rank {rank!r}; an FE layer rank is a positive integer")
        if not layers or layers[-1][0] != rank:
            layers.append((rank, ET.SubElement(aset, "layer", rank=str(rank), name="FE")))
        ET.SubElement(layers[-1][1], "label", label(span.start, span.end, span.label))
    nulls = target.attrs.get("null_instantiations") or []
    if nulls:
        first = next((layer for rank, layer in layers if rank == 1), None)
        if first is None:
            first = ET.SubElement(aset, "layer", rank="1", name="FE")
        for item in nulls:
            # The reader writes "Name:ITYPE" ("Name:None" when FrameNet gave no itype).
            name, _, itype = str(item).partition(":")
            ET.SubElement(first, "label", {"name": name, **({"itype": itype} if itype not in ("", "None") else {})})


def _write_index(folder: Path, frames: dict[str, str]) -> None:
    root = ET.Element("frameIndex", xmlns=NAMESPACE)
    for frame_id, name in sorted(frames.items(), key=lambda item: (item[1], item[0])):
        ET.SubElement(root, "frame", ID=frame_id, name=name)
    ET.indent(root, space=INDENT)
    part = folder / "frameIndex.xml.part"
    part.write_text(DECLARATION + ET.tostring(root, encoding="unicode") + "\n", encoding="utf-8")
    os.replace(part, folder / "frameIndex.xml")
