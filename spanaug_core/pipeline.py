"""The iterative paraphrase-and-align loop of Culkin et al. 2021, §5 (Fig. 1).

For every span to rewrite (a *job*) the loop repeats: decode an n-best list of the
sentence under (all avoid phrases so far, the include phrases of the kept spans); align
the span into the top-M candidates; let the scoring filters score them (adequacy...);
keep the candidate whose scores, weighted by ``rerank``, sum highest (the paper keeps the
one the aligner likes best: ``rerank={"alignment": 1}``) among those the filters accept
(``filter_candidates``; the paper filters only the kept one); emit it as an ``Augmented``
record, with the source's other spans found in it (``carry``); add the aligned phrase's
expansions to the avoid set. With ``per_round`` above 1 the round also keeps its next
candidates that the filters accept and that write what the avoid set would not bar
(``_more``). Candidates are tokenized as their source (``source_tokens``).
A span found on function words alone, for a source span with a content word, counts as
not found (``content_targets``). A job stops early when nothing aligns, when the decoder finds nothing, or when the avoid set
stops growing, and the reason is reported.

Examples stream through a request queue: the decoder takes requests whenever it has
room, and reading the input keeps pace with it (``spanaug_core.scheduling``). The jobs of
one example move through the iterations together: an iteration's results are aligned and
acted on once all its jobs have their n-best lists, in job order, so what an example
yields depends neither on the batches it shared nor on the order requests finished.
Finished examples are yielded in input order (``outcomes.InOrder``), each followed by a
``Checkpoint``: the outcomes yielded so far plus ``Pipeline.in_flight()`` (the state of
the examples still in progress, JSON: ``spanaug_core.jobs``) are a consistent point to
resume from (``Pipeline.restore``). Which candidate a round keeps is decided by the pure
functions of ``spanaug_core.choices``; this module acts on their answers.

An input fed while the pipeline runs (a Ray worker's, which a driver fills chunk by
chunk) may yield ``IDLE`` when it has no example *yet*: the pipeline goes on decoding
what it has and asks again later, and ``outcomes`` returns only when the input is idle
and nothing is in progress.

A run that ended can be taken further (more iterations): each of its examples comes back
as a ``Continued`` one, whose jobs are rebuilt by replaying what its rounds wrote on them
(``_continued``), checking each round's constraints against what the replay gives, so
that the new rounds go on exactly as one longer run would have.

An example with no span to rewrite but with spans to keep is paraphrased as a whole
(e.g. NER with kept entities): each round takes the best new candidate that still
contains the kept spans. Such a job asks the same request every round; a decoder that
declares itself ``repeatable`` is asked it once, and the later rounds reuse its list.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from spanaug_core.choices import carried_copy_found, first_rejection, ranked_choices, record_of
from spanaug_core.config import RunConfig
from spanaug_core.errors import ConfigError, RunStateError, SpanaugError
from spanaug_core.jobs import Attempt, Choice, Continued, ExampleRun, Job
from spanaug_core.outcomes import IDLE, InOrder, Outcome, Rejection, RunStats, _Idle
from spanaug_core.plugins import Registry, default_registry
from spanaug_core.protocols import (
    Aligner,
    ConstrainedDecoder,
    ConstraintExpander,
    Filter,
    FilterContext,
    Lexicon,
    ProgressCallback,
    ProgressEvent,
    RunPlan,
    ScoringFilter,
    devices,
)
from spanaug_core.scheduling import RequestQueue, stream_decode
from spanaug_core.settings import PipelineSettings
from spanaug_core.text import contains_phrase, detokenize, is_content_word, normalize, overlaps, retokenize
from spanaug_core.types import AlignItem, Augmented, Candidate, Example, Span

# A request's key is (example sequence number) * _JOBS + (job index): older examples first.
_JOBS = 1 << 20


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
        named = {"decoder": decoder, "aligner": aligner, "expander": expander, "lexicon": lexicon}
        self.components = {kind: getattr(c, "name", type(c).__name__) for kind, c in named.items() if c is not None}
        model = getattr(getattr(decoder, "config", None), "model", None)
        if model:
            self.components["model"] = str(model)
        self._order: InOrder[ExampleRun] = InOrder({})
        self._restored: dict[int, ExampleRun] = {}

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
    def from_plan(cls, plan: RunPlan, progress: ProgressCallback | None = None) -> Pipeline:
        """The pipeline of a run plan: its components built from their validated options."""
        lexicon = plan.optional("lexicon")
        return cls(
            decoder=plan.one("decoder").build(),
            aligner=plan.one("aligner").build(),
            expander=plan.one("expander").build(),
            filters=[part.build() for part in plan.parts["filters"]],
            settings=plan.settings,
            progress=progress,
            lexicon=None if lexicon is None else lexicon.build(),
        )

    @classmethod
    def from_config(cls, config: RunConfig, registry: Registry | None = None, progress: ProgressCallback | None = None) -> Pipeline:
        """The pipeline a run config names (components built, options validated)."""
        return cls.from_plan((registry or default_registry()).plan(config), progress)

    # -- public iteration -------------------------------------------------------------
    def run(self, examples: Iterable[Example]) -> Iterator[Augmented]:
        """Augment ``examples`` (streamed) and yield the accepted records."""
        for outcome in self.outcomes(examples):
            if isinstance(outcome, Augmented):
                yield outcome

    def outcomes(self, examples: Iterable[Example | Continued | _Idle], total: int | None = None) -> Iterator[Outcome]:
        """Augment ``examples`` (streamed): records and rejections in input order, checkpoints between.

        Each finished example's outcomes are followed by a ``Checkpoint`` that counts it;
        a ``Checkpoint`` counting none may come between. After :meth:`restore`, the
        restored examples come first, then ``examples`` (which should then start after
        the last example the checkpoint had read). ``examples`` may yield ``IDLE``, and
        ``Continued`` examples of a run taken further.
        """
        order = self._order = InOrder(self._restored)
        self._restored = {}
        runs = order.held
        source = iter(examples)
        top_m = self.settings.top_m
        reuse = getattr(self.decoder, "repeatable", False)

        def issue(run: ExampleRun) -> bool:
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
            before = len(queue)
            while len(queue) - before < wanted:
                example = next(source, None)
                if example is None:
                    return False
                if example is IDLE:
                    return True
                issue(self._start(order, example))
            return True

        def released(run: ExampleRun) -> None:
            self.stats.examples += 1

        def report() -> None:
            self.progress(ProgressEvent("examples", self.stats.examples, total, f"{len(runs)} in progress", self.stats.as_dict()))

        queue = RequestQueue(refill)
        for run in runs.values():
            issue(run)
        stream = stream_decode(self.decoder, queue, top_m)
        while True:
            t0 = time.perf_counter()
            finished = next(stream, None)
            self.stats.decode_s += time.perf_counter() - t0
            if finished is None:
                break
            self.stats.decode_calls += 1
            ready: list[ExampleRun] = []
            for key, nbest in finished:
                run = runs[key // _JOBS]
                job = run.jobs[key % _JOBS]
                run.pending[key % _JOBS] = kept = [self._like_source(job, c) for c in nbest[:top_m] if c.tokens]
                job.last = (job.request, kept)
                if all(v is not None for v in run.pending.values()):
                    ready.append(run)
            while ready:  # a run whose next round is all reused n-best lists goes on at once
                self._iterate(ready)
                ready = [run for run in ready if issue(run)]
            yield from order.emit(self._finished, released, report)
        # Examples read last may have had nothing to decode (no span to rewrite).
        yield from order.emit(self._finished, released, report)

    def in_flight(self) -> list[dict[str, Any]]:
        """The examples started but not yet yielded, as JSON (valid at a ``Checkpoint``)."""
        return [run.to_state() for _, run in sorted(self._order.held.items())]

    def restore(self, state: Sequence[dict[str, Any]]) -> None:
        """Continue from a checkpoint's ``in_flight()``: the next :meth:`outcomes` finishes these first."""
        self._restored = {data["seq"]: ExampleRun.from_state(data) for data in state}

    def resources(self) -> dict[str, Any]:
        """What runs this pipeline, for the manifest: one worker (this process) and the components' devices."""
        return {"workers": 1, "devices": [self.devices()]}

    def devices(self) -> dict[str, str]:
        """The torch device of each component that has one (``decoder.device=cuda``...)."""
        return devices({kind: getattr(c, "config", None) for kind, c in (("decoder", self.decoder), ("aligner", self.aligner))})

    # -- one example ------------------------------------------------------------------
    def _start(self, order: InOrder[ExampleRun], item: Example | Continued) -> ExampleRun:
        """An example just read, as a run held in ``order``."""
        if isinstance(item, Continued):
            run = self._continued(order.next_seq, item)
        else:
            jobs, skipped = self._jobs_for(item)
            self.stats.jobs += len(jobs)
            self.stats.skipped_spans += skipped
            if not jobs:
                self.stats.skipped_examples += 1
            run = ExampleRun(seq=order.next_seq, example=item, jobs=jobs, seen={item.text})
        order.add(run)
        return run

    def _continued(self, seq: int, item: Continued) -> ExampleRun:
        """A run's example as it stood after its last round: its jobs rebuilt, and each round's
        outcome replayed on its job as ``_advance`` acted on it (avoid set, stop).

        Each outcome's constraints must be what the replay gives that round: a run made with
        another expander or lexicon (or its files edited) would otherwise go on from a state
        it never had. The counts are not touched: the run counted those rounds when it ran them.
        """
        example = item.example
        if self.settings.chain:
            raise ConfigError("cannot add iterations to a run with chain = true: its rounds' sentences are not kept")

        def refuse(why: str) -> RunStateError:
            return RunStateError(f"cannot add iterations to example {example.id!r}: {why}")

        jobs, _ = self._jobs_for(example)
        # A round's outcomes in the order it wrote them: its choice, then its further records (``per_round``).
        rounds: dict[tuple[int | None, int], list[Augmented | Rejection]] = {}
        for o in item.outcomes:
            rounds.setdefault((o.target, o.iteration), []).append(o)
        run = ExampleRun(seq=seq, example=example, jobs=jobs, seen={example.text}, iteration=item.iterations)
        for job in jobs:
            for iteration in range(1, item.iterations + 1):
                job.iteration = iteration
                outcomes = rounds.pop((job.target, iteration), None)
                if outcomes is None:
                    raise refuse(f"span {job.target} has no record or rejection of iteration {iteration} in the run's files (did the input change?)")
                if any(o.constraints != job.constraints for o in outcomes):
                    raise refuse(
                        f"span {job.target} had other constraints in iteration {iteration} than this spanaug gives it "
                        "(was the run made with another expander, lexicon or version?)"
                    )
                outcome = outcomes[0]
                record = outcome if isinstance(outcome, Augmented) else outcome.record
                if record is None:
                    job.stopped = outcome.reason
                    break
                more = [o for o in outcomes[1:] if isinstance(o, Augmented)]
                if len(more) < len(outcomes) - 1:
                    raise refuse(f"span {job.target} has a rejection after the first outcome of iteration {iteration}; a round's further records are accepted ones")
                run.seen.add(record.text)
                stopped = self._taken(job, example, record.tokens, _target_of(job, example, record))
                for further in more:  # as _advance took them: after the round's choice, never stopping the job
                    run.seen.add(further.text)
                    self._taken(job, example, further.tokens, _target_of(job, example, further))
                if stopped is not None:
                    break
        if rounds:
            target, iteration = next(iter(rounds))
            raise refuse(f"it has an outcome of span {target} in iteration {iteration}, which this run does not rewrite then")
        return run

    def _like_source(self, job: Job, candidate: Candidate) -> Candidate:
        """The candidate tokenized as the job's sentence is (``source_tokens``): "M." one token where the source has it."""
        if not self.settings.source_tokens:
            return candidate
        tokens = retokenize(candidate.tokens, job.tokens)
        return candidate if tokens == candidate.tokens else candidate.model_copy(update={"tokens": tokens})

    def _active(self, run: ExampleRun) -> list[int]:
        """Indices of the jobs that go on to the next iteration."""
        if run.iteration >= self.settings.iterations:
            return []
        return [j for j, job in enumerate(run.jobs) if job.stopped is None]

    def _finished(self, run: ExampleRun) -> bool:
        return not run.pending and not self._active(run)

    def _jobs_for(self, example: Example) -> tuple[list[Job], int]:
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
            job = Job(
                target=t,
                tokens=example.tokens,
                span=tspan,
                kept=kept,
                avoid=_unique(self.expander.expand(target.text(example.tokens))),
                include=self._includes(example.tokens, kept),
                carried=self._carried(example, {t, *(i for i, _ in kept)}),
            )
            job.prefer = self._prefer(example, job)
            jobs.append(job)
        # A sentence with no span to rewrite is paraphrased whole; one whose spans were all
        # skipped is not (its kept spans belong to a skipped target).
        if not rewritten and keepable:
            whole = Job(None, example.tokens, None, keepable, [], self._includes(example.tokens, keepable))
            whole.carried = self._carried(example, {i for i, _ in keepable})
            if whole.free_words >= s.min_words:
                jobs.append(whole)
        return jobs, skipped

    def _carried(self, example: Example, taken: set[int]) -> list[tuple[int, Span]]:
        """The spans a job's records carry along (``carry``): all but its target and kept spans
        (none with ``keep = drop``, which carries nothing)."""
        if not self.settings.carry or self.settings.keep == "drop":
            return []
        return [(i, sp) for i, sp in enumerate(example.spans) if i not in taken]

    def _prefer(self, example: Example, job: Job) -> list[str]:
        """The lexicon's words for the job's target under its avoid set so far, for the
        prompt to offer (recomputed each round: a word written and now avoided makes room)."""
        if self.lexicon is None or job.target is None:
            return []
        return _unique(self.lexicon.alternatives(example, example.spans[job.target], tuple(job.avoid)))

    def _includes(self, tokens: Sequence[str], kept: list[tuple[int, Span]]) -> list[str]:
        return _unique(sp.text(tokens) for _, sp in kept) if self.settings.keep == "include" else []

    # -- one iteration ----------------------------------------------------------------
    def _iterate(self, runs: list[ExampleRun]) -> None:
        """Act on the iteration whose n-best lists are all back, for each of ``runs``: one aligner call for all."""
        attempts = [Attempt(run, run.jobs[j], nbest or []) for run in runs for j, nbest in sorted(run.pending.items())]
        for run in runs:
            run.pending.clear()
            run.iteration += 1
        self.stats.candidates += sum(len(a.nbest) for a in attempts)
        self._align(attempts)
        self._score(attempts)
        for attempt in attempts:
            attempt.job.iteration = attempt.run.iteration
            attempt.run.outcomes.extend(self._advance(attempt))

    def _align(self, attempts: list[Attempt]) -> None:
        """Align every attempt's target (and, with ``keep=align``, kept spans; with ``carry``, the
        carried spans a candidate does not copy once) into its candidates."""
        slots: list[tuple[Attempt, int, int | None]] = []
        items: list[AlignItem] = []
        for attempt in attempts:
            job = attempt.job
            attempt.target = [None] * len(attempt.nbest)
            for rank, cand in enumerate(attempt.nbest):
                if job.span is not None:
                    slots.append((attempt, rank, None))
                    items.append(AlignItem(source_tokens=job.tokens, source_span=job.span, target_tokens=cand.tokens))
                wanted = job.kept if self.settings.keep == "align" else []
                wanted = wanted + [(i, sp) for i, sp in job.carried if not carried_copy_found(attempt, rank, sp, self.settings)]
                for idx, sp in wanted:
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

    def _score(self, attempts: list[Attempt]) -> None:
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

    def _avoid_next(self, job: Job, aligned: Sequence[str]) -> list[str]:
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

    def _taken(self, job: Job, example: Example, tokens: Sequence[str], span: tuple[int, int] | None) -> str | None:
        """Act on the candidate a round kept (``span``: where its target went): the aligned phrase
        joins the job's avoid set. When that adds nothing the job stops (its next round would
        ask the decoder the same request): the reason, else None."""
        if span is None:
            return None
        fresh = [p for p in _unique(self._avoid_next(job, tokens[span[0] : span[1]])) if p not in job.avoid]
        job.avoid.extend(fresh)
        if fresh:
            job.prefer = self._prefer(example, job)
            return None
        job.stopped = "avoid-set-unchanged"
        return job.stopped

    def _more(self, attempt: Attempt, choices: Sequence[Choice], kept: Choice, context: FilterContext) -> list[tuple[Choice, Augmented]]:
        """A round's further records (``per_round``) beside ``kept``, its choice: the choices after
        it, best first, that the filters accept and that write what the job has not. (Those
        before it the filters dropped, against fewer earlier outputs than they would see here.)

        A span job's phrase for its target must hold nothing the next round's avoid set would
        bar after the round's earlier records ("review the results" is not new after "review
        its results": ``avoid_words``); a whole-sentence job's sentence must not be one it has
        written, token for token. The filters see the round's earlier records among the earlier
        outputs (``copy``, ``novelty``). All are built before the round's choices grow the avoid
        set, so every record of a round carries the constraints it was decoded under.
        """
        wanted = self.settings.per_round - 1
        if not wanted:
            return []
        job, example = attempt.job, attempt.run.example
        earlier = set(context.previous_texts) | {kept.candidate.text}
        barred = [*job.avoid, *self._barred(job, kept)]
        written = {normalize(text, case_sensitive=False) for text in earlier}
        more: list[tuple[Choice, Augmented]] = []
        after = next(i for i, choice in enumerate(choices) if choice is kept) + 1
        for other in choices[after:]:
            if len(more) == wanted:
                break
            if other.span is None:
                if normalize(other.candidate.text, case_sensitive=False) in written:
                    continue
            elif any(contains_phrase(_phrase(other), p, case_sensitive=False) for p in barred):
                continue
            record = record_of(job, example, other, self.components, nth=len(more) + 2)
            if first_rejection(self.filters, record, FilterContext(example, frozenset(earlier))) is None:
                more.append((other, record))
                earlier.add(other.candidate.text)
                written.add(normalize(other.candidate.text, case_sensitive=False))
                barred += self._barred(job, other)
        return more

    def _barred(self, job: Job, choice: Choice) -> list[str]:
        """What keeping a span job's ``choice`` adds to its avoid set (none for a whole-sentence job)."""
        if choice.span is None:
            return []
        return list(self._avoid_next(job, choice.candidate.tokens[choice.span[0] : choice.span[1]]))

    def _advance(self, attempt: Attempt) -> list[Augmented | Rejection]:
        """The outcomes of one attempt; updates the job (avoid set, stop, chained sentence)."""
        job, example = attempt.job, attempt.run.example
        choices, why = ranked_choices(attempt, self.settings)
        if not choices:
            job.stopped = why
            self.stats.stopped[why] += 1
            return [Rejection(example.id, job.target, job.iteration, why, job.constraints)]
        context = FilterContext(source=example, previous_texts=frozenset(attempt.run.seen))
        choice = choices[0]
        record = record_of(job, example, choice, self.components)
        reason = first_rejection(self.filters, record, context)
        if reason is not None and self.settings.filter_candidates:
            # The runners-up, best first: the round keeps the first the filters accept. When
            # they accept none, the round rejects its best, as it does without this setting.
            for other in choices[1:]:
                other_record = record_of(job, example, other, self.components)
                if first_rejection(self.filters, other_record, context) is None:
                    choice, record, reason = other, other_record, None
                    self.stats.filtered_choices += 1
                    break
        cand = choice.candidate
        out: list[Augmented | Rejection] = []
        if reason is None:
            self.stats.accepted += 1
            more = self._more(attempt, choices, choice, context)
            out += [record, *(r for _, r in more)]
            self.stats.accepted += len(more)
            self.stats.more_records += len(more)
        else:
            more = []
            self.stats.rejected += 1
            out.append(Rejection(example.id, job.target, job.iteration, reason, job.constraints, record))
        attempt.run.seen.add(cand.text)
        stopped = self._taken(job, example, cand.tokens, choice.span)
        if stopped is not None:
            self.stats.stopped[stopped] += 1
        for other, _ in more:  # each a new phrase, so it grows the avoid set and never stops the job
            attempt.run.seen.add(other.candidate.text)
            self._taken(job, example, other.candidate.tokens, other.span)
        if self.settings.chain:
            job.tokens, job.span, job.kept, job.carried = cand.tokens, choice.span, choice.kept, choice.carried
        return out


def _phrase(choice: Choice) -> str:
    """What a span job's choice wrote for its target."""
    assert choice.span is not None
    return detokenize(choice.candidate.tokens[choice.span[0] : choice.span[1]])


def _target_of(job: Job, example: Example, record: Augmented) -> tuple[int, int] | None:
    """Where a job's record put its target: ``record_of`` writes the job's target, kept and
    carried spans in source order, leaving out the carried ones it lacks (``dropped``)."""
    if job.target is None:
        return None
    present = sorted({job.target, *(i for i, _ in job.kept), *(i for i, _ in job.carried)} - set(record.dropped))
    source = example.spans[job.target]
    if len(present) == len(record.spans):
        span = record.spans[present.index(job.target)]
        if (span.label, span.role) == (source.label, source.role):
            return span.start, span.end
    raise RunStateError(f"cannot add iterations: record {record.id!r} does not hold its target span where this spanaug writes it")
