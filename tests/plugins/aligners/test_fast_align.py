"""fast-align: EM recovers the links of a synthetic bitext; symmetrization and projection."""

from __future__ import annotations

import random

from spanaug_core.types import AlignItem
from spanaug_aligners.fast_align import FastAlignAligner, grow_diag_final_and, project, symmetric_alignments

DEFAULTS = FastAlignAligner.Config()


def _bitext(n: int = 300, seed: int = 0):
    """Source words s0..s29 translate one-to-one into t0..t29; adjacent words sometimes swap."""
    rng = random.Random(seed)
    pairs, gold = [], []
    for _ in range(n):
        src = [rng.randrange(30) for _ in range(rng.randint(4, 9))]
        order = list(range(len(src)))
        k = rng.randrange(len(src) - 1)
        if rng.random() < 0.5:
            order[k], order[k + 1] = order[k + 1], order[k]
        pairs.append((tuple(f"s{w}" for w in src), tuple(f"t{src[i]}" for i in order)))
        gold.append({(i, j) for j, i in enumerate(order)})
    return pairs, gold


def test_recovers_synthetic_links():
    pairs, gold = _bitext()
    found = symmetric_alignments(pairs, DEFAULTS.iterations, DEFAULTS.p0)
    hits = sum(len(links & g) for (links, _), g in zip(found, gold))
    predicted = sum(len(links) for links, _ in found)
    total = sum(len(g) for g in gold)
    assert hits / predicted > 0.9 and hits / total > 0.9


def test_deterministic():
    pairs, _ = _bitext(50)
    runs = [symmetric_alignments(pairs, DEFAULTS.iterations, DEFAULTS.p0) for _ in range(2)]
    assert [links for links, _ in runs[0]] == [links for links, _ in runs[1]]


def test_grow_diag_final_and():
    # Intersection {(0, 0)}; (1, 1) grows diagonally; (3, 4) and (3, 5) are isolated, and
    # final-and takes the forward one first, after which source 3 is no longer unaligned.
    links = grow_diag_final_and({(0, 0), (1, 1), (3, 4)}, {(0, 0), (3, 5)})
    assert links == {(0, 0), (1, 1), (3, 4)}
    # A union link next to the intersection but with both ends already aligned is not grown.
    assert grow_diag_final_and({(0, 0), (1, 1)}, {(0, 0), (1, 1), (0, 1)}) == {(0, 0), (1, 1)}


def test_project_and_aligner():
    assert project({(0, 1), (1, 3), (2, 0)}, (0, 2)) == (1, 4)
    assert project({(0, 1)}, (1, 2)) is None
    pairs, gold = _bitext(200, seed=1)
    items = [AlignItem(source_tokens=s, source_span=(0, 1), target_tokens=t) for s, t in pairs]
    out = FastAlignAligner(FastAlignAligner.Config()).align(items)
    expected = [next((j, j + 1) for i, j in g if i == 0) for g in gold]
    assert sum(a.span == e for a, e in zip(out, expected)) / len(items) > 0.9
    assert all(0.0 <= a.score <= 1.0 for a in out)
