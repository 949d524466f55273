"""simalign: zero-shot span alignment through word alignment, after SimAlign (Jalili Sabet et al. 2020).

Each sentence is encoded on its own and every source word is compared with every target
word (cosine similarity of their contextual vectors). Two words are linked when each is
the other's most similar word (``argmax``, the paper's mutual-argmax rule). ``itermax``
then repeats that rule on the words left unlinked: a pair of two unlinked words keeps its
similarity, a pair with one linked word is damped by ``alpha`` (so a word may take a second
link only if it clearly wins), and a pair of two linked words drops out; it stops after
``rounds`` or when nothing changes. Links are computed once per sentence pair, for all of
its items.

The aligned span is the hull of the target words linked to the source span's words; its
score is the mean, over the source span's words, of the similarity of each word's best
link (0 for a word left unlinked), so a partly linked span scores lower. No link at all
means no alignment. Nothing is trained.

``edges`` (ours, on by default; ``edges=false`` is the published method) widens the hull
by a target word that no link touches, at an edge where the span's own edge word has no
link either: a function word the paraphrase changed ("over" -> "regarding", "by" ->
"from") links to nothing, and the bare hull stops one word short of the gold span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from spanaug_core.types import AlignItem, Alignment
from spanaug_shared.encoder import word_similarity
from spanaug_aligners.convert import is_word
from spanaug_aligners.spans import ZeroShotAligner, ZeroShotConfig

if TYPE_CHECKING:
    import torch


def mutual_argmax(similarity: torch.Tensor) -> torch.Tensor:
    """Links (bool, source x target) of word pairs that are each other's most similar word."""
    import torch

    forward = torch.zeros_like(similarity, dtype=torch.bool)
    forward[torch.arange(similarity.shape[0]), similarity.argmax(dim=1)] = True
    backward = torch.zeros_like(similarity, dtype=torch.bool)
    backward[similarity.argmax(dim=0), torch.arange(similarity.shape[1])] = True
    return forward & backward


def word_links(similarity: torch.Tensor, method: str = "itermax", rounds: int = 2, alpha: float = 0.9) -> torch.Tensor:
    """Word alignment links (bool, source x target) by ``argmax`` or ``itermax``."""
    import torch

    if similarity.numel() == 0:
        return similarity.bool()
    links = mutual_argmax(similarity)
    if method == "argmax":
        return links
    for _ in range(rounds - 1):
        source_free = ~links.any(dim=1, keepdim=True)
        target_free = ~links.any(dim=0, keepdim=True)
        if not source_free.any() or not target_free.any():
            break
        free = source_free.int() + target_free.int()  # unlinked words in the pair: 0, 1 or 2
        weight = torch.where(free == 2, 1.0, torch.where(free == 1, alpha, 0.0))
        shifted = similarity - similarity.min() + 1e-6  # positive, so that a weight of 0 excludes a pair
        added = mutual_argmax(shifted * weight) & (free > 0)
        if not (added & ~links).any():
            break
        links |= added
    return links


def span_hull(links: torch.Tensor, start: int, end: int, target_tokens: Sequence[str] | None = None) -> tuple[int, int] | None:
    """The hull of the target words linked to source words ``[start, end)`` (None: no link); with
    ``target_tokens``, widened at each edge as the module docstring says (``edges``)."""
    rows = links[start:end]
    linked = rows.any(dim=0).nonzero().flatten()
    if linked.numel() == 0:
        return None
    first, last = int(linked.min()), int(linked.max()) + 1
    if target_tokens is not None:
        free = ~links.any(dim=0)

        def takes(j: int, source_word: int) -> bool:
            return 0 <= j < len(target_tokens) and bool(free[j]) and not rows[source_word].any() and is_word(target_tokens[j])

        first -= takes(first - 1, 0)
        last += takes(last, end - start - 1)
    return first, last


def aligned_span(
    links: torch.Tensor, similarity: torch.Tensor, start: int, end: int, target_tokens: Sequence[str] | None = None
) -> tuple[tuple[int, int] | None, float]:
    """The :func:`span_hull` of source words ``[start, end)`` and its score (see the module docstring)."""
    span = span_hull(links, start, end, target_tokens)
    if span is None:
        return None, 0.0
    rows = links[start:end]
    best = similarity[start:end].masked_fill(~rows, float("-inf")).max(dim=1).values
    best = best.where(rows.any(dim=1), similarity.new_zeros(()))  # an unlinked word counts 0
    return span, max(0.0, min(1.0, float(best.mean())))


class SimAlignAligner(ZeroShotAligner):
    """Zero-shot aligner: SimAlign word alignment (argmax/itermax) of encoder word vectors, the span's hull."""

    name: ClassVar[str] = "simalign"

    class Config(ZeroShotConfig):
        threshold: float = Field(default=0.0, ge=0.0, le=1.0, description="answer None below this score (0: only when no word is linked)")
        method: Literal["argmax", "itermax"] = Field(
            default="argmax", description="mutual argmax once, or repeated on unlinked words (docs/results/aligners-multimwa.md)"
        )
        rounds: int = Field(default=2, ge=1, description="itermax: argmax rounds at most")
        edges: bool = Field(
            default=True,
            description="widen the hull by an unlinked target word where the span's edge word is unlinked too "
            "(ours; false: SimAlign's own hull; docs/aligners.md)",
        )
        alpha: float = Field(default=0.9, gt=0.0, le=1.0, description="itermax: weight of a pair whose other word is already linked")

    config: Config

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        cfg = self.config
        vectors = self.word_vectors(items)
        by_pair: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[torch.Tensor, torch.Tensor]] = {}
        results = []
        for item, (src, tgt) in zip(items, vectors):
            key = (item.source_tokens, item.target_tokens)
            if key not in by_pair:
                similarity = word_similarity(src, tgt)
                by_pair[key] = (word_links(similarity, cfg.method, cfg.rounds, cfg.alpha), similarity)
            links, similarity = by_pair[key]
            span, score = aligned_span(links, similarity, *item.source_span, item.target_tokens if cfg.edges else None)
            if span is None:
                results.append(Alignment(span=None, score=0.0))
                continue
            results.append(Alignment(span=span if score >= cfg.threshold else None, score=score, candidates=((*span, score),)))
        return results
