"""The ``framenet`` dataset: FrameNet 1.5/1.7 XML (or the embedded sample) as span examples.

One example per annotated sentence (full text) or per exemplar sentence of an LU file.
Each frame annotation set gives a ``target`` span (label: the frame; attrs: LU name and
id, frame id, annotation-set id, created date) and its frame elements as ``argument``
spans in the same group. Character offsets become tokens through a tokenizer that
splits at every annotated edge. What cannot be resolved on the real release (a frame id
missing from the frame index, a set without a target, a span on whitespace only, an
empty file) is skipped and counted in ``warnings``; with ``strict`` it is an error
instead. ``write`` puts examples back into a release folder (see ``writer``).

A release lists some sentences twice: FrameNet 1.5 has 19 exemplar sentences each under
two subcorpora of one LU, annotated differently (another target occurrence, other
frame elements). Every id stays unique all the same, since records, resume and reports
go by id: a sentence listed again with the same annotations (frame, LU, target and
frame elements; set ids and dates aside) is read once, one with other annotations is
kept as ``<id>-2`` (``-3``...). Both repairs are counted in ``warnings``. Full-text and
exemplar ids never meet (``fn-<sentence ID>`` against ``fn-lu<LU ID>-<sentence ID>``;
the two number their sentences independently), so a full-text sentence is compared with
the release's other full-text sentences, an exemplar with the other exemplars of its LU.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field
from spanaug_framenet.release import ID_PREFIX, AnnotationSet, Label, Sentence, find_release, frame_ids, read_file
from spanaug_framenet.presets import FRAMENET_PRESETS
from spanaug_framenet.splits import Split, split_of
from spanaug_framenet.writer import write_release

from spanaug_core.errors import DataError, one_line
from spanaug_core.protocols import ComponentConfig
from spanaug_core.settings import RunPreset
from spanaug_core.text import Tokenized, tokenize_with_offsets
from spanaug_core.types import Example, Span

log = logging.getLogger(__name__)


class FrameNetReader:
    """FrameNet XML release (1.5/1.7, full text and LU exemplars; embedded sample without --input): frames as spans, written back as full text."""

    name: ClassVar[str] = "framenet"
    # The prompt offers a few of the frame's words near the trigger, which keeps more outputs
    # in the frame, and frame-lexicon keeps the triggers the frame lists: together they lift
    # the share of good records most (docs/results/framenet-lexicon.md).
    suggested_settings: ClassVar[dict[str, Any]] = {"lexicon": {"name": "framenet"}, "filters": ["frame-lexicon"]}
    presets: ClassVar[tuple[RunPreset, ...]] = FRAMENET_PRESETS
    # The input is a release: the lexicon and the filter read its frames' words, not the sample's.
    input_options: ClassVar[dict[tuple[str, str], str]] = {("lexicon", "framenet"): "release", ("filter", "frame-lexicon"): "release"}

    class Config(ComponentConfig):
        source: Literal["fulltext", "exemplars", "both"] = Field(
            default="both", description="full-text documents, LU exemplar sentences, or both"
        )
        frames: tuple[str, ...] = Field(
            default=(), description="keep only annotation sets of these frames (empty: all); a subset of the release"
        )
        split: Split = Field(
            default="all",
            description="train, dev or test: full-text documents of Das & Smith (2011)'s split (exemplars count as train); all: no split",
        )
        max_files: int | None = Field(
            default=None, ge=1, description="read at most this many XML files of each source (a quick subset)"
        )
        strict: bool = Field(
            default=False, description="fail on what cannot be resolved (unknown frame id, missing target) instead of skipping it with a counted warning"
        )
        document: str = Field(
            default="spanaug",
            pattern=r"^[\w.-]+$",
            description="writer: the full-text document (fulltext/NAME.xml) of examples not read from one (exemplars, augmented or hand-made examples)",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.warnings: Counter[str] = Counter()

    def files(self, release: Path) -> Iterator[tuple[Path, str]]:
        """The XML files to read, with their source kind."""
        folders = {"fulltext": [("fulltext", "fulltext")], "exemplars": [("lu", "exemplar")]}
        wanted = folders["fulltext"] + folders["exemplars"] if self.config.source == "both" else folders[self.config.source]
        for folder, source in wanted:
            paths = sorted((release / folder).glob("*.xml"))
            if self.config.split != "all":
                paths = [p for p in paths if split_of(p.stem, source) == self.config.split]
            yield from ((p, source) for p in paths[: self.config.max_files])

    def read(self, path: str | Path | None) -> Iterator[Example]:
        """Stream examples from a release folder (``None``: NLTK's copy, else the embedded sample)."""
        release = find_release(None if path is None else Path(path))
        known = frame_ids(release)
        fulltext: dict[str, bytes] = {}  # every full-text id read so far -> its annotations' digest
        for file, source in self.files(release):
            # An exemplar's id holds its LU's: only the same file can list it again.
            yield from self.read_xml(file, source, known, fulltext if source == "fulltext" else {})

    def read_xml(self, file: Path, source: str, known: dict[str, str], seen: dict[str, bytes] | None = None) -> Iterator[Example]:
        """The examples of one XML file (``source``: fulltext or exemplar) of a release whose frame index is ``known``.

        ``seen`` maps the ids read before that share this file's to their annotations'
        digests: a sentence listed again is read once or renamed (module docstring).
        """
        if file.stat().st_size == 0:
            self._skip("empty files", file, "the file is empty; expected FrameNet XML")
            return
        wanted = set(self.config.frames)
        seen = {} if seen is None else seen
        for sentence in read_file(file, source):
            sets = [a for a in sentence.annotation_sets if not wanted or a.frame in wanted]
            sets = [a for a in sets if self._resolved(a, known, sentence)]
            if sets and (example := self._example(sentence, sets)) is not None:
                if (kept := self._listed_once(example, seen)) is not None:
                    yield kept

    def _listed_once(self, example: Example, seen: dict[str, bytes]) -> Example | None:
        """``example``, None when an example of its id had the same annotations, or renamed
        ``<id>-2`` (``-3``...) when those had others; ``seen`` takes the id it keeps."""
        digest = _annotations(example)
        ident, copy = example.id, 1
        while ident in seen:
            if seen[ident] == digest:
                self.warnings["sentences listed again with the same annotations, read once"] += 1
                return None
            copy += 1
            ident = f"{example.id}-{copy}"
        seen[ident] = digest
        if copy == 1:
            return example
        self.warnings["sentences listed again with other annotations, kept as <id>-2"] += 1
        log.debug("%s: sentence %s is listed again with other annotations: read as %s", example.meta["file"], example.meta["sentence_id"], ident)
        return example.model_copy(update={"id": ident})

    def log_skipped(self, release: Path) -> None:
        """One log line with what was skipped so far, if anything (``spanaug run`` and ``convert`` say it themselves)."""
        if self.warnings:
            log.warning("%s: skipped %s", release, ", ".join(f"{n} {what}" for what, n in sorted(self.warnings.items())))

    def count(self, path: str | Path | None) -> int | None:
        """Unknown without parsing every file: no progress total."""
        return None

    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        """Write examples into a new release folder (fulltext/*.xml, frameIndex.xml); returns how many were written."""
        return write_release(examples, Path(path), self.config.document, self.warnings)

    def _skip(self, what: str, where: Sentence | Path, detail: str) -> None:
        file, detail = (where, detail) if isinstance(where, Path) else (where.file, f"sentence {where.id}: {detail}")
        if self.config.strict:
            raise DataError(detail, path=file)
        self.warnings[what] += 1
        log.debug("%s: %s", file, detail)

    def _resolved(self, aset: AnnotationSet, known: dict[str, str], sentence: Sentence) -> bool:
        if aset.frame_id not in known:
            self._skip("annotation sets with an unknown frame id", sentence, f"annotation set {aset.id}: frame id {aset.frame_id!r} is not in the frame index")
            return False
        if not any(t.start is not None for t in aset.targets):
            self._skip("annotation sets without a target", sentence, f"annotation set {aset.id} ({aset.frame}) has no Target label")
            return False
        return True

    def _example(self, sentence: Sentence, sets: list[AnnotationSet]) -> Example | None:
        edges: list[int] = []
        for aset in sets:
            for label in [*aset.targets, *(label for _, label in aset.elements)]:
                if label.start is None or label.end is None:
                    continue  # a null instantiation
                if label.end < label.start:
                    self._skip("labels that end before they start", sentence, f"label {label.name} ({label.start}, {label.end}) ends before it starts")
                elif not _placed(label, sentence.text):
                    self._skip("labels outside their sentence", sentence, f"label {label.name} ({label.start}, {label.end}) lies outside the {len(sentence.text)} characters")
                else:
                    edges += [label.start, label.end + 1]
        tokenized = tokenize_with_offsets(sentence.text, edges)
        if not tokenized.tokens:
            self._skip("empty sentences", sentence, "the sentence has no text")
            return None
        spans: list[Span] = []
        for aset in sets:
            spans.extend(self._spans(aset, tokenized, sentence))
        meta: dict[str, Any] = {"source": sentence.source, "file": sentence.file.name, "text": sentence.text, "sentence_id": sentence.id}
        prefix = ID_PREFIX if sentence.source == "fulltext" else f"{ID_PREFIX}lu{sets[0].lu_id}-"
        return Example(id=prefix + sentence.id, tokens=tokenized.tokens, spans=tuple(spans), meta=meta)

    def _spans(self, aset: AnnotationSet, tokenized: Tokenized, sentence: Sentence) -> list[Span]:
        try:
            return self._placed_spans(aset, tokenized, sentence)
        except ValueError as exc:  # the core refuses a frame or FE name with a control character in it
            raise DataError(f"sentence {sentence.id}: annotation set {aset.id}: {one_line(exc)}", path=sentence.file) from None

    def _placed_spans(self, aset: AnnotationSet, tokenized: Tokenized, sentence: Sentence) -> list[Span]:
        placed = [t for t in aset.targets if _placed(t, sentence.text)]
        pieces = [p for p in (tokenized.token_span(t.start, t.end + 1) for t in placed) if p is not None]
        if not pieces:
            if placed:  # else every piece was counted as out of place already
                self._skip("targets on whitespace only", sentence, f"annotation set {aset.id}: the target covers no token")
            return []
        attrs: dict[str, Any] = {"lu": aset.lu, "lu_id": aset.lu_id, "frame_id": aset.frame_id, "annotation_set": aset.id, "created": aset.created}
        if len(pieces) > 1:  # a discontinuous target ("pick ... up"): the span is its first piece
            attrs["pieces"] = [list(p) for p in pieces]
        nulls = [f"{label.name}:{label.itype}" for _, label in aset.elements if label.start is None]
        if nulls:
            attrs["null_instantiations"] = nulls
        spans = [Span(start=pieces[0][0], end=pieces[0][1], label=aset.frame, role="target", group=aset.id, attrs=attrs)]
        for rank, label in aset.elements:
            if not _placed(label, sentence.text):
                continue  # a null instantiation, or counted as out of place
            where = tokenized.token_span(label.start, label.end + 1)
            if where is None:
                self._skip("frame elements on whitespace only", sentence, f"annotation set {aset.id}: FE {label.name} covers no token")
                continue
            fe_attrs = {"rank": rank} if rank > 1 else {}
            spans.append(Span(start=where[0], end=where[1], label=label.name, role="argument", group=aset.id, attrs=fe_attrs))
        return spans


def _placed(label: Label, text: str) -> bool:
    """Whether ``label`` has offsets, in order, within ``text``: else it marks no words of it."""
    return label.start is not None and label.end is not None and 0 <= label.start <= label.end < len(text)


def _annotations(example: Example) -> bytes:
    """A digest of what an example says (its tokens and spans), annotation-set ids and dates
    aside: two listings of one sentence that annotate it alike have the same one."""
    digest = hashlib.blake2b(digest_size=16)
    groups: dict[str | None, int] = {}
    for span in example.spans:
        attrs = {k: v for k, v in span.attrs.items() if k not in ("annotation_set", "created")}
        group = groups.setdefault(span.group, len(groups))
        digest.update(repr((span.start, span.end, span.label, span.role, group, sorted(attrs.items()))).encode())
    digest.update(repr(example.tokens).encode())
    return digest.digest()
