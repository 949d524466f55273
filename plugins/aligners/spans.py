"""What the encoder-based aligners share: candidate spans, pooled span vectors, word vectors per item.

A span's vector is the mean of its word vectors (from ``spanaug_shared.encoder``),
computed for all candidate spans at once from a cumulative sum, so one encoder pass serves
every candidate of every item on that pair. The zero-shot aligners (embed-sim, simalign)
also share their encoder options and the encoding of each sentence on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from spanaug_core.protocols import AlignerConfig
from spanaug_core.types import AlignItem, Alignment
from spanaug_shared.encoder import DEFAULT_ENCODER, Encoder

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


class ZeroShotConfig(AlignerConfig):
    """Options of the aligners that compare a frozen encoder's vectors, each sentence encoded alone."""

    encoder: str = Field(default=DEFAULT_ENCODER, description="encoder preset name or local folder")
    batch_size: int = Field(default=32, ge=1, description="sentence pairs per encoder batch")
    device: str = Field(default="cpu", description="torch device")


class ZeroShotAligner:
    """The encoder (loaded on first use) and each item's word vectors, for embed-sim and simalign."""

    config: ZeroShotConfig

    def __init__(self, config: ZeroShotConfig, encoder: Encoder | None = None) -> None:
        self.config = config
        # bert-span passes the encoder it already loaded, so handing it spans costs no second load.
        self._encoder = encoder

    def word_vectors(self, items: Sequence[AlignItem]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Word vectors ``(source (n, d), target (m, d))`` of each item, each sentence encoded on its own."""
        if self._encoder is None:
            self._encoder = Encoder(self.config.encoder, device=self.config.device)
        return encode_items(self._encoder, items, joint=False, batch_size=self.config.batch_size)
