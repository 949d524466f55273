"""Files in and out, with errors a user can act on and nothing left half-written.

Reading: ``input_file`` says what is wrong with a path (missing, a folder) and
``read_lines`` yields numbered lines, turning undecodable bytes into a ``DataError`` that
names the file, the line and the byte. Writing: ``atomic_output`` hands out a temporary
path next to the target and renames it into place only when the writer finished, so an
error (or Ctrl-C) leaves the target as it was; an existing target is refused unless the
caller allows overwriting (``output_target``, which writers that manage their own partial
files use too). ``replace_json`` swaps a small state file (a manifest, a record) atomically.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spanaug_core.errors import DataError, SpanaugError


def input_file(path: Path | str) -> Path:
    """``path`` when it is a readable file; else a ``DataError`` saying what it is instead."""
    path = Path(path)
    if path.is_dir():
        raise DataError("is a folder; expected a file", path=path)
    if not path.is_file():
        raise DataError("no such file", path=path)
    return path


def read_lines(path: Path, encoding: str = "utf-8", newline: str | None = None) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a text file, line endings kept (``newline=""`` keeps them verbatim)."""
    path = input_file(path)
    with path.open(encoding=encoding, newline=newline) as handle:
        number = 0
        try:
            for number, line in enumerate(handle, start=1):
                yield number, line
        except UnicodeDecodeError as exc:
            raise _decoding_error(path, encoding, exc, number + 1) from None


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """A whole text file; undecodable bytes are a ``DataError`` naming the line and column."""
    path = input_file(path)
    try:
        return path.read_text(encoding=encoding)
    except UnicodeDecodeError as exc:
        raise _decoding_error(path, encoding, exc, 1) from None


def _decoding_error(path: Path, encoding: str, exc: UnicodeDecodeError, after: int) -> DataError:
    """The line and byte that cannot be decoded (text files decode in chunks, so look again line by line)."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number < after:
                continue
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as bad:
                found = raw[bad.start : bad.start + 1]
                return DataError(f"not valid {encoding}: byte {found!r} at column {bad.start + 1} (save the file as {encoding})", path, number)
    return DataError(f"not valid {encoding} ({exc.reason}); save the file as {encoding}", path)


def ensure_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) unless it exists; a file in its place is a clear error."""
    if folder.exists() and not folder.is_dir():
        raise SpanaugError(f"{folder} is a file; expected a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpanaugError(f"cannot create the folder {folder}: {exc.strerror}") from None


def output_target(path: Path | str, overwrite: bool = False) -> Path:
    """``path`` checked as an output: a real name, not an existing file unless ``overwrite``;
    its folder is created."""
    path = Path(path)
    if path.name in ("", ".", ".."):
        raise SpanaugError(f"cannot write to {str(path) or '.'}: name a file or a new folder")
    if path.exists() and not overwrite:
        raise SpanaugError(f"{path} exists; pass --overwrite to replace it, or choose another output")
    ensure_folder(path.parent)
    return path


def replace_json(path: Path, obj: Any, indent: int = 1) -> None:
    """Write ``obj`` as JSON to ``path`` atomically: readers (and a process killed meanwhile) see
    the old file or the new one, never half of one."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


@contextmanager
def atomic_output(path: Path | str, overwrite: bool = False) -> Iterator[Path]:
    """A temporary path to write instead of ``path``; renamed to ``path`` when the block ends without error.

    The temporary lives in the target's folder (created if needed), so the rename is atomic
    on one file system. Works for a file or a folder written at the given path.
    """
    path = output_target(path, overwrite)
    partial = path.parent / f".{path.name}.partial-{os.getpid()}"
    _remove(partial)
    try:
        yield partial
    except BaseException:
        _remove(partial)
        raise
    if not partial.exists():
        return  # the writer wrote nothing (e.g. no example): nothing to put in place
    if path.is_dir() and not path.is_symlink():
        if not partial.is_dir():
            _remove(partial)
            raise SpanaugError(f"{path} is a folder; --overwrite replaces a file with a file, or a folder the writer made whole")
        shutil.rmtree(path)
    os.replace(partial, path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()
