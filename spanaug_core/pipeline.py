"""The iterative paraphrase-and-align loop of Culkin et al. 2021, §5 (Fig. 1).

For every span to rewrite (a *job*) the loop repeats: decode an n-best list of the
sentence under (all avoid phrases so far, the include phrases of the kept spans); align
the span into the top-M candidates; keep the candidate the aligner likes best; emit it
as an ``Augmented`` record; add the aligned phrase's expansions to the avoid set. A job
stops early when nothing aligns, when the decoder finds nothing, or when the avoid set
stops growing, and the reason is reported.

Examples stream through in chunks: all jobs of a chunk share decoder and aligner
batches, and a chunk ends with a ``ChunkDone`` marker so that a store can commit its
output there and a run can resume from the last committed chunk. An example with no span
to rewrite but with spans to keep is paraphrased as a whole (e.g. NER with kept
entities): each round takes the best new candidate that still contains the kept spans.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from spanaug_core.config import PipelineSettings
from spanaug_core.errors import SpanaugError
from spanaug_core.plugins import Registry, default_registry
from spanaug_core.protocols import (
    Aligner,
    ConstrainedDecoder,
    ConstraintExpander,
    Filter,
    FilterContext,
    ProgressCallback,
    ProgressEvent,
)
from spanaug_core.text import detokenize, find_all
from spanaug_core.types import AlignItem, Alignment, Augmented, Candidate, Constraints, DecodeRequest, Example, Span


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


@dataclass(frozen=True)
class ChunkDone:
    """All jobs of ``examples`` more input examples are finished; ``last_id`` is the last one's id."""

    examples: int
    last_id: str


Outcome = Augmented | Rejection | ChunkDone


@dataclass
class RunStats:
    """Counters and timings of a pipeline, cumulative over its calls."""

    examples: int = 0
    jobs: int = 0
    skipped: int = 0
    accepted: int = 0
    rejected: int = 0
    stopped: Counter[str] = field(default_factory=Counter)
    decode_calls: int = 0
    candidates: int = 0
    decode_s: float = 0.0
    align_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "jobs": self.jobs,
            "skipped_examples": self.skipped,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "stopped": dict(self.stopped),
            "decode_calls": self.decode_calls,
            "candidates": self.candidates,
            "decode_s": round(self.decode_s, 3),
            "align_s": round(self.align_s, 3),
        }

    def restore(self, saved: dict[str, Any]) -> None:
        """Continue counting from a manifest's counts (``--resume``)."""
        self.examples = saved.get("examples", 0)
        self.jobs = saved.get("jobs", 0)
        self.skipped = saved.get("skipped_examples", 0)
        self.accepted = saved.get("accepted", 0)
        self.rejected = saved.get("rejected", 0)
        self.stopped = Counter(saved.get("stopped", {}))
        self.decode_calls = saved.get("decode_calls", 0)
        self.candidates = saved.get("candidates", 0)
        self.decode_s = saved.get("decode_s", 0.0)
        self.align_s = saved.get("align_s", 0.0)


@dataclass
class _Job:
    """One span being rewritten (or, with ``target`` None, one sentence paraphrased whole)."""

    example: Example
    target: int | None
    tokens: tuple[str, ...]
    span: tuple[int, int] | None
    kept: list[tuple[int, Span]]
    avoid: list[str]
    include: list[str]
    seen: set[str]
    iteration: int = 0
    stopped: str | None = None

    @property
    def constraints(self) -> Constraints:
        return Constraints(avoid=tuple(self.avoid), include=tuple(self.include))


@dataclass
class _Choice:
    candidate: Candidate
    rank: int
    span: tuple[int, int] | None
    score: float
    kept: list[tuple[int, Span]]


def first_rejection(filters: Sequence[Filter], record: Augmented, context: FilterContext) -> str | None:
    """Why the first filter that drops ``record`` drops it, as ``"<filter>: <why>"``; None when every filter keeps it."""
    for flt in filters:
        reason = flt.check(record, context)
        if reason is not None:
            return f"{getattr(flt, 'name', type(flt).__name__)}: {reason}"
    return None


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


