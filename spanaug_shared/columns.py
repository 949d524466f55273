"""Column files (CoNLL-style) read as blocks of lines, keeping what an exact write-back needs.

Every CoNLL dialect is a sequence of *blocks* (runs of non-blank lines, one sentence or
one ``-DOCSTART-`` marker each) separated by blank lines. ``read_blocks`` streams the
blocks of a file with the exact text that came before each one (the separators, which
may be empty lines or whitespace-only lines as in WNUT-17) and every line's number and
line ending, so that a writer can reproduce the file byte for byte. It is task-neutral:
the conll-ner and conll-srl datasets build on it, and so can any column-format plugin.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spanaug_core.errors import DataError
from spanaug_core.files import read_lines
from spanaug_core.types import Example

_WHITESPACE_RUN = re.compile(r"(\s+)")


@dataclass(frozen=True)
class Line:
    """One line of a file: 1-based number, text without its ending, and the ending itself."""

    number: int
    text: str
    end: str


@dataclass
class Block:
    """A run of non-blank lines and the raw text (blank lines) that preceded it.

    The block after the last sentence has no lines: its ``before`` is the file's tail.
    """

    lines: list[Line]
    before: str = ""
    path: Path | None = field(default=None, repr=False)

    def error(self, message: str, line: Line | None = None) -> DataError:
        """A DataError pointing at ``line`` (or the block's first line)."""
        at = line or (self.lines[0] if self.lines else None)
        return DataError(message, path=self.path, line=at.number if at else None)


def read_blocks(path: Path) -> Iterator[Block]:
    """Stream the blocks of a column file; the last one yielded holds only the file's tail."""
    before: list[str] = []
    lines: list[Line] = []
    for number, raw in read_lines(path, newline=""):
        text = raw.rstrip("\r\n")
        if not text.strip():
            if lines:
                yield Block(lines, "".join(before), path)
                before, lines = [], []
            before.append(raw)
        else:
            lines.append(Line(number, text, raw[len(text) :]))
    if lines:
        yield Block(lines, "".join(before), path)
        before = []
    yield Block([], "".join(before), path)


@dataclass(frozen=True)
class CellRule:
    """What a column format's cells cannot hold: ``pattern`` finds it in a value, ``described``
    names it for a user. A writer checks the labels it writes, since a label holding a
    separator or markup would be written without complaint and read back as other cells."""

    pattern: re.Pattern[str]
    described: str

    def check(self, example: Example, fmt: str, what: str, value: str) -> None:
        """Raise DataError naming the example, ``what`` and ``value`` when ``value`` cannot be one of ``fmt``'s cells."""
        if self.pattern.search(value):
            raise DataError(
                f"example {example.id}: {what} {value!r} cannot be written in {fmt}: its cells cannot hold {self.described}; "
                "rename it in the input, or convert to a format that holds any label (--to jsonl)"
            )


def endings_meta(lines: Sequence[Line]) -> dict[str, list[str]]:
    """``{"eol": [...]}`` when some line does not end in a plain ``\\n``, else nothing."""
    ends = [line.end for line in lines]
    return {"eol": ends} if any(end != "\n" for end in ends) else {}


def endings(meta: dict, count: int) -> list[str]:
    """The line endings recorded by :func:`endings_meta` (``\\n`` each when none were)."""
    ends = meta.get("eol")
    return list(ends) if isinstance(ends, list) and len(ends) == count else ["\n"] * count


def split_spaced(text: str) -> tuple[list[str], list[str]]:
    """Cells of a whitespace-aligned line and the exact gaps around them.

    ``gaps`` has one more item than ``cells``: the leading whitespace, the runs between
    cells, and the trailing whitespace, so ``join_spaced`` gives back ``text``.
    """
    parts = _WHITESPACE_RUN.split(text)
    # re.split with a capturing group alternates text, gap, text...; pad so the first and
    # last items are always gaps.
    if parts and parts[0] == "":
        parts = parts[1:]
    else:
        parts = ["", *parts]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    else:
        parts.append("")
    gaps = parts[0::2]
    cells = parts[1::2]
    return cells, gaps


def join_spaced(cells: Sequence[str], gaps: Sequence[str] | None) -> str:
    """The inverse of :func:`split_spaced`; without gaps (or a mismatch) cells are tab-separated."""
    if not gaps or len(gaps) != len(cells) + 1:
        return "\t".join(cells)
    out = [gaps[0]]
    for cell, gap in zip(cells, gaps[1:], strict=True):
        out.append(cell)
        out.append(gap)
    return "".join(out)


def read_sentences(
    path: Path, is_sentence: Callable[[Block], bool], make: Callable[[Block, str, int], Example]
) -> Iterator[Example]:
    """Stream one example per sentence block, made by ``make(block, pre, number)``.

    ``pre`` is the raw text since the previous sentence: separator lines and the blocks
    that are not sentences (``-DOCSTART-``, ``#end document``). What follows the last
    sentence goes to its ``meta["post"]``. A writer that writes ``pre``, the lines and,
    after the last example, ``post`` reproduces the file.
    """
    pending = ""
    previous: Example | None = None
    number = 0
    for block in read_blocks(path):
        if not block.lines or not is_sentence(block):
            pending += block.before + "".join(line.text + line.end for line in block.lines)
            continue
        if previous is not None:
            yield previous
        previous = make(block, pending + block.before, number)
        pending = ""
        number += 1
    if previous is not None:
        yield previous.model_copy(update={"meta": {**previous.meta, "post": pending}})


def write_sentences(examples: Iterable[Example], path: Path, lines: Callable[[Example], Iterable[str]]) -> int:
    """Write each example's ``pre`` and ``lines(example)``, then the last one's ``post``.

    Examples without layout meta (augmented ones) are separated by one blank line and the
    file ends with one. Returns the number of examples written.
    """
    count = 0
    last: Example | None = None
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as out:
        for example in examples:
            out.write(example.meta.get("pre", "\n" if count else ""))
            out.writelines(lines(example))
            count += 1
            last = example
        if last is not None:
            out.write(last.meta.get("post", "\n"))
    return count
