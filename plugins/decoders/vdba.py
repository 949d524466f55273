"""Vectorized dynamic beam allocation (Hu et al. 2019, §3.3) over a model ``Session``.

Each step, for every sentence of the batch at once, candidates come from three sources:
(a) the top 2k extensions over the whole beam, (b) every token that advances a
hypothesis' unmet positive constraints, (c) each hypothesis' best token. Banned tokens
(negative tries) and end tokens of hypotheses with unmet constraints are set to -inf
first. The candidates form a matrix (sentence, unmet, score, hypothesis, token); sorting
it by unmet then score, numbering each (sentence, unmet) group ("step"), and sorting
again by step deals the k beam slots round-robin over the levels of progress, so the beam
always keeps hypotheses that have met few constraints and hypotheses that have met many.
Levels are finer than the paper's figure: within one unmet count, a hypothesis that is
already t tokens into a multi-token phrase has its own level, or a phrase's first token
would compete on score alone with every other extension and rarely survive.

An end token among the first k sorted candidates finishes that hypothesis (it leaves the
beam; the slots go to the next candidates). A sentence stops when it has k finished
hypotheses, its beam is empty, or ``max_length`` is reached; finished sentences leave the
batch (the model's cache shrinks with them). The same function decodes one sentence when
given a batch of one: that is the DBA-style sequential baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spanaug_decoders.tries import NegativeBatchState, NegativeTrie, PositiveBatchState, PositiveTrie, TrieTable

if TYPE_CHECKING:
    import torch

    from spanaug_decoders.adapters import Session


@dataclass(frozen=True)
class SearchOptions:
    """Beam width, length limit, pruning and sampling for one search.

    ``prune``: drop candidates whose total log-probability is more than this below the
    sentence's best finished hypothesis. ``sample_top_k``: sample instead of searching —
    each step's selection keys are the scores plus Gumbel noise, restricted to each
    hypothesis' top-k tokens (constraint tokens stay eligible).
    """

    beam_size: int = 10
    max_length: int = 64
    prune: float | None = None
    sample_top_k: int | None = None
    length_penalty: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Hypothesis:
    """A finished output: generated ids (end token excluded) and its scores."""

    tokens: tuple[int, ...]
    logprob: float  # sum of the token log-probabilities, end token included
    length: int  # tokens scored, end token included
    end: int | None = None  # the end token that finished it; None when it stopped at max length

    @property
    def output(self) -> tuple[int, ...]:
        """The ids to detokenize: an end token may carry text before its line break (".\n")."""
        return self.tokens if self.end is None else (*self.tokens, self.end)

    def normalized(self, length_penalty: float) -> float:
        return self.logprob / max(self.length, 1) ** length_penalty


def search(
    session: Session,
    positive: Sequence[PositiveTrie],
    negative: Sequence[NegativeTrie],
    end_ids: Sequence[int],
    options: SearchOptions,
) -> list[list[Hypothesis]]:
    """Beam-search the session's B sentences under their tries; finished hypotheses per sentence, best first.

    ``positive``/``negative`` hold one trie per sentence, in the session's order.
    """
    import torch

    k = options.beam_size
    device = session.device
    pos_table = TrieTable(positive, device)
    neg_table = TrieTable(negative, device)
    has_positive = bool(pos_table.valid.any())
    max_depth = int(pos_table.depth.max())
    ends = torch.tensor(list(end_ids), dtype=torch.long, device=device)
    generator = torch.Generator(device=device).manual_seed(options.seed)

    # Live sentences (original ids) and their k slots each; row r belongs to sentence r // k.
    sentence = torch.arange(len(positive), device=device)
    rows_example = sentence.repeat_interleave(k)
    pos = PositiveBatchState.start(pos_table, rows_example)
    neg = NegativeBatchState.start(neg_table, rows_example)
    scores = torch.full((len(positive), k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # one live hypothesis per sentence to start with
    history = torch.zeros(len(positive) * k, 0, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in positive]
    best_finished = torch.full((len(positive),), float("-inf"), device=device)
    first = True

    for t in range(options.max_length):
        b = len(sentence)
        logprobs = session.logprobs()  # [H, V]; at the first step H = b (one row per sentence)
        if first:
            logprobs = logprobs.repeat_interleave(k, dim=0)
        v = logprobs.shape[1]
        logprobs = neg.block(logprobs)
        unmet = pos.unmet  # [b*k]
        held_back = (unmet > 0).nonzero(as_tuple=True)[0]
        logprobs[held_back[:, None], ends[None, :]] = float("-inf")
        totals = scores.view(-1, 1) + logprobs  # [b*k, V]
        keys = totals if options.sample_top_k is None else _perturbed(totals, logprobs, pos, options.sample_top_k, generator)

        flat, valid = _candidates(keys, pos if has_positive else None, b, k, v)  # [b, C]
        key = keys.view(b, k * v).gather(1, flat)
        total = totals.view(b, k * v).gather(1, flat)
        valid &= torch.isfinite(key)
        if options.prune is not None:
            valid &= total >= (best_finished[:, None] - options.prune)
        parent = torch.arange(b, device=device)[:, None] * k + flat // v  # [b, C] row of the extended hypothesis
        token = flat % v
        if has_positive:
            after = pos.select(parent.flatten()).advance(token.flatten())
            # Banks count unmet constraints, then tokens into the next one (Post & Vilar count tokens).
            level = (after.unmet * (max_depth + 1) - after.progress).view(b, -1)
        else:
            level = torch.zeros_like(flat)
        order = _allocate(level, key, valid)  # [b, C] candidate columns, best first
        parent, token, total = parent.gather(1, order), token.gather(1, order), total.gather(1, order)
        valid = valid.gather(1, order)
        is_end = torch.isin(token, ends) & valid

        # End tokens ranked within the first k finish their hypothesis.
        done_now = is_end & (torch.arange(order.shape[1], device=device) < k)
        for i, c in done_now.nonzero().tolist():
            row = int(parent[i, c])
            hyp = Hypothesis(tuple(history[row].tolist()), float(total[i, c]), t + 1, int(token[i, c]))
            finished[int(sentence[i])].append(hyp)
            best_finished[i] = max(float(best_finished[i]), hyp.logprob)

        # The first k other valid candidates make the next beam.
        keep = valid & ~is_end
        slot_of = keep.long().cumsum(1) - 1
        take = keep & (slot_of < k)
        picked = torch.argsort((~take).to(torch.int8), dim=1, stable=True)[:, :k]  # taken columns first, in order
        slot_live = take.gather(1, picked)
        new_rows = torch.where(slot_live, parent.gather(1, picked), (torch.arange(b, device=device) * k)[:, None])
        new_tokens = torch.where(slot_live, token.gather(1, picked), ends[0])
        scores = torch.where(slot_live, total.gather(1, picked), float("-inf"))

        counts = torch.tensor([len(finished[int(s)]) for s in sentence], device=device)
        stop = (counts >= k) | ~slot_live.any(1)
        if t == options.max_length - 1:
            stop[:] = True
        new_rows, new_tokens = new_rows.flatten(), new_tokens.flatten()
        history = torch.cat([history[new_rows], new_tokens[:, None]], dim=1)
        pos = pos.select(new_rows).advance(new_tokens)
        neg = neg.select(new_rows).advance(new_tokens)
        if stop.any():
            _finish_truncated(stop, sentence, scores, history, pos.unmet.view(b, k), finished, t + 1)
            alive = (~stop).nonzero(as_tuple=True)[0]
            if len(alive) == 0:
                break
            keep_rows = (alive[:, None] * k + torch.arange(k, device=device)).flatten()
            sentence, scores, best_finished = sentence[alive], scores[alive], best_finished[alive]
            history, new_rows, new_tokens = history[keep_rows], new_rows[keep_rows], new_tokens[keep_rows]
            pos, neg = pos.select(keep_rows), neg.select(keep_rows)
        # The session holds one row per sentence before the first step, k after it.
        session.advance(new_rows // k if first else new_rows, new_tokens)
        first = False

    for hyps in finished:
        hyps.sort(key=lambda h: h.normalized(options.length_penalty), reverse=True)
    return finished


def _candidates(
    keys: torch.Tensor, pos: PositiveBatchState | None, b: int, k: int, v: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Candidate columns of the [b, k*V] score matrix: (flat LongTensor [b, C], valid BoolTensor [b, C]).

    Sources (a) top-2k per sentence, (b) constraint-advancing tokens, (c) best token per
    hypothesis; duplicates are marked invalid.
    """
    import torch

    device = keys.device
    top = keys.view(b, k * v).topk(min(2 * k, k * v), dim=1).indices  # (a)
    best = (keys.argmax(1).view(b, k) + torch.arange(k, device=device) * v)  # (c)
    parts = [top, best]
    if pos is not None:
        mask, toks = pos.next_tokens()  # [b*k, E]
        slot = (torch.arange(b * k, device=device) % k)[:, None]
        parts.append(torch.where(mask, slot * v + toks, -1).view(b, -1))  # (b); -1 marks padding
    flat = torch.cat(parts, dim=1)
    flat, _ = flat.sort(dim=1)
    valid = flat >= 0
    valid[:, 1:] &= flat[:, 1:] != flat[:, :-1]
    return flat.clamp(min=0), valid


