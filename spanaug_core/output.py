"""A run's output folder: records written as they come, committed by time, resumable.

``augmented.jsonl`` and ``rejected.jsonl`` get one whole line per record as the pipeline
yields it (in input order). At a pipeline checkpoint, once ``commit_every_s`` has passed
since the last commit, the files are flushed and ``manifest.json`` is replaced
atomically with the counts, the byte length of each file and the state of the examples
still in progress (``progress.in_flight``): the *commit*. ``--resume`` truncates the files
back to the last commit, skips the examples it had read and restores the ones in
progress, so no record is lost or written twice and the output equals an uninterrupted
run's. A kill loses the work since the last commit, plus the decoding then in flight. A
Ctrl-C (or SIGTERM, SIGHUP from the CLI) leaves whole lines and a manifest that says
``interrupted``.

One process at a time writes a folder: opening it takes an exclusive lock on
``.spanaug.lock`` (``flock``), which names the process holding it. The operating system
drops the lock when that process ends however it ends, so a killed run's folder is never
left locked; the temporaries a killed process left in it are removed when it is opened
again.

A completed run resumed with more ``iterations`` (and nothing else changed) is *taken
further*: the manifest takes the new config and notes the step in ``iterations_added``,
and the progress starts a new pass over the examples the run had done
(``progress.continuing``: how many, after how many iterations, and where in each file
every earlier pass ended: a pass writes in input order, so the files are one stretch in
input order per pass). ``EarlierOutcomes`` reads back, example by example, what those iterations
wrote, for the pipeline to rebuild each example's jobs from; the new rounds' lines are
appended after them. An interrupted pass resumes like any run.

When the machine refuses a write (a full disk, a read-only folder: ``FileSystemError``),
the manifest still holds the last commit: a failed write never touches it. ``finish``
then records the failure if the manifest can still be written, and leaves the last
commit's manifest if not; either way ``--resume`` continues from that commit.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import json
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from spanaug_core import __version__
from spanaug_core.config import BEFORE_ADDED, REMOVED, RunConfig
from spanaug_core.errors import DataError, FileSystemError, RunStateError
from spanaug_core.files import ensure_folder, remove_stale_temporaries, replace_json, writing
from spanaug_core.kinds import SECTIONS
from spanaug_core.outcomes import Rejection
from spanaug_core.types import Augmented

AUGMENTED = "augmented.jsonl"
REJECTED = "rejected.jsonl"
MANIFEST = "manifest.json"
LOCK = ".spanaug.lock"
_VERSIONED = ("spanaug", "pydantic", "pluggy", "torch", "transformers", "lemminflect")


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class RunStore:
    """The files of one run in ``out_dir``; see the module docstring for the commit protocol."""

    def __init__(self, out_dir: Path, config: RunConfig, options: dict[str, Any] | None = None) -> None:
        """``options``: every component option with its default filled in, per section (``run.resolved_component_options``)."""
        self.dir = Path(out_dir)
        self.config = config
        self.options = options
        self.manifest: dict[str, Any] = {}
        self._files: dict[str, IO[str]] = {}
        self._t0 = time.monotonic()
        self._last_commit = self._t0
        self._elapsed_before = 0.0
        self._lock: IO[str] | None = None

    # -- opening --------------------------------------------------------------------
    def open(self, resume: bool) -> dict[str, Any]:
        """Lock and prepare the folder; returns the committed progress to resume from (empty when fresh)."""
        ensure_folder(self.dir)
        self._take_lock()
        try:
            # With the lock held no other run writes here: a manifest's temporary is a killed run's.
            remove_stale_temporaries(self.dir, locked={MANIFEST})
            for left in self.dir.glob(f"{MANIFEST}.*.tmp"):  # the name earlier versions gave it
                left.unlink(missing_ok=True)
            return self._prepare(resume)
        except BaseException:
            self._close_files(strict=False)
            self.release()
            raise

    def _prepare(self, resume: bool) -> dict[str, Any]:
        manifest_path = self.dir / MANIFEST
        found, problem = _load_manifest(manifest_path) if manifest_path.exists() else (None, "")
        previous = manifest_path.exists() and not (isinstance(found, dict) and _failed_before_any_work(found))
        if previous and not resume:
            raise RunStateError(
                f"{self.dir} already holds a run ({MANIFEST}); pass --resume to continue it, "
                "or choose another --output"
            )
        if not manifest_path.exists() and (self.dir / AUGMENTED).exists():
            raise RunStateError(f"{self.dir} has {AUGMENTED} but no {MANIFEST}: it is not a spanaug run folder")
        committed: dict[str, Any] = {}
        if previous:
            if not isinstance(found, dict):
                raise RunStateError(f"{manifest_path} is not valid JSON ({problem or 'not an object'}); cannot resume")
            self.manifest = found
            self.manifest.pop("error", None)  # the session that failed is over; status says how this one goes
            grown = self._check_same_config()
            committed = self.manifest.get("progress", {})
            if grown is not None:
                committed = self._take_further(grown, committed)
            self._elapsed_before = self.manifest.get("timings", {}).get("elapsed_s", 0.0)
        else:
            self.manifest = {
                "spanaug_version": __version__,
                "created": _now(),
                "config": self.config.model_dump(mode="json"),
                "fingerprint": self.config.fingerprint(),
                **({"options": self.options} if self.options is not None else {}),
            }
        for key, name in (("augmented_bytes", AUGMENTED), ("rejected_bytes", REJECTED)):
            if name == REJECTED and not self.config.write_rejected:
                continue
            with writing(self.dir / name) as path:
                fh = path.open("a+", encoding="utf-8")
                self._files[name] = fh
                # Records after the last commit belong to examples that will be redone (or restored).
                fh.truncate(committed.get(key, 0))
                fh.seek(0, os.SEEK_END)
        self._write_manifest(
            committed or {"examples_done": 0, "last_example_id": None}, None,
            status="running", versions=_versions(), resumed=bool(committed),
        )
        return committed

    def _take_lock(self) -> None:
        """Hold the folder's lock until ``finish``; refuse when another live process holds it."""
        try:
            handle = (self.dir / LOCK).open("a+", encoding="utf-8")
        except OSError as exc:
            raise RunStateError(f"cannot write in {self.dir}: {exc.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunStateError(
                f"{self.dir} is being written by {holder}; wait for it to end (or stop it), or choose another --output"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()} on {platform.node()} since {_now()}\n")
        handle.flush()
        self._lock = handle

    def _check_same_config(self) -> int | None:
        """Refuse a resume that would go on under other settings or component options than the run began with.

        More ``iterations`` and nothing else is the one change allowed: the iterations the run
        had are returned, for ``_take_further`` (None when nothing changed).

        Since the manifest keeps every component option with its default filled in, the
        components are compared by those: a default that a newer spanaug changed (the
        decoder's prompt, a filter's threshold) is caught, and writing out a value the run
        had by default is no change. A run from before that compares the options as written.
        """
        before = {k: v for k, v in self.manifest.get("fingerprint", {}).items() if k not in REMOVED}
        now = self.config.fingerprint()
        # A setting added to spanaug after the run started counts as what the run did without it.
        defaults = {**type(self.config)().fingerprint(), **BEFORE_ADDED}
        options_then = self.manifest.get("options")
        by_options = options_then is not None and self.options is not None
        if by_options:
            before, now, defaults = _names(before), _names(now), _names(defaults)
        changed = {k: (before.get(k, defaults.get(k)), now.get(k)) for k in sorted(set(before) | set(now))}
        if by_options:
            then, current = _flat(options_then), _flat(self.options)
            # An option either side lacks (added since, or a component renamed) is not compared.
            changed.update({k: (then[k], current[k]) for k in sorted(then.keys() & current.keys())})
        changed = {k: pair for k, pair in changed.items() if pair[0] != pair[1]}
        then, now = changed.get("iterations", (None, None))
        if set(changed) == {"iterations"} and isinstance(then, int) and isinstance(now, int) and now > then:
            return then
        if changed:
            # The values too: a default that changed between versions (keep became "align")
            # is otherwise a mystery to a user who never set it.
            what = "; ".join(f"{k}: the run had {a!r}, now {b!r}" for k, (a, b) in changed.items())
            raise RunStateError(
                f"cannot resume {self.dir}: the run config differs in {', '.join(changed)} ({what}); "
                "resume with the run's values (e.g. --set KEY=VALUE; a filter's option in --set 'filters=[...]'), "
                f"or start a new --output. The run began with spanaug {self.manifest.get('spanaug_version', '?')}; "
                f"this is {__version__}"
            )
        return None

    def _take_further(self, iterations: int, progress: dict[str, Any]) -> dict[str, Any]:
        """Begin a pass that takes the completed run's examples from ``iterations`` to the config's; its progress."""
        wanted = self.config.iterations
        if self.manifest.get("status") != "completed" or progress.get("in_flight"):
            raise RunStateError(
                f"cannot take {self.dir} to {wanted} iterations: the run has not completed. Resume it with "
                f"--iterations {iterations} first, then resume it with --iterations {wanted}"
            )
        if not self.config.write_rejected:
            raise RunStateError(
                f"cannot take {self.dir} to {wanted} iterations: it was made with write_rejected = false, so which "
                "spans stopped, and what the filters dropped, is not known; start a new --output with the iterations wanted"
            )
        self.manifest["config"] = self.config.model_dump(mode="json")
        self.manifest["fingerprint"] = self.config.fingerprint()
        step = {"from": iterations, "to": wanted, "started": _now(), "spanaug_version": __version__}
        self.manifest["iterations_added"] = [*self.manifest.get("iterations_added", []), step]
        sizes = {key: progress.get(key, 0) for key in ("augmented_bytes", "rejected_bytes")}
        before = progress.get("continuing", {})
        ends = {key: [*before.get(key, []), size] for key, size in sizes.items()}
        done = {"examples": progress.get("examples_done", 0), "last_id": progress.get("last_example_id")}
        continuing = {"iterations": iterations, **done, **ends}
        # The pass counts the examples it finishes; every other count goes on from the run's.
        counts = {**progress.get("counts", {}), "examples": 0}
        return {"examples_done": 0, "last_example_id": None, **sizes, "counts": counts, "continuing": continuing}

    # -- writing --------------------------------------------------------------------
    def write(self, outcome: Augmented | Rejection) -> None:
        """Append one record (accepted) or rejection as a whole line."""
        if isinstance(outcome, Augmented):
            with writing(self.dir / AUGMENTED):
                self._files[AUGMENTED].write(outcome.model_dump_json() + "\n")
        elif REJECTED in self._files:
            with writing(self.dir / REJECTED):
                self._files[REJECTED].write(json.dumps(outcome.to_json(), ensure_ascii=False) + "\n")

    def due(self) -> bool:
        """Whether ``commit_every_s`` has passed since the last commit (or the opening)."""
        return time.monotonic() - self._last_commit >= self.config.commit_every_s

    def commit(
        self,
        examples_done: int,
        last_id: str | None,
        counts: dict[str, Any],
        in_flight: list[dict[str, Any]],
        pending: int = 0,
        last_read_id: str | None = None,
    ) -> None:
        """Make everything written so far durable and resumable.

        ``in_flight``: the state of the ``pending`` examples read but not finished
        (``Execution.in_flight()``, ``last_read_id`` the last of them); the input examples
        read are the ``examples_done`` finished ones and these.
        """
        sizes = {}
        for name, fh in self._files.items():
            with writing(self.dir / name):
                fh.flush()
                os.fsync(fh.fileno())
            sizes["augmented_bytes" if name == AUGMENTED else "rejected_bytes"] = fh.tell()
        # Counts are committed with the progress: a resumed run continues from these, not
        # from the counts of work after the commit, which will be redone.
        progress = {
            "examples_done": examples_done,
            "last_example_id": last_id,
            "examples_read": examples_done + pending,
            "last_read_id": last_read_id if pending else last_id,
            **sizes,
            "counts": counts,
            "in_flight": in_flight,
        }
        if "continuing" in self.manifest.get("progress", {}):
            progress["continuing"] = self.manifest["progress"]["continuing"]
        self._write_manifest(progress, counts)
        self._last_commit = time.monotonic()

    def describe_engine(self, engine: dict[str, Any]) -> None:
        """Record what this session of the run ran on (engine, workers, devices) in the manifest."""
        self.manifest["engine"] = engine

    @property
    def committed_examples(self) -> int:
        """How many examples the manifest on disk says are done: what ``--resume`` would skip."""
        return int(self.manifest.get("progress", {}).get("examples_done", 0))

    def describe_reading(self, warnings: dict[str, int]) -> None:
        """Record what the dataset reader repaired or skipped in the input it read (``run.reader_warnings``)."""
        self.manifest["reader_warnings"] = warnings

    def finish(self, status: str, counts: dict[str, Any] | None, error: str | None = None) -> None:
        """Record the final status (completed, interrupted, failed) and close the files.

        A run that did not complete may be ending because the disk is full: then a write
        refused here leaves the manifest of the last commit, and the error that ended the
        run is the one the user hears of.
        """
        completed = status == "completed"
        try:
            for name, fh in self._files.items():
                with _faults_fatal(completed), writing(self.dir / name):
                    fh.flush()
            ending = {"status": status, **({"error": error} if error else {})}
            with _faults_fatal(completed):
                self._write_manifest(self.manifest.get("progress", {}), counts, **ending)
        finally:
            self._close_files(strict=completed)
            self.release()

    def release(self) -> None:
        """Let another process open the folder (``finish`` does this; so does the process ending)."""
        if self._lock is not None:
            self._lock.close()  # closing the descriptor drops the flock
            self._lock = None

    def _close_files(self, strict: bool) -> None:
        """Close the record files; unless ``strict``, a close that cannot flush (a full disk) is let be."""
        files, self._files = self._files, {}
        for name, fh in files.items():
            with _faults_fatal(strict), writing(self.dir / name):
                fh.close()

    def _write_manifest(self, progress: dict[str, Any], counts: dict[str, Any] | None, **fields: Any) -> None:
        """Replace the manifest with this progress (and ``fields``); kept in memory only once it is on disk."""
        manifest = {**self.manifest, **fields, "progress": progress}
        if counts is not None:
            manifest["counts"] = counts
        manifest["timings"] = {
            **self.manifest.get("timings", {}),
            "updated": _now(),
            "elapsed_s": round(self._elapsed_before + time.monotonic() - self._t0, 3),
        }
        replace_json(self.dir / MANIFEST, manifest, indent=2)
        self.manifest = manifest


