"""VDBA beam search on a scripted bigram model whose log-probabilities are known."""

from __future__ import annotations

import torch

from spanaug_decoders.tries import NegativeTrie, PositiveTrie
from spanaug_decoders.decoders import VDBADecoder
from spanaug_decoders.vdba import SearchOptions, _row_top, search

EOS, V = 0, 8
START = V  # row of the table used before the first token


class BigramSession:
    """A fake model: the next-token distribution depends only on the last token.

    ``tables`` holds one [V + 1, V] log-probability table per sentence, in the order
    sentences are added; row V is the distribution of the first token.
    """

    device = torch.device("cpu")
    joins_running = True

    def __init__(self, tables: list[torch.Tensor]) -> None:
        self.tables = torch.stack(tables)
        self.sentence = torch.zeros(0, dtype=torch.long)
        self.last = torch.zeros(0, dtype=torch.long)
        self.added = 0
        self.calls = 0

    def add(self, texts, copies: int) -> None:
        ids = torch.arange(self.added, self.added + len(texts))
        self.added += len(texts)
        self.sentence = torch.cat([self.sentence, ids.repeat_interleave(copies)])
        self.last = torch.cat([self.last, torch.full((len(texts) * copies,), START)])

    def logprobs(self) -> torch.Tensor:
        self.calls += 1
        return self.tables[self.sentence, self.last]

    def advance(self, rows: torch.Tensor, tokens: torch.Tensor) -> None:
        self.sentence = self.sentence[rows]
        self.last = tokens.clone()


def bigram(chain: list[int], rest: float = -6.0) -> torch.Tensor:
    """A table that strongly prefers ``chain`` then EOS; every other token gets ``rest``."""
    return chained(torch.full((V + 1, V), rest), chain)


def chained(logits: torch.Tensor, chain: list[int]) -> torch.Tensor:
    """``logits`` [V + 1, V] with ``chain`` then EOS made near certain, as log-probabilities."""
    prev = START
    for tok in [*chain, EOS]:
        logits[prev, tok] = 0.0
        prev = tok
    logits[EOS, EOS] = 0.0
    return torch.log_softmax(logits, dim=-1)


def decode(tables, positive=None, negative=None, **options):
    n = len(tables)
    positive = positive or [PositiveTrie([]) for _ in range(n)]
    negative = negative or [NegativeTrie([]) for _ in range(n)]
    max_length = options.pop("max_length", 10)
    opts = SearchOptions.of(VDBADecoder.Config(**{"beam_size": 4, **options}))
    return search(BigramSession(tables), positive, negative, [EOS], opts, max_length)


def contains(tokens, phrase):
    return any(tuple(tokens[i : i + len(phrase)]) == tuple(phrase) for i in range(len(tokens)))


def test_unconstrained_search_finds_the_preferred_chain():
    (hyps,) = decode([bigram([1, 2, 3])])
    assert hyps[0].tokens == (1, 2, 3)
    assert abs(hyps[0].logprob - float(bigram([1, 2, 3])[START, 1] * 4)) < 1e-4  # four near-certain steps


def test_positive_constraints_are_met_and_end_is_held_back():
    # The model wants to stop after one token; "5 6" must appear anyway.
    (hyps,) = decode([bigram([1])], positive=[PositiveTrie([[5, 6]])])
    assert hyps and all(contains(h.tokens, [5, 6]) for h in hyps)
    # Without the constraint the best output is just [1].
    assert decode([bigram([1])])[0][0].tokens == (1,)


def test_constraint_placed_where_the_model_likes_it():
    # 4 is cheap after 2 only: the constraint should land there, not at the start.
    table = bigram([1, 2, 3])
    logits = table.clone()
    logits[2, 4] = logits[2, 3] - 0.5
    logits[4, 3] = 0.0
    table = torch.log_softmax(logits, dim=-1)
    (hyps,) = decode([table], positive=[PositiveTrie([[4]])])
    assert hyps[0].tokens == (1, 2, 4, 3)


def test_negative_phrase_blocked_but_its_words_allowed():
    (hyps,) = decode([bigram([1, 2, 3])], negative=[NegativeTrie([[2, 3]])])
    assert hyps and not any(contains(h.tokens, [2, 3]) for h in hyps)
    assert 2 in hyps[0].tokens  # only the phrase is banned, not its first word


