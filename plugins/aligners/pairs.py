"""The span-alignment JSONL format: one (source, source span, target, gold span) item a line.

Every aligner command reads and writes this format::

    {"id": "mtref-dev-3/7-9", "source_tokens": [...], "source_span": [7, 9],
     "target_tokens": [...], "gold_span": [5, 6] | null, "kind": "paraphrased"}

``gold_span`` is null when nothing in the target means the source span; it may be absent
altogether in files that are only to be aligned (``spanaug align``). Offsets are token
offsets with an exclusive end, as everywhere in spanaug. Malformed lines raise a
``DataError`` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from spanaug_core.errors import DataError
from spanaug_core.types import AlignItem

# A span's token offsets [start, end) as a plain pair (``spanaug_core.types.Span`` is a labeled span).
Bounds = tuple[int, int]


@dataclass(frozen=True)
class SpanPair:
    """One line of a span-alignment file; ``extra`` keeps unknown fields for round trips."""

    id: str
    item: AlignItem
    gold_span: Bounds | None = None
    kind: str | None = None
    has_gold: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this pair (fields in the documented order)."""
        obj: dict[str, Any] = {
            "id": self.id,
            "source_tokens": list(self.item.source_tokens),
            "source_span": list(self.item.source_span),
            "target_tokens": list(self.item.target_tokens),
        }
        if self.has_gold:
            obj["gold_span"] = list(self.gold_span) if self.gold_span else None
        if self.kind is not None:
            obj["kind"] = self.kind
        obj.update(self.extra)
        return obj


_KNOWN = {"id", "source_tokens", "source_span", "target_tokens", "gold_span", "kind"}


def _span(value: Any, n: int, name: str) -> Bounds:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value)):
        raise ValueError(f"'{name}' must be [start, end] (two integers), got {value!r}")
    start, end = value
    if not 0 <= start < end <= n:
        raise ValueError(f"'{name}' {value} is not a non-empty span inside the {n} tokens")
    return start, end


def parse_pair(obj: Any, index: int) -> SpanPair:
    """A SpanPair from one decoded JSON value; ValueError says what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    missing = [k for k in ("source_tokens", "source_span", "target_tokens") if k not in obj]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    for key in ("source_tokens", "target_tokens"):
        toks = obj[key]
        if not (isinstance(toks, list) and toks and all(isinstance(t, str) and t for t in toks)):
            raise ValueError(f"'{key}' must be a non-empty list of non-empty strings")
    try:
        item = AlignItem(
            source_tokens=tuple(obj["source_tokens"]),
            source_span=_span(obj["source_span"], len(obj["source_tokens"]), "source_span"),
            target_tokens=tuple(obj["target_tokens"]),
        )
    except ValidationError as exc:
        raise ValueError(exc.errors()[0]["msg"]) from None
    has_gold = "gold_span" in obj
    gold = obj.get("gold_span")
    gold_span = None if gold is None else _span(gold, len(item.target_tokens), "gold_span")
    kind = obj.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise ValueError(f"'kind' must be a string, got {kind!r}")
    return SpanPair(
        id=str(obj.get("id", index)),
        item=item,
        gold_span=gold_span,
        kind=kind,
        has_gold=has_gold,
        extra={k: v for k, v in obj.items() if k not in _KNOWN},
    )


def read_pairs(path: Path, require_gold: bool = False) -> Iterator[SpanPair]:
    """Yield the pairs of a span-alignment JSONL file (blank lines are skipped)."""
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path=path) from None
    with handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                pair = parse_pair(json.loads(line), lineno)
                if require_gold and not pair.has_gold:
                    raise ValueError("missing field 'gold_span' (use null when nothing aligns)")
            except json.JSONDecodeError as exc:
                raise DataError(f"not valid JSON ({exc.msg})", path=path, line=lineno) from None
            except ValueError as exc:
                raise DataError(f"{exc} (expected a span-alignment item, see docs/aligners.md)", path=path, line=lineno) from None
            yield pair


def pair_line(pair: SpanPair | dict[str, Any]) -> str:
    """One pair (or ready JSON object) as a line of span-alignment JSONL, newline included."""
    return json.dumps(pair.to_json() if isinstance(pair, SpanPair) else pair, ensure_ascii=False) + "\n"


def write_pairs(pairs: Iterable[SpanPair | dict[str, Any]], path: Path) -> int:
    """Write pairs (or ready JSON objects) one a line; returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(pair_line(pair))
            count += 1
    return count
