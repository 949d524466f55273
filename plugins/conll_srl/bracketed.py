"""CoNLL-2005 and CoNLL-2012 (OntoNotes ``*_conll``) SRL: words plus bracketed proposition columns.

The two differ only in where things are, which a ``Layout`` says:

* CoNLL-2005: ``word [other columns] target props...`` — the proposition columns are
  the trailing columns in bracket notation, the column before them holds each
  predicate's lemma (``-`` elsewhere);
* CoNLL-2012: ``doc part index word POS parse lemma frameset sense speaker NE props...
  coref`` — ``#begin document``/``#end document`` lines are kept verbatim.

The proposition columns are rebuilt from spans on writing; every other cell and the
exact whitespace between cells (OntoNotes aligns columns with runs of spaces) are kept in
meta, so a file read and written back is unchanged. An example without those cells (an
augmented record) gets ``-`` and ``*`` in them and its predicates' lemma and frameset
(from ``attrs``, else from a roleset label such as ``attack.01``), so its spans read back
as they were; CoNLL-2005 has no frameset column, so there a predicate reads back labelled
with its lemma. A column may hold a second ``(V*)``, the particle of a phrasal verb as
CoNLL-U Plus marks it: it is an argument labelled ``V``, the predicate being the ``V`` on
the row that names a lemma.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spanaug_conll_srl.brackets import BracketError, decode_column, encode_column, is_bracket_cell
from spanaug_conll_srl.propositions import Proposition, argument, from_example, to_spans

from spanaug_core.errors import one_line
from spanaug_core.types import Example
from spanaug_shared.columns import Block, CellRule, endings, endings_meta, join_spaced, split_spaced

# Cells are split at whitespace, and a label inside brackets ends at '(', ')' or '*'.
_BRACKET_CELL = CellRule(
    re.compile(r"[\s()*]"), "whitespace (it separates the columns), nor '(', ')' or '*' (they make the bracket notation)"
)
# A predicate's lemma and frameset cells are plain text; a lemma '-' reads back as a word that is no predicate.
_FRAMESET_CELL = CellRule(re.compile(r"\s"), "whitespace (it separates the columns)")
_LEMMA_CELL = CellRule(re.compile(r"\s|^-$"), "whitespace (it separates the columns), nor be '-' alone (a word that is no predicate)")


@dataclass(frozen=True)
class Layout:
    """Where a format keeps the word, the predicate lemma and the proposition columns."""

    name: str
    word: int
    lemma: int | None  # fixed index (CoNLL-2012) or None: the column right before the props
    frameset: int | None
    trailing: int  # columns after the propositions (CoNLL-2012's coreference column)
    min_columns: int

    def props(self, cells: list[str]) -> tuple[int, int]:
        """``(first, end)`` of the proposition columns in a row of ``cells``."""
        end = len(cells) - self.trailing
        if self.lemma is not None:
            return self.lemma + 5, end  # after frameset, sense, speaker, NE
        first = end
        while first > self.word + 2 and is_bracket_cell(cells[first - 1]):
            first -= 1
        return first, end

    def lemma_index(self, first_prop: int) -> int:
        return self.lemma if self.lemma is not None else first_prop - 1

    def default_row(self, index: int, token: str, lemma: str, frameset: str, props: list[str]) -> list[str]:
        """A row for an example that carries no cells of its own (e.g. an augmented one)."""
        if self.name == "conll2005":
            return [token, lemma, *props]
        return ["-", "0", str(index), token, "-", "*", lemma, frameset, "-", "-", "*", *props, "-"]


LAYOUTS: dict[str, Layout] = {
    "conll2005": Layout("conll2005", word=0, lemma=None, frameset=None, trailing=0, min_columns=2),
    "conll2012": Layout("conll2012", word=3, lemma=6, frameset=7, trailing=1, min_columns=12),
}


def is_comment_block(block: Block) -> bool:
    """A block of ``#`` lines only (CoNLL-2012's ``#end document``)."""
    return all(line.text.startswith("#") for line in block.lines)


