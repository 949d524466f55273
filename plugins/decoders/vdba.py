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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spanaug_core.types import DecodeRequest
from spanaug_decoders.tries import NegativeBatchState, NegativeTrie, PositiveBatchState, PositiveTrie, TrieTable

if TYPE_CHECKING:
    import torch

    from spanaug_decoders.adapters import Session


@dataclass(frozen=True)
class SearchOptions:
    """Beam width, pruning and sampling for one search; their defaults are the vdba decoder's Config.

    ``prune``: drop candidates whose total log-probability is more than this below the
    sentence's best finished hypothesis. ``sample_top_k``: sample instead of searching —
    each step's selection keys are the scores plus Gumbel noise, restricted to each
    hypothesis' top-k tokens (constraint tokens stay eligible).
    """

    beam_size: int
    prune: float | None
    sample_top_k: int | None
    length_penalty: float
    seed: int

    @classmethod
    def of(cls, config: Any) -> SearchOptions:
        """The search options a decoder config sets (any object with these attributes)."""
        return cls(**{name: getattr(config, name) for name in cls.__dataclass_fields__})


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


@dataclass
class _Sentence:
    """A sentence in the search: its key, tries, length limit, row of the trie tables and first step."""

    key: int
    positive: PositiveTrie
    negative: NegativeTrie
    max_length: int
    table_row: int = -1
    started: int = 0


