"""Files in and out, with errors a user can act on and nothing left half-written.

Reading: ``input_file`` says what is wrong with a path (missing, a folder) and
``read_lines`` yields numbered lines, turning undecodable bytes into a ``DataError`` that
names the file, the line and the byte; UTF-8 is read past a byte-order mark, which editors
on Windows write and which is no part of the first line's text. Writing: ``atomic_output`` hands out a temporary
path next to the target and renames it into place only when the writer finished, so an
error (or Ctrl-C) leaves the target as it was; an existing target is refused unless the
caller allows overwriting (``output_target``, which writers that manage their own partial
files use too). ``replace_text`` and ``replace_json`` swap a small file (a manifest, a
record) atomically.

When the machine refuses a write (a full disk, a read-only file system, no permission, a
folder that vanished: ``ENVIRONMENT_FAULTS``), that is the user's problem, not spanaug's:
``writing(path)`` turns the ``OSError`` into a ``FileSystemError`` that names the file the
user knows, never a temporary's name (``user_path``), and the CLI does the same for any
``OSError`` that reaches it. A failed write removes its temporary; one that a killed
process left is removed by the next writer of the same file (``remove_stale_temporaries``).
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import json
import os
import re
import shutil
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spanaug_core.errors import ENVIRONMENT_FAULTS, DataError, FileSystemError, SpanaugError

# A temporary's name: ``.NAME.partial-PID``, the name it will have and the id of the process writing it.
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.partial-(?P<pid>\d+)")
# How a Rust library's error (safetensors) quotes the system's: "No space left on device (os error 28)".
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")
# Faults that only a write meets: a message may say "cannot write" without knowing more.
_WRITE_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


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
    with path.open(encoding=_decoding(encoding), newline=newline) as handle:
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
        return path.read_text(encoding=_decoding(encoding))
    except UnicodeDecodeError as exc:
        raise _decoding_error(path, encoding, exc, 1) from None


def _decoding(encoding: str) -> str:
    """The codec that reads ``encoding``: UTF-8 as ``utf-8-sig``, which drops a leading byte-order mark."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def _decoding_error(path: Path, encoding: str, exc: UnicodeDecodeError, after: int) -> DataError:
    """The line and byte that cannot be decoded (text files decode in chunks, so look again line by line)."""
    return undecodable(path, encoding, after) or DataError(f"not valid {encoding} ({exc.reason}); save the file as {encoding}", path)