@contextmanager
def _faults_fatal(fatal: bool) -> Iterator[None]:
    """Inside, a ``FileSystemError`` is raised if ``fatal``, else let be (the run is ending on an error already)."""
    try:
        yield
    except FileSystemError:
        if fatal:
            raise


def _names(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """A fingerprint with its components reduced to their names (their options are compared in full apart)."""
    named: dict[str, Any] = {}
    for _, section in SECTIONS:
        value = fingerprint.get(section.key)
        if section.many and isinstance(value, list):
            named[section.key] = [f.get("name") if isinstance(f, dict) else f for f in value]
        elif isinstance(value, dict):
            named[section.key] = value.get("name")
    return {**fingerprint, **named}


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    """``{"decoder": {"beam_size": 4}, "filters": [{...}]}`` as ``{"decoder.beam_size": 4, "filters.0.min_score": ...}``."""
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, list) and any(section.many and prefix == f"{section.key}." for _, section in SECTIONS):
        items = ((str(i), v) for i, v in enumerate(tree))
    else:
        return {prefix.rstrip("."): tree}
    return {k: v for key, value in items for k, v in _flat(value, f"{prefix}{key}.").items()}


def _load_manifest(path: Path) -> tuple[Any, str]:
    """The manifest's JSON, or None and why it cannot be read."""
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except (OSError, json.JSONDecodeError) as exc:
        return None, str(exc)


