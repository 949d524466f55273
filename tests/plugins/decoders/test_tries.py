"""Constraint tries: the paper's corner cases, repeats, nesting, immutability, batch == objects."""

from __future__ import annotations

import random

import pytest
import torch

from spanaug_decoders.tries import NegativeBatchState, NegativeTrie, PositiveBatchState, PositiveTrie, TrieTable

# Word ids for the paper's examples.
A, COW, AND, HORSE, SMALL, CAT, SAW, BIRD = range(1, 9)


def run(state, tokens):
    for tok in tokens:
        state = state.advance(tok)
    return state


def test_shared_prefix_needs_no_guess():
    # Fig. 1(a): "a cow" and "a horse" share "a"; generating "a cow and a horse" meets both.
    trie = PositiveTrie([[A, HORSE], [A, COW]])
    state = trie.start()
    assert state.unmet == 2 and state.next_tokens() == {A}
    state = state.advance(A)
    assert state.next_tokens() == {A, COW, HORSE} and state.progress == 1
    state = state.advance(COW)
    assert state.unmet == 1
    state = run(state, [AND, A, HORSE])
    assert state.finished


def test_substring_completed_while_tracking_longer_phrase():
    # Fig. 1(b): tracking "a small bird", the output goes "a small cat": "small cat" is met.
    trie = PositiveTrie([[A, SMALL, BIRD], [SMALL, CAT]])
    state = run(trie.start(), [A, SMALL, CAT])
    assert state.unmet == 1
    assert state.next_tokens() == {A}  # "small cat" is done; only "a small bird" is left
    state = run(state, [SAW, A, SMALL, BIRD])
    assert state.finished


def test_repeated_phrase_must_be_generated_twice():
    state = PositiveTrie([[CAT], [CAT]]).start()
    assert state.unmet == 2
    state = state.advance(CAT)
    assert state.unmet == 1 and state.next_tokens() == {CAT}
    assert state.advance(CAT).finished


def test_nested_phrases_met_together_and_dead_paths_pruned():
    # "small" is a prefix of "small cat": one "small cat" meets both.
    state = run(PositiveTrie([[SMALL, CAT], [SMALL]]).start(), [SMALL])
    assert state.unmet == 1 and state.next_tokens() == {SMALL, CAT}
    state = state.advance(CAT)
    assert state.finished and state.next_tokens() == set() and state.active == frozenset()


def test_alternatives_meet_one_constraint_once():
    # Two tokenizations of one phrase; generating "small cat" reaches both ends in one step.
    variants = [[CAT], [SMALL, CAT]]
    state = run(PositiveTrie.from_alternatives([variants]).start(), [SMALL, CAT])
    assert state.finished
    state = run(PositiveTrie.from_alternatives([variants, variants]).start(), [SMALL, CAT])
    assert state.unmet == 1 and state.next_tokens() == {SMALL, CAT}
    assert state.advance(CAT).finished


def test_states_are_immutable():
    trie = PositiveTrie([[A, COW]])
    start = trie.start()
    mid = start.advance(A)
    end = mid.advance(COW)
    assert start.unmet == 1 and start.active == frozenset()
    assert mid.unmet == 1 and mid.next_tokens() == {A, COW}
    assert end.finished
    neg = NegativeTrie([[A, COW]]).start()
    neg.advance(A)
    assert neg.blocked() == set()


def test_negative_trie_blocks_phrase_ends_and_single_tokens():
    trie = NegativeTrie([[A, SMALL, BIRD], [SMALL, CAT], [HORSE]])
    state = trie.start()
    assert state.blocked() == {HORSE}
    state = state.advance(A)
    assert state.blocked() == {HORSE}
    state = state.advance(SMALL)  # suffixes "a small" and "small" are both tracked
    assert state.blocked() == {HORSE, BIRD, CAT}
    state = state.advance(SAW)
    assert state.blocked() == {HORSE}


def test_empty_phrase_is_rejected():
    with pytest.raises(ValueError):
        PositiveTrie([[]])


def _random_phrases(rng: random.Random, vocab: int) -> list[list[int]]:
    return [[rng.randrange(vocab) for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(0, 4))]


