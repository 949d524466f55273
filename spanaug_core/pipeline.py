"""The iterative paraphrase-and-align loop of Culkin et al. 2021, §5 (Fig. 1).

For every span to rewrite (a *job*) the loop repeats: decode an n-best list of the
sentence under (all avoid phrases so far, the include phrases of the kept spans); align
the span into the top-M candidates; let the scoring filters score them (adequacy...);
keep the candidate whose scores, weighted by ``rerank``, sum highest (the paper keeps the
one the aligner likes best: ``rerank={"alignment": 1}``) among those the filters accept
(``filter_candidates``; the paper filters only the kept one); emit it as an ``Augmented``
record; add the aligned phrase's expansions to the avoid set. A span found on function
words alone, for a source span with a content word, counts as not found (``content_targets``). A job
stops early when nothing aligns, when the decoder finds nothing, or when the avoid set
stops growing, and the reason is reported.

Examples stream through a request queue: the decoder takes requests whenever it has
room, and reading the input keeps pace with it (``spanaug_core.scheduling``). The jobs of
one example move through the iterations together: an iteration's results are aligned and
acted on once all its jobs have their n-best lists, in job order, so what an example
yields depends neither on the batches it shared nor on the order requests finished.
Finished examples are yielded in input order, each followed by a ``Checkpoint``: the
outcomes yielded so far plus ``Pipeline.in_flight()`` (the state of the examples still
in progress, JSON) are a consistent point to resume from (``Pipeline.restore``).

An input fed while the pipeline runs (a Ray worker's, which a driver fills chunk by
chunk) may yield ``IDLE`` when it has no example *yet*: the pipeline goes on decoding
what it has and asks again later, and ``outcomes`` returns only when the input is idle
and nothing is in progress.

An example with no span to rewrite but with spans to keep is paraphrased as a whole
(e.g. NER with kept entities): each round takes the best new candidate that still
contains the kept spans. Such a job asks the same request every round; a decoder that
declares itself ``repeatable`` is asked it once, and the later rounds reuse its list.
"""

from __future__ import annotations

import fnmatch
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from spanaug_core.config import PipelineSettings, RunConfig
from spanaug_core.errors import SpanaugError
from spanaug_core.plugins import Registry, default_registry
from spanaug_core.scheduling import RequestQueue, stream_decode
from spanaug_core.protocols import (
    Aligner,
    ConstrainedDecoder,
    ConstraintExpander,
    Filter,
    FilterContext,
    Lexicon,
    ProgressCallback,
    ProgressEvent,
    ScoringFilter,
)
from spanaug_core.text import detokenize, find_copy, is_content_word, overlaps, tokenize
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
        record = data.get("record")
        return cls(
            source_id=data["source_id"],
            target=data["target"],
            iteration=data["iteration"],
            reason=data["reason"],
            constraints=Constraints.model_validate(data["constraints"]),
            record=Augmented.model_validate(record) if record is not None else None,
        )


