"""Reading back what a run wrote: its augmented records, its rejections and its manifest.

The run store (``spanaug_core.output``) writes ``augmented.jsonl``, ``rejected.jsonl`` and
``manifest.json``; the judge, the report and the experiments read them here, each line
validated (a malformed one is a ``DataError`` naming the file and line).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spanaug_core.errors import DataError
from spanaug_core.output import MANIFEST
from spanaug_core.types import CARRIED, Augmented, Example, Span
from spanaug_shared.jsonlines import read_models


class Rejected(BaseModel):
    """A line of rejected.jsonl: a record a filter dropped (``record`` set) or a span that stopped."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    source_id: str
    target: int | None = None
    iteration: int = Field(ge=0)
    reason: str
    record: Augmented | None = None

    @property
    def filter(self) -> str | None:
        """The filter that dropped the record (reasons read ``"<filter>: <why>"``); None for a stopped span."""
        return self.reason.split(":", 1)[0].strip() if self.record is not None else None


def read_records(path: Path) -> list[Augmented]:
    """The augmented records of a run's ``augmented.jsonl``."""
    return read_models(path, Augmented, "an augmented record")


def read_rejected(path: Path) -> list[Rejected]:
    """The lines of a run's ``rejected.jsonl``."""
    return read_models(path, Rejected, "a rejected.jsonl line")


def rewritten_span(record: Augmented, rewrite_roles: Sequence[str]) -> Span | None:
    """The span a record's paraphrase rewrote: its one span with a rewritten role that was not
    carried along from the source (None when not exactly one)."""
    found = [span for span in record.spans if span.role in rewrite_roles and not span.attrs.get(CARRIED)]
    return found[0] if record.target is not None and len(found) == 1 else None


def replacement(record: Augmented, source: Example) -> tuple[Span, Span] | None:
    """The source span a record rewrote and the record's span that replaced it; None for a
    whole-sentence paraphrase, or when the record has not exactly one span of its role."""
    if record.target is None or not 0 <= record.target < len(source.spans):
        return None
    replaced = source.spans[record.target]
    new = rewritten_span(record, (replaced.role,))
    return None if new is None else (replaced, new)


def replaced_words(record: Augmented, source: Example) -> tuple[str, str] | None:
    """The words of ``replacement``'s two spans (whitespace normalised)."""
    spans = replacement(record, source)
    if spans is None:
        return None
    replaced, new = spans
    return " ".join(replaced.text(source.tokens).split()), " ".join(new.text(record.tokens).split())


def read_manifest(folder: Path) -> dict[str, Any]:
    """The run's manifest.json ({} when there is none)."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON ({exc.msg} at column {exc.colno})", path, exc.lineno) from None
    if not isinstance(manifest, dict):
        raise DataError("expected a JSON object", path)
    return manifest
