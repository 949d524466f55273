"""A run folder read back for the report: manifest, accepted and rejected records, and their sources.

``augmented.jsonl`` and ``rejected.jsonl`` are validated line by line (a malformed line is
a ``DataError`` naming the file and line). Augmented records do not carry their source
sentence, only its id, so the sources are read again: from ``--source FILE`` (spanaug
JSONL) or else with the dataset and input the run's manifest records, keeping only the
examples the records name. Sources that cannot be had are not an error: the report says
why and shows what it can without them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spanaug_core.errors import DataError, SpanaugError
from spanaug_core.output import AUGMENTED, MANIFEST, REJECTED
from spanaug_core.types import Augmented, Example
from spanaug_shared.records import Rejected, read_manifest, read_records, read_rejected


@dataclass(frozen=True)
class Run:
    """Everything the report shows of one run folder."""

    folder: Path
    manifest: dict[str, Any]
    records: list[Augmented]
    rejected: list[Rejected]
    sources: dict[str, Example]
    notes: list[str]

    # A manifest written before the first commit has null counts: read both as empty.
    @property
    def config(self) -> dict[str, Any]:
        return self.manifest.get("config") or {}

    @property
    def counts(self) -> dict[str, Any]:
        return self.manifest.get("counts") or {}

    @property
    def rewrite_roles(self) -> list[str]:
        return self.config.get("rewrite_roles", ["target"])

    @property
    def filtered(self) -> list[Augmented]:
        """The records a filter of the run dropped."""
        return [r.record for r in self.rejected if r.record is not None]


def _wanted(examples: Iterable[Example], wanted: set[str]) -> dict[str, Example]:
    found: dict[str, Example] = {}
    for example in examples:
        if example.id in wanted:
            found[example.id] = example
            # A dataset can be large; the run's sources are usually near its start.
            if len(found) == len(wanted):
                break
    return found


def read_sources(manifest: dict[str, Any], wanted: set[str], source: Path | None) -> tuple[dict[str, Example], str | None]:
    """The source examples named in ``wanted``, and a note saying what could not be had (None: all found)."""
    from spanaug_core.plugins import default_registry
    from spanaug_core.run import run_input

    if not wanted:
        return {}, None
    registry = default_registry()
    if source is not None:
        where = str(source)
        found = _wanted(registry.create("dataset", "jsonl").read(source), wanted)
    else:
        where = "the run's input"
        try:
            run = run_input(manifest.get("config") or {}, registry)
            if run is None:
                return {}, "source sentences not shown: the run has no manifest naming its dataset (pass --source FILE)"
            examples, described = run
            where = f"the run's input ({described})"
            found = _wanted(examples, wanted)
        except (SpanaugError, OSError) as exc:
            return {}, f"source sentences not shown: {where} cannot be read ({exc}); pass --source FILE"
    missing = len(wanted) - len(found)
    note = f"{missing} of {len(wanted)} source examples were not found in {where}" if missing else None
    return found, note


def load_run(folder: Path, source: Path | None = None) -> Run:
    """Read a run folder; ``source`` (spanaug JSONL) overrides where its source sentences come from."""
    augmented = folder / AUGMENTED
    if not augmented.is_file():
        raise DataError(f"expected a run folder with {AUGMENTED}", path=folder)
    notes = []
    manifest = read_manifest(folder)
    if not manifest:
        notes.append(f"no {MANIFEST}: the run's config and counts are unknown")
    elif manifest.get("status") != "completed":
        notes.append(f"the run's status is {manifest.get('status', 'unknown')!r}: it may still grow")
    records = read_records(augmented)
    rejected = read_rejected(folder / REJECTED) if (folder / REJECTED).is_file() else []
    wanted = {r.source_id for r in records} | {r.source_id for r in rejected if r.record is not None}
    counted = (manifest.get("counts") or {}).get("accepted")
    if counted is not None and counted != len(records):
        notes.append(f"the manifest counts {counted} accepted records, {AUGMENTED} holds {len(records)}")
    sources, note = read_sources(manifest, wanted, source)
    if note:
        notes.append(note)
    return Run(folder, manifest, records, rejected, sources, notes)
