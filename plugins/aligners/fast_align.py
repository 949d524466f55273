"""fast-align: IBM Model 2 with Dyer et al. 2013's diagonal prior, symmetrized, then projected.

Word alignment is learned by EM on the sentence pairs being aligned (plus optional extra
bitext), in both directions. The alignment distribution of target word j over source
words i is p0 for NULL and otherwise proportional to exp(-lambda * |i/n - j/m|) (the
diagonal "tension" lambda is re-estimated each iteration over a fixed grid); the lexical
table t(f|e) is kept sparse over the word pairs that co-occur. Sentences are processed in
length-sorted, padded blocks so every E-step is a handful of numpy operations. The two
Viterbi alignments are joined with grow-diag-final-and, and a source span maps to the
tightest target span covering its tokens' links (Culkin et al. 2021 §4.3). Everything is
deterministic: uniform initialisation, no sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import Field

from spanaug_core.errors import DataError
from spanaug_core.protocols import AlignerConfig
from spanaug_core.types import AlignItem, Alignment

Tokens = tuple[str, ...]
Link = tuple[int, int]
TENSIONS = np.array([0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0])
BLOCK = 256


@dataclass
class _Block:
    """Padded sentences of similar length: target rows j, source columns i (column 0 is NULL)."""

    rows: np.ndarray  # indices of the block's sentences in the corpus
    src_len: np.ndarray  # (B,)
    tgt_len: np.ndarray  # (B,)
    params: np.ndarray  # (B, M, N + 1) index into the lexical table, -1 where padded
    logdist: np.ndarray  # (B, M, N + 1) -|i/n - j/m| for real source words, -inf elsewhere


def _blocks(corpus: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[list[_Block], np.ndarray]:
    """Blocks of the corpus and, per lexical parameter, its source word id (0 = NULL)."""
    order = sorted(range(len(corpus)), key=lambda k: (len(corpus[k][1]), len(corpus[k][0])))
    vocab_f = 1 + max((int(f.max()) for _, f in corpus if len(f)), default=0)
    raw = []
    for b in range(0, len(order), BLOCK):
        rows = np.array(order[b : b + BLOCK])
        n = np.array([len(corpus[k][0]) for k in rows])
        m = np.array([len(corpus[k][1]) for k in rows])
        keys = np.full((len(rows), m.max(), n.max() + 1), -1, dtype=np.int64)
        for r, k in enumerate(rows):
            e, f = corpus[k]
            e_ext = np.concatenate([[0], e])  # NULL is word id 0
            keys[r, : len(f), : len(e_ext)] = e_ext[None, :] * vocab_f + f[:, None]
        i = np.arange(n.max() + 1)[None, None, :]
        j = np.arange(m.max())[None, :, None] + 1
        dist = -np.abs(i / n[:, None, None] - j / m[:, None, None])
        dist = np.where((i >= 1) & (i <= n[:, None, None]), dist, -np.inf)
        raw.append((rows, n, m, keys, dist))
    unique = np.unique(np.concatenate([keys[keys >= 0] for *_, keys, _ in raw]))
    blocks = [
        _Block(rows, n, m, np.where(keys >= 0, np.searchsorted(unique, keys), -1), dist)
        for rows, n, m, keys, dist in raw
    ]
    return blocks, unique // vocab_f


def _prior(block: _Block, tension: float, p0: float) -> np.ndarray:
    """Alignment probabilities (B, M, N + 1): p0 for NULL, the diagonal softmax for words."""
    logits = tension * block.logdist
    logits = logits - logits.max(axis=2, keepdims=True)
    weights = np.exp(logits)
    prior = (1 - p0) * weights / weights.sum(axis=2, keepdims=True)
    prior[:, :, 0] = p0
    return prior


def ibm2(corpus: Sequence[tuple[np.ndarray, np.ndarray]], iterations: int, p0: float) -> list[np.ndarray]:
    """EM for IBM Model 2 (diagonal); returns per sentence the posterior (m, n + 1) of target j on source i.

    ``corpus`` holds ``(source ids (n,), target ids (m,))`` with ids >= 1.
    """
    blocks, source_of = _blocks(corpus)
    t = np.ones(len(source_of))  # uniform start: every co-occurring pair equally likely
    tension = 4.0
    for it in range(iterations + 1):
        counts = np.zeros(len(source_of))
        expected = np.zeros(len(TENSIONS))
        posts = []
        for block in blocks:
            valid = block.params >= 0
            joint = np.where(valid, t[np.maximum(block.params, 0)], 0.0) * _prior(block, tension, p0)
            post = joint / np.maximum(joint.sum(axis=2, keepdims=True), 1e-300)
            posts.append(post)
            if it == iterations:
                continue
            counts += np.bincount(block.params[valid], weights=post[valid], minlength=len(source_of))
            # Expected log-probability of the word links under each candidate tension.
            word_post = post[:, :, 1:]
            for g, lam in enumerate(TENSIONS):
                logits = lam * block.logdist[:, :, 1:]
                lse = np.log(np.exp(logits - logits.max(axis=2, keepdims=True)).sum(axis=2, keepdims=True))
                logp = np.where(np.isfinite(logits), logits - logits.max(axis=2, keepdims=True) - lse, 0.0)
                expected[g] += (word_post * logp).sum()
        if it == iterations:
            break
        totals = np.bincount(source_of, weights=counts)
        t = counts / np.maximum(totals[source_of], 1e-300)
        tension = float(TENSIONS[int(np.argmax(expected))])
    out: list[np.ndarray] = [np.empty(0)] * len(corpus)
    for block, post in zip(blocks, posts):
        for r, k in enumerate(block.rows):
            out[k] = post[r, : block.tgt_len[r], : block.src_len[r] + 1]
    return out


def grow_diag_final_and(forward: set[Link], reverse: set[Link]) -> set[Link]:
    """Koehn et al.'s symmetrization of two directional alignments of (source i, target j) links."""
    union = forward | reverse
    links = forward & reverse
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    grown = True
    while grown:
        grown = False
        for i, j in sorted(links):
            for di, dj in neighbours:
                cand = (i + di, j + dj)
                if cand in union and cand not in links:
                    if all(a != cand[0] for a, _ in links) or all(b != cand[1] for _, b in links):
                        links.add(cand)
                        grown = True
    for direction in (forward, reverse):
        for i, j in sorted(direction):
            if (i, j) not in links and all(a != i for a, _ in links) and all(b != j for _, b in links):
                links.add((i, j))
    return links


