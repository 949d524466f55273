"""CoNLL-U Plus / Universal PropBank: ten CoNLL-U columns, a predicate-sense column, one
argument column per predicate.

Arguments are marked on their head word only (another word of a multiword predicate,
such as the particle of "break through", carries ``V``: it becomes an argument span
labelled ``V``, so the writer marks it again); ``expand`` turns a head into a span: the
head alone, or the contiguous run of its dependency subtree around it that does not
reach into the predicate's own subtree (so "the man who left" gives ARG0 "the man" for
"left", not the whole relative clause). The head stays in ``attrs["head_offset"]`` so the
writer marks the same word again. A predicate span carries its word's lemma and UPOS
(``attrs["lemma"]``, ``attrs["pos"]``, which the pipeline's ``skip_pos`` reads). The first
ten columns of every line (multiword-token and empty-node lines whole) are kept in meta,
which makes writing back exact.

An example without those columns (an augmented record: a paraphrase has new words and no
dependency tree) can be written only when each of its arguments is one word: the head of
a longer span is unknown, and marking any word of it would read back as another span.
The writer refuses such an example and names the formats that keep spans whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from spanaug_conll_srl.propositions import Proposition, argument, from_example, to_spans

from spanaug_core.errors import DataError, one_line
from spanaug_core.types import Example
from spanaug_shared.columns import Block, CellRule, endings, endings_meta

UD_COLUMNS = 10
EMPTY = "_"
# Ids of CoNLL-U lines that are not words: multiword tokens (3-4) and empty nodes (24.1).
_OTHER_ID = re.compile(r"\d+-\d+|\d+\.\d+")
# "_" is CoNLL-U's empty cell: an argument labelled "_" would read back as none, a sense "_" as no
# predicate. (Columns are split at tabs, which no label holds, so a space reads back as it is.)
_LABEL_CELL = CellRule(re.compile(r"^_\Z"), "'_' alone (CoNLL-U's empty cell)")


def _subtree_span(head: int, parents: Sequence[int | None], predicate: int) -> tuple[int, int]:
    """The contiguous run around ``head`` of its subtree, not entering ``predicate``'s subtree."""
    children: dict[int, list[int]] = {}
    for child, parent in enumerate(parents):
        if parent is not None:
            children.setdefault(parent, []).append(child)
    inside = set()
    todo = [head]
    while todo:
        node = todo.pop()
        if node in inside or (node == predicate and node != head):
            continue
        inside.add(node)
        todo.extend(children.get(node, ()))
    start, end = head, head + 1
    while start - 1 in inside:
        start -= 1
    while end in inside:
        end += 1
    return start, end


def read_sentence(block: Block, expand: Literal["head", "subtree"], ident: str) -> Example:
    """One CoNLL-U Plus sentence block as an example (raise DataError on malformed lines)."""
    comments = [line.text for line in block.lines if line.text.startswith("#")]
    rows = [line for line in block.lines if not line.text.startswith("#")]
    if not rows:
        raise block.error("expected token lines after the comments")
    kept: list[str] = []  # the first ten columns of word lines, whole other lines
    tokens: list[str] = []
    senses: list[str] = []
    arg_cells: list[list[str]] = []
    word_lines = []
    heads: list[str] = []
    lemmas: list[str] = []
    upos: list[str] = []
    ids: list[str] = []
    width: int | None = None
    for line in rows:
        cells = line.text.split("\t")
        if len(cells) < UD_COLUMNS + 2:
            raise block.error(
                f"expected at least {UD_COLUMNS + 2} tab-separated columns (10 CoNLL-U, the predicate sense, "
                f"one per predicate), got {len(cells)}",
                line,
            )
        if not cells[0].isdigit():  # a multiword token (1-2) or an empty node (24.1)
            if not _OTHER_ID.fullmatch(cells[0]):
                raise block.error(f"expected a word id (1, 2...), a range (1-2) or an empty node (1.1), got {cells[0]!r}", line)
            if any(cell not in ("", EMPTY) for cell in cells[UD_COLUMNS:]):
                raise block.error(f"expected no predicate or argument on line id {cells[0]} (not a word)", line)
            kept.append(line.text)
            continue
        if cells[0] != str(len(ids) + 1):
            raise block.error(f"expected word id {len(ids) + 1} (ids count 1, 2... in each sentence), got {cells[0]}", line)
        width = width or len(cells)
        if len(cells) != width:
            raise block.error(f"expected {width} columns like the sentence's first word line, got {len(cells)}", line)
        kept.append("\t".join(cells[:UD_COLUMNS]))
        ids.append(cells[0])
        tokens.append(cells[1])
        heads.append(cells[6])
        lemmas.append(cells[2])
        upos.append(cells[3])
        senses.append(cells[UD_COLUMNS])
        arg_cells.append(cells[UD_COLUMNS + 1 :])
        word_lines.append(line)
    if not ids:
        raise block.error("expected at least one word line (id 1, 2...) in the sentence")
    position = {ident_: i for i, ident_ in enumerate(ids)}
    parents = [position.get(head) for head in heads]
    # "_" marks a word that is no predicate; sentences outside PropBank ("# propbank = no-up")
    # leave the columns blank instead.
    predicates = [i for i, sense in enumerate(senses) if sense not in (EMPTY, "")]
    columns = len(arg_cells[0])
    # A sentence without predicates still has one (empty) argument column.
    if columns != max(len(predicates), 1):
        expected = f"expected one argument column per predicate, got {columns} for {len(predicates)} predicate sense(s)"
        unsensed = _unsensed_predicate(predicates, senses, arg_cells)
        if unsensed is None:
            raise block.error(expected, word_lines[0])
        raise block.error(
            f"{expected}: this word is marked V in argument column {unsensed[1] + 1}, but its sense is "
            f"{senses[unsensed[0]]!r}; give it a roleset such as {lemmas[unsensed[0]]}.01",
            word_lines[unsensed[0]],
        )
    propositions = []
    for column, predicate in enumerate(predicates):
        attrs: dict[str, Any] = {"lemma": lemmas[predicate]}
        if upos[predicate] != EMPTY:
            attrs["pos"] = upos[predicate]  # for skip_pos (nominal predicates)
        prop = Proposition(predicate, predicate + 1, senses[predicate], attrs)
        for row, cells in enumerate(arg_cells):
            label = cells[column]
            if row == predicate and label != "V":
                prop.attrs["mark"] = label  # e.g. C-V on "timing" of "two - timing" (V on "two")
            if label == EMPTY or row == predicate:
                continue
            if not label:
                raise block.error(f"expected an argument label or {EMPTY} in argument column {column + 1}, found an empty cell", word_lines[row])
            start, end = (row, row + 1) if expand == "head" else _subtree_span(row, parents, predicate)
            prop.arguments.append(argument(start, end, label, lambda message: block.error(message, word_lines[row]), head_offset=row - start))
        propositions.append(prop)
    meta: dict[str, Any] = {"format": "conllu", "comments": comments, "rows": kept, "line": block.lines[0].number}
    if not predicates:
        meta["empty_column"] = arg_cells[0][0]
    if "" in senses:
        meta["blank_sense"] = ""
    meta.update(endings_meta(block.lines))
    try:
        return Example(id=ident, tokens=tuple(tokens), spans=tuple(to_spans(propositions)), meta=meta)
    except ValueError as exc:
        raise block.error(f"invalid sentence: {one_line(exc)}") from None


