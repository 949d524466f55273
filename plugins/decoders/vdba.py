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
    """A sentence in the search: its key, tries, length limit and how many tokens it has generated."""

    key: int
    positive: PositiveTrie
    negative: NegativeTrie
    max_length: int
    generated: int = 0


class BeamSearch:
    """A beam search whose sentences come and go (continuous batching).

    ``add`` queues sentences; each ``step`` first runs the model over the live beams, then
    starts the queued sentences (their prompts encoded by the session), then extends every
    sentence by one token and returns the sentences that finished, with their hypotheses.
    Every sentence has ``beam_size`` rows; a new one starts with one live hypothesis.
    What a sentence gets depends only on its own text, tries and limit, not on which
    sentences shared its steps (up to the model's floating-point reductions).
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
        self.waiting: list[tuple[str, _Sentence]] = []
        # No sentence yet: empty states over an empty table, re-based as sentences join.
        no_rows = torch.zeros(0, dtype=torch.long, device=device)
        self.pos = PositiveBatchState.start(TrieTable([], device), no_rows)
        self.neg = NegativeBatchState.start(TrieTable([], device), no_rows)
        self.scores = torch.zeros(0, self.k, device=device)  # [b, k]
        self.best_finished = torch.zeros(0, device=device)  # [b]
        self.history = torch.zeros(0, 0, dtype=torch.long, device=device)  # [b*k, T], the last `generated` columns count
        self.finished: list[list[Hypothesis]] = []
        self.max_depth = 0

    def __len__(self) -> int:
        """Sentences live or waiting to start."""
        return len(self.sentences) + len(self.waiting)

    def add(self, key: int, request: DecodeRequest, positive: PositiveTrie, negative: NegativeTrie, max_length: int) -> None:
        """Queue a sentence; it starts at the next ``step`` (the session prompts on ``request``)."""
        self.waiting.append((request, _Sentence(key, positive, negative, max_length)))

    def step(self) -> list[tuple[int, list[Hypothesis]]]:
        """One token for every sentence; the sentences that finished, hypotheses best first."""
        import torch

        k, options, device = self.k, self.options, self.device
        parts = [self.session.logprobs()] if self.sentences else []  # [b*k, V] for the live rows
        if self.waiting:
            parts.append(self._start_waiting())
        logprobs = torch.cat(parts) if len(parts) > 1 else parts[0]
        b = len(self.sentences)
        pos, neg = self.pos, self.neg
        has_positive = bool(pos.remaining.any())
        v = logprobs.shape[1]
        logprobs = neg.block(logprobs)
        held_back = (pos.unmet > 0).nonzero(as_tuple=True)[0]
        logprobs[held_back[:, None], self.ends[None, :]] = float("-inf")
        totals = self.scores.view(-1, 1) + logprobs  # [b*k, V]
        keys = totals if options.sample_top_k is None else _perturbed(totals, logprobs, pos, options.sample_top_k, self.generator)

        flat, valid = _candidates(keys, pos if has_positive else None, b, k, v)  # [b, C]
        key = keys.view(b, k * v).gather(1, flat)
        total = totals.view(b, k * v).gather(1, flat)
        valid &= torch.isfinite(key)
        if options.prune is not None:
            valid &= total >= (self.best_finished[:, None] - options.prune)
        parent = torch.arange(b, device=device)[:, None] * k + flat // v  # [b, C] row of the extended hypothesis
        token = flat % v
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
        for i, c in done_now.nonzero().tolist():
            row, sent = int(parent[i, c]), self.sentences[i]
            tokens = self.history[row, self.history.shape[1] - sent.generated :].tolist()
            hyp = Hypothesis(tuple(tokens), float(total[i, c]), sent.generated + 1, int(token[i, c]))
            self.finished[i].append(hyp)
            self.best_finished[i] = max(float(self.best_finished[i]), hyp.logprob)

        # The first k other valid candidates make the next beam.
        keep = valid & ~is_end
        slot_of = keep.long().cumsum(1) - 1
        take = keep & (slot_of < k)
        picked = torch.argsort((~take).to(torch.int8), dim=1, stable=True)[:, :k]  # taken columns first, in order
        slot_live = take.gather(1, picked)
        new_rows = torch.where(slot_live, parent.gather(1, picked), (torch.arange(b, device=device) * k)[:, None])
        new_tokens = torch.where(slot_live, token.gather(1, picked), self.ends[0])
        self.scores = torch.where(slot_live, total.gather(1, picked), float("-inf"))

        for sent in self.sentences:
            sent.generated += 1
        counts = torch.tensor([len(f) for f in self.finished], device=device)
        at_limit = torch.tensor([s.generated >= s.max_length for s in self.sentences], device=device)
        stop = (counts >= k) | ~slot_live.any(1) | at_limit
        new_rows, new_tokens = new_rows.flatten(), new_tokens.flatten()
        self.history = torch.cat([self.history[new_rows], new_tokens[:, None]], dim=1)
        pos = pos.select(new_rows).advance(new_tokens)
        neg = neg.select(new_rows).advance(new_tokens)
        done: list[tuple[int, list[Hypothesis]]] = []
        if stop.any():
            _finish_truncated(stop, self.sentences, self.scores, self.history, pos.unmet.view(b, k), self.finished)
            for i in stop.nonzero(as_tuple=True)[0].tolist():
                hyps = sorted(self.finished[i], key=lambda h: h.normalized(options.length_penalty), reverse=True)
                done.append((self.sentences[i].key, hyps))
            alive = (~stop).nonzero(as_tuple=True)[0]
            keep_rows = (alive[:, None] * k + torch.arange(k, device=device)).flatten()
            self.sentences = [self.sentences[i] for i in alive.tolist()]
            self.finished = [self.finished[i] for i in alive.tolist()]
            self.scores, self.best_finished = self.scores[alive], self.best_finished[alive]
            longest = max((s.generated for s in self.sentences), default=0)
            self.history = self.history[keep_rows, self.history.shape[1] - longest :]
            new_rows, new_tokens = new_rows[keep_rows], new_tokens[keep_rows]
            pos, neg = pos.select(keep_rows), neg.select(keep_rows)
        self.pos, self.neg = pos, neg
        self.session.advance(new_rows, new_tokens)
        return done

    def _start_waiting(self) -> torch.Tensor:
        """Start the queued sentences (rows after the live ones); their first log-probabilities [n*k, V]."""
        import torch

        k, device = self.k, self.device
        requests = [request for request, _ in self.waiting]
        new = [sent for _, sent in self.waiting]
        self.waiting = []
        first = self.session.add(requests, k)  # [n, V]
        b0 = len(self.sentences)
        self.sentences.extend(new)
        self.finished.extend([] for _ in new)
        # One live hypothesis per new sentence to start with.
        start = torch.full((len(new), k), float("-inf"), device=device)
        start[:, 0] = 0.0
        self.scores = torch.cat([self.scores, start])
        self.best_finished = torch.cat([self.best_finished, torch.full((len(new),), float("-inf"), device=device)])
        self.history = torch.cat([self.history, self.history.new_zeros(len(new) * k, self.history.shape[1])])
        # The tries of every live sentence in one table; the live states keep their place.
        pos_table = TrieTable([s.positive for s in self.sentences], device)
        neg_table = TrieTable([s.negative for s in self.sentences], device)
        self.max_depth = int(pos_table.depth.max())
        rows_sentence = torch.arange(len(self.sentences), device=device).repeat_interleave(k)
        live, fresh = rows_sentence[: b0 * k], rows_sentence[b0 * k :]
        old_p, new_p = self.pos.rebase(pos_table, live), PositiveBatchState.start(pos_table, fresh)
        old_n, new_n = self.neg.rebase(neg_table, live), NegativeBatchState.start(neg_table, fresh)
        self.pos = PositiveBatchState(
            pos_table, rows_sentence, torch.cat([old_p.active, new_p.active]), torch.cat([old_p.remaining, new_p.remaining])
        )
        self.neg = NegativeBatchState(neg_table, rows_sentence, torch.cat([old_n.active, new_n.active]))
        return first.repeat_interleave(k, dim=0)


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
    sentences: list[_Sentence],
    scores: torch.Tensor,
    history: torch.Tensor,
    unmet: torch.Tensor,
    finished: list[list[Hypothesis]],
) -> None:
    """A stopping sentence that finished nothing keeps its live hypotheses that met every constraint.

    ``stop`` [b], ``scores`` [b, k], ``history`` [b*k, T] (a sentence's tokens are its last
    ``generated`` columns), ``unmet`` [b, k].
    """
    k = scores.shape[1]
    for i in stop.nonzero(as_tuple=True)[0].tolist():
        out, n = finished[i], sentences[i].generated
        if out:
            continue
        for j in range(k):
            if bool(scores[i, j].isfinite()) and int(unmet[i, j]) == 0:
                tokens = history[i * k + j, history.shape[1] - n :].tolist()
                out.append(Hypothesis(tuple(tokens), float(scores[i, j]), n))
