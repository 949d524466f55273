"""Chunk tags (IOB1, IOB2, BIOES) to entity spans and back.

Decoding is lenient in the way seqeval's default mode is, so that entity counts agree
with seqeval on any file: ``B-``/``S-`` always open an entity, ``I-``/``E-`` continue the
open entity of the same type or else open one, ``E-``/``S-`` close it. Which tags are
*valid* depends on the scheme; ``invalid_tags`` lists the positions a strict reader
rejects (and a lenient one repairs, with a warning). Encoding writes a scheme's canonical
tags, so a valid file is reproduced exactly.

Datasets that keep entities in a tag column (CoNLL NER files, Hugging Face datasets) share
their options (``TagOptions``) and the two steps around the codec: a column read into
spans (``read_column``: checked, repaired and counted, or refused) and the column an
example is written with (``column_of``: its own tags while its entities are unchanged).
A ``TypeSurvey`` of a file's entity types finds the likely typos among them (``I-MSIC``
reads as a valid entity of a new type ``MSIC``), so the reader can warn with the line.
"""

from __future__ import annotations

import difflib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Literal

from pydantic import Field

from spanaug_core.protocols import ComponentConfig
from spanaug_core.types import Example, Span

Scheme = Literal["iob1", "iob2", "bioes"]
SCHEMES: tuple[str, ...] = ("iob1", "iob2", "bioes")
# Span roles a tag column holds: kept entities, or entities read to be rewritten.
ENTITY_ROLES = ("entity", "target")
INVALID_READ = "invalid tag read as seqeval does"

log = logging.getLogger(__name__)


class EntityOptions(ComponentConfig):
    """The option of a dataset of entities: are they kept, or rewritten?"""

    entities: Literal["keep", "rewrite"] = Field(
        default="keep",
        description="keep: entities are kept (role entity, include constraints); rewrite: entities are the spans to paraphrase (role target)",
    )

    @property
    def role(self) -> str:
        """The role of the spans read."""
        return "entity" if self.entities == "keep" else "target"


class TagOptions(EntityOptions):
    """Options of a dataset whose entities are a tag column."""

    scheme: Literal["auto", "iob1", "iob2", "bioes"] = Field(
        default="auto", description="tag scheme of the input; auto detects it per file (BIOES if E-/S-, IOB2 if B- opens entities, else IOB1)"
    )
    strict: bool = Field(
        default=False,
        description="reject tags invalid in the scheme (an I- after O in IOB2...); otherwise read them as seqeval does and count a warning",
    )
    write_scheme: Literal["same", "iob1", "iob2", "bioes"] = Field(
        default="same", description="scheme to write: same as each example was read in (IOB2 for examples from elsewhere) or a conversion"
    )


def split_tag(tag: str) -> tuple[str, str | None]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", None)``; ValueError otherwise."""
    if tag == "O":
        return "O", None
    prefix, dash, kind = tag.partition("-")
    if not dash or prefix not in ("B", "I", "E", "S") or not kind:
        raise ValueError(f"expected a chunk tag O, B-TYPE, I-TYPE, E-TYPE or S-TYPE, got {tag!r}")
    return prefix, kind


