"""ATIS-style slot-filling data: ``tokens<TAB>BIO tags<TAB>intent`` per line.

Each B-/I- run of tags becomes a span labeled with the slot name; the intent goes to
``meta``. Writing turns spans back into BIO tags, so a file read and written again is
unchanged, and augmented records (whose spans were located in the paraphrase) become
new training lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from spanaug_core import ComponentConfig, DataError, Example, Span


def spans_from_tags(tags: list[str], role: str) -> list[Span]:
    """BIO tags -> spans (an I- tag without a matching B- opens a span, as conlleval does)."""
    spans: list[Span] = []
    start, label = None, None
    for i, tag in enumerate([*tags, "O"]):
        kind, _, name = tag.partition("-")
        if start is not None and (kind != "I" or name != label):
            spans.append(Span(start=start, end=i, label=label, role=role))
            start, label = None, None
        if kind == "B" or (kind == "I" and start is None):
            start, label = i, name
    return spans


class SlotsDataset:
    """Slot-filling utterances (ATIS-style tokens, BIO slot tags and an intent per line)."""

    name: ClassVar[str] = "slots"

    class Config(ComponentConfig):
        rewrite_slots: bool = Field(default=False, description="rewrite slot values (role target) instead of keeping them")

    def __init__(self, config: Config) -> None:
        self.config = config

    def read(self, path: str | Path | None) -> Iterator[Example]:
        if path is None:
            path = Path(__file__).resolve().parents[2] / "data" / "sample.tsv"
        role = "target" if self.config.rewrite_slots else "entity"
        with Path(path).open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 3:
                    raise DataError(f"expected 3 tab-separated fields (tokens, tags, intent), got {len(fields)}", path, lineno)
                tokens, tags = fields[0].split(), fields[1].split()
                if len(tokens) != len(tags):
                    raise DataError(f"{len(tokens)} tokens but {len(tags)} tags", path, lineno)
                yield Example(id=f"{Path(path).stem}-{lineno}", tokens=tokens, spans=spans_from_tags(tags, role), meta={"intent": fields[2]})

    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        n = 0
        with Path(path).open("w", encoding="utf-8") as fh:
            for ex in examples:
                tags = ["O"] * len(ex.tokens)
                for span in ex.spans:
                    tags[span.start : span.end] = [f"B-{span.label}"] + [f"I-{span.label}"] * (span.end - span.start - 1)
                fh.write(f"{' '.join(ex.tokens)}\t{' '.join(tags)}\t{ex.meta.get('intent', '')}\n")
                n += 1
        return n
