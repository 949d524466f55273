"""Candidate spans and their pooled vectors, shared by bert-span and embed-sim.

A span's vector is the mean of its word vectors (from ``spanaug_shared.encoder``),
computed for all candidate spans at once from a cumulative sum, so one encoder pass serves
every candidate of every item on that pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spanaug_core.types import AlignItem, Alignment
from spanaug_shared.encoder import Encoder

if TYPE_CHECKING:
    import torch


def span_means(words: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor) -> torch.Tensor:
    """Mean word vector of each span ``[starts[i], ends[i])``: words (n, d), starts/ends (c,) -> (c, d)."""
    import torch

    cum = torch.cat([torch.zeros(1, words.shape[1], dtype=words.dtype), words.cumsum(0)])
    return (cum[ends] - cum[starts]) / (ends - starts).unsqueeze(1).to(words.dtype)


def candidate_spans(target_len: int, source_len: int, k: int, max_len: int) -> list[tuple[int, int]]:
    """Spans of a ``target_len``-token sentence whose length is within ``k`` of ``source_len`` (and <= max_len)."""
    lengths = [n for n in range(max(1, source_len - k), min(source_len + k, max_len) + 1)]
    return [(s, s + n) for n in lengths for s in range(target_len - n + 1)]


def encode_items(
    encoder: Encoder, items: Sequence[AlignItem], joint: bool, batch_size: int = 32
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Word vectors ``(source (n, d), target (m, d))`` per item, encoding each distinct pair once."""
    keys = list(dict.fromkeys((it.source_tokens, it.target_tokens) for it in items))
    vectors = dict(zip(keys, encoder.encode(keys, joint=joint, batch_size=batch_size)))
    return [vectors[(it.source_tokens, it.target_tokens)] for it in items]


def to_alignment(spans: Sequence[tuple[int, int]], scores: Sequence[float], threshold: float, top_k: int) -> Alignment:
    """The best-scoring span (None below ``threshold``) and the ``top_k`` best, scores clipped to [0, 1]."""
    ranked = sorted(zip(spans, (min(1.0, max(0.0, float(s))) for s in scores)), key=lambda x: -x[1])
    if not ranked:
        return Alignment(span=None, score=0.0)
    (best, score) = ranked[0]
    return Alignment(
        span=best if score >= threshold else None,
        score=score,
        candidates=tuple((s, e, sc) for (s, e), sc in ranked[:top_k]),
    )