def _viterbi(post: np.ndarray) -> set[tuple[int, int]]:
    """(target j, source i) links of the argmax source per target word, NULL dropped (i is 0-based)."""
    best = post.argmax(axis=1)
    return {(j, int(i) - 1) for j, i in enumerate(best) if i > 0}


def symmetric_alignments(pairs: Sequence[tuple[Tokens, Tokens]], iterations: int, p0: float) -> list[tuple[set[Link], np.ndarray]]:
    """Per pair, grow-diag-final-and links (source i, target j) and a link confidence matrix (n, m).

    ``iterations`` and ``p0`` as ``FastAlignAligner.Config`` holds them (their defaults are there).
    """
    vocab: dict[str, int] = {}

    def ids(tokens: Tokens) -> np.ndarray:
        return np.array([vocab.setdefault(t.lower(), len(vocab) + 1) for t in tokens], dtype=np.int64)

    encoded = [(ids(s), ids(t)) for s, t in pairs]
    fwd = ibm2(encoded, iterations, p0)  # target words on source words
    rev = ibm2([(t, s) for s, t in encoded], iterations, p0)  # source words on target words
    out = []
    for f_post, r_post in zip(fwd, rev):
        forward = {(i, j) for j, i in _viterbi(f_post)}
        reverse = {(i, j) for i, j in _viterbi(r_post)}
        confidence = np.maximum(f_post[:, 1:].T, r_post[:, 1:])
        out.append((grow_diag_final_and(forward, reverse), confidence))
    return out


def project(links: set[Link], span: tuple[int, int]) -> tuple[int, int] | None:
    """The tightest target span covering the links of source tokens in ``span`` (None when none)."""
    targets = [j for i, j in links if span[0] <= i < span[1]]
    return (min(targets), max(targets) + 1) if targets else None


def read_bitext(path: Path) -> list[tuple[Tokens, Tokens]]:
    """fast_align-style bitext: ``source tokens ||| target tokens`` a line."""
    pairs = []
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            if line.count("|||") != 1:
                raise DataError("expected 'source tokens ||| target tokens'", path=path, line=lineno)
            src, tgt = (tuple(side.split()) for side in line.split("|||"))
            if src and tgt:
                pairs.append((src, tgt))
    return pairs


class FastAlignAligner:
    """Word-alignment baseline: IBM2 + diagonal prior (fast_align), both directions, grow-diag-final-and."""

    name: ClassVar[str] = "fast-align"

    class Config(AlignerConfig):
        threshold: float = Field(default=0.0, ge=0.0, le=1.0, description="answer None below this link confidence")
        iterations: int = Field(default=5, ge=1, description="EM iterations per direction")
        p0: float = Field(default=0.08, gt=0.0, lt=1.0, description="probability of aligning to NULL")
        bitext: str | None = Field(default=None, description="extra training bitext ('src ||| tgt' lines)")

    def __init__(self, config: Config) -> None:
        self.config = config

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        keys = list(dict.fromkeys((it.source_tokens, it.target_tokens) for it in items))
        extra = read_bitext(Path(self.config.bitext)) if self.config.bitext else []
        aligned = symmetric_alignments(keys + extra, self.config.iterations, self.config.p0)
        by_pair = dict(zip(keys, aligned))
        results = []
        for item in items:
            links, confidence = by_pair[(item.source_tokens, item.target_tokens)]
            span = project(links, item.source_span)
            if span is None:
                results.append(Alignment(span=None, score=0.0))
                continue
            s, e = item.source_span
            inside = [confidence[i, j] for i, j in links if s <= i < e]
            score = float(min(1.0, max(0.0, np.mean(inside))))
            results.append(
                Alignment(span=span if score >= self.config.threshold else None, score=score, candidates=((*span, score),))
            )
        return results
