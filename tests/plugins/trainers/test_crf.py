"""The linear-chain CRF against brute-force enumeration on tiny cases, and its BIO constraints."""

from __future__ import annotations

import itertools

import pytest
import torch

from spanaug_trainers.bio import TagSet
from spanaug_trainers.crf import LinearChainCRF


def _crf(num_tags: int, constrained: bool) -> LinearChainCRF:
    allowed = TagSet(["X"]).allowed() if constrained else (None, None)
    crf = LinearChainCRF(num_tags, *allowed)
    with torch.no_grad():
        for param in crf.parameters():
            param.normal_()
    return crf


@torch.no_grad()
def _brute_scores(crf: LinearChainCRF, emissions: torch.Tensor, length: int) -> dict[tuple[int, ...], float]:
    """The score of every tag sequence of one sentence, by the formula, term by term."""
    start, trans = crf._scores()
    scores = {}
    for tags in itertools.product(range(crf.num_tags), repeat=length):
        total = start[tags[0]] + crf.end[tags[-1]] + sum(emissions[t, y] for t, y in enumerate(tags))
        total = total + sum(trans[a, b] for a, b in itertools.pairwise(tags))
        scores[tags] = float(total)
    return scores


@pytest.mark.parametrize("constrained", [False, True])
def test_forward_viterbi_and_score_match_brute_force(constrained: bool) -> None:
    torch.manual_seed(1)
    crf = _crf(3, constrained)
    lengths = [4, 2, 1]
    emissions = torch.randn(len(lengths), max(lengths), 3)
    mask = torch.tensor([[t < n for t in range(max(lengths))] for n in lengths])
    tags = torch.randint(0, 3, (len(lengths), max(lengths)))
    with torch.no_grad():
        log_z = crf.log_partition(emissions, mask)
        gold = crf.score(emissions, tags, mask)
        best = crf.decode(emissions, mask)
    for b, n in enumerate(lengths):
        brute = _brute_scores(crf, emissions[b], n)
        expected_z = torch.logsumexp(torch.tensor(list(brute.values())), dim=0)
        assert float(log_z[b]) == pytest.approx(float(expected_z), abs=1e-4)
        assert float(gold[b]) == pytest.approx(brute[tuple(tags[b, :n].tolist())], abs=1e-4)
        assert tuple(best[b]) == max(brute, key=brute.get)
    assert torch.allclose(crf.nll(emissions, tags, mask).detach(), log_z - gold)


def test_constraints_forbid_inside_after_outside() -> None:
    tagset = TagSet(["LOC", "PER"])  # O, B-LOC, I-LOC, B-PER, I-PER
    # Emissions that favour I-PER everywhere, and O then I-LOC in the middle.
    emissions = torch.zeros(1, 5, len(tagset))
    emissions[0, :, tagset.index["I-PER"]] = 5.0
    emissions[0, 2, tagset.index["O"]] = 20.0
    emissions[0, 3, tagset.index["I-LOC"]] = 8.0
    mask = torch.ones(1, 5, dtype=torch.bool)
    (free,) = LinearChainCRF(len(tagset)).decode(emissions, mask)
    assert [tagset.tags[i] for i in free] == ["I-PER", "I-PER", "O", "I-LOC", "I-PER"]
    (path,) = LinearChainCRF(len(tagset), *tagset.allowed()).decode(emissions, mask)
    # I-PER cannot open the sentence; after O, I-LOC (8) loses to O (20) + B-PER I-PER (5).
    assert [tagset.tags[i] for i in path] == ["B-PER", "I-PER", "O", "B-PER", "I-PER"]
    start, allowed = tagset.allowed()
    assert not start[tagset.index["I-PER"]] and not allowed[tagset.index["O"]][tagset.index["I-LOC"]]
    assert allowed[tagset.index["B-LOC"]][tagset.index["I-LOC"]] and not allowed[tagset.index["B-PER"]][tagset.index["I-LOC"]]


def test_gradients_are_finite_with_constraints() -> None:
    tagset = TagSet(["A"])
    crf = LinearChainCRF(len(tagset), *tagset.allowed())
    emissions = torch.randn(2, 3, len(tagset), requires_grad=True)
    mask = torch.tensor([[True, True, True], [True, False, False]])
    tags = torch.tensor([[1, 2, 0], [0, 0, 0]])  # B-A I-A O, and O
    crf.nll(emissions, tags, mask).sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in [emissions, *crf.parameters()])
