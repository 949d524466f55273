"""How a round chooses the candidate it keeps: pure functions of an ``Attempt`` and the settings.

A candidate may be kept when the aligner found the rewritten span in it (on a content
word, with ``content_targets``) and every kept span too (``locate_kept``); a
whole-sentence job's must be new. The source's other spans come along where they are
found (``locate_carried``, with ``carry``), marked ``attrs["carried"]``. ``ranked_choices`` orders those by their scores
weighted by ``rerank`` (the paper: the aligner's score alone), ties in the decoder's
order, and says why a job stops when there is none; ``record_of`` is the record a choice
makes; ``first_rejection`` asks the filters about it. The pipeline acts on the answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from spanaug_core.errors import SpanaugError
from spanaug_core.jobs import Attempt, Choice, Job
from spanaug_core.protocols import Filter, FilterContext
from spanaug_core.settings import PipelineSettings
from spanaug_core.text import find_copy, is_content_word, overlaps, retokenize, tokenize
from spanaug_core.types import CARRIED, Alignment, Augmented, Candidate, Example, Span


def source_phrase(job: Job, span: Span, like_source: bool) -> list[str]:
    """A span's words as a candidate spells them: tokenized as a decoder's text is (a corpus
    token spanaug splits, "F-16" in CoNLL-2003, comes back as "F - 16"), and with
    ``like_source`` (``source_tokens``) joined back where the source had one token, as the
    candidates are."""
    words = tokenize(span.text(job.tokens))
    return list(retokenize(words, job.tokens)) if like_source else words


def _place(
    attempt: Attempt, rank: int, idx: int, phrase: list[str], taken: list[tuple[int, int]], copy: bool | None, aligned: bool
) -> tuple[tuple[int, int], float] | None:
    """Where source span ``idx`` is in candidate ``rank``, clear of ``taken``, and how surely.

    ``copy`` True: the one place the candidate copies the span word for word; False: the
    first such place; None: no copy is looked for. Then, with ``aligned``, the aligner's
    answer, if it was asked.
    """
    if copy is not None:
        where = find_copy(attempt.nbest[rank].tokens, phrase, taken, unique=copy)
        if where is not None:
            return where, 1.0
    found = attempt.kept.get((rank, idx)) if aligned else None
    if found is not None and found.span is not None and not any(overlaps(found.span, t) for t in taken):
        return found.span, found.score
    return None


def locate_kept(
    attempt: Attempt, rank: int, target_span: tuple[int, int] | None, settings: PipelineSettings
) -> tuple[list[tuple[int, Span]], float] | None:
    """Where each kept span is in candidate ``rank`` (and the weakest score), or None if one is lost.

    ``keep="align"`` takes, with ``keep_copies``, the one place where the candidate copies a
    kept span word for word, and the aligner's answer for the others; otherwise a kept
    span must appear word for word (case folded if need be), clear of the target and of
    the other kept spans.
    """
    job = attempt.job
    taken: list[tuple[int, int]] = [target_span] if target_span else []
    located: list[tuple[int, Span]] = []
    weakest = 1.0
    align = settings.keep == "align"
    for idx, sp in job.kept:
        # A span copied once needs no aligner, which may be unsure of it (no answer) or
        # place only part of it ("Baghdad" of "pro-Baghdad", where the candidate is
        # tokenized finer than the corpus); one copied twice could be either. With
        # keep="include" the decoder was told the phrase, so its first copy is it.
        copy = (True if settings.keep_copies else None) if align else False
        found = _place(attempt, rank, idx, source_phrase(job, sp, settings.source_tokens), taken, copy, align)
        if found is None:
            return None
        taken.append(found[0])
        located.append((idx, sp.moved(*found[0])))
        weakest = min(weakest, found[1])
    return located, weakest


def carried_copy_found(attempt: Attempt, rank: int, span: Span, settings: PipelineSettings) -> bool:
    """Whether candidate ``rank`` copies a carried span once, word for word (then no aligner is asked)."""
    return find_copy(attempt.nbest[rank].tokens, source_phrase(attempt.job, span, settings.source_tokens), [], unique=True) is not None


def locate_carried(
    attempt: Attempt, rank: int, kept: list[tuple[int, Span]], settings: PipelineSettings
) -> tuple[list[tuple[int, Span]], tuple[int, ...]]:
    """The job's carried spans found in candidate ``rank``, and the source spans its record lacks.

    A carried span is placed as a kept span is (its one copy, else the aligner's answer),
    but none is required. A span of a group other than the rewritten span's comes only
    with its whole group: an SRL predicate or FrameNet annotation set missing some of its
    arguments would teach a model that they are none. ``dropped`` lists, by index in the
    source's spans, every span neither rewritten, kept nor carried.
    """
    job = attempt.job
    example = attempt.run.example
    own = example.spans[job.target].group if job.target is not None else None
    found: dict[int, Span] = {}
    for idx, sp in job.carried:
        where = _place(attempt, rank, idx, source_phrase(job, sp, settings.source_tokens), [], True, True)
        if where is not None:
            found[idx] = sp.moved(*where[0])
    broken = {sp.group for idx, sp in job.carried if idx not in found and sp.group is not None and sp.group != own}
    carried = [(idx, sp) for idx, sp in found.items() if sp.group is None or sp.group == own or sp.group not in broken]
    present = {idx for idx, _ in (*kept, *carried)} | ({job.target} if job.target is not None else set())
    return carried, tuple(i for i in range(len(example.spans)) if i not in present)


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


def found_target(attempt: Attempt, rank: int, content: bool) -> Alignment | None:
    """Where the aligner found a span job's target in candidate ``rank``, or None: not found,
    or (``content``) found on function words alone where the source span holds a content
    word (by the function-word list, or by its ``attrs["pos"]``).

    The latter is the aligner settling on the closed-class part of a rewording ("signed"
    found as the "into" of "entered into", "lacking" as "of" in "short of", "having" as
    "with"), which judges seldom accept (docs/results/srl-skips.md).
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


def keepable(attempt: Attempt, rank: int, settings: PipelineSettings) -> tuple[tuple[int, int] | None, float, list[tuple[int, Span]]] | None:
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
    located = locate_kept(attempt, rank, span, settings)
    if located is None:
        return None
    kept, kept_score = located
    return span, kept_score if job.span is None else score, kept


def ranked_choices(attempt: Attempt, settings: PipelineSettings) -> tuple[list[Choice], str]:
    """The candidates an attempt may keep, best first, or none and the reason its job stops (a pure function).

    The :func:`keepable` candidates, by their scores weighted by ``settings.rerank``
    (highest first), ties going to the decoder's order.
    """
    job = attempt.job
    if not attempt.nbest:
        return [], "no-candidates"
    keyed: list[tuple[float, Choice]] = []
    for rank, cand in enumerate(attempt.nbest):
        viable = keepable(attempt, rank, settings)
        if viable is None:
            continue
        span, score, kept = viable
        scores = candidate_scores(cand, score, rank, attempt.scored[rank] if attempt.scored else {})
        carried, dropped = locate_carried(attempt, rank, kept, settings) if settings.carry else ([], ())
        keyed.append((rerank_key(scores, settings.rerank), Choice(cand, rank, span, kept, scores, carried, dropped)))
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


def _marked(span: Span, carried: bool) -> Span:
    """``span`` with ``attrs["carried"]`` set, or without it (a source that is itself a record may have it)."""
    if carried:
        return span.model_copy(update={"attrs": {**span.attrs, CARRIED: True}})
    if CARRIED in span.attrs:
        return span.model_copy(update={"attrs": {k: v for k, v in span.attrs.items() if k != CARRIED}})
    return span


def record_of(job: Job, example: Example, choice: Choice, components: dict[str, str], nth: int = 1) -> Augmented:
    """The record a round writes if it keeps ``choice``: the candidate with its target, kept and carried spans.

    ``nth`` above 1: the round's further record (``per_round``), whose id ends ``/itN.nth``.
    """
    spans = [(idx, _marked(sp, False)) for idx, sp in choice.kept]
    if job.target is not None and choice.span is not None:
        spans.append((job.target, _marked(example.spans[job.target].moved(*choice.span), False)))
    spans.extend((idx, _marked(sp, True)) for idx, sp in choice.carried)
    spans.sort(key=lambda pair: pair[0])
    stem = example.id if job.target is None else f"{example.id}/s{job.target}"
    return Augmented(
        id=f"{stem}/it{job.iteration}" + (f".{nth}" if nth > 1 else ""),
        source_id=example.id,
        target=job.target,
        iteration=job.iteration,
        tokens=choice.candidate.tokens,
        text=choice.candidate.text,
        spans=tuple(sp for _, sp in spans),
        scores=choice.scores,
        constraints=job.constraints,
        components=components,
        dropped=choice.dropped,
    )
