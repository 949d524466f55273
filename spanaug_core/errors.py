"""Exceptions a user can act on.

Every error spanaug raises on purpose derives from ``SpanaugError``; the CLI prints its
message as one red line and exits non-zero. Messages name the file, line, field or
component at fault and what was expected instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def one_line(exc: BaseException) -> str:
    """An exception as one line for a user: a pydantic error's first problem as ``field: message``."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return " ".join(str(exc).split())
    found = errors()
    where = ".".join(str(part) for part in found[0]["loc"])
    message = str(found[0]["msg"]).removeprefix("Value error, ")
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (f"{where}: {message}" if where else message) + more


class SpanaugError(Exception):
    """Base class for errors that carry a message meant for the user."""


class ConfigError(SpanaugError):
    """A run configuration or component option is invalid."""


class UnknownComponentError(SpanaugError):
    """A component name is not registered; the message lists the known ones."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        listed = ", ".join(known) if known else "none (is the plugin installed?)"
        super().__init__(f"unknown {kind} '{name}'.{hint} Known {kind}s: {listed}")
        self.kind, self.name, self.known = kind, name, known


class DuplicateComponentError(SpanaugError):
    """Two plugins registered the same name for the same kind."""


class DataError(SpanaugError):
    """Input data is malformed; the message says where (file and line) and what was expected."""

    def __init__(self, message: str, path: object | None = None, line: int | None = None) -> None:
        where = f"{path}:{line}: " if path is not None and line is not None else f"{path}: " if path is not None else ""
        super().__init__(where + message)
        self.path, self.line = path, line


class RunStateError(SpanaugError):
    """An output folder cannot be written or resumed as asked."""