def decode(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """Entity spans ``(start, end exclusive, type)`` of a tag sequence, read leniently."""
    spans: list[tuple[int, int, str]] = []
    start: int | None = None
    open_type: str | None = None
    for i, tag in enumerate(tags):
        prefix, kind = split_tag(tag)
        continues = prefix in ("I", "E") and kind == open_type
        if start is not None and not continues:
            spans.append((start, i, open_type))  # type: ignore[arg-type]
            start, open_type = None, None
        if prefix != "O" and start is None:
            start, open_type = i, kind
        if prefix in ("E", "S") and start is not None:
            spans.append((start, i + 1, open_type))  # type: ignore[arg-type]
            start, open_type = None, None
    if start is not None:
        spans.append((start, len(tags), open_type))  # type: ignore[arg-type]
    return spans


def invalid_tags(tags: Sequence[str], scheme: Scheme) -> list[tuple[int, str]]:
    """Positions whose tag breaks ``scheme``, each with what was expected there."""
    problems: list[tuple[int, str]] = []
    parsed = [split_tag(tag) for tag in tags]
    for i, (prefix, kind) in enumerate(parsed):
        prev_prefix, prev_kind = parsed[i - 1] if i else ("O", None)
        next_prefix, next_kind = parsed[i + 1] if i + 1 < len(parsed) else ("O", None)
        inside_prev = prev_prefix in ("B", "I") and prev_kind == kind
        if scheme != "bioes" and prefix in ("E", "S"):
            problems.append((i, f"no E-/S- tags in {scheme.upper()}"))
        elif scheme == "iob2" and prefix == "I" and not inside_prev:
            problems.append((i, f"I-{kind} only after B-{kind} or I-{kind} in IOB2 (got it after {tags[i - 1] if i else 'the sentence start'})"))
        elif scheme == "iob1" and prefix == "B" and not (prev_prefix in ("B", "I") and prev_kind == kind):
            problems.append((i, f"B-{kind} only right after another {kind} entity in IOB1 (use I-{kind} to start one)"))
        elif scheme == "bioes":
            if prefix in ("I", "E") and not inside_prev:
                problems.append((i, f"{prefix}-{kind} only after B-{kind} or I-{kind} in BIOES"))
            elif prefix in ("B", "I") and not (next_prefix in ("I", "E") and next_kind == kind):
                problems.append((i, f"{prefix}-{kind} must be followed by I-{kind} or E-{kind} in BIOES"))
    return problems


def detect_scheme(tag_sequences: Iterable[Sequence[str]]) -> Scheme:
    """The scheme a file's tags follow: BIOES if E-/S- occur, else by majority of how
    entities open (after O or another type): with I- -> IOB1, with B- (or none) -> IOB2.

    A vote rather than the first counter-example, because real files carry annotation
    slips (CoNLL-2003's eng.train, IOB1, opens 2 of its 23,499 entities with B-).
    """
    opens_with_b = opens_with_i = 0
    for tags in tag_sequences:
        prev_kind: str | None = None
        for tag in tags:
            prefix, kind = split_tag(tag)
            if prefix in ("E", "S"):
                return "bioes"
            if kind is not None and kind != prev_kind:
                opens_with_b += prefix == "B"
                opens_with_i += prefix == "I"
            prev_kind = kind
    return "iob1" if opens_with_i > opens_with_b else "iob2"


def encode(spans: Iterable[tuple[int, int, str]], length: int, scheme: Scheme) -> list[str]:
    """The canonical tags of non-overlapping spans in ``scheme``; ValueError on overlaps."""
    tags = ["O"] * length
    previous_end, previous_type = -1, None
    for start, end, kind in sorted(spans):
        if start < previous_end:
            raise ValueError(f"entities overlap at token {start}; a tag column can hold only one entity per token")
        if scheme == "iob1":
            first = "B" if start == previous_end and kind == previous_type else "I"
            tags[start:end] = [f"{first}-{kind}"] + [f"I-{kind}"] * (end - start - 1)
        elif scheme == "iob2":
            tags[start:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - start - 1)
        elif end - start == 1:
            tags[start] = f"S-{kind}"
        else:
            tags[start:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - start - 2) + [f"E-{kind}"]
        previous_end, previous_type = end, kind
    return tags


def read_column(
    tags: Sequence[str],
    scheme: Scheme,
    options: TagOptions,
    warnings: Counter[str],
    error: Callable[[int, str], Exception],
) -> tuple[tuple[Span, ...], bool]:
    """The entity spans of one tag column, and whether its tags are the scheme's own spelling.

    A tag the scheme forbids raises ``error(position, message)`` with ``strict``; otherwise
    it is read as seqeval reads it and counted in ``warnings``. A column that is not the
    canonical spelling (an annotation slip) is worth keeping, so that writing it back is exact.
    """
    for position, expected in invalid_tags(tags, scheme):
        if options.strict:
            raise error(position, f"{expected}; set strict=false to read it as seqeval does")
        warnings[INVALID_READ] += 1
        log.debug("%s; read as seqeval does", error(position, expected))
    entities = decode(tags)
    spans = tuple(Span(start=s, end=e, label=kind, role=options.role) for s, e, kind in entities)
    return spans, encode(entities, len(tags), scheme) == list(tags)


def column_of(example: Example, write_scheme: str, default_scheme: Scheme, warnings: Counter[str]) -> list[str]:
    """The tag column an example is written with (ValueError when its entities overlap).

    Spans of other roles cannot be tags: they are left out and counted. With ``same``, the
    tags the example was read with (``meta["tags"]``) while they still give its entities,
    else its own scheme (``meta["scheme"]``), else ``default_scheme``.
    """
    entities = [(s.start, s.end, s.label) for s in example.spans if s.role in ENTITY_ROLES]
    dropped = len(example.spans) - len(entities)
    if dropped:
        warnings["non-entity span not written"] += dropped
        log.warning("%s: %d span(s) with a role other than entity/target not written", example.id, dropped)
    scheme = write_scheme
    original = example.meta.get("tags")
    if scheme == "same":
        if isinstance(original, list) and len(original) == len(example.tokens) and decode(original) == sorted(entities):
            return list(original)
        scheme = example.meta["scheme"] if example.meta.get("scheme") in SCHEMES else default_scheme
    return encode(entities, len(example.tokens), scheme)  # type: ignore[arg-type]


class TypeSurvey:
    """The entity types of one file: how many entities of each, and where the first one is.

    A type of a single entity in a file whose other types hold at least ``SUSPECT_AMONG``
    entities is most likely a slip of the annotator (``I-MSIC`` for ``I-MISC``): read as
    it is, it trains a model on a type of its own. ``suspects`` says where each one is.
    """

    SUSPECT_AMONG = 10

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.first: dict[str, str] = {}

    def add(self, tags: Sequence[str], where: Callable[[int], str]) -> None:
        """Count the entities of one tag column; ``where(position)`` says where a token is (``eng.train:17``)."""
        for start, _end, kind in decode(tags):
            self.counts[kind] += 1
            self.first.setdefault(kind, where(start))

    def suspects(self) -> list[str]:
        """One line per type seen once among enough entities of other types, with where it is."""
        lines = []
        for kind, count in sorted(self.counts.items()):
            others = {k: n for k, n in self.counts.items() if k != kind}
            if count != 1 or sum(others.values()) < self.SUSPECT_AMONG:
                continue
            common = sorted(k for k, n in others.items() if n > 1)
            close = difflib.get_close_matches(kind, common, n=1, cutoff=0.5)
            guess = f"a typo of {close[0]!r}?" if close else "a typo?"
            lines.append(
                f"{self.first[kind]}: entity type {kind!r} occurs once here, where the other types "
                f"({', '.join(common) or ', '.join(sorted(others))}) occur {sum(others.values())} times; {guess} It is read as a type of its own"
            )
        return lines


def scheme_of(columns: Iterable[tuple[Sequence[str], Callable[[int], str]]], configured: str) -> Scheme:
    """A file's scheme: ``configured`` unless it is ``auto``, else ``detect_scheme``'s, from one pass
    over the file's tag columns, each with where its tokens are (``where(position)``).

    The pass also surveys the entity types and logs a warning, with its place, for each one
    ``TypeSurvey`` suspects. It stops at a bad tag, which the reading pass then reports.
    """
    survey = TypeSurvey()

    def counted() -> Iterator[Sequence[str]]:
        for tags, where in columns:
            try:
                survey.add(tags, where)
            except ValueError:
                return
            yield tags

    stream = counted()
    scheme = configured if configured != "auto" else detect_scheme(stream)
    for _ in stream:  # the survey sees the whole file, however soon the scheme was known
        pass
    for line in survey.suspects():
        log.warning(line)
    return scheme  # type: ignore[return-value]
