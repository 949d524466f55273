"""Exceptions a user can act on.

Every error spanaug raises on purpose derives from ``SpanaugError``; the CLI prints its
message as one red line and exits non-zero. Messages name the file, line, field or
component at fault and what was expected instead.
"""

from __future__ import annotations

import difflib
import errno
import os
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
    """Base class for errors that carry a message meant for the user.

    ``hint``, when set, is what the user can do next; the CLI prints it on the line after
    the error (a run that stopped says how to go on).
    """

    hint: str = ""


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


# What the user can do about each environment fault (``FileSystemError.remedy``).
_REMEDIES = {
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space (the disk quota is full)",
    errno.EFBIG: "lift the file size limit (ulimit -f), or write where larger files are allowed",
    errno.EROFS: "make the file system writable",
    errno.EACCES: "allow writing there",
    errno.EPERM: "allow writing there",
    errno.ENOENT: "restore the folder",
    errno.ENOTDIR: "restore the folder",
}
#: The ``errno`` values that mean the machine refused, not spanaug: a full disk or quota, a
#: file too large, a read-only file system, no permission, a path that vanished.
ENVIRONMENT_FAULTS = frozenset(_REMEDIES)


class FileSystemError(SpanaugError):
    """The machine refused a file operation (see ``ENVIRONMENT_FAULTS``): the user's problem, not spanaug's.

    The message names the path the user knows (never a temporary name), what could not be
    done and why: ``cannot write PATH: No space left on device``; with ``action=None``, when
    what was being done is not known, ``PATH: Permission denied``.
    """

    def __init__(self, path: object, err: int, action: str | None = "write") -> None:
        cause = os.strerror(err)
        super().__init__(f"cannot {action} {path}: {cause}" if action else f"{path}: {cause}")
        self.path, self.errno = path, err

    @property
    def remedy(self) -> str:
        """What to do about it, in a few words: "free some space"."""
        return _REMEDIES.get(self.errno, "fix the file system")