def _allocate(level: torch.Tensor, key: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """The beam-allocation order of candidates (LongTensor [b, C] of column indices).

    Sort by (level, -key); number candidates within each level ("step"); sort stably by
    step, so slots go round-robin to levels, most progress first. Invalid candidates go
    last. ``level`` (lower = more progress), ``key``, ``valid``: [b, C].
    """
    import torch

    big = torch.iinfo(torch.long).max // 4
    by_score = torch.argsort(torch.where(valid, -key, float("inf")), dim=1, stable=True)
    level = torch.where(valid, level, big).gather(1, by_score)
    by_level = torch.argsort(level, dim=1, stable=True)
    order = by_score.gather(1, by_level)
    level = level.gather(1, by_level)
    position = torch.arange(level.shape[1], device=level.device).expand_as(level)
    starts = torch.ones_like(level, dtype=torch.bool)
    starts[:, 1:] = level[:, 1:] != level[:, :-1]
    step = position - torch.where(starts, position, 0).cummax(1).values
    step = torch.where(level == big, big, step)
    return order.gather(1, torch.argsort(step, dim=1, stable=True))


def _perturbed(
    totals: torch.Tensor, logprobs: torch.Tensor, pos: PositiveBatchState, top_k: int, generator: torch.Generator
) -> torch.Tensor:
    """Sampling keys [H, V]: totals + Gumbel noise on each row's top-k tokens and its constraint tokens, -inf elsewhere."""
    import torch

    eligible = torch.zeros_like(logprobs, dtype=torch.bool)
    eligible.scatter_(1, logprobs.topk(min(top_k, logprobs.shape[1]), dim=1).indices, True)
    mask, toks = pos.next_tokens()
    rows = mask.nonzero(as_tuple=True)[0]
    eligible[rows, toks[mask]] = True
    uniform = torch.rand(logprobs.shape, generator=generator, device=logprobs.device).clamp_(1e-9, 1 - 1e-9)
    gumbel = -torch.log(-torch.log(uniform))
    return torch.where(eligible, totals + gumbel, float("-inf"))


def _finish_truncated(
    stop: torch.Tensor,
    sentence: torch.Tensor,
    scores: torch.Tensor,
    history: torch.Tensor,
    unmet: torch.Tensor,
    finished: list[list[Hypothesis]],
    length: int,
) -> None:
    """A stopping sentence that finished nothing keeps its live hypotheses that met every constraint.

    ``stop`` [b], ``sentence`` [b], ``scores`` [b, k], ``history`` [b*k, T], ``unmet`` [b, k].
    """
    k = scores.shape[1]
    for i in stop.nonzero(as_tuple=True)[0].tolist():
        out = finished[int(sentence[i])]
        if out:
            continue
        for j in range(k):
            if bool(scores[i, j].isfinite()) and int(unmet[i, j]) == 0:
                out.append(Hypothesis(tuple(history[i * k + j].tolist()), float(scores[i, j]), length))
