"""Resumable JSONL output for ``make-align-data``: a long decoder run keeps its work when stopped.

The items are appended to ``.NAME.partial`` beside the output. After whole sentences (at
most every ``every_s`` seconds, and when the run is stopped) the file is flushed to disk
and ``.NAME.progress.json`` is replaced atomically with how many sentences are done, the
partial file's byte length and the item counts, plus a fingerprint of everything that
decides the items (input text, seed, decoder...). ``--resume`` checks the fingerprint,
truncates the partial file to the committed length and goes on from the next sentence, so
the finished file equals an uninterrupted run's. The output appears under its own name
only when the run is complete, as every other output of spanaug does. A write the machine
refuses (a full disk) names the output (``FileSystemError``) and keeps the last commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

from spanaug_core.errors import FileSystemError, SpanaugError
from spanaug_core.files import output_target, remove_stale_temporaries, replace_json, writing

from spanaug_aligners.pairs import SpanPair, pair_line


class Journal:
    """Appends items to a partial file and commits progress so an interrupted run can resume."""

    def __init__(self, output: Path, fingerprint: dict[str, Any], every_s: float = 2.0) -> None:
        self.output = output
        self.partial = output.parent / f".{output.name}.partial"
        self.state_file = output.parent / f".{output.name}.progress.json"
        self.fingerprint = fingerprint
        self.every_s = every_s
        self.items = 0
        self.bytes = 0
        self.kinds: Counter[str] = Counter()
        self._handle: IO[str] | None = None
        self._committed = (0, 0, 0, Counter())  # sentences, bytes, items, kinds after the last finished sentence
        self._durable = (0, 0)  # sentences and items of the progress file on disk
        self._last_commit = time.monotonic()

    def open(self, resume: bool, overwrite: bool) -> int:
        """Start (or, with ``resume``, continue) the run; returns the number of sentences already done.

        The partial file is locked (``flock``) for as long as this process writes it, so a
        second process on the same output is refused instead of writing into it too.
        """
        if self.output.is_dir():
            raise SpanaugError(f"{self.output} is a folder; name a file to write")
        output_target(self.output, overwrite)
        remove_stale_temporaries(self.output.parent, {self.state_file.name})  # a killed run's, mid-commit
        existed = self.partial.exists()
        with writing(self.output):
            handle = open(self.partial, "a", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise SpanaugError(
                f"{self.partial} is being written by another make-align-data process; wait for it to end (or stop it), "
                "or choose another --output"
            ) from None
        try:
            with writing(self.output):
                self._start(resume, overwrite, handle)
        except BaseException:
            handle.close()
            if not existed:
                self.partial.unlink(missing_ok=True)
            raise
        self._handle = handle
        return self._committed[0]

    def _start(self, resume: bool, overwrite: bool, handle: IO[str]) -> None:
        state = self._read_state()
        if resume:
            if state is None:
                raise SpanaugError(f"nothing to resume: {self.state_file} does not exist (run without --resume)")
            changed = _changed(state["fingerprint"], self.fingerprint)
            if changed:
                raise SpanaugError(
                    f"cannot resume {self.partial}: it was made with another {', '.join(changed)}; "
                    "run the same command again with --resume, or pass --overwrite to start over"
                )
            if self.partial.stat().st_size < state["bytes"]:
                raise SpanaugError(f"cannot resume: {self.partial} is shorter than {self.state_file} says; pass --overwrite to start over")
            self.items, self.bytes, self.kinds = state["items"], state["bytes"], Counter(state["kinds"])
            self._committed = (state["sentences"], self.bytes, self.items, Counter(self.kinds))
            self._durable = (state["sentences"], self.items)
        elif state is not None and not overwrite:
            raise SpanaugError(
                f"an interrupted run left {self.partial} ({state['sentences']} sentences done); "
                "pass --resume to go on, or --overwrite to start over"
            )
        else:
            self.state_file.unlink(missing_ok=True)
        handle.truncate(self.bytes)  # what an interrupted run wrote after its last finished sentence

    def write(self, pair: SpanPair) -> None:
        assert self._handle is not None, "Journal.open first"
        line = pair_line(pair)
        with writing(self.output):
            self._handle.write(line)
        self.bytes += len(line.encode("utf-8"))
        self.items += 1
        self.kinds[pair.kind or "?"] += 1

    def sentence_done(self, sentences: int) -> None:
        """All items of the first ``sentences`` sentences are written: commit now and then."""
        self._committed = (sentences, self.bytes, self.items, Counter(self.kinds))
        if time.monotonic() - self._last_commit >= self.every_s:
            self.commit()

    def commit(self) -> None:
        """Make the last finished sentence's work durable: flush, fsync, replace the progress file."""
        assert self._handle is not None
        sentences, length, items, kinds = self._committed
        with writing(self.output):
            self._handle.flush()
            os.fsync(self._handle.fileno())
            state = {"fingerprint": self.fingerprint, "sentences": sentences, "bytes": length, "items": items, "kinds": dict(kinds)}
            replace_json(self.state_file, state)
        self._durable = (sentences, items)
        self._last_commit = time.monotonic()

    def stopped(self) -> tuple[int, int]:
        """Commit what is finished after an interruption; returns (sentences, items) kept. A run
        stopped before it finished a sentence leaves nothing behind, so the same command starts
        afresh. Where the machine refuses the commit (the disk that stopped the run is still
        full), the last commit made is what is kept."""
        assert self._handle is not None
        if self._committed[0]:
            with contextlib.suppress(FileSystemError):
                self.commit()
        with contextlib.suppress(OSError):  # a close that cannot flush: what it held is past the commit
            self._handle.close()
        if not self._durable[0]:
            with contextlib.suppress(OSError):
                self.partial.unlink(missing_ok=True)
                self.state_file.unlink(missing_ok=True)
        return self._durable

    def finish(self) -> None:
        """Put the complete file in place under the output's name and drop the progress file."""
        assert self._handle is not None
        with writing(self.output):
            self._handle.flush()
            os.fsync(self._handle.fileno())
            os.replace(self.partial, self.output)  # before the close: a refused rename leaves stopped() a handle to commit
            self._handle.close()
            self.state_file.unlink(missing_ok=True)

    def _read_state(self) -> dict[str, Any] | None:
        if not self.state_file.is_file():
            return None
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
            if not isinstance(state, dict) or not {"fingerprint", "sentences", "bytes", "items", "kinds"} <= state.keys():
                raise ValueError("keys missing")
        except ValueError as exc:
            raise SpanaugError(f"{self.state_file} is not a make-align-data progress file ({exc}); pass --overwrite to start over") from exc
        return state


def _changed(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The fingerprint keys whose values differ, a table's entries named inside it
    (``decoder_config.avoid_hint``). A key added to the fingerprint or to one of its tables
    since the journal was written cannot be checked against it, so only the journal's keys
    are compared."""
    out: list[str] = []
    for key, old in before.items():
        new = now.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            out += [f"{key}.{sub}" for sub in sorted(old) if old[sub] != new.get(sub)]
        else:
            out.append(key)
    return sorted(out)