def read_sentence(block: Block, layout: Layout, ident: str) -> Example:
    """One sentence block as an example; DataError on malformed rows."""
    comments = [line.text for line in block.lines if line.text.startswith("#")]
    lines = [line for line in block.lines if not line.text.startswith("#")]
    rows = [split_spaced(line.text) for line in lines]
    width = len(rows[0][0])
    if width < layout.min_columns:
        raise block.error(f"expected at least {layout.min_columns} columns in {layout.name}, got {width}", lines[0])
    first, end = layout.props(rows[0][0])
    starts = []
    for (cells, _), line in zip(rows, lines, strict=True):
        if len(cells) != width:
            raise block.error(f"expected {width} columns like the sentence's first line, got {len(cells)}", line)
        starts.append(layout.props(cells)[0])
    first = max(first, *starts)  # columns in bracket notation on every row
    if min(starts) < first:
        # A column in bracket notation on some rows but not on this one: a slip such as "(*)".
        row = starts.index(first)
        cell = rows[row][0][first - 1]
        raise block.error(f"expected a bracket cell such as '*', '(A0*', '*)' or '(V*)' like the rows around it, got {cell!r}", lines[row])
    lemma_col = layout.lemma_index(first)
    propositions = []
    for column in range(first, end):
        try:
            spans, close_labels = decode_column([cells[column] for cells, _ in rows])
        except BracketError as exc:
            raise block.error(f"proposition column {column - first + 1}: {exc}", lines[exc.row]) from None
        verbs = [s for s in spans if s[2] == "V"]
        if len(verbs) > 1:  # a particle marked V too: the predicate is the V whose row names a lemma
            verbs = [s for s in verbs if rows[s[0]][0][lemma_col] != "-"]
        if len(verbs) != 1:
            raise block.error(
                f"expected exactly one (V*) on a row with a lemma in proposition column {column - first + 1}, found {len(verbs)}",
                lines[verbs[1][0] if verbs else 0],
            )
        predicate = verbs[0]
        start, stop, _ = predicate
        lemma = rows[start][0][lemma_col]
        frameset = rows[start][0][layout.frameset] if layout.frameset is not None else "-"
        attrs: dict[str, Any] = {"lemma": lemma}
        if frameset != "-":
            attrs["frameset"] = frameset
        if close_labels:
            attrs["close_labels"] = True
        prop = Proposition(start, stop, f"{lemma}.{frameset}" if frameset != "-" else lemma, attrs)
        prop.arguments = [
            argument(s, e, label, lambda message: block.error(message, lines[s])) for s, e, label in spans if (s, e, label) != predicate
        ]
        propositions.append(prop)
    meta: dict[str, Any] = {
        "format": layout.name,
        "comments": comments,
        # every cell but the word and the propositions, and the whitespace around cells
        "cells": [cells[: layout.word] + cells[layout.word + 1 : first] + cells[end:] for cells, _ in rows],
        "gaps": [gaps for _, gaps in rows],
        "line": block.lines[0].number,
    }
    meta.update(endings_meta(block.lines))
    tokens = tuple(cells[layout.word] for cells, _ in rows)
    try:
        return Example(id=ident, tokens=tokens, spans=tuple(to_spans(propositions)), meta=meta)
    except ValueError as exc:
        raise block.error(f"invalid sentence: {one_line(exc)}") from None


def write_sentence(example: Example, layout: Layout) -> Iterator[str]:
    """The lines (with endings) of one example in ``layout``."""
    n = len(example.tokens)
    propositions = from_example(example)
    for prop in propositions:
        for span in prop.arguments:
            _BRACKET_CELL.check(example, layout.name, "label", span.label)
    columns = [
        encode_column(
            [(p.start, p.end, "V"), *((a.start, a.end, a.label) for a in p.arguments)], n, bool(p.attrs.get("close_labels"))
        )
        for p in propositions
    ]
    lemmas = {p.start: _lemma_and_frameset(p) for p in propositions}
    cells_meta = example.meta.get("cells")
    gaps_meta = example.meta.get("gaps")
    own = isinstance(cells_meta, list) and len(cells_meta) == n
    if not own:  # the predicates' lemma (and frameset) cells come from their labels or attrs
        for prop in propositions:
            lemma, frameset = lemmas[prop.start]
            _LEMMA_CELL.check(example, layout.name, f"predicate {prop.label!r}: lemma", lemma)
            if layout.frameset is not None:
                _FRAMESET_CELL.check(example, layout.name, f"predicate {prop.label!r}: frameset", frameset)
    comments = list(example.meta.get("comments", []))
    ends = endings(example.meta, len(comments) + n)
    yield from (text + end for text, end in zip(comments, ends, strict=False))
    for i, token in enumerate(example.tokens):
        props = [column[i] for column in columns]
        if own:
            fixed = list(cells_meta[i])
            split = len(fixed) - layout.trailing
            cells = fixed[: layout.word] + [token] + fixed[layout.word : split] + props + fixed[split:]
        else:
            lemma, frameset = lemmas.get(i, ("-", "-"))
            cells = layout.default_row(i, token, lemma, frameset, props)
        gaps = gaps_meta[i] if own and isinstance(gaps_meta, list) else None
        yield join_spaced(cells, gaps) + ends[len(comments) + i]


def _lemma_and_frameset(prop: Proposition) -> tuple[str, str]:
    """The predicate's lemma and frameset cells: from its attrs, else from its label (``attack.01``)."""
    lemma = prop.attrs.get("lemma")
    frameset = prop.attrs.get("frameset")
    if lemma is None:
        stem, dot, sense = prop.label.rpartition(".")
        lemma, frameset = (stem, frameset or sense) if dot and stem and sense.isdigit() else (prop.label, frameset)
    elif frameset is None and prop.label.startswith(f"{lemma}."):
        frameset = prop.label[len(lemma) + 1 :]
    return str(lemma), str(frameset or "-")