def _failed_before_any_work(manifest: dict[str, Any]) -> bool:
    """Whether the folder's run failed before it committed anything: a new run may reuse it.

    Such a run (a wrong --input, a missing model) leaves no record to keep, so neither a
    fresh run nor --resume with corrected settings should be refused.
    """
    progress = manifest.get("progress", {})
    worked = ("examples_done", "examples_read", "in_flight", "augmented_bytes", "rejected_bytes")
    return manifest.get("status") == "failed" and not any(progress.get(key) for key in worked)


class EarlierOutcomes:
    """What a run's earlier iterations wrote, example by example (``progress.continuing``).

    Each earlier pass wrote its stretch of each file in input order, so one cursor a
    stretch, moved in step with the input, finds every example's lines; a line left over
    once the run's examples are read belongs to none of them (the input changed).
    """

    def __init__(self, folder: Path, continuing: dict[str, Any]) -> None:
        def stretches(name: str, key: str, parse: Callable[[dict[str, Any]], Augmented | Rejection]) -> list[_Lines]:
            ends = continuing[key]
            return [_Lines(folder / name, start, end, parse) for start, end in zip([0, *ends], ends) if end > start]

        self._files = [
            *stretches(AUGMENTED, "augmented_bytes", Augmented.model_validate),
            *stretches(REJECTED, "rejected_bytes", Rejection.from_state),
        ]

    def of(self, example_id: str) -> tuple[Augmented | Rejection, ...]:
        """The records and rejections of the next example, which must be ``example_id``."""
        return tuple(outcome for lines in self._files for outcome in lines.take(example_id))

    def check_all_read(self) -> None:
        for lines in self._files:
            lines.check_all_read()