def test_each_sentence_of_a_batch_keeps_its_own_constraints():
    tables = [bigram([1, 2, 3]), bigram([1, 2, 3]), bigram([4, 5])]
    positive = [PositiveTrie([[6]]), PositiveTrie([]), PositiveTrie([[7], [1, 2]])]
    negative = [NegativeTrie([]), NegativeTrie([[2]]), NegativeTrie([[5]])]
    out = decode(tables, positive, negative)
    assert out[0] and all(6 in h.tokens for h in out[0])
    assert out[1] and all(2 not in h.tokens for h in out[1])
    assert out[2] and all(7 in h.tokens and contains(h.tokens, [1, 2]) and 5 not in h.tokens for h in out[2])


def test_batch_equals_one_sentence_at_a_time():
    tables = [bigram([1, 2, 3]), bigram([4, 5, 6, 7]), bigram([2])]
    positive = [PositiveTrie([[6]]), PositiveTrie([]), PositiveTrie([[3], [3]])]
    negative = [NegativeTrie([[3]]), NegativeTrie([[5, 6]]), NegativeTrie([])]
    together = decode(tables, positive, negative)
    apart = [decode([t], [p], [n])[0] for t, p, n in zip(tables, positive, negative)]
    assert [[h.tokens for h in hs] for hs in together] == [[h.tokens for h in hs] for hs in apart]


def test_unsatisfiable_constraint_gives_no_hypothesis():
    # "6" is banned and required: nothing can be returned.
    (hyps,) = decode([bigram([1])], positive=[PositiveTrie([[6]])], negative=[NegativeTrie([[6]])], max_length=5)
    assert hyps == []


def test_max_length_keeps_hypotheses_that_met_every_constraint():
    never_ends = bigram([1, 2, 3, 4, 5]).clone()
    never_ends[:, EOS] = float("-inf")
    (hyps,) = decode([never_ends], positive=[PositiveTrie([[1]])], max_length=3)
    assert hyps and all(len(h.tokens) == 3 and 1 in h.tokens for h in hyps)


def test_sampling_varies_with_the_seed_and_keeps_constraints():
    flat = torch.log_softmax(torch.zeros(V + 1, V), dim=-1)  # every token equally likely
    outs = [decode([flat], positive=[PositiveTrie([[3, 4]])], sample_top_k=V, seed=s)[0] for s in range(3)]
    assert all(h and all(contains(x.tokens, [3, 4]) for x in h) for h in outs)
    assert len({h[0].tokens for h in outs}) > 1


def test_row_top_finds_what_topk_finds():
    gen = torch.Generator().manual_seed(0)
    keys = torch.randn(6, 128 * 5, generator=gen)
    keys[0, :300] = float("-inf")  # banned tokens
    keys[1, 10:20] = 3.0  # ties
    keys[2] = float("-inf")  # a dead row
    for n in (1, 4, 5):
        top, columns = _row_top(keys, n)
        want, _ = keys.topk(n, dim=1)
        assert torch.equal(top, want)
        assert torch.equal(keys.gather(1, columns), top)  # each column holds its value
        assert all(len(set(row)) == n for row in columns.tolist())


def test_only_a_searching_decoder_promises_the_same_candidates_again():
    # The pipeline reuses a repeatable decoder's n-best list for a repeated request.
    assert VDBADecoder(VDBADecoder.Config()).repeatable
    assert not VDBADecoder(VDBADecoder.Config(sample_top_k=5)).repeatable


def untied(chain: list[int]) -> torch.Tensor:
    """Like ``bigram``, but no two tokens off the chain are equally likely, and an end off
    the chain is the least likely token: which of several tied candidates a beam keeps is
    left to ``topk``'s algorithm, and a test must not depend on it."""
    logits = torch.full((V + 1, V), -6.0) - 0.01 * torch.arange(V)
    logits[:, EOS] = -6.5
    return chained(logits, chain)


def test_pruning_drops_hopeless_candidates():
    # Once (1, 2, 3) has finished, every other extension is far worse and is dropped, so
    # the search stops with fewer finished hypotheses than the full beam would collect.
    (pruned,) = decode([untied([1, 2, 3])], prune=0.5)
    (full,) = decode([untied([1, 2, 3])])
    assert pruned[0].tokens == full[0].tokens == (1, 2, 3)
    assert len(pruned) == 1 and len(full) == 4