class BeamSearch:
    """A beam search whose sentences come and go (continuous batching).

    ``add`` queues sentences; each ``step`` hands the queued ones to the session (which
    prompts them), runs the model over every row, extends every sentence by one token and
    returns the sentences that finished, with their hypotheses. Every sentence has
    ``beam_size`` rows; a new one starts with one live hypothesis. What a sentence gets
    depends only on its own text, tries and limit, not on which sentences shared its steps
    (up to the model's floating-point reductions).

    The step stays on the model's device: finished hypotheses are kept in device buffers
    and read back when their sentence stops, so a step that stops no sentence reads back
    one flag (whether any stopped) and nothing else.
    """

    def __init__(self, session: Session, end_ids: Sequence[int], options: SearchOptions) -> None:
        import torch

        self.session = session
        self.options = options
        self.k = options.beam_size
        device = session.device
        self.device = device
        self.ends = torch.tensor(list(end_ids), dtype=torch.long, device=device)
        self.generator = torch.Generator(device=device).manual_seed(options.seed)
        self.sentences: list[_Sentence] = []
        self.waiting: list[tuple[DecodeRequest, _Sentence]] = []
        self.steps = 0
        self.max_depth = 0  # the deepest positive trie of the live sentences
        self.with_positive = 0  # live sentences with positive constraints
        # No sentence yet: empty states over empty tables, extended as sentences join.
        no_rows = torch.zeros(0, dtype=torch.long, device=device)
        self.pos = PositiveBatchState.start(TrieTable([], device), no_rows)
        self.neg = NegativeBatchState.start(TrieTable([], device), no_rows)
        self.scores = torch.zeros(0, self.k, device=device)  # [b, k]
        self.best_finished = torch.zeros(0, device=device)  # [b]
        self.generated = torch.zeros(0, dtype=torch.long, device=device)  # [b]
        self.limits = torch.zeros(0, dtype=torch.long, device=device)  # [b]
        self.history = torch.zeros(0, 0, dtype=torch.long, device=device)  # [b*k, T], the last `generated` columns count
        self.finished = _Finished(0, self.k, 1, device)

    def __len__(self) -> int:
        """Sentences live or waiting to start."""
        return len(self.sentences) + len(self.waiting)

    def add(self, key: int, request: DecodeRequest, positive: PositiveTrie, negative: NegativeTrie, max_length: int) -> None:
        """Queue a sentence; it starts at the next ``step`` (the session prompts on ``request``)."""
        self.waiting.append((request, _Sentence(key, positive, negative, max_length)))

    def step(self) -> list[tuple[int, list[Hypothesis]]]:
        """One token for every sentence; the sentences that finished, hypotheses best first."""
        import torch

        if self.waiting:
            self._start_waiting()
        k, options, device = self.k, self.options, self.device
        logprobs = self.session.logprobs()  # [b*k, V], ours to change
        b, v = len(self.sentences), logprobs.shape[1]
        pos, neg = self.pos, self.neg
        has_positive = self.with_positive > 0
        neg.block(logprobs)
        if has_positive:  # an end waits until every positive constraint is met
            held_back = (pos.unmet > 0)[:, None]
            logprobs.index_copy_(1, self.ends, logprobs.index_select(1, self.ends).masked_fill_(held_back, float("-inf")))
        if options.sample_top_k is None:
            keys, offset = logprobs, self.scores.view(-1)  # a hypothesis' key is its total: score + log-probability
        else:
            keys, offset = _perturbed(self.scores.view(-1, 1) + logprobs, logprobs, pos, options.sample_top_k, self.generator), None

        flat, valid = _candidates(keys, offset, pos if has_positive else None, b, k, v)  # [b, C]
        parent = torch.arange(b, device=device)[:, None] * k + flat // v  # [b, C] row of the extended hypothesis
        token = flat % v
        total = self.scores.view(-1)[parent] + logprobs[parent, token]
        key = total if offset is not None else keys[parent, token]
        valid &= torch.isfinite(key)
        if options.prune is not None:
            valid &= total >= (self.best_finished[:, None] - options.prune)
        if has_positive:
            after = pos.select(parent.flatten()).advance(token.flatten())
            # Banks count unmet constraints, then tokens into the next one (Post & Vilar count tokens).
            level = (after.unmet * (self.max_depth + 1) - after.progress).view(b, -1)
        else:
            level = torch.zeros_like(flat)
        order = _allocate(level, key, valid)  # [b, C] candidate columns, best first
        parent, token, total = parent.gather(1, order), token.gather(1, order), total.gather(1, order)
        valid = valid.gather(1, order)
        is_end = torch.isin(token, self.ends) & valid

        # End tokens ranked within the first k finish their hypothesis.
        done_now = is_end & (torch.arange(order.shape[1], device=device) < k)
        self.finished.add(done_now, parent, token, total, self.history, self.generated)
        self.best_finished = torch.maximum(self.best_finished, total.masked_fill(~done_now, float("-inf")).amax(1))

        # The first k other valid candidates make the next beam.
        keep = valid & ~is_end
        slot_of = keep.long().cumsum(1) - 1
        take = keep & (slot_of < k)
        picked = torch.argsort((~take).to(torch.int8), dim=1, stable=True)[:, :k]  # taken columns first, in order
        slot_live = take.gather(1, picked)
        new_rows = torch.where(slot_live, parent.gather(1, picked), (torch.arange(b, device=device) * k)[:, None]).flatten()
        new_tokens = torch.where(slot_live, token.gather(1, picked), self.ends[0]).flatten()
        self.scores = torch.where(slot_live, total.gather(1, picked), float("-inf"))

        self.steps += 1
        self.generated += 1
        stop = (self.finished.count >= k) | ~slot_live.any(1) | (self.generated >= self.limits)
        self.history = torch.cat([self.history[new_rows], new_tokens[:, None]], dim=1)
        self.pos = pos.select(new_rows).advance(new_tokens)
        self.neg = neg.select(new_rows).advance(new_tokens)
        stopped = stop.nonzero(as_tuple=True)[0].tolist()  # the step's one read-back
        done = self._finish(stopped) if stopped else []
        if stopped:
            alive = (~stop).nonzero(as_tuple=True)[0]
            keep_rows = (alive[:, None] * k + torch.arange(k, device=device)).flatten()
            new_rows, new_tokens = new_rows[keep_rows], new_tokens[keep_rows]
            self._keep(alive, keep_rows)
        self.session.advance(new_rows, new_tokens)
        return done

    def _finish(self, stopped: list[int]) -> list[tuple[int, list[Hypothesis]]]:
        """The hypotheses of the sentences that stop, best first; one that finished none keeps
        its live hypotheses that met every constraint (cut at the length limit)."""
        k, options = self.k, self.options
        finished = self.finished.read(stopped)
        unmet = self.pos.unmet.view(-1, k)
        done = []
        for i, hyps in zip(stopped, finished, strict=True):
            if not hyps:
                n = self.steps - self.sentences[i].started
                scores, unmet_i = self.scores[i].tolist(), unmet[i].tolist()
                for j in range(k):
                    if math.isfinite(scores[j]) and unmet_i[j] == 0:
                        tokens = self.history[i * k + j, self.history.shape[1] - n :].tolist()
                        hyps.append(Hypothesis(tuple(tokens), scores[j], n))
            done.append((self.sentences[i].key, sorted(hyps, key=lambda h: h.normalized(options.length_penalty), reverse=True)))
        return done

    def _keep(self, alive: torch.Tensor, keep_rows: torch.Tensor) -> None:
        """Drop the sentences that stopped: keep sentences ``alive`` and their rows ``keep_rows``."""
        kept = alive.tolist()
        self.sentences = [self.sentences[i] for i in kept]
        self.with_positive = sum(1 for s in self.sentences if s.positive.num_groups)
        self.scores, self.best_finished = self.scores[alive], self.best_finished[alive]
        self.generated, self.limits = self.generated[alive], self.limits[alive]
        self.finished = self.finished.select(alive)
        longest = max((self.steps - s.started for s in self.sentences), default=0)
        self.history = self.history[keep_rows, self.history.shape[1] - longest :]
        self.pos, self.neg = self.pos.select(keep_rows), self.neg.select(keep_rows)
        if len(self.pos.table) > 2 * len(self.sentences) + 8:
            self._compact_tables()

    def _compact_tables(self) -> None:
        """Trie tables of the live sentences only: stopped sentences' rows pile up as others join."""
        import torch

        rows = torch.tensor([s.table_row for s in self.sentences], dtype=torch.long, device=self.device)
        where = torch.full((len(self.pos.table),), -1, dtype=torch.long, device=self.device)
        where[rows] = torch.arange(len(rows), device=self.device)
        for i, sent in enumerate(self.sentences):
            sent.table_row = i
        pos_table, neg_table = self.pos.table.selected(rows), self.neg.table.selected(rows)
        self.pos = PositiveBatchState(pos_table, where[self.pos.example], self.pos.active, self.pos.remaining)
        self.neg = NegativeBatchState(neg_table, where[self.neg.example], self.neg.active)

    def _start_waiting(self) -> None:
        """Start the queued sentences (rows after the live ones): the session prompts them,
        their tries join the tables, and each gets one live hypothesis."""
        import torch

        k, device = self.k, self.device
        requests = [request for request, _ in self.waiting]
        new = [sent for _, sent in self.waiting]
        self.waiting = []
        self.session.add(requests, k)
        first_row = len(self.pos.table)
        for i, sent in enumerate(new):
            sent.table_row, sent.started = first_row + i, self.steps
        self.sentences.extend(new)
        self.with_positive += sum(1 for s in new if s.positive.num_groups)
        self.finished = self.finished.extended(len(new))
        start = torch.full((len(new), k), float("-inf"), device=device)
        start[:, 0] = 0.0
        self.scores = torch.cat([self.scores, start])
        self.best_finished = torch.cat([self.best_finished, torch.full((len(new),), float("-inf"), device=device)])
        self.generated = torch.cat([self.generated, torch.zeros(len(new), dtype=torch.long, device=device)])
        self.limits = torch.cat([self.limits, torch.tensor([s.max_length for s in new], dtype=torch.long, device=device)])
        self.history = torch.cat([self.history, self.history.new_zeros(len(new) * k, self.history.shape[1])])
        pos_table = self.pos.table.extended([s.positive for s in new])
        neg_table = self.neg.table.extended([s.negative for s in new])
        self.max_depth = int(max(max(s.positive.depth) for s in self.sentences))
        fresh = torch.arange(first_row, first_row + len(new), device=device).repeat_interleave(k)
        old_p, new_p = self.pos.rebase(pos_table, self.pos.example), PositiveBatchState.start(pos_table, fresh)
        old_n, new_n = self.neg.rebase(neg_table, self.neg.example), NegativeBatchState.start(neg_table, fresh)
        self.pos = PositiveBatchState(
            pos_table, torch.cat([old_p.example, fresh]), torch.cat([old_p.active, new_p.active]), torch.cat([old_p.remaining, new_p.remaining])
        )
        self.neg = NegativeBatchState(neg_table, torch.cat([old_n.example, fresh]), torch.cat([old_n.active, new_n.active]))