def undecodable(path: Path, encoding: str, after: int = 1, through: int | None = None) -> DataError | None:
    """A ``DataError`` naming the first line from ``after`` on (to ``through``), and its byte, that
    ``encoding`` cannot decode; None if none."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number < after:
                continue
            if through is not None and number > through:
                break
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as bad:
                found = raw[bad.start : bad.start + 1]
                return DataError(f"not valid {encoding}: byte {found!r} at column {bad.start + 1} (save the file as {encoding})", path, number)
    return None


def ensure_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) unless it exists; a file in its place is a clear error."""
    if folder.exists() and not folder.is_dir():
        raise SpanaugError(f"{folder} is a file; expected a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in ENVIRONMENT_FAULTS:
            raise FileSystemError(folder, exc.errno, "create the folder") from None
        raise SpanaugError(f"cannot create the folder {folder}: {exc.strerror}") from None


def output_target(path: Path | str, overwrite: bool = False) -> Path:
    """``path`` checked as an output: a real name, not an existing file unless ``overwrite``;
    its folder is created."""
    path = Path(path)
    if path.name in ("", ".", ".."):
        raise SpanaugError(f"cannot write to {str(path) or '.'}: name a file or a new folder")
    # An empty folder (made ahead for a folder output) holds nothing to lose.
    if path.exists() and not overwrite and not (path.is_dir() and not any(path.iterdir())):
        raise SpanaugError(f"{path} exists; pass --overwrite to replace it, or choose another output")
    ensure_folder(path.parent)
    return path


def user_path(path: Path | str) -> Path:
    """``path`` as the user knows it: each temporary's name read as the name it will have
    (``out/.x.jsonl.partial-123/a`` is ``out/x.jsonl/a``)."""
    return Path(*(_became(part) for part in Path(path).parts))


def _became(name: str) -> str:
    found = _TEMPORARY.fullmatch(name)
    return found["name"] if found else name


def user_error(exc: OSError, path: Path | None = None) -> FileSystemError | None:
    """The ``FileSystemError`` that ``exc`` is when the machine refused (``ENVIRONMENT_FAULTS``), else None.

    It names the file ``exc`` names, as the user knows it (``user_path``). A write to an
    open file (a full disk met by a flush) names none: then ``path``, the file being
    written, is named, and so it is for a hidden file kept beside it (``.NAME.partial``,
    ``.NAME.progress.json``). The message says "cannot write" when the fault is one only
    writes meet or the file is ``path`` or inside it; else just the path and the cause (an
    input that vanished while an output was written).
    """
    if exc.errno not in ENVIRONMENT_FAULTS:
        return None
    if not isinstance(exc.filename, (str, bytes, os.PathLike)):
        return FileSystemError(path if path is not None else "the output", exc.errno)
    named = user_path(os.fsdecode(exc.filename))
    if path is not None and named.parent == path.parent and named.name.startswith(f".{path.name}."):
        named = path
    inside = path is not None and (named == path or path in named.parents)
    return FileSystemError(named, exc.errno, "write" if inside or exc.errno in _WRITE_FAULTS else None)


@contextmanager
def writing(path: Path | str) -> Iterator[Path]:
    """Inside, an ``OSError`` the machine caused becomes the ``FileSystemError`` of ``user_error``,
    naming ``path`` where the error names no file; other errors pass unchanged.

    Libraries that write files hide the ``OSError`` in their own errors: torch raises a
    ``RuntimeError`` while handling it, safetensors (Rust) writes "(os error 28)" into its
    message. Inside a block that writes ``path``, those are read as the fault they hide.
    """
    path = Path(path)
    try:
        yield path
    except SpanaugError:
        raise
    except Exception as exc:
        hidden = _os_error(exc)
        found = user_error(hidden, path) if hidden is not None else None
        if found is None:
            raise
        raise found from exc


def _os_error(exc: BaseException) -> OSError | None:
    """The ``OSError`` that ``exc`` is, was raised from or while handling, or names as "(os error N)"."""
    for seen in (exc, exc.__cause__, exc.__context__):
        if isinstance(seen, OSError):
            return seen
    code = _RUST_OS_ERROR.search(str(exc))
    return OSError(int(code[1]), os.strerror(int(code[1]))) if code else None


def replace_text(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: readers (and a process killed meanwhile) see the old
    file or the new one, never half of one. A write that fails leaves the old file and no temporary."""
    path = Path(path)
    replace_files(path.parent, {path.name: text})


def replace_files(folder: Path | str, contents: Mapping[str, str | bytes]) -> None:
    """Write each of ``contents`` (text as UTF-8) to its name in ``folder``, which must exist:
    every file is written aside first and all are renamed into place after, so a write that
    fails changes none of them and leaves no temporary. A fault of the machine names the file."""
    aside = {Path(folder) / name: _temporary_of(Path(folder) / name) for name in contents}
    try:
        for (path, tmp), data in zip(aside.items(), contents.values(), strict=True):
            with writing(path), tmp.open("wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        for path, tmp in aside.items():
            with writing(path):
                os.replace(tmp, path)
    except BaseException:
        for tmp in aside.values():
            _remove_quietly(tmp)
        raise


def replace_json(path: Path | str, obj: Any, indent: int = 1) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (``replace_text``)."""
    replace_text(path, json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")


@contextmanager
def atomic_output(path: Path | str, overwrite: bool = False) -> Iterator[Path]:
    """A temporary path to write instead of ``path``; renamed to ``path`` when the block ends without error.

    The temporary lives in the target's folder (created if needed), so the rename is atomic
    on one file system. Works for a file or a folder written at the given path. An error
    removes the temporary, and the hidden files a writer derived from its name meanwhile
    (``.x.ann.txt`` of a writer that puts ``.txt`` beside the ``.ann`` it was given); a
    fault of the machine inside becomes a ``FileSystemError`` naming ``path`` (``writing``).
    """
    path = output_target(path, overwrite)
    remove_stale_temporaries(path.parent, {path.name})
    partial = _temporary_of(path)
    _remove(partial)
    before = _derived_from(partial, ())
    try:
        with writing(path):
            yield partial
            if not partial.exists():
                return  # the writer wrote nothing (e.g. no example): nothing to put in place
            if path.is_dir() and not path.is_symlink():
                if not partial.is_dir():
                    raise SpanaugError(f"{path} is a folder; --overwrite replaces a file with a file, or a folder the writer made whole")
                shutil.rmtree(path)
            os.replace(partial, path)
    except BaseException:
        for entry in (partial, *_derived_from(partial, before)):
            _remove_quietly(entry)
        raise


def _derived_from(partial: Path, before: Collection[Path]) -> list[Path]:
    """The hidden entries beside ``partial`` not in ``before`` whose names start with the target's
    up to its first dot (``.x`` for the temporary ``.x.ann.partial-7``), other temporaries aside."""
    prefix = "." + partial.name[1:].split(".", 1)[0]
    try:
        entries = list(partial.parent.iterdir())
    except OSError:
        return []  # a folder that cannot be listed: nothing is known to have been derived
    return [e for e in entries if e.name.startswith(prefix) and e not in before and not _TEMPORARY.fullmatch(e.name)]


def remove_stale_temporaries(folder: Path, names: Collection[str] | None = None, locked: Collection[str] = ()) -> None:
    """Remove the temporaries in ``folder`` (of the files ``names``, or of any) whose writers no
    longer run: a killed process leaves its temporary behind.

    A temporary names its writer's process id; one of a live process is kept, as it is
    being written. A temporary of a file in ``locked`` is removed whatever its id says: the
    caller holds the lock that every writer of that file holds (a run folder's lock).
    """
    try:
        entries = list(folder.iterdir())
    except OSError:
        return  # a folder that cannot be listed has nothing this can clean
    for entry in entries:
        found = _TEMPORARY.fullmatch(entry.name)
        if found is None or (names is not None and found["name"] not in names):
            continue
        if found["name"] in locked or not _running(int(found["pid"])):
            _remove_quietly(entry)


def _temporary_of(path: Path) -> Path:
    """This process's temporary for ``path``, beside it (a rename within a folder is atomic)."""
    return path.parent / f".{path.name}.partial-{os.getpid()}"


def _running(pid: int) -> bool:
    """Whether a process with this id runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    except (OverflowError, ValueError):
        return False  # no process has such an id
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _remove_quietly(path: Path) -> None:
    """``_remove`` where an error is already on its way: a temporary that cannot be removed must not hide it."""
    with contextlib.suppress(OSError):
        _remove(path)
