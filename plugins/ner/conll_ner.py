"""The ``conll-ner`` dataset: CoNLL-2003-style NER columns read into entity spans and written back.

A sentence is a block of token lines (token first, chunk tag last, any columns between
kept verbatim, e.g. CoNLL-2003's POS and chunk tags); ``-DOCSTART-`` blocks and the
separator lines before a sentence are kept as raw text in ``meta["pre"]`` so the writer
reproduces the file byte for byte. Tags are decoded leniently (entity counts equal
seqeval's); the scheme (IOB1, IOB2, BIOES) is detected per file in a first cheap pass
over the tag column, checked (``strict``: an error; else a counted warning and the
seqeval reading), and can be changed on writing. The same pass warns, with its line, of
an entity type seen once among many of the others' (``I-MSIC``: likely a typo).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field
from spanaug_shared.tagging import ENTITY_ROLES, Scheme, TagOptions, column_of, read_column, scheme_of, split_tag

from spanaug_core.errors import DataError, SpanaugError, one_line
from spanaug_core.settings import RunPreset
from spanaug_core.types import Example
from spanaug_shared.columns import Block, CellRule, Line, endings, endings_meta, read_blocks, read_sentences, write_sentences
from spanaug_shared.presets import ENTITY_PRESETS

log = logging.getLogger(__name__)

DOCSTART = "-DOCSTART-"
# The reader splits a line at its delimiter and finds the tag as its last whitespace-separated
# word, so a type with any whitespace in it would read back as other columns or another tag.
_TAG_CELL = CellRule(re.compile(r"\s"), "whitespace (spaces or tabs separate its columns)")


def _is_sentence(block: Block) -> bool:
    """Every block but a ``-DOCSTART-`` line."""
    return not (len(block.lines) == 1 and block.lines[0].text.split()[0] == DOCSTART)


def _delimiter(line: Line) -> str:
    return "\t" if "\t" in line.text else " "


class ConllNer:
    """CoNLL-2003-style NER (2 or 4 columns, IOB1/IOB2/BIOES): entities as spans, written back exactly."""

    name: ClassVar[str] = "conll-ner"
    presets: ClassVar[tuple[RunPreset, ...]] = ENTITY_PRESETS

    class Config(TagOptions):
        fill: str = Field(
            default="_", min_length=1, description="value written in the middle columns (POS, chunk) of examples that have none, e.g. augmented ones"
        )
        like: Path | None = Field(
            default=None,
            description="a CoNLL NER file (e.g. eng.train) whose layout examples from elsewhere are written in: "
            "its column count, delimiter and scheme, so augmented data can be appended to it",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.warnings: Counter[str] = Counter()

    # -- reading ----------------------------------------------------------------------
    def read(self, path: str | Path | None) -> Iterator[Example]:
        """Stream the sentences of a CoNLL NER file as examples (entity spans, raw layout in meta)."""
        if path is None:
            raise SpanaugError("the conll-ner dataset has no default data; pass --input FILE (e.g. eng.train)")
        path = Path(path)
        scheme = self._scheme(path, self.config.scheme)
        columns: list[int] = []  # the file's column count, fixed by its first sentence

        def make(block: Block, pre: str, number: int) -> Example:
            if not columns:
                columns.append(len(block.lines[0].text.split(_delimiter(block.lines[0]))))
            return self._example(block, pre, scheme, columns[0], f"{path.name}#{number}")

        yield from read_sentences(path, _is_sentence, make)

    def _scheme(self, path: Path, configured: str) -> Scheme:
        """The file's scheme (detected when ``auto``), from a first cheap pass over its tag column
        that also warns of a likely typo among its entity types (``scheme_of``)."""

        def columns() -> Iterator[tuple[list[str], Callable[[int], str]]]:
            for block in read_blocks(path):
                if block.lines and _is_sentence(block):
                    yield [line.text.split()[-1] for line in block.lines], lambda at, lines=block.lines: f"{path}:{lines[at].number}"

        return scheme_of(columns(), configured)

    def _example(self, block: Block, pre: str, scheme: Scheme, columns: int, ident: str) -> Example:
        delimiter = _delimiter(block.lines[0])
        tokens: list[str] = []
        middle: list[list[str]] = []
        tags: list[str] = []
        for line in block.lines:
            cells = line.text.split(delimiter)
            if len(cells) != columns or any(not cell for cell in cells):
                raise block.error(
                    f"expected {columns} non-empty columns separated by single {'tabs' if delimiter == chr(9) else 'spaces'} "
                    f"(as on the file's first line), got {line.text!r}",
                    line,
                )
            if columns < 2:
                raise block.error("expected at least 2 columns (token and tag)", line)
            try:
                split_tag(cells[-1])
            except ValueError as exc:
                raise block.error(str(exc), line) from None
            tokens.append(cells[0])
            middle.append(cells[1:-1])
            tags.append(cells[-1])
        meta: dict[str, Any] = {"pre": pre, "scheme": scheme, "delimiter": delimiter, "line": block.lines[0].number}
        if columns > 2:
            meta["columns"] = middle
        meta.update(endings_meta(block.lines))
        try:  # the core refuses a token or an entity type with a control character in it
            spans, canonical = read_column(tags, scheme, self.config, self.warnings, lambda at, message: block.error(message, block.lines[at]))
            if not canonical:
                meta["tags"] = tags
            return Example(id=ident, tokens=tuple(tokens), spans=spans, meta=meta)
        except ValueError as exc:
            raise block.error(f"invalid sentence: {one_line(exc)}") from None

    def count(self, path: str | Path | None) -> int | None:
        """Number of sentences in the file (for a progress bar)."""
        if path is None:
            return None
        return sum(1 for block in read_blocks(Path(path)) if block.lines and _is_sentence(block))

    # -- writing ----------------------------------------------------------------------
    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        """Write examples as CoNLL NER columns; returns how many were written.

        An example read from a CoNLL NER file is written in its own layout. Others (JSONL,
        augmented records) take the layout of ``like`` when given; otherwise the middle
        columns of the first example that has them (filled with ``fill``), spaces and IOB2.
        """
        layout = self._layout(self.config.like) if self.config.like is not None else None
        width: list[int] = [layout[0]] if layout else []  # middle columns, fixed by `like` or the first example with them
        default_delimiter, default_scheme = (layout[1], layout[2]) if layout else (" ", "iob2")

        def lines(example: Example) -> Iterator[str]:
            middle = example.meta.get("columns")
            if not isinstance(middle, list) or len(middle) != len(example.tokens):
                middle = None
            elif not width:
                width.append(len(middle[0]) if middle else 0)
            delimiter = example.meta.get("delimiter", default_delimiter)
            fill = [self.config.fill] * (width[0] if width else 0)
            ends = endings(example.meta, len(example.tokens))
            for i, (token, tag) in enumerate(zip(example.tokens, self._tags(example, default_scheme), strict=True)):
                yield delimiter.join([token, *(middle[i] if middle else fill), tag]) + ends[i]

        return write_sentences(examples, Path(path), lines)

    def _layout(self, like: Path) -> tuple[int, str, Scheme]:
        """Middle-column count, delimiter and scheme of a CoNLL NER file (from its first sentence and its tags)."""
        first = next((block for block in read_blocks(like) if block.lines and _is_sentence(block)), None)
        if first is None:
            raise DataError("holds no sentence to take a layout from (like=...)", path=like)
        line = first.lines[0]
        columns = len(line.text.split(_delimiter(line)))
        if columns < 2:
            raise first.error("expected at least 2 columns (token and tag) to take a layout from", line)
        return columns - 2, _delimiter(line), self._scheme(like, "auto")

    def _tags(self, example: Example, default_scheme: Scheme = "iob2") -> list[str]:
        for span in example.spans:
            if span.role in ENTITY_ROLES:
                _TAG_CELL.check(example, self.name, "label", span.label)
        try:
            return column_of(example, self.config.write_scheme, default_scheme, self.warnings)
        except ValueError as exc:
            # The writer is given a temporary name (convert puts the file in place only when
            # it is complete), so the example is what the message can point the user at.
            raise DataError(
                f"example {example.id}: {exc}, so it cannot be written in {self.name}; keep only one of the overlapping "
                "entities in the input, or convert to a format that holds overlapping spans (--to jsonl)"
            ) from None
