"""Span-alignment scores as in Culkin et al. 2021 Tables 1-2: exact and soft P/R/F1.

*Exact*: a prediction earns credit only when it is the gold span itself. *Soft*: credit is
the token overlap of the predicted and gold spans, micro-averaged over items (precision =
overlapping tokens / predicted tokens, recall = overlapping tokens / gold tokens). In both,
a None prediction for an item with a gold span costs recall only, and any prediction for
an item whose gold is null is a false positive (it costs precision only). *None*: how well
the aligner says "no alignment": precision = None answers on null-gold items / None
answers, recall = null-gold items answered None / null-gold items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from spanaug_aligners.pairs import Bounds


@dataclass
class Counts:
    """Running totals for one group of items; ``scores()`` turns them into P/R/F1."""

    items: int = 0
    exact_hit: int = 0
    predicted: int = 0
    gold: int = 0
    soft_overlap: int = 0
    soft_predicted: int = 0
    soft_gold: int = 0
    none_hit: int = 0

    def add(self, pred: Bounds | None, gold: Bounds | None) -> None:
        self.items += 1
        self.none_hit += pred is None and gold is None
        if pred is not None:
            self.predicted += 1
            self.soft_predicted += pred[1] - pred[0]
        if gold is not None:
            self.gold += 1
            self.soft_gold += gold[1] - gold[0]
        if pred is not None and gold is not None:
            self.exact_hit += pred == gold
            self.soft_overlap += max(0, min(pred[1], gold[1]) - max(pred[0], gold[0]))

    def scores(self) -> dict[str, float]:
        """Exact, soft and None precision, recall and F1 (in [0, 1]) and the item count."""
        return {
            "items": float(self.items),
            **_prf("exact", self.exact_hit, self.predicted, self.gold),
            **_prf("soft", self.soft_overlap, self.soft_predicted, self.soft_gold),
            **_prf("none", self.none_hit, self.items - self.predicted, self.items - self.gold),
        }


def _prf(prefix: str, hit: int, predicted: int, gold: int) -> dict[str, float]:
    p = hit / predicted if predicted else 0.0
    r = hit / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {f"{prefix}_p": p, f"{prefix}_r": r, f"{prefix}_f1": f}


def evaluate(rows: Iterable[tuple[Bounds | None, Bounds | None, str | None]]) -> dict[str, dict[str, float]]:
    """Scores of ``(pred, gold, kind)`` rows: ``{"all": {...}, "<kind>": {...}}``."""
    groups: dict[str, Counts] = defaultdict(Counts)
    for pred, gold, kind in rows:
        groups["all"].add(pred, gold)
        if kind is not None:
            groups[kind].add(pred, gold)
    groups.setdefault("all", Counts())
    return {name: counts.scores() for name, counts in groups.items()}


def best_threshold(scored: Iterable[tuple[Bounds | None, float, Bounds | None]]) -> tuple[float, float]:
    """The threshold on ``(argmax span, its score, gold)`` rows that maximises exact F1.

    Returns ``(threshold, exact F1)``. Candidate thresholds are the observed scores (a
    prediction is kept when its score is >= the threshold), so the sweep is exact.
    """
    rows = sorted(scored, key=lambda r: -r[1])
    gold_total = sum(1 for _, _, g in rows if g is not None)
    best = (1.0, 0.0)
    hits = predicted = 0
    # Lowering the threshold past each score admits one more prediction.
    for i, (pred, score, gold) in enumerate(rows):
        if pred is not None:
            predicted += 1
            hits += pred == gold
        if i + 1 < len(rows) and rows[i + 1][1] == score:
            continue
        p = hits / predicted if predicted else 0.0
        r = hits / gold_total if gold_total else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        if f > best[1]:
            best = (score, f)
    return best


def none_rate_threshold(scored: Iterable[tuple[Bounds | None, float, Bounds | None]]) -> float:
    """The threshold on ``(argmax span, its score, gold)`` rows under which None is answered as often as gold is null.

    The exact-F1 optimum is often flat over a wide range of thresholds, and where it lands
    in that range decides how None is answered: an aligner whose threshold sits high on it
    drops many right spans for a few null ones (docs/results/aligners-human-tuned.md). This
    rule places None by its rate instead: of n items, u with a null gold, the threshold
    keeps the n - u highest-scored spans (fewer where some rows have no span at all, and
    ties at the threshold are all kept).
    """
    rows = list(scored)
    keep = len(rows) - sum(1 for _, _, gold in rows if gold is None)
    scores = sorted((score for pred, score, _ in rows if pred is not None), reverse=True)
    if keep <= 0:
        return 1.0
    if keep >= len(scores):
        return 0.0
    return scores[keep - 1]