@dataclass(frozen=True)
class Checkpoint:
    """A consistent point of the stream: what was yielded before it plus ``Pipeline.in_flight()``.

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
"""What an input yields when it has no example now but may have later (see the module docstring)."""


def devices(configs: dict[str, Any]) -> dict[str, str]:
    """Per component kind, the ``device`` option of its config, for those that have one."""
    return {kind: str(cfg.device) for kind, cfg in configs.items() if getattr(cfg, "device", None) is not None}


def outcome_state(outcome: Augmented | Rejection) -> dict[str, Any]:
    """A record or rejection as checkpoint JSON (``outcome_from_state`` reads it back)."""
    if isinstance(outcome, Augmented):
        return {"record": outcome.model_dump(mode="json")}
    return {"rejection": outcome.to_state()}


def outcome_from_state(data: dict[str, Any]) -> Augmented | Rejection:
    if "record" in data:
        return Augmented.model_validate(data["record"])
    return Rejection.from_state(data["rejection"])

# A request's key is (example sequence number) * _JOBS + (job index): older examples first.
_JOBS = 1 << 20


@dataclass
class RunStats:
    """Counters and timings of a pipeline, cumulative over its calls."""

    examples: int = 0
    jobs: int = 0
    skipped: int = 0
    skipped_spans: int = 0
    accepted: int = 0
    rejected: int = 0
    filtered_choices: int = 0
    stopped: Counter[str] = field(default_factory=Counter)
    decode_calls: int = 0
    reused_nbest: int = 0
    candidates: int = 0
    decode_s: float = 0.0
    align_s: float = 0.0
    score_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "jobs": self.jobs,
            "skipped_examples": self.skipped,
            "skipped_spans": self.skipped_spans,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "filtered_choices": self.filtered_choices,
            "stopped": dict(self.stopped),
            "decode_calls": self.decode_calls,
            "reused_nbest": self.reused_nbest,
            "candidates": self.candidates,
            "decode_s": round(self.decode_s, 3),
            "align_s": round(self.align_s, 3),
            "score_s": round(self.score_s, 3),
        }

    def restore(self, saved: dict[str, Any]) -> None:
        """Continue counting from a manifest's counts (``--resume``)."""
        self.examples = saved.get("examples", 0)
        self.jobs = saved.get("jobs", 0)
        self.skipped = saved.get("skipped_examples", 0)
        self.skipped_spans = saved.get("skipped_spans", 0)
        self.accepted = saved.get("accepted", 0)
        self.rejected = saved.get("rejected", 0)
        self.filtered_choices = saved.get("filtered_choices", 0)
        self.stopped = Counter(saved.get("stopped", {}))
        self.decode_calls = saved.get("decode_calls", 0)
        self.reused_nbest = saved.get("reused_nbest", 0)
        self.candidates = saved.get("candidates", 0)
        self.decode_s = saved.get("decode_s", 0.0)
        self.align_s = saved.get("align_s", 0.0)
        self.score_s = saved.get("score_s", 0.0)

    def add(self, counts: dict[str, Any]) -> None:
        """Add another pipeline's counts (``as_dict``), e.g. a worker's for one chunk of examples."""
        other = RunStats()
        other.restore(counts)
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class _Job:
    """One span being rewritten (or, with ``target`` None, one sentence paraphrased whole)."""

    target: int | None
    tokens: tuple[str, ...]
    span: tuple[int, int] | None
    kept: list[tuple[int, Span]]
    avoid: list[str]
    include: list[str]
    prefer: list[str] = field(default_factory=list)
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

    def to_state(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "tokens": list(self.tokens),
            "span": list(self.span) if self.span else None,
            "kept": [[i, sp.model_dump(mode="json")] for i, sp in self.kept],
            "avoid": list(self.avoid),
            "include": list(self.include),
            "prefer": list(self.prefer),
            "iteration": self.iteration,
            "stopped": self.stopped,
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> _Job:
        span = data["span"]
        return cls(
            target=data["target"],
            tokens=tuple(data["tokens"]),
            span=(span[0], span[1]) if span else None,
            kept=[(i, Span.model_validate(sp)) for i, sp in data["kept"]],
            avoid=list(data["avoid"]),
            include=list(data["include"]),
            prefer=list(data.get("prefer", [])),
            iteration=data["iteration"],
            stopped=data["stopped"],
        )


@dataclass
class _ExampleRun:
    """An input example in progress: its jobs, the texts it has produced, its outcomes so far.

    ``iteration`` counts the iterations acted on; ``pending`` holds, per job index with a
    request out for the next one, its n-best list once it came back.
    """

    seq: int
    example: Example
    jobs: list[_Job]
    seen: set[str]
    outcomes: list[Augmented | Rejection] = field(default_factory=list)
    iteration: int = 0
    pending: dict[int, list[Candidate] | None] = field(default_factory=dict)

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
    def from_state(cls, data: dict[str, Any]) -> _ExampleRun:
        return cls(
            seq=data["seq"],
            example=Example.model_validate(data["example"]),
            jobs=[_Job.from_state(j) for j in data["jobs"]],
            seen=set(data["seen"]),
            outcomes=[outcome_from_state(o) for o in data["outcomes"]],
            iteration=data["iteration"],
        )


@dataclass
class _Attempt:
    """One job's n-best list in one iteration, and where the aligner put its spans in each candidate.

    ``target[rank]``: the target span's alignment into candidate ``rank`` (None for a
    whole-sentence job); ``kept[(rank, span index)]``: a kept span's (``keep=align``);
    ``scored[rank]``: what the scoring filters said of candidate ``rank`` (adequacy...).
    """

    run: _ExampleRun
    job: _Job
    nbest: list[Candidate]
    target: list[Alignment | None] = field(default_factory=list)
    kept: dict[tuple[int, int], Alignment] = field(default_factory=dict)
    scored: list[dict[str, float]] = field(default_factory=list)


@dataclass
class _Choice:
    """The candidate an attempt keeps, where its target went, its kept spans and its record's scores."""

    candidate: Candidate
    rank: int
    span: tuple[int, int] | None
    kept: list[tuple[int, Span]]
    scores: dict[str, float]


def locate_kept(
    attempt: _Attempt, rank: int, target_span: tuple[int, int] | None, keep: str, copies: bool
) -> tuple[list[tuple[int, Span]], float] | None:
    """Where each kept span is in candidate ``rank`` (and the weakest score), or None if one is lost.

    ``keep="align"`` takes, with ``copies``, the one place where the candidate copies a
    kept span word for word, and the aligner's answer for the others; otherwise a kept
    span must appear word for word (case folded if need be), clear of the target and of
    the other kept spans.
    """
    job, cand = attempt.job, attempt.nbest[rank]
    taken: list[tuple[int, int]] = [target_span] if target_span else []
    located: list[tuple[int, Span]] = []
    weakest = 1.0
    for idx, sp in job.kept:
        where, score = None, 1.0
        if keep == "align":
            # A span copied once needs no aligner, which may be unsure of it (no answer)
            # or place only part of it ("Baghdad" of "pro-Baghdad", where the candidate is
            # tokenized finer than the corpus); one copied twice could be either.
            copy = find_copy(cand.tokens, tokenize(sp.text(job.tokens)), taken, unique=True) if copies else None
            found = attempt.kept[(rank, idx)]
            if copy is not None:
                where = copy
            elif found.span is not None and not any(overlaps(found.span, t) for t in taken):
                where, score = found.span, found.score
        else:
            # The include phrase as the decoder saw it, tokenized as the candidate was: a
            # corpus token spanaug splits ("F-16" in CoNLL-2003) comes back as "F - 16".
            where = find_copy(cand.tokens, tokenize(sp.text(job.tokens)), taken, unique=False)
        if where is None:
            return None
        taken.append(where)
        located.append((idx, sp.moved(*where)))
        weakest = min(weakest, score)
    return located, weakest


def candidate_scores(candidate: Candidate, alignment: float, rank: int, scored: dict[str, float]) -> dict[str, float]:
    """A record's scores: the decoder's (``paraphrase``, ``paraphrase_<name>``), the alignment's, the rank's, the scoring filters'."""
    scores = {"paraphrase": candidate.score, **{f"paraphrase_{k}": v for k, v in candidate.scores.items()}}
    scores.update({"alignment": alignment, "rank": float(rank)})
    scores.update(scored)
    return scores


def rerank_key(scores: dict[str, float], weights: dict[str, float]) -> float:
    """The sum of weight x score over ``weights``; a weighted score the candidate lacks is an error."""
    missing = [name for name in weights if name not in scores]
    if missing:
        raise SpanaugError(
            f"rerank weight '{missing[0]}' names a score no component gave (the candidates have {', '.join(sorted(scores))}); "
            "add the filter that scores it (e.g. --filter adequacy) or drop the weight"
        )
    return sum(weight * scores[name] for name, weight in weights.items())


# Universal POS tags of open word classes: a span the reader tags so holds a content word
# even when its word is on the function-word list (possessive "has", have.03).
_OPEN_CLASS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV"})


def found_target(attempt: _Attempt, rank: int, content: bool) -> Alignment | None:
    """Where the aligner found a span job's target in candidate ``rank``, or None: not found,
    or (``content``) found on function words alone where the source span holds a content
    word (by the function-word list, or by its ``attrs["pos"]``).

    The latter is the aligner settling on the closed-class part of a rewording ("signed"
    found as the "into" of "entered into", "lacking" as "of" in "short of", "having" as
    "with"): of 21 judged such records, 2 were acceptable (docs/quality.md).
    """
    found = attempt.target[rank]
    if found is None or found.span is None:
        return None
    job = attempt.job
    assert job.span is not None and job.target is not None  # asked of span jobs only
    start, end = found.span
    if not content or any(map(is_content_word, attempt.nbest[rank].tokens[start:end])):
        return found
    tagged_open = attempt.run.example.spans[job.target].attrs.get("pos") in _OPEN_CLASS
    return None if tagged_open or any(map(is_content_word, job.tokens[job.span[0] : job.span[1]])) else found


def keepable(attempt: _Attempt, rank: int, settings: PipelineSettings) -> tuple[tuple[int, int] | None, float, list[tuple[int, Span]]] | None:
    """Whether a round may keep candidate ``rank``: its target span, that span's score and where
    its kept spans are; None when it may not.

    A span job's candidate needs the target aligned into it; a whole-sentence job's must not
    have been produced before (the source itself included), and its score is its weakest
    kept span's. Either way every kept span must be found (:func:`locate_kept`).
    """
    job, cand = attempt.job, attempt.nbest[rank]
    if job.span is None:
        if cand.text in attempt.run.seen:
            return None
        span, score = None, 1.0
    else:
        found = found_target(attempt, rank, settings.content_targets)
        if found is None:
            return None
        span, score = found.span, found.score
    located = locate_kept(attempt, rank, span, settings.keep, settings.keep_copies)
    if located is None:
        return None
    kept, kept_score = located
    return span, kept_score if job.span is None else score, kept


def ranked_choices(attempt: _Attempt, settings: PipelineSettings) -> tuple[list[_Choice], str]:
    """The candidates an attempt may keep, best first, or none and the reason its job stops (a pure function).

    The :func:`keepable` candidates, by their scores weighted by ``settings.rerank``
    (highest first), ties going to the decoder's order.
    """
    job = attempt.job
    if not attempt.nbest:
        return [], "no-candidates"
    keyed: list[tuple[float, _Choice]] = []
    for rank, cand in enumerate(attempt.nbest):
        viable = keepable(attempt, rank, settings)
        if viable is None:
            continue
        span, score, kept = viable
        scores = candidate_scores(cand, score, rank, attempt.scored[rank] if attempt.scored else {})
        keyed.append((rerank_key(scores, settings.rerank), _Choice(cand, rank, span, kept, scores)))
    if keyed:
        # A stable sort on the key alone: equal keys stay in the decoder's order.
        return [choice for _, choice in sorted(keyed, key=lambda pair: -pair[0])], ""
    if job.span is None:
        return [], "no-new-candidates"
    aligned_any = any(found_target(attempt, rank, settings.content_targets) is not None for rank in range(len(attempt.nbest)))
    return [], "kept-spans-lost" if aligned_any else "no-alignment"


def first_rejection(filters: Sequence[Filter], record: Augmented, context: FilterContext) -> str | None:
    """Why the first filter that drops ``record`` drops it, as ``"<filter>: <why>"``; None when every filter keeps it."""
    for flt in filters:
        reason = flt.check(record, context)
        if reason is not None:
            return f"{getattr(flt, 'name', type(flt).__name__)}: {reason}"
    return None


def _free_words(job: _Job) -> int:
    """How many words (letters, no digits: not "29th") a job's sentence has outside its kept spans."""
    kept = [(sp.start, sp.end) for _, sp in job.kept]
    return sum(
        1
        for i, t in enumerate(job.tokens)
        if any(c.isalpha() for c in t) and not any(c.isdigit() for c in t) and not any(s <= i < e for s, e in kept)
    )


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


class Pipeline:
    """The augmentation loop over already-built components.

    Build it from instances (``Pipeline(decoder=..., aligner=..., expander=...)``) or by
    name with :meth:`from_components`; iterate :meth:`run` for accepted records, or
    :meth:`outcomes` for everything a store needs (rejections, stops, checkpoints).
    """

    def __init__(
        self,
        decoder: ConstrainedDecoder,
        aligner: Aligner,
        expander: ConstraintExpander,
        filters: Sequence[Filter] = (),
        settings: PipelineSettings | None = None,
        progress: ProgressCallback | None = None,
        lexicon: Lexicon | None = None,
    ) -> None:
        self.decoder = decoder
        self.aligner = aligner
        self.expander = expander
        self.filters = list(filters)
        self.lexicon = lexicon
        self._scorers = [f for f in self.filters if isinstance(f, ScoringFilter)]
        self.settings = settings or PipelineSettings()
        self.progress = progress or (lambda event: None)
        self.stats = RunStats()
        self.components = {
            "decoder": getattr(decoder, "name", type(decoder).__name__),
            "aligner": getattr(aligner, "name", type(aligner).__name__),
            "expander": getattr(expander, "name", type(expander).__name__),
        }
        if lexicon is not None:
            self.components["lexicon"] = getattr(lexicon, "name", type(lexicon).__name__)
        model = getattr(getattr(decoder, "config", None), "model", None)
        if model:
            self.components["model"] = str(model)
        self._runs: dict[int, _ExampleRun] = {}
        self._restored: dict[int, _ExampleRun] = {}

    @classmethod
    def from_components(
        cls,
        decoder: Any,
        aligner: Any,
        expander: Any = "inflect",
        filters: Sequence[Any] = (),
        registry: Registry | None = None,
        progress: ProgressCallback | None = None,
        lexicon: Any = None,
        **settings: Any,
    ) -> Pipeline:
        """Build from names, ``(name, options)`` pairs, classes or instances, mixed freely
        (``lexicon`` None: the prompt offers no words).

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
            lexicon=None if lexicon is None else make("lexicon", lexicon),
        )

    @classmethod
    def from_config(cls, config: RunConfig, registry: Registry | None = None, progress: ProgressCallback | None = None) -> Pipeline:
        """The pipeline a run config names (components built, options validated)."""
        spec = lambda c: (c.name, c.options)  # noqa: E731
        return cls.from_components(
            spec(config.decoder),
            spec(config.aligner),
            spec(config.expander),
            [spec(f) for f in config.filters],
            registry=registry,
            progress=progress,
            lexicon=None if config.lexicon is None else spec(config.lexicon),
            **config.pipeline_settings().model_dump(),
        )

    # -- public iteration -------------------------------------------------------------
    def run(self, examples: Iterable[Example]) -> Iterator[Augmented]:
        """Augment ``examples`` (streamed) and yield the accepted records."""
        for outcome in self.outcomes(examples):
            if isinstance(outcome, Augmented):
                yield outcome

    def outcomes(self, examples: Iterable[Example | _Idle], total: int | None = None) -> Iterator[Outcome]:
        """Augment ``examples`` (streamed): records and rejections in input order, checkpoints between.

        Each finished example's outcomes are followed by a ``Checkpoint`` that counts it;
        a ``Checkpoint`` counting none may come between. After :meth:`restore`, the
        restored examples come first, then ``examples`` (which should then start after
        the last example the checkpoint had read). ``examples`` may yield ``IDLE``.
        """
        runs, self._restored = self._restored, {}
        self._runs = runs
        source = iter(examples)
        next_seq = max(runs, default=-1) + 1
        emit_from = min(runs, default=next_seq)
        top_m = self.settings.top_m
        reuse = getattr(self.decoder, "repeatable", False)

        def issue(run: _ExampleRun) -> bool:
            """Ask for the next round of the run's active jobs; True when the n-best lists they
            already had answered all of them (the round is ready without decoding)."""
            active = self._active(run)
            for j in active:
                job = run.jobs[j]
                request = job.request
                if reuse and job.last is not None and job.last[0] == request:
                    run.pending[j] = job.last[1]
                    self.stats.reused_nbest += 1
                else:
                    run.pending[j] = None
                    queue.put(run.seq * _JOBS + j, request)
            return bool(active) and all(v is not None for v in run.pending.values())

        def refill(wanted: int) -> bool:
            nonlocal next_seq
            before = len(queue)
            while len(queue) - before < wanted:
                example = next(source, None)
                if example is None:
                    return False
                if isinstance(example, _Idle):
                    return True
                runs[next_seq] = run = self._start(next_seq, example)
                next_seq += 1
                issue(run)
            return True

        def checkpoint(count: int, last_id: str | None) -> Checkpoint:
            return Checkpoint(count, last_id, len(runs), runs[max(runs)].example.id if runs else None)

        def finished_in_order() -> Iterator[Outcome]:
            nonlocal emit_from
            count = 0
            while emit_from in runs and self._finished(runs[emit_from]):
                run = runs.pop(emit_from)
                yield from run.outcomes
                self.stats.examples += 1
                count, emit_from = count + 1, emit_from + 1
                yield checkpoint(1, run.example.id)
            if count:
                message = f"{len(runs)} in progress"
                self.progress(ProgressEvent("examples", self.stats.examples, total, message, self.stats.as_dict()))
            else:
                yield checkpoint(0, None)

        queue = RequestQueue(refill)
        for run in runs.values():
            issue(run)
        stream = stream_decode(self.decoder, queue, top_m, self.settings.batch_size)
        while True:
            t0 = time.perf_counter()
            finished = next(stream, None)
            self.stats.decode_s += time.perf_counter() - t0
            if finished is None:
                break
            self.stats.decode_calls += 1
            ready: list[_ExampleRun] = []
            for key, nbest in finished:
                run = runs[key // _JOBS]
                job = run.jobs[key % _JOBS]
                run.pending[key % _JOBS] = kept = [c for c in nbest[:top_m] if c.tokens]
                job.last = (job.request, kept)
                if all(v is not None for v in run.pending.values()):
                    ready.append(run)
            while ready:  # a run whose next round is all reused n-best lists goes on at once
                self._iterate(ready)
                ready = [run for run in ready if issue(run)]
            yield from finished_in_order()
        # Examples read last may have had nothing to decode (no span to rewrite).
        yield from finished_in_order()

    def in_flight(self) -> list[dict[str, Any]]:
        """The examples started but not yet yielded, as JSON (valid at a ``Checkpoint``)."""
        return [run.to_state() for _, run in sorted(self._runs.items())]

    def restore(self, state: Sequence[dict[str, Any]]) -> None:
        """Continue from a checkpoint's ``in_flight()``: the next :meth:`outcomes` finishes these first."""
        self._restored = {data["seq"]: _ExampleRun.from_state(data) for data in state}

    def resources(self) -> dict[str, Any]:
        """What runs this pipeline, for the manifest: one worker (this process) and the components' devices."""
        return {"workers": 1, "devices": [self.devices()]}

    def devices(self) -> dict[str, str]:
        """The torch device of each component that has one (``decoder.device=cuda``...)."""
        return devices({kind: getattr(c, "config", None) for kind, c in (("decoder", self.decoder), ("aligner", self.aligner))})

    # -- one example ------------------------------------------------------------------
    def _start(self, seq: int, example: Example) -> _ExampleRun:
        jobs, skipped = self._jobs_for(example)
        self.stats.jobs += len(jobs)
        self.stats.skipped_spans += skipped
        if not jobs:
            self.stats.skipped += 1
        return _ExampleRun(seq=seq, example=example, jobs=jobs, seen={example.text})

    def _active(self, run: _ExampleRun) -> list[int]:
        """Indices of the jobs that go on to the next iteration."""
        if run.iteration >= self.settings.iterations:
            return []
        return [j for j, job in enumerate(run.jobs) if job.stopped is None]

    def _finished(self, run: _ExampleRun) -> bool:
        return not run.pending and not self._active(run)

    def _jobs_for(self, example: Example) -> tuple[list[_Job], int]:
        """The example's jobs, and how many of its spans ``skip_labels`` or ``skip_pos`` left alone."""
        s = self.settings
        keepable = [(i, sp) for i, sp in enumerate(example.spans) if sp.role in s.keep_roles] if s.keep != "drop" else []
        jobs = []
        rewritten = [t for t, span in enumerate(example.spans) if span.role in s.rewrite_roles]
        skipped = 0
        for t in rewritten:
            target = example.spans[t]
            if target.attrs.get("pos") in s.skip_pos or any(fnmatch.fnmatchcase(target.label, pattern) for pattern in s.skip_labels):
                skipped += 1
                continue
            tspan = (target.start, target.end)
            # A kept span inside or across the target cannot be kept while the target changes.
            kept = [
                (i, sp)
                for i, sp in keepable
                if (target.group is None or sp.group == target.group) and not overlaps((sp.start, sp.end), tspan)
            ]
            job = _Job(
                target=t,
                tokens=example.tokens,
                span=tspan,
                kept=kept,
                avoid=_unique(self.expander.expand(target.text(example.tokens))),
                include=self._includes(example.tokens, kept),
            )
            job.prefer = self._prefer(example, job)
            jobs.append(job)
        # A sentence with no span to rewrite is paraphrased whole; one whose spans were all
        # skipped is not (its kept spans belong to a skipped target).
        if not rewritten and keepable:
            whole = _Job(None, example.tokens, None, keepable, [], self._includes(example.tokens, keepable))
            if _free_words(whole) >= s.min_words:
                jobs.append(whole)
        return jobs, skipped

    def _prefer(self, example: Example, job: _Job) -> list[str]:
        """The lexicon's words for the job's target under its avoid set so far, for the
        prompt to offer (recomputed each round: a word written and now avoided makes room)."""
        if self.lexicon is None or job.target is None:
            return []
        return _unique(self.lexicon.alternatives(example, example.spans[job.target], tuple(job.avoid)))

    def _includes(self, tokens: Sequence[str], kept: list[tuple[int, Span]]) -> list[str]:
        return _unique(sp.text(tokens) for _, sp in kept) if self.settings.keep == "include" else []

    # -- one iteration ----------------------------------------------------------------
    def _iterate(self, runs: list[_ExampleRun]) -> None:
        """Act on the iteration whose n-best lists are all back, for each of ``runs``: one aligner call for all."""
        attempts = [_Attempt(run, run.jobs[j], nbest or []) for run in runs for j, nbest in sorted(run.pending.items())]
        for run in runs:
            run.pending.clear()
            run.iteration += 1
        self.stats.candidates += sum(len(a.nbest) for a in attempts)
        self._align(attempts)
        self._score(attempts)
        for attempt in attempts:
            attempt.job.iteration = attempt.run.iteration
            attempt.run.outcomes.extend(self._advance(attempt))

    def _align(self, attempts: list[_Attempt]) -> None:
        """Align every attempt's target (and, with ``keep=align``, kept spans) into its candidates."""
        slots: list[tuple[_Attempt, int, int | None]] = []
        items: list[AlignItem] = []
        for attempt in attempts:
            job = attempt.job
            attempt.target = [None] * len(attempt.nbest)
            for rank, cand in enumerate(attempt.nbest):
                if job.span is not None:
                    slots.append((attempt, rank, None))
                    items.append(AlignItem(source_tokens=job.tokens, source_span=job.span, target_tokens=cand.tokens))
                if self.settings.keep == "align":
                    for idx, sp in job.kept:
                        slots.append((attempt, rank, idx))
                        items.append(AlignItem(source_tokens=job.tokens, source_span=(sp.start, sp.end), target_tokens=cand.tokens))
        if not items:
            return
        t0 = time.perf_counter()
        results = self.aligner.align(items)
        self.stats.align_s += time.perf_counter() - t0
        if len(results) != len(items):
            raise SpanaugError(
                f"aligner '{self.components['aligner']}' returned {len(results)} alignments for {len(items)} items"
            )
        for (attempt, rank, idx), found in zip(slots, results, strict=True):
            if idx is None:
                attempt.target[rank] = found
            else:
                attempt.kept[(rank, idx)] = found

    def _score(self, attempts: list[_Attempt]) -> None:
        """Ask each scoring filter for the scores of every attempt's candidates (against the input example)."""
        if not self._scorers:
            return
        t0 = time.perf_counter()
        for attempt in attempts:
            attempt.scored = [{} for _ in attempt.nbest]
            if not attempt.nbest:
                continue
            for scorer in self._scorers:
                results = scorer.score(attempt.run.example, [c.tokens for c in attempt.nbest])
                if len(results) != len(attempt.nbest):
                    raise SpanaugError(
                        f"filter '{getattr(scorer, 'name', type(scorer).__name__)}' returned {len(results)} scores for {len(attempt.nbest)} candidates"
                    )
                for mine, theirs in zip(attempt.scored, results):
                    mine.update(theirs)
        self.stats.score_s += time.perf_counter() - t0

    def _avoid_next(self, job: _Job, aligned: Sequence[str]) -> list[str]:
        """What an aligned span adds to its job's avoid set: every form of the phrase and, with
        ``avoid_words``, of each of its content words the sentence has nowhere else.

        Blocking the phrase alone lets the next paraphrase say the same thing with one word
        more ("confirm findings" avoided, "confirm the findings" written); a word the
        sentence has outside the span (a kept argument's) stays allowed.
        """
        forms = list(self.expander.expand(detokenize(aligned)))
        if self.settings.avoid_words and len(aligned) > 1:
            outside = job.tokens[: job.span[0]] + job.tokens[job.span[1] :] if job.span else job.tokens
            elsewhere = {t.lower() for t in outside}
            for word in filter(is_content_word, aligned):
                word_forms = self.expander.expand(word)
                if not any(f.lower() in elsewhere for f in word_forms):
                    forms += word_forms
        return forms

    def _record(self, job: _Job, example: Example, choice: _Choice) -> Augmented:
        """The record a round writes if it keeps ``choice``: the candidate with its target and kept spans."""
        spans = list(choice.kept)
        if job.target is not None and choice.span is not None:
            spans.append((job.target, example.spans[job.target].moved(*choice.span)))
        spans.sort(key=lambda pair: pair[0])
        stem = example.id if job.target is None else f"{example.id}/s{job.target}"
        return Augmented(
            id=f"{stem}/it{job.iteration}",
            source_id=example.id,
            target=job.target,
            iteration=job.iteration,
            tokens=choice.candidate.tokens,
            text=choice.candidate.text,
            spans=tuple(sp for _, sp in spans),
            scores=choice.scores,
            constraints=job.constraints,
            components=self.components,
        )

    def _advance(self, attempt: _Attempt) -> list[Augmented | Rejection]:
        """The outcomes of one attempt; updates the job (avoid set, stop, chained sentence)."""
        job, example = attempt.job, attempt.run.example
        choices, why = ranked_choices(attempt, self.settings)
        if not choices:
            job.stopped = why
            self.stats.stopped[why] += 1
            return [Rejection(example.id, job.target, job.iteration, why, job.constraints)]
        context = FilterContext(source=example, previous_texts=frozenset(attempt.run.seen))
        choice = choices[0]
        record = self._record(job, example, choice)
        reason = first_rejection(self.filters, record, context)
        if reason is not None and self.settings.filter_candidates:
            # The runners-up, best first: the round keeps the first the filters accept. When
            # they accept none, the round rejects its best, as it does without this setting.
            for other in choices[1:]:
                other_record = self._record(job, example, other)
                if first_rejection(self.filters, other_record, context) is None:
                    choice, record, reason = other, other_record, None
                    self.stats.filtered_choices += 1
                    break
        cand = choice.candidate
        attempt.run.seen.add(cand.text)
        out: list[Augmented | Rejection] = []
        if reason is None:
            self.stats.accepted += 1
            out.append(record)
        else:
            self.stats.rejected += 1
            out.append(Rejection(example.id, job.target, job.iteration, reason, job.constraints, record))
        if choice.span is not None:
            fresh = [p for p in _unique(self._avoid_next(job, cand.tokens[choice.span[0] : choice.span[1]])) if p not in job.avoid]
            job.avoid.extend(fresh)
            if fresh:
                job.prefer = self._prefer(example, job)
            else:
                job.stopped = "avoid-set-unchanged"
                self.stats.stopped[job.stopped] += 1
        if self.settings.chain:
            job.tokens, job.span, job.kept = cand.tokens, choice.span, choice.kept
        return out