class _Finished:
    """Finished hypotheses of b sentences, kept on the device until their sentence stops.

    A sentence finishes at most ``k`` hypotheses a step and stops once it has ``k``, so it
    holds at most ``2k - 1``; slot ``2k`` takes the writes of candidates that did not
    finish (a scatter needs somewhere to put them). ``tokens`` [b, 2k + 1, L] are left-aligned.
    """

    def __init__(self, b: int, k: int, length: int, device: torch.device) -> None:
        import torch

        self.k, self.slots = k, 2 * k + 1
        self.count = torch.zeros(b, dtype=torch.long, device=device)
        self.logprob = torch.zeros(b, self.slots, device=device)
        self.length = torch.zeros(b, self.slots, dtype=torch.long, device=device)
        self.end = torch.zeros(b, self.slots, dtype=torch.long, device=device)
        self.tokens = torch.zeros(b, self.slots, length, dtype=torch.long, device=device)

    def _of(self, **fields: torch.Tensor) -> _Finished:
        out = _Finished.__new__(_Finished)
        out.k, out.slots = self.k, self.slots
        for name, value in fields.items():
            setattr(out, name, value)
        return out

    def extended(self, n: int) -> _Finished:
        """Room for ``n`` more sentences, after these."""
        import torch

        more = _Finished(n, self.k, self.tokens.shape[2], self.count.device)
        return self._of(**{name: torch.cat([getattr(self, name), getattr(more, name)]) for name in ("count", "logprob", "length", "end", "tokens")})

    def select(self, rows: torch.Tensor) -> _Finished:
        return self._of(**{name: getattr(self, name)[rows] for name in ("count", "logprob", "length", "end", "tokens")})

    def add(self, done: torch.Tensor, parent: torch.Tensor, token: torch.Tensor, total: torch.Tensor, history: torch.Tensor, generated: torch.Tensor) -> None:
        """Record candidates ``done`` [b, C] (rows ``parent``, end ``token``, log-probability
        ``total``): each row's tokens are the last ``generated`` [b] columns of ``history`` [b*k, T]."""
        import torch
        import torch.nn.functional as F

        b, c = done.shape
        width = int(history.shape[1])
        if width > self.tokens.shape[2]:
            self.tokens = F.pad(self.tokens, (0, width - self.tokens.shape[2]))
        slot = torch.where(done, self.count[:, None] + done.long().cumsum(1) - 1, self.slots - 1)  # [b, C]
        index = (torch.arange(b, device=done.device)[:, None] * self.slots + slot).flatten()
        self.logprob.view(-1).scatter_(0, index, total.flatten())
        self.length.view(-1).scatter_(0, index, (generated[:, None] + 1).expand(b, c).flatten())
        self.end.view(-1).scatter_(0, index, token.flatten())
        columns = torch.arange(self.tokens.shape[2], device=done.device)
        start = width - generated  # [b]: where each sentence's tokens begin in history
        source = (start[:, None] + columns).clamp(max=max(width - 1, 0))  # [b, L]
        rows = history[parent.flatten()] if width else history.new_zeros(b * c, 0)
        tokens = rows.gather(1, source.repeat_interleave(c, dim=0)) if width else rows.new_zeros(b * c, self.tokens.shape[2])
        tokens = tokens.masked_fill((columns >= generated[:, None]).repeat_interleave(c, dim=0), 0)
        self.tokens.view(-1, self.tokens.shape[2]).index_copy_(0, index, tokens)
        self.count += done.sum(1)

    def read(self, sentences: list[int]) -> list[list[Hypothesis]]:
        """The finished hypotheses of ``sentences``, in the order they finished."""
        import torch

        rows = torch.tensor(sentences, dtype=torch.long, device=self.count.device)
        count, logprob, length, end = (getattr(self, n)[rows].tolist() for n in ("count", "logprob", "length", "end"))
        tokens = self.tokens[rows].tolist()
        return [
            [Hypothesis(tuple(tokens[i][j][: length[i][j] - 1]), logprob[i][j], length[i][j], end[i][j]) for j in range(count[i])]
            for i in range(len(sentences))
        ]