def _unsensed_predicate(predicates: Sequence[int], senses: Sequence[str], arg_cells: Sequence[Sequence[str]]) -> tuple[int, int] | None:
    """``(row, column)`` of a word marked V but without a sense, for a sentence with more argument
    columns than senses. Columns follow the predicates in order, so the first column whose
    predicate is not marked in it belongs to a predicate whose sense is missing."""
    for column in range(len(arg_cells[0])):
        if column < len(predicates) and arg_cells[predicates[column]][column] != EMPTY:
            continue
        return next(((row, column) for row, cells in enumerate(arg_cells) if cells[column] == "V" and senses[row] in (EMPTY, "")), None)
    return None


def write_sentence(example: Example) -> Iterator[str]:
    """The lines (with endings) of one example in CoNLL-U Plus."""
    propositions = from_example(example)
    for prop in propositions:
        _LABEL_CELL.check(example, "CoNLL-U Plus", "predicate label", prop.label)
        for arg in prop.arguments:
            _LABEL_CELL.check(example, "CoNLL-U Plus", "label", arg.label)
    n = len(example.tokens)
    senses = [str(example.meta.get("blank_sense", EMPTY))] * n
    columns = [[EMPTY] * n for _ in propositions] or [[example.meta.get("empty_column", "")] * n]
    for column, prop in enumerate(propositions):
        senses[prop.start] = prop.label
        columns[column][prop.start] = str(prop.attrs.get("mark", "V"))
        for arg in prop.arguments:
            head = arg.start + int(arg.attrs.get("head_offset", arg.end - 1 - arg.start))
            columns[column][min(max(head, arg.start), arg.end - 1)] = arg.label
    rows = example.meta.get("rows")
    if not isinstance(rows, list) or sum(row.split("\t", 1)[0].isdigit() for row in rows) != n:
        _one_word_arguments(example, propositions)
        rows = ["\t".join([str(i + 1), token] + [EMPTY] * (UD_COLUMNS - 2)) for i, token in enumerate(example.tokens)]
    comments = list(example.meta.get("comments", [f"# text = {example.text}"]))
    ends = endings(example.meta, len(comments) + len(rows))
    yield from (text + end for text, end in zip(comments, ends, strict=False))
    word = 0
    for row, end in zip(rows, ends[len(comments) :], strict=True):
        if row.split("\t", 1)[0].isdigit():
            row = "\t".join([row, senses[word], *(column[word] for column in columns)])
            word += 1
        yield row + end


def _one_word_arguments(example: Example, propositions: Sequence[Proposition]) -> None:
    """Raise DataError unless every argument is one word: without a dependency tree (HEAD), the
    head word CoNLL-U Plus marks would read back as that word alone."""
    for prop in propositions:
        for arg in prop.arguments:
            if arg.end - arg.start > 1:
                raise DataError(
                    f"example {example.id}: CoNLL-U Plus marks an argument by its head word, and this example has no "
                    f"dependency tree to find the head of {arg.label} {arg.text(example.tokens)!r} ({arg.end - arg.start} words) in "
                    "(an augmented record, or one read from another format); write it where spans are whole: "
                    "--to-set write_format=conll2012 (or conll2005, which has no roleset column)"
                )
