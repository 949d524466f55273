"""The ``conll-srl`` dataset: one component reading and writing three SRL formats.

The format is chosen by option or detected from the file (a ``.conllu`` name or 12+
tab-separated columns with a numeric ID: CoNLL-U Plus; ``_conll`` names or a
``#begin document`` line: CoNLL-2012; otherwise CoNLL-2005). Each example keeps its
format in ``meta["format"]``; the writer writes a file in the format of its first example
unless told otherwise, so a file read and written back is reproduced exactly, and records
written after their sources (``convert --with-sources``) join the sources' format. What a
format cannot hold is refused, not written approximately: CoNLL-U Plus needs the
dependency tree a paraphrase lacks to mark a multiword argument (``conllu_plus``), and a
label that would read back as other cells (``A(0)`` in bracket notation) is refused too.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field
from spanaug_conll_srl import bracketed, conllu_plus
from spanaug_conll_srl.propbank import FrameFiles
from spanaug_conll_srl.propositions import orphans

from spanaug_core.errors import SpanaugError
from spanaug_core.protocols import ComponentConfig
from spanaug_core.settings import RunPreset
from spanaug_core.types import Example
from spanaug_shared.columns import Block, read_blocks, read_sentences, write_sentences
from spanaug_shared.presets import quality_line

log = logging.getLogger(__name__)

Format = Literal["conllu", "conll2005", "conll2012"]
_CONLL05_ROLE = re.compile(r"^(?:[CR]-)?A(\d|A)$")


def detect_format(path: Path) -> Format:
    """The SRL format of a file, from its name or its first line."""
    if path.suffix == ".conllu":
        return "conllu"
    if path.name.endswith("_conll"):
        return "conll2012"
    for block in read_blocks(path):
        for line in block.lines:
            if line.text.startswith("#begin document"):
                return "conll2012"
            if line.text.startswith("#"):
                continue
            cells = line.text.split("\t")
            return "conllu" if len(cells) >= 12 and cells[0].split("-")[0].split(".")[0].isdigit() else "conll2005"
    return "conll2005"


class ConllSrl:
    """CoNLL SRL (CoNLL-U Plus / Universal PropBank, CoNLL-2005, CoNLL-2012): predicates and arguments as spans."""

    name: ClassVar[str] = "conll-srl"
    # Copulas, auxiliary "do" and nominal predicates are left alone: their paraphrases seldom keep
    # the meaning (docs/results/srl-skips.md). "be" alone is the label where a CoNLL-2005 file has
    # no frameset column; do.02 ("act") rewrites well. Auxiliaries by UPOS (perfect "have",
    # have.01: "I [have] long been") carry tense, not a meaning to reword. CoNLL-2005/2012
    # predicates carry no pos: skip_labels still serves.
    suggested_settings: ClassVar[dict[str, Any]] = {"skip_labels": ["be", "be.*", "do.01"], "skip_pos": ["NOUN", "AUX"]}
    # The UP EWT lines judged (docs/results/srl-skips.md#both-on-a-fresh-sample-seed-25).
    presets: ClassVar[tuple[RunPreset, ...]] = (
        RunPreset(
            "precise",
            "two rounds, the README's quality line and the sense filter, beam 4 and top-m 4: fewer, surer records "
            "(docs/results/srl-skips.md#both-on-a-fresh-sample-seed-25)",
            quality_line("sense", iterations=2, beam=4, top_m=4),
        ),
        RunPreset(
            "more",
            "two rounds, the README's quality line, beam 4 and top-m 4 (docs/results/srl-skips.md#both-on-a-fresh-sample-seed-25)",
            quality_line(iterations=2, beam=4, top_m=4),
        ),
    )

    class Config(ComponentConfig):
        format: Literal["auto", "conllu", "conll2005", "conll2012"] = Field(
            default="auto", description="input format; auto detects it from the file name or first line"
        )
        arguments: Literal["subtree", "head"] = Field(
            default="subtree",
            description="CoNLL-U Plus marks argument heads: subtree expands each to its dependency subtree "
            "(not entering the predicate's), head keeps the head word alone",
        )
        frames: Path | None = Field(
            default=None, description="PropBank frames folder: attach roleset names and role descriptions to the spans"
        )
        write_format: Literal["same", "conllu", "conll2005", "conll2012"] = Field(
            default="same",
            description="format to write: the first example's own (CoNLL-U Plus for examples from elsewhere) or the one named, "
            "for the whole file; augmented records with multiword arguments need conll2012 or conll2005 (docs/datasets.md)",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.warnings: Counter[str] = Counter()
        self._frames = FrameFiles(config.frames) if config.frames is not None else None

    def read(self, path: str | Path | None) -> Iterator[Example]:
        """Stream the sentences of an SRL file as examples (a target span per predicate, its arguments grouped)."""
        if path is None:
            raise SpanaugError("the conll-srl dataset has no default data; pass --input FILE (e.g. en_ewt-up-dev.conllu)")
        path = Path(path)
        fmt = detect_format(path) if self.config.format == "auto" else self.config.format

        def make(block: Block, pre: str, number: int) -> Example:
            ident = f"{path.name}#{number}"
            if fmt == "conllu":
                example = conllu_plus.read_sentence(block, self.config.arguments, ident)
            else:
                example = bracketed.read_sentence(block, bracketed.LAYOUTS[fmt], ident)
            example = example.model_copy(update={"meta": {**example.meta, "pre": pre}})
            return self._describe(example) if self._frames is not None else example

        # CoNLL-2012's "#end document" line stands alone between blank lines: not a sentence.
        yield from read_sentences(path, lambda block: not bracketed.is_comment_block(block), make)

    def _describe(self, example: Example) -> Example:
        """Attach PropBank roleset names and role descriptions to an example's spans."""
        assert self._frames is not None
        rolesets = {s.group: s.label for s in example.spans if s.role == "target"}
        spans = []
        for span in example.spans:
            found = self._frames.lookup(rolesets.get(span.group, ""))
            if found is None:
                if span.role == "target":
                    self.warnings["roleset not in frame files"] += 1
                spans.append(span)
                continue
            name, roles = found
            role = span.label.removeprefix("C-").removeprefix("R-")
            role = "ARG" + _CONLL05_ROLE.match(role).group(1) if _CONLL05_ROLE.match(role) else role
            description = name if span.role == "target" else roles.get(role)
            spans.append(span.model_copy(update={"attrs": {**span.attrs, "description": description}}) if description else span)
        return example.model_copy(update={"spans": tuple(spans)})

    def count(self, path: str | Path | None) -> int | None:
        """Number of sentences in the file (for a progress bar)."""
        if path is None:
            return None
        return sum(1 for block in read_blocks(Path(path)) if block.lines and not bracketed.is_comment_block(block))

    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        """Write examples in the first one's SRL format (or ``write_format``); returns how many were written."""
        chosen: list[str] = [] if self.config.write_format == "same" else [self.config.write_format]

        def lines(example: Example) -> Iterable[str]:
            lost = orphans(example)
            if lost:
                self.warnings["argument without its predicate not written"] += lost
                log.warning("%s: %d argument span(s) whose group has no target not written", example.id, lost)
            if not chosen:  # one file, one format: a reader takes the file's from its name or first line
                chosen.append(str(example.meta.get("format", "conllu")))
            fmt = chosen[0]
            if fmt != example.meta.get("format"):
                # Layout meta belongs to the format it was read from.
                example = example.model_copy(update={"meta": {}})
            if fmt == "conllu":
                return conllu_plus.write_sentence(example)
            return bracketed.write_sentence(example, bracketed.LAYOUTS[fmt])

        return write_sentences(examples, Path(path), lines)