def search(
    session: Session,
    positive: Sequence[PositiveTrie],
    negative: Sequence[NegativeTrie],
    end_ids: Sequence[int],
    options: SearchOptions,
    max_length: int,
    requests: Sequence[DecodeRequest] | None = None,
) -> list[list[Hypothesis]]:
    """Beam-search B sentences together under their tries; finished hypotheses per sentence, best first.

    ``positive``/``negative`` hold one trie per sentence; ``requests`` are the sentences
    (what the session prompts on; None for sessions that ignore them, as test doubles do).
    Every sentence may generate ``max_length`` tokens.
    """
    engine = BeamSearch(session, end_ids, options)
    requests = requests if requests is not None else [DecodeRequest(text="")] * len(positive)
    for i, (request, p, n) in enumerate(zip(requests, positive, negative, strict=True)):
        engine.add(i, request, p, n, max_length)
    out: list[list[Hypothesis]] = [[] for _ in positive]
    while len(engine):
        for i, hyps in engine.step():
            out[i] = hyps
    return out


def _candidates(
    keys: torch.Tensor, offset: torch.Tensor | None, pos: PositiveBatchState | None, b: int, k: int, v: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Candidate columns of the [b, k*V] matrix of keys ``offset[h] + keys[h, t]`` (``offset``
    [b*k] or None for 0; ``keys`` [b*k, V]): (flat LongTensor [b, C], valid BoolTensor [b, C]).

    Sources (a) the top 2k of each sentence, (b) constraint-advancing tokens, (c) each
    hypothesis' best token; duplicates are marked invalid. (a) is taken from each row's own
    top 2k, which holds every one of its row's entries in the sentence's top 2k, so the
    b*k x V matrix of totals is never built.
    """
    import torch

    device = keys.device
    n = min(2 * k, v)
    row_top, row_tokens = _row_top(keys, n)  # [b*k, n]
    if offset is not None:
        row_top = row_top + offset[:, None]
    slot = (torch.arange(b * k, device=device) % k)[:, None]
    row_flat = (slot * v + row_tokens).view(b, k * n)
    # A stable sort keeps ties in row order (topk leaves their order to its algorithm).
    ranked = row_top.view(b, k * n).sort(dim=1, descending=True, stable=True).indices[:, : 2 * k]
    top = row_flat.gather(1, ranked)  # (a)
    best = row_flat.view(b, k, n)[:, :, 0]  # (c)
    parts = [top, best]
    if pos is not None:
        mask, toks = pos.next_tokens()  # [b*k, E]
        parts.append(torch.where(mask, slot * v + toks, -1).view(b, -1))  # (b); -1 marks padding
    flat = torch.cat(parts, dim=1)
    flat, _ = flat.sort(dim=1)
    valid = flat >= 0
    valid[:, 1:] &= flat[:, 1:] != flat[:, :-1]
    return flat.clamp(min=0), valid


_BLOCK = 128  # columns per block of ``_row_top``


def _row_top(keys: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's ``n`` largest entries, largest first, and their columns: ([H, n], [H, n]).

    The same as ``keys.topk(n)`` (up to the order of ties) in two stages: the ``n`` blocks
    of ``_BLOCK`` columns with the largest maxima hold every one of a row's ``n`` largest
    entries, so topk runs over those columns only; a topk over a whole vocabulary is the
    slowest part of a CPU step. A GPU's topk is fast, and there the stages would only add
    kernel launches; a vocabulary that is no multiple of the block (test models) takes
    plain topk too.
    """
    import torch

    h, v = keys.shape
    if keys.device.type != "cpu" or v % _BLOCK or v < n * _BLOCK:
        return keys.topk(n, dim=1)
    blocks = keys.view(h, v // _BLOCK, _BLOCK).amax(2).topk(n, dim=1).indices  # [H, n]
    columns = (blocks[:, :, None] * _BLOCK + torch.arange(_BLOCK, device=keys.device)).view(h, -1)
    top, where = keys.gather(1, columns).topk(n, dim=1)
    return top, columns.gather(1, where)


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