def test_batch_form_agrees_with_object_form_on_random_cases():
    rng = random.Random(0)
    vocab, beams, steps = 5, 3, 12
    for _ in range(30):
        phrases = [_random_phrases(rng, vocab) for _ in range(4)]
        pos = [PositiveTrie.from_alternatives([[p, *_random_phrases(rng, vocab)[:1]] for p in ps]) for ps in phrases]
        neg = [NegativeTrie(p) for p in phrases]
        example = torch.arange(len(phrases)).repeat_interleave(beams)
        pos_batch = PositiveBatchState.start(TrieTable(pos), example)
        neg_batch = NegativeBatchState.start(TrieTable(neg), example)
        pos_obj = [pos[int(b)].start() for b in example]
        neg_obj = [neg[int(b)].start() for b in example]
        for _ in range(steps):
            # Shuffle the hypotheses as a beam reorder would, then advance each one.
            rows = example * beams + torch.tensor([rng.randrange(beams) for _ in example])
            pos_batch, neg_batch = pos_batch.select(rows), neg_batch.select(rows)
            pos_obj = [pos_obj[int(r)] for r in rows]
            neg_obj = [neg_obj[int(r)] for r in rows]
            tokens = torch.tensor([rng.randrange(vocab) for _ in example])
            pos_batch, neg_batch = pos_batch.advance(tokens), neg_batch.advance(tokens)
            pos_obj = [s.advance(int(t)) for s, t in zip(pos_obj, tokens)]
            neg_obj = [s.advance(int(t)) for s, t in zip(neg_obj, tokens)]
            assert pos_batch.unmet.tolist() == [s.unmet for s in pos_obj]
            assert pos_batch.progress.tolist() == [s.progress for s in pos_obj]
            mask, toks = pos_batch.next_tokens()
            assert [set(toks[h][mask[h]].tolist()) for h in range(len(example))] == [s.next_tokens() for s in pos_obj]
            mask, toks = neg_batch.blocked()
            assert [set(toks[h][mask[h]].tolist()) for h in range(len(example))] == [s.blocked() for s in neg_obj]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])  # a model on a GPU scores in bfloat16
def test_block_sets_blocked_logprobs_to_minus_inf(dtype):
    table = TrieTable([NegativeTrie([[2], [3, 4]]), NegativeTrie([])])
    state = NegativeBatchState.start(table, torch.tensor([0, 1])).advance(torch.tensor([3, 3]))
    out = torch.zeros(2, 6, dtype=dtype)
    state.block(out)  # in place
    assert torch.isinf(out[0]).nonzero().flatten().tolist() == [2, 4]
    assert not torch.isinf(out[1]).any()


def test_a_table_extended_and_selected_holds_the_same_tries():
    tries = [NegativeTrie([[2], [3, 4]]), PositiveTrie([[1, 2, 3]]), PositiveTrie.from_alternatives([[[5], [6, 7]], [[8]]])]
    grown = TrieTable(tries[:1]).extended(tries[1:2]).extended(tries[2:])
    whole = TrieTable(tries)
    for name in TrieTable._FIELDS:
        assert torch.equal(getattr(grown, name), getattr(whole, name)), name
    picked = whole.selected(torch.tensor([2, 0]))
    alone = TrieTable([tries[2], tries[0]])
    for name in TrieTable._FIELDS:  # the selected rows keep the wider padding of the whole table
        got, want = getattr(picked, name), getattr(alone, name)
        assert torch.equal(got[tuple(slice(0, n) for n in want.shape)], want), name


def test_states_rebased_onto_an_extended_table_go_on_as_before():
    # A batch that admits new examples mid-decoding extends its table; the live states are
    # rebased, and must then advance over the new table exactly as they would have over the old.
    small = [PositiveTrie([[1, 2, 3]]), NegativeTrie([[2, 4]])]
    larger = [PositiveTrie.from_alternatives([[[5], [6, 7, 1]], [[8, 2, 3, 4]]]), NegativeTrie([[1, 2, 3, 4, 5]])]
    example = torch.tensor([0])
    pos = PositiveBatchState.start(TrieTable(small[:1]), example).advance(torch.tensor([1]))
    neg = NegativeBatchState.start(TrieTable(small[1:]), example).advance(torch.tensor([2]))
    pos = pos.rebase(pos.table.extended(larger[:1]), example)
    neg = neg.rebase(neg.table.extended(larger[1:]), example)
    pos_obj, neg_obj = run(small[0].start(), [1]), run(small[1].start(), [2])
    for token in (2, 3):
        pos, neg = pos.advance(torch.tensor([token])), neg.advance(torch.tensor([token]))
        pos_obj, neg_obj = pos_obj.advance(token), neg_obj.advance(token)
        assert pos.unmet.tolist() == [pos_obj.unmet] and pos.progress.tolist() == [pos_obj.progress]
        mask, toks = neg.blocked()
        assert set(toks[0][mask[0]].tolist()) == neg_obj.blocked()
    assert pos.unmet.tolist() == [0]
