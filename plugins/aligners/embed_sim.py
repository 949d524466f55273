"""embed-sim: zero-shot span alignment by cosine similarity of contextual span vectors.

Each sentence is encoded on its own by the (sentence-embedding) encoder; the source span
and every candidate span of the target (lengths within ``k`` of the source span's) are
mean-pooled, and a candidate scores its cosine similarity minus ``length_penalty`` per
token of length difference — a prior that keeps a two-word span from beating the one
word it contains just by averaging in a neighbour. Nothing is trained; the default
threshold under which it answers None is a round figure, not tuned on any evaluation set
(docs/aligners.md shows how scores move with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import Field

from spanaug_core.types import AlignItem, Alignment
from spanaug_aligners.spans import ZeroShotAligner, ZeroShotConfig, candidate_spans, span_means, to_alignment


class EmbedSimAligner(ZeroShotAligner):
    """Zero-shot aligner: cosine similarity of encoder span vectors with a length prior."""

    name: ClassVar[str] = "embed-sim"

    class Config(ZeroShotConfig):
        threshold: float = Field(default=0.45, ge=0.0, le=1.0, description="answer None below this score")
        k: int = Field(default=2, ge=0, description="candidate lengths within k of the source span's")
        max_span: int = Field(default=6, ge=1, description="longest candidate span")
        length_penalty: float = Field(default=0.05, ge=0.0, description="score lost per token of length difference")
        top_k: int = Field(default=5, ge=1, description="candidates reported per item")

    config: Config

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        import torch

        cfg = self.config
        results = []
        for item, (src, tgt) in zip(items, self.word_vectors(items)):
            s, e = item.source_span
            spans = candidate_spans(len(item.target_tokens), e - s, cfg.k, cfg.max_span)
            if not spans:
                results.append(Alignment(span=None, score=0.0))
                continue
            starts = torch.tensor([a for a, _ in spans])
            ends = torch.tensor([b for _, b in spans])
            source_vec = span_means(src, torch.tensor([s]), torch.tensor([e]))
            cosine = torch.nn.functional.cosine_similarity(span_means(tgt, starts, ends), source_vec, dim=1)
            scores = cosine - cfg.length_penalty * ((ends - starts) - (e - s)).abs()
            results.append(to_alignment(spans, scores.tolist(), cfg.threshold, cfg.top_k))
        return results
