"""What a run yields, and the counts that come with it.

An engine's ``outcomes`` stream holds accepted ``Augmented`` records, ``Rejection``s (a
filter's verdict, or why a span stopped) and ``Checkpoint``s; the run store writes the
first two and commits at the third. ``InOrder`` is how every engine keeps that stream in
input order: work finishes in any order (examples in the local pipeline, chunks of them
on Ray workers), and each finished unit is yielded once every earlier one has been, then
a checkpoint counting it. ``RunStats`` are the counters the manifest keeps, ``IDLE`` what
an input yields when it has no example yet.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, Field, field_serializer

from spanaug_core.types import Augmented, Constraints


@dataclass(frozen=True)
class Rejection:
    """A record a filter dropped (``record`` set) or a job that stopped (``record`` None)."""

    source_id: str
    target: int | None
    iteration: int
    reason: str
    constraints: Constraints
    record: Augmented | None = None

    def to_json(self) -> dict[str, Any]:
        """The line ``rejected.jsonl`` holds (a dropped record, or a stop with its constraints)."""
        out: dict[str, Any] = {
            "source_id": self.source_id,
            "target": self.target,
            "iteration": self.iteration,
            "reason": self.reason,
        }
        if self.record is not None:
            out["record"] = self.record.model_dump(mode="json")
        else:
            out["constraints"] = self.constraints.model_dump(mode="json")
        return out

    def to_state(self) -> dict[str, Any]:
        """Every field, for a checkpoint (``from_state`` reads it back)."""
        return {**self.to_json(), "constraints": self.constraints.model_dump(mode="json")}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Rejection:
        """Read ``to_state``'s JSON back, or a ``rejected.jsonl`` line (``to_json``: a dropped
        record's constraints are the record's)."""
        record = Augmented.model_validate(data["record"]) if data.get("record") is not None else None
        if "constraints" not in data and record is not None:
            constraints = record.constraints
        else:
            constraints = Constraints.model_validate(data["constraints"])
        return cls(
            source_id=data["source_id"],
            target=data["target"],
            iteration=data["iteration"],
            reason=data["reason"],
            constraints=constraints,
            record=record,
        )


@dataclass(frozen=True)
class Checkpoint:
    """A consistent point of the stream: what was yielded before it plus the engine's ``in_flight()``.

    ``examples``: input examples finished since the previous checkpoint (all their
    outcomes yielded before this); ``last_id``: the last of them (None when none).
    ``pending``: examples read but not yet yielded (their state is ``in_flight()``);
    ``last_read_id``: the last example read (None when none is pending).
    """

    examples: int
    last_id: str | None
    pending: int = 0
    last_read_id: str | None = None


Outcome = Augmented | Rejection | Checkpoint


class _Idle:
    """The type of ``IDLE``."""

    def __repr__(self) -> str:
        return "IDLE"


IDLE = _Idle()
"""What an input fed while the pipeline runs (a Ray worker's) yields when it has no example
now but may have later: the pipeline goes on with what it has and asks again."""


def outcome_state(outcome: Augmented | Rejection) -> dict[str, Any]:
    """A record or rejection as checkpoint JSON (``outcome_from_state`` reads it back)."""
    if isinstance(outcome, Augmented):
        return {"record": outcome.model_dump(mode="json")}
    return {"rejection": outcome.to_state()}


def outcome_from_state(data: dict[str, Any]) -> Augmented | Rejection:
    if "record" in data:
        return Augmented.model_validate(data["record"])
    return Rejection.from_state(data["rejection"])


class RunStats(BaseModel):
    """Counters and timings of a run, cumulative; ``as_dict`` is what the manifest keeps."""

    examples: int = 0
    jobs: int = 0
    skipped_examples: int = 0
    skipped_spans: int = 0
    accepted: int = 0
    rejected: int = 0
    filtered_choices: int = 0
    more_records: int = 0  # records kept beyond a round's first (``per_round``), counted in ``accepted`` too
    stopped: Counter[str] = Field(default_factory=Counter)
    decode_calls: int = 0
    reused_nbest: int = 0
    candidates: int = 0
    decode_s: float = 0.0
    align_s: float = 0.0
    score_s: float = 0.0

    @field_serializer("decode_s", "align_s", "score_s")
    def _milliseconds(self, seconds: float) -> float:
        return round(seconds, 3)

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def restore(self, saved: dict[str, Any]) -> None:
        """Continue counting from a manifest's counts (``--resume``); a count it lacks starts at 0."""
        other = RunStats.model_validate(saved)
        for name in type(self).model_fields:
            setattr(self, name, getattr(other, name))

    def add(self, counts: dict[str, Any]) -> None:
        """Add another pipeline's counts (``as_dict``), e.g. a worker's for one chunk of examples."""
        other = RunStats.model_validate(counts)
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class Unit(Protocol):
    """Consecutive input examples that finish together: one example, or a chunk of them."""

    @property
    def ids(self) -> list[str]:
        """The ids of its examples, in input order."""
        ...

    @property
    def outcomes(self) -> Sequence[Augmented | Rejection] | None: ...


U = TypeVar("U", bound=Unit)


class InOrder(Generic[U]):
    """Units in progress by sequence number (input order), yielded in that order as they finish.

    ``held`` is every unit read and not yet yielded: an engine's ``in_flight()`` is their
    state. ``emit`` yields, for each finished unit at the head of the order, its outcomes
    and then a ``Checkpoint`` counting its examples; one counting none when none is ready.
    """

    def __init__(self, held: dict[int, U]) -> None:
        self.held = held
        self.next_seq = max(held, default=-1) + 1
        self._head = min(held, default=self.next_seq)

    def add(self, unit: U) -> int:
        """Hold a unit just read; its sequence number."""
        seq = self.next_seq
        self.held[seq] = unit
        self.next_seq += 1
        return seq

    def emit(self, finished: Callable[[U], bool], released: Callable[[U], None], report: Callable[[], None]) -> Iterator[Outcome]:
        """Yield the finished head of the order; ``released(unit)`` counts each one before its
        checkpoint, ``report()`` tells progress once when any was yielded."""
        count = 0
        while self._head in self.held and finished(self.held[self._head]):
            unit = self.held.pop(self._head)
            self._head += 1
            count += 1
            yield from unit.outcomes or ()
            released(unit)
            yield self._checkpoint(unit.ids)
        if count:
            report()
        else:
            yield self._checkpoint([])

    def _checkpoint(self, ids: list[str]) -> Checkpoint:
        pending = sum(len(unit.ids) for unit in self.held.values())
        last_read = self.held[max(self.held)].ids[-1] if self.held else None
        return Checkpoint(len(ids), ids[-1] if ids else None, pending, last_read)
