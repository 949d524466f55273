"""Reading JSON Lines files of validated records, with errors that name the file and line.

Run folders, judgments and task files are all JSON Lines of pydantic models; every
reader needs the same three things: skip blank lines, say where invalid JSON is, and
say which field of which line failed validation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from spanaug_core.errors import DataError, one_line
from spanaug_core.files import read_lines

Model = TypeVar("Model", bound=BaseModel)


def objects(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, Any]]:
    """``(line number, decoded object)`` of every non-blank line; invalid JSON or bytes name the line."""
    for lineno, line in read_lines(Path(path), encoding):
        if line.strip():
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON ({exc.msg} at column {exc.colno})", path, lineno) from None


def read_models(path: Path, model: type[Model], what: str) -> list[Model]:
    """Every line of ``path`` validated as ``model``; a bad line is an error naming it as ``what``."""
    out = []
    for lineno, obj in objects(path):
        try:
            out.append(model.model_validate(obj))
        except ValidationError as exc:
            raise DataError(f"not {what} ({one_line(exc)})", path, lineno) from None
    return out