class _Lines:
    """Bytes ``start`` to ``end`` of a run's JSONL file, read a line at a time by source id."""

    def __init__(self, path: Path, start: int, end: int, parse: Callable[[dict[str, Any]], Augmented | Rejection]) -> None:
        self.path = path
        self._left = end - start
        self._parse = parse
        self._next: Augmented | Rejection | None = None
        self._handle: IO[bytes] | None = path.open("rb")
        self._handle.seek(start)
        self._advance()

    def _line(self) -> int:
        """The number of the line last read (counted only for a message: it reads the file up to there)."""
        assert self._handle is not None
        with self.path.open("rb") as fh:
            return fh.read(self._handle.tell()).count(b"\n")

    def _advance(self) -> None:
        self._next = None
        if self._handle is None or self._left <= 0:
            return
        raw = self._handle.readline(self._left)
        self._left -= len(raw)
        try:
            self._next = self._parse(json.loads(raw))
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"expected a record or rejection of the run, as spanaug writes them: {exc}", path=self.path, line=self._line()) from None

    def take(self, example_id: str) -> Iterator[Augmented | Rejection]:
        while self._next is not None and self._next.source_id == example_id:
            yield self._next
            self._advance()

    def check_all_read(self) -> None:
        if self._next is not None:
            raise RunStateError(
                f"cannot add iterations: {self.path}, line {self._line()}, is of example {self._next.source_id!r}, which "
                "the run's input does not have there (did the input change?)"
            )
        if self._handle is not None:
            self._handle.close()
            self._handle = None
