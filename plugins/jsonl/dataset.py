"""The ``jsonl`` dataset: the data contract of DESIGN.md, read and written.

One JSON object per line: ``{"id", "tokens", "spans": [{"start", "end", "label", "role",
"group", "attrs"}], "meta"}``. A line may give ``text`` instead of ``tokens`` (it is
tokenized), and lines of a run's ``augmented.jsonl`` read as examples too, so augmented
data can be augmented again; keys the contract does not know are kept in ``meta``. Every
error names the file, the line and the field.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, ValidationError, field_validator

from spanaug_core.errors import ConfigError, DataError, one_line
from spanaug_core.protocols import ComponentConfig
from spanaug_core.settings import RunPreset
from spanaug_core.text import tokenize
from spanaug_core.files import input_file, read_lines
from spanaug_core.types import Example
from spanaug_shared.jsonlines import objects
from spanaug_shared.presets import quality_line

_KNOWN = {"id", "tokens", "text", "spans", "meta"}


def example_from_json(obj: Any, default_id: str) -> Example:
    """An Example from one decoded JSON line (raises ValueError/ValidationError)."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    tokens = obj.get("tokens")
    if tokens is None:
        if not isinstance(obj.get("text"), str):
            raise ValueError("expected 'tokens' (a list of strings) or 'text' (a string)")
        tokens = tokenize(obj["text"])
    meta = obj.get("meta") or {}
    if not isinstance(meta, dict):
        raise ValueError(f"expected 'meta' to be a JSON object, got {type(meta).__name__}")
    identifier = obj.get("id")
    if identifier is None:
        identifier = default_id
    # A number is an id as its text; a list or object would become its Python repr.
    if isinstance(identifier, (dict, list)):
        raise ValueError(f"expected 'id' to be a string or a number, got {type(identifier).__name__}")
    meta = {**meta, **{k: v for k, v in obj.items() if k not in _KNOWN}}
    return Example(id=str(identifier), tokens=tokens, spans=obj.get("spans", []), meta=meta)


def example_to_json(example: Example) -> dict[str, Any]:
    """The JSON object of one example, leaving out empty optional fields."""
    spans = []
    for span in example.spans:
        item = span.model_dump(mode="json")
        if item["group"] is None:
            del item["group"]
        if not item["attrs"]:
            del item["attrs"]
        spans.append(item)
    out: dict[str, Any] = {"id": example.id, "tokens": list(example.tokens), "spans": spans}
    if example.meta:
        out["meta"] = example.meta
    return out


class JsonlDataset:
    """spanaug's own JSONL format (one example per line), read and written."""

    name: ClassVar[str] = "jsonl"
    # Any span data: the README's quality line, on which every judged span task was measured.
    presets: ClassVar[tuple[RunPreset, ...]] = (
        RunPreset(
            "precise",
            "two rounds, the README's quality line, beam 4 and top-m 4: where every judged span task was measured "
            "(docs/quality.md#where-quality-stands; a dataset of your task may offer a surer line)",
            quality_line(iterations=2, beam=4, top_m=4),
        ),
        RunPreset(
            "more",
            "ten rounds, the README's quality line, beam 4 and top-m 4: more records, later rounds less often good "
            "(docs/quality.md#where-quality-stands)",
            quality_line(iterations=10, beam=4, top_m=4),
        ),
    )

    class Config(ComponentConfig):
        encoding: str = Field(default="utf-8", description="text encoding of the file (a Python codec name)")

        @field_validator("encoding")
        @classmethod
        def _known(cls, value: str) -> str:
            try:
                text = getattr(codecs.lookup(value), "_is_text_encoding", True)  # rot13, base64... are codecs too
            except LookupError:
                text = False
            if not text:
                raise ValueError("unknown text encoding; expected a Python codec name such as utf-8, latin-1 or cp1252")
            return value

    def __init__(self, config: Config) -> None:
        self.config = config

    def _path(self, path: str | Path | None) -> Path:
        if path is None:
            raise ConfigError("dataset 'jsonl' needs an input file (--input FILE.jsonl)")
        return input_file(path)

    def read(self, path: str | Path | None) -> Iterator[Example]:
        path = self._path(path)
        for lineno, obj in objects(path, self.config.encoding):
            try:
                yield example_from_json(obj, default_id=f"{path.stem}-{lineno}")
            except ValidationError as exc:
                raise DataError(f"not a valid example: {one_line(exc)}", path, lineno) from None
            except ValueError as exc:
                raise DataError(str(exc), path, lineno) from None

    def count(self, path: str | Path | None) -> int:
        """Number of non-blank lines (the progress bar's total)."""
        return sum(1 for _, line in read_lines(self._path(path), self.config.encoding) if line.strip())

    def write(self, examples: Iterable[Example], path: str | Path) -> int:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        n = 0
        with path.open("w", encoding=self.config.encoding) as fh:
            for example in examples:
                fh.write(json.dumps(example_to_json(example), ensure_ascii=False) + "\n")
                n += 1
        return n
