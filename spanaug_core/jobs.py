"""The state of an example in progress, what one round of it found, and its checkpoint JSON.

The pipeline (``spanaug_core.pipeline``) turns each input example into an ``ExampleRun``:
one ``Job`` per span it rewrites (or one for the whole sentence), each carrying the
growing avoid set of its span. A round's n-best list for a job, with where the aligner
and the scoring filters put things in each candidate, is an ``Attempt``; the candidate a
round keeps is a ``Choice`` (``spanaug_core.choices`` picks it). ``to_state`` and
``from_state`` write and read back what a checkpoint keeps of a run in progress
(``Pipeline.in_flight``): enough to go on exactly where it was. A ``Continued`` example is
one a finished run takes on for more iterations: the pipeline rebuilds its jobs from what
its earlier iterations wrote (``Pipeline`` replays them) rather than from a checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spanaug_core.outcomes import Rejection, outcome_from_state, outcome_state
from spanaug_core.text import detokenize
from spanaug_core.types import Alignment, Augmented, Candidate, Constraints, DecodeRequest, Example, Span


@dataclass
class Job:
    """One span being rewritten (or, with ``target`` None, one sentence paraphrased whole).

    ``kept``: the spans a candidate must keep (the target's group's); ``carried``: the
    source's other spans, which a record takes along where they are found (``carry``); both
    as (index in the source's spans, span in ``tokens``).
    """

    target: int | None
    tokens: tuple[str, ...]
    span: tuple[int, int] | None
    kept: list[tuple[int, Span]]
    avoid: list[str]
    include: list[str]
    prefer: list[str] = field(default_factory=list)
    carried: list[tuple[int, Span]] = field(default_factory=list)
    iteration: int = 0
    stopped: str | None = None
    # The last request decoded and its n-best list, for a repeatable decoder to be spared
    # the same request next round. Not part of the state: a resumed run decodes it again.
    last: tuple[DecodeRequest, list[Candidate]] | None = field(default=None, repr=False, compare=False)

    @property
    def constraints(self) -> Constraints:
        return Constraints(avoid=tuple(self.avoid), include=tuple(self.include), prefer=tuple(self.prefer))

    @property
    def request(self) -> DecodeRequest:
        """What the job asks the decoder this round."""
        return DecodeRequest(text=detokenize(self.tokens), constraints=self.constraints)

    @property
    def free_words(self) -> int:
        """How many words (letters, no digits: not "29th") the job's sentence has outside its kept spans."""
        kept = [(sp.start, sp.end) for _, sp in self.kept]
        return sum(
            1
            for i, t in enumerate(self.tokens)
            if any(c.isalpha() for c in t) and not any(c.isdigit() for c in t) and not any(s <= i < e for s, e in kept)
        )

    def to_state(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "tokens": list(self.tokens),
            "span": list(self.span) if self.span else None,
            "kept": [[i, sp.model_dump(mode="json")] for i, sp in self.kept],
            "carried": [[i, sp.model_dump(mode="json")] for i, sp in self.carried],
            "avoid": list(self.avoid),
            "include": list(self.include),
            "prefer": list(self.prefer),
            "iteration": self.iteration,
            "stopped": self.stopped,
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Job:
        span = data["span"]
        return cls(
            target=data["target"],
            tokens=tuple(data["tokens"]),
            span=(span[0], span[1]) if span else None,
            kept=[(i, Span.model_validate(sp)) for i, sp in data["kept"]],
            avoid=list(data["avoid"]),
            include=list(data["include"]),
            prefer=list(data.get("prefer", [])),
            carried=[(i, Span.model_validate(sp)) for i, sp in data.get("carried", [])],  # none before ``carry``
            iteration=data["iteration"],
            stopped=data["stopped"],
        )


@dataclass
class ExampleRun:
    """An input example in progress: its jobs, the texts it has produced, its outcomes so far.

    ``iteration`` counts the iterations acted on; ``pending`` holds, per job index with a
    request out for the next one, its n-best list once it came back.
    """

    seq: int
    example: Example
    jobs: list[Job]
    seen: set[str]
    outcomes: list[Augmented | Rejection] = field(default_factory=list)
    iteration: int = 0
    pending: dict[int, list[Candidate] | None] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        """The input examples it stands for (one): a unit of ``outcomes.InOrder``."""
        return [self.example.id]

    def to_state(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "example": self.example.model_dump(mode="json"),
            "iteration": self.iteration,
            "seen": sorted(self.seen),
            "jobs": [j.to_state() for j in self.jobs],
            "outcomes": [outcome_state(o) for o in self.outcomes],
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> ExampleRun:
        return cls(
            seq=data["seq"],
            example=Example.model_validate(data["example"]),
            jobs=[Job.from_state(j) for j in data["jobs"]],
            seen=set(data["seen"]),
            outcomes=[outcome_from_state(o) for o in data["outcomes"]],
            iteration=data["iteration"],
        )


@dataclass
class Attempt:
    """One job's n-best list in one iteration, and where the aligner put its spans in each candidate.

    ``target[rank]``: the target span's alignment into candidate ``rank`` (None for a
    whole-sentence job); ``kept[(rank, span index)]``: a kept span's (``keep=align``);
    ``scored[rank]``: what the scoring filters said of candidate ``rank`` (adequacy...). A
    carried span's alignment is in ``kept`` too, when it was asked (no single copy of it).
    """

    run: ExampleRun
    job: Job
    nbest: list[Candidate]
    target: list[Alignment | None] = field(default_factory=list)
    kept: dict[tuple[int, int], Alignment] = field(default_factory=dict)
    scored: list[dict[str, float]] = field(default_factory=list)


@dataclass
class Choice:
    """The candidate an attempt keeps, where its target went, its kept and carried spans, the
    source spans its record lacks (``dropped``, with ``carry``) and its record's scores."""

    candidate: Candidate
    rank: int
    span: tuple[int, int] | None
    kept: list[tuple[int, Span]]
    scores: dict[str, float]
    carried: list[tuple[int, Span]] = field(default_factory=list)
    dropped: tuple[int, ...] = ()


@dataclass(frozen=True)
class Continued:
    """An example of a run that ended after ``iterations`` rounds, fed again to go further
    (``spanaug run --resume --iterations N`` with N above the run's).

    ``outcomes``: every record and rejection its earlier rounds wrote (``rejected.jsonl``
    too: a filter's rejection still grew its span's avoid set, and a stop ended it).
    """

    example: Example
    outcomes: tuple[Augmented | Rejection, ...]
    iterations: int

    @property
    def id(self) -> str:
        return self.example.id

    def to_state(self) -> dict[str, Any]:
        return {
            "continued": {
                "example": self.example.model_dump(mode="json"),
                "outcomes": [outcome_state(o) for o in self.outcomes],
                "iterations": self.iterations,
            }
        }


def input_state(item: Example | Continued) -> dict[str, Any]:
    """An input item (an example, or a ``Continued`` one) as checkpoint JSON; ``input_from_state`` reads it back."""
    return item.to_state() if isinstance(item, Continued) else item.model_dump(mode="json")


def input_from_state(data: dict[str, Any]) -> Example | Continued:
    if "continued" not in data:
        return Example.model_validate(data)
    state = data["continued"]
    return Continued(
        example=Example.model_validate(state["example"]),
        outcomes=tuple(outcome_from_state(o) for o in state["outcomes"]),
        iterations=state["iterations"],
    )
