"""A disk that fails on cue: the ``OSError`` a full disk, a read-only folder or a missing
permission raises, at a chosen write, without root and without filling a real disk.

``Disk`` patches the file operations spanaug and its plugins use (``open`` and
``Path.open`` for writing, the writes to such a file, ``os.fsync``, ``os.replace``); the
``disk`` fixture of ``conftest.py`` hands one to a test.
"""

from __future__ import annotations

import builtins
import fnmatch
import os
from pathlib import Path
from typing import Any

import pytest

REAL_PATH_OPEN, REAL_OPEN, REAL_REPLACE, REAL_FSYNC = Path.open, builtins.open, os.replace, os.fsync


class Disk:
    """The machine's answers to spanaug's writes, with faults planted in them.

    ``fail(op, pattern, err, at=N, times=K)``: the N-th ``op`` on a file whose name matches
    ``pattern`` and the K-1 after it raise ``err`` (``times=None``: every one from then on,
    a disk that stays full). ``op`` is ``open`` (a file opened for writing; the error names
    it, as the system's does), ``write`` (half the text reaches the file, then the error,
    naming no file: a disk that fills during a write), ``fsync`` or ``replace`` (the
    rename; the error names both files). ``on_fault`` is called before each fault fires.
    Writes made by compiled code (torch's, safetensors') pass unseen.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rules: list[dict[str, Any]] = []
        self.on_fault = lambda: None
        disk = self

        def opener(real: Any) -> Any:
            def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
                if isinstance(file, int) or not set(mode) & set("wax+"):
                    return real(file, mode, *args, **kwargs)
                name = Path(file).name
                disk.check("open", name, filename=os.fspath(file))
                return FaultyFile(real(file, mode, *args, **kwargs), name, disk)

            return open_

        def replace(src: Any, dst: Any) -> None:
            disk.check("replace", Path(dst).name, filename=os.fspath(src), filename2=os.fspath(dst))
            REAL_REPLACE(src, dst)

        def fsync(fd: int) -> None:
            disk.check("fsync", Path(os.readlink(f"/proc/self/fd/{fd}")).name)
            REAL_FSYNC(fd)

        monkeypatch.setattr(Path, "open", opener(REAL_PATH_OPEN))
        monkeypatch.setattr(builtins, "open", opener(REAL_OPEN))
        monkeypatch.setattr(os, "replace", replace)
        monkeypatch.setattr(os, "fsync", fsync)

    def fail(self, op: str, pattern: str, err: int, at: int = 1, times: int | None = 1) -> None:
        self.rules.append({"op": op, "pattern": pattern, "err": err, "at": at, "times": times, "seen": 0})

    def heal(self) -> None:
        """Space freed, the folder writable again: no more faults."""
        self.rules.clear()

    def check(self, op: str, name: str, **names: str) -> None:
        for rule in self.rules:
            if rule["op"] != op or not fnmatch.fnmatch(name, rule["pattern"]):
                continue
            rule["seen"] += 1
            if rule["seen"] >= rule["at"] and (rule["times"] is None or rule["seen"] < rule["at"] + rule["times"]):
                self.on_fault()
                raise OSError(rule["err"], os.strerror(rule["err"]), names.get("filename"), None, names.get("filename2"))


class FaultyFile:
    """A real file whose ``write`` may meet a planted fault after writing half its text."""

    def __init__(self, handle: Any, name: str, disk: Disk) -> None:
        self._handle, self._name, self._disk = handle, name, disk

    def write(self, text: str) -> int:
        try:
            self._disk.check("write", self._name)
        except OSError:
            self._handle.write(text[: len(text) // 2])
            self._handle.flush()
            raise
        return self._handle.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> FaultyFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()