class Pipeline:
    """The augmentation loop over already-built components.

    Build it from instances (``Pipeline(decoder=..., aligner=..., expander=...)``) or by
    name with :meth:`from_components`; iterate :meth:`run` for accepted records, or
    :meth:`outcomes` for everything a store needs (rejections, stops, chunk markers).
    """

    def __init__(
        self,
        decoder: ConstrainedDecoder,
        aligner: Aligner,
        expander: ConstraintExpander,
        filters: Sequence[Filter] = (),
        settings: PipelineSettings | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.decoder = decoder
        self.aligner = aligner
        self.expander = expander
        self.filters = list(filters)
        self.settings = settings or PipelineSettings()
        self.progress = progress or (lambda event: None)
        self.stats = RunStats()
        self.components = {
            "decoder": getattr(decoder, "name", type(decoder).__name__),
            "aligner": getattr(aligner, "name", type(aligner).__name__),
            "expander": getattr(expander, "name", type(expander).__name__),
        }
        model = getattr(getattr(decoder, "config", None), "model", None)
        if model:
            self.components["model"] = str(model)

    @classmethod
    def from_components(
        cls,
        decoder: Any,
        aligner: Any,
        expander: Any = "inflect",
        filters: Sequence[Any] = (),
        registry: Registry | None = None,
        progress: ProgressCallback | None = None,
        **settings: Any,
    ) -> Pipeline:
        """Build from names, ``(name, options)`` pairs, classes or instances, mixed freely.

        ``Pipeline.from_components("vdba", ("bert-span", {"threshold": 0.4}), iterations=3)``
        """
        reg = registry or default_registry()

        def make(kind: str, spec: Any) -> Any:
            if isinstance(spec, tuple):
                name, options = spec
                return reg.create(kind, name, **options)
            if isinstance(spec, (str, type)):
                return reg.create(kind, spec)
            return spec

        return cls(
            decoder=make("decoder", decoder),
            aligner=make("aligner", aligner),
            expander=make("expander", expander),
            filters=[make("filter", f) for f in filters],
            settings=PipelineSettings(**settings),
            progress=progress,
        )

    # -- public iteration -------------------------------------------------------------
    def run(self, examples: Iterable[Example]) -> Iterator[Augmented]:
        """Augment ``examples`` (streamed) and yield the accepted records."""
        for outcome in self.outcomes(examples):
            if isinstance(outcome, Augmented):
                yield outcome

    def outcomes(self, examples: Iterable[Example], total: int | None = None) -> Iterator[Outcome]:
        """Augment ``examples`` chunk by chunk, yielding records, rejections and chunk markers."""
        it = iter(examples)
        done = self.stats.examples
        while chunk := list(itertools.islice(it, self.settings.chunk_size)):
            yield from self._run_chunk(chunk)
            done += len(chunk)
            self.stats.examples = done
            yield ChunkDone(examples=len(chunk), last_id=chunk[-1].id)
            self.progress(ProgressEvent("examples", done, total, stats=self.stats.as_dict()))

    # -- one chunk --------------------------------------------------------------------
    def _jobs_for(self, example: Example) -> list[_Job]:
        s = self.settings
        seen = {example.text}
        keepable = [(i, sp) for i, sp in enumerate(example.spans) if sp.role in s.keep_roles] if s.keep != "drop" else []
        jobs = []
        for t, target in enumerate(example.spans):
            if target.role not in s.rewrite_roles:
                continue
            tspan = (target.start, target.end)
            # A kept span inside or across the target cannot be kept while the target changes.
            kept = [
                (i, sp)
                for i, sp in keepable
                if (target.group is None or sp.group == target.group) and not _overlaps((sp.start, sp.end), tspan)
            ]
            jobs.append(
                _Job(
                    example=example,
                    target=t,
                    tokens=example.tokens,
                    span=tspan,
                    kept=kept,
                    avoid=_unique(self.expander.expand(target.text(example.tokens))),
                    include=self._includes(example.tokens, kept),
                    seen=seen,
                )
            )
        if not jobs and keepable:
            jobs.append(
                _Job(example, None, example.tokens, None, keepable, [], self._includes(example.tokens, keepable), seen)
            )
        return jobs

    def _includes(self, tokens: Sequence[str], kept: list[tuple[int, Span]]) -> list[str]:
        return _unique(sp.text(tokens) for _, sp in kept) if self.settings.keep == "include" else []

    def _run_chunk(self, chunk: list[Example]) -> Iterator[Outcome]:
        jobs: list[_Job] = []
        for example in chunk:
            mine = self._jobs_for(example)
            if not mine:
                self.stats.skipped += 1
            jobs.extend(mine)
        self.stats.jobs += len(jobs)
        for iteration in range(1, self.settings.iterations + 1):
            active = [j for j in jobs if j.stopped is None]
            if not active:
                break
            self.progress(
                ProgressEvent(
                    "examples",
                    self.stats.examples,
                    None,
                    message=f"iteration {iteration}/{self.settings.iterations}, {len(active)} spans",
                )
            )
            for start in range(0, len(active), self.settings.batch_size):
                yield from self._step(active[start : start + self.settings.batch_size], iteration)

    def _step(self, batch: list[_Job], iteration: int) -> Iterator[Outcome]:
        requests = [DecodeRequest(text=detokenize(j.tokens), constraints=j.constraints) for j in batch]
        t0 = time.perf_counter()
        nbests = self.decoder.decode(requests, nbest=self.settings.top_m)
        self.stats.decode_s += time.perf_counter() - t0
        self.stats.decode_calls += 1
        if len(nbests) != len(requests):
            raise SpanaugError(
                f"decoder '{self.components['decoder']}' returned {len(nbests)} n-best lists for {len(requests)} requests"
            )
        nbests = [[c for c in nb[: self.settings.top_m] if c.tokens] for nb in nbests]
        self.stats.candidates += sum(len(nb) for nb in nbests)
        alignments = self._align_all(batch, nbests)
        for j, (job, nbest) in enumerate(zip(batch, nbests, strict=True)):
            job.iteration = iteration
            yield from self._advance(job, j, nbest, alignments)

    def _align_all(self, batch: list[_Job], nbests: list[list[Candidate]]) -> dict[tuple[int, int, int | None], Alignment]:
        """One aligner call for the batch: key (job, rank, None) for the target, (job, rank, span index) for kept spans."""
        keys: list[tuple[int, int, int | None]] = []
        items: list[AlignItem] = []
        for j, (job, nbest) in enumerate(zip(batch, nbests, strict=True)):
            for rank, cand in enumerate(nbest):
                if job.span is not None:
                    keys.append((j, rank, None))
                    items.append(AlignItem(source_tokens=job.tokens, source_span=job.span, target_tokens=cand.tokens))
                if self.settings.keep == "align":
                    for idx, sp in job.kept:
                        keys.append((j, rank, idx))
                        items.append(
                            AlignItem(source_tokens=job.tokens, source_span=(sp.start, sp.end), target_tokens=cand.tokens)
                        )
        if not items:
            return {}
        t0 = time.perf_counter()
        results = self.aligner.align(items)
        self.stats.align_s += time.perf_counter() - t0
        if len(results) != len(items):
            raise SpanaugError(
                f"aligner '{self.components['aligner']}' returned {len(results)} alignments for {len(items)} items"
            )
        return dict(zip(keys, results, strict=True))

    def _locate_kept(
        self,
        job: _Job,
        j: int,
        cand: Candidate,
        rank: int,
        target_span: tuple[int, int] | None,
        alignments: dict[tuple[int, int, int | None], Alignment],
    ) -> tuple[list[tuple[int, Span]], float] | None:
        """Where each kept span is in ``cand`` (and the weakest score), or None if one is lost."""
        taken: list[tuple[int, int]] = [target_span] if target_span else []
        located: list[tuple[int, Span]] = []
        weakest = 1.0
        for idx, sp in job.kept:
            if self.settings.keep == "align":
                found = alignments[(j, rank, idx)]
                where, score = found.span, found.score
                if where is not None and any(_overlaps(where, t) for t in taken):
                    where = None
            else:
                phrase = job.tokens[sp.start : sp.end]
                where, score = None, 1.0
                for fold in (False, True):
                    where = next((m for m in find_all(cand.tokens, phrase, case_sensitive=not fold) if not any(_overlaps(m, t) for t in taken)), None)
                    if where is not None:
                        break
            if where is None:
                return None
            taken.append(where)
            located.append((idx, sp.moved(*where)))
            weakest = min(weakest, score)
        return located, weakest

    def _choose(
        self, job: _Job, j: int, nbest: list[Candidate], alignments: dict[tuple[int, int, int | None], Alignment]
    ) -> tuple[_Choice | None, str]:
        """The candidate to keep (job ``j`` of the batch), or None and the reason the job stops."""
        if not nbest:
            return None, "no-candidates"
        best: _Choice | None = None
        aligned_any = False
        for rank, cand in enumerate(nbest):
            if job.span is None:
                if cand.text in job.seen:
                    continue
                span, score = None, 1.0
            else:
                found = alignments[(j, rank, None)]
                if found.span is None:
                    continue
                aligned_any = True
                span, score = found.span, found.score
            located = self._locate_kept(job, j, cand, rank, span, alignments)
            if located is None:
                continue
            kept, kept_score = located
            if job.span is None:
                score = kept_score
            choice = _Choice(cand, rank, span, score, kept)
            if best is None or (choice.score, cand.score) > (best.score, best.candidate.score):
                best = choice
            if job.span is None:
                break  # whole-sentence jobs take the decoder's best new candidate
        if best is not None:
            return best, ""
        if job.span is None:
            return None, "no-new-candidates"
        return None, "kept-spans-lost" if aligned_any else "no-alignment"

    def _advance(
        self, job: _Job, j: int, nbest: list[Candidate], alignments: dict[tuple[int, int, int | None], Alignment]
    ) -> Iterator[Outcome]:
        example = job.example
        choice, why = self._choose(job, j, nbest, alignments)
        if choice is None:
            job.stopped = why
            self.stats.stopped[why] += 1
            yield Rejection(example.id, job.target, job.iteration, why, job.constraints)
            return
        cand = choice.candidate
        spans = list(choice.kept)
        if job.target is not None and choice.span is not None:
            spans.append((job.target, example.spans[job.target].moved(*choice.span)))
        spans.sort(key=lambda pair: pair[0])
        scores = {"paraphrase": cand.score, **{f"paraphrase_{k}": v for k, v in cand.scores.items()}}
        scores.update({"alignment": choice.score, "rank": float(choice.rank)})
        stem = example.id if job.target is None else f"{example.id}/s{job.target}"
        record = Augmented(
            id=f"{stem}/it{job.iteration}",
            source_id=example.id,
            target=job.target,
            iteration=job.iteration,
            tokens=cand.tokens,
            text=cand.text,
            spans=tuple(sp for _, sp in spans),
            scores=scores,
            constraints=job.constraints,
            components=self.components,
        )
        reason = self._filter(record, example, job.seen)
        job.seen.add(cand.text)
        if reason is None:
            self.stats.accepted += 1
            yield record
        else:
            self.stats.rejected += 1
            yield Rejection(example.id, job.target, job.iteration, reason, job.constraints, record)
        if choice.span is not None:
            aligned = detokenize(cand.tokens[choice.span[0] : choice.span[1]])
            fresh = [p for p in _unique(self.expander.expand(aligned)) if p not in job.avoid]
            job.avoid.extend(fresh)
            if not fresh:
                job.stopped = "avoid-set-unchanged"
                self.stats.stopped[job.stopped] += 1
        if self.settings.chain:
            job.tokens, job.span, job.kept = cand.tokens, choice.span, choice.kept

    def _filter(self, record: Augmented, example: Example, seen: set[str]) -> str | None:
        return first_rejection(self.filters, record, FilterContext(source=example, previous_texts=frozenset(seen)))
