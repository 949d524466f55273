"""The ``novelty`` filter: a paraphrase must differ enough from its source, and not in length alone.

Overlap follows the diversity filters of Wieting et al. (2017, §5.7): for each order
n = 1..``max_n``, the number of n-grams the two sentences share (as multisets of
lower-cased tokens, so a repeated n-gram counts as often as both sentences have it)
divided by the number of n-grams of the shorter sentence. That is containment in the
shorter sentence, not Jaccard: a paraphrase that only adds words to its source still
scores 1. The overlap is the mean over the orders both sentences are long enough to have,
and a record is dropped above ``ceiling``. Higher orders see reorderings that unigrams
miss. The length ratio, in tokens, catches paraphrases that lost or invented much of the
sentence (Wieting et al. filter on length too, but on the absolute length of the output).

``previous_ceiling`` applies the same overlap to the outputs made earlier from the same
source (the pipeline's ``previous_texts``, kept or dropped). A whole-sentence job takes
its rounds from one n-best list, whose entries mostly differ by a word or two, so its
records are near-copies of each other unless something asks for a new wording; with
``filter_candidates`` a round then keeps the best candidate far enough from them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import ClassVar

from pydantic import Field, model_validator

from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.text import tokenize
from spanaug_core.types import Augmented


def ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """The lower-cased word n-grams of a sentence, counted."""
    words = [t.lower() for t in tokens]
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def ngram_overlap(source: Sequence[str], paraphrase: Sequence[str], max_n: int) -> float:
    """Mean over n = 1..max_n of shared n-grams / n-grams of the shorter sentence (lower-cased tokens).

    Orders longer than the shorter sentence are left out; two empty sentences overlap 0.
    """
    ratios = []
    for n in range(1, max_n + 1):
        grams_a, grams_b = ngrams(source, n), ngrams(paraphrase, n)
        fewer = min(sum(grams_a.values()), sum(grams_b.values()))
        if fewer:
            ratios.append(sum((grams_a & grams_b).values()) / fewer)
    return sum(ratios) / len(ratios) if ratios else 0.0


class NoveltyFilter:
    """Drop paraphrases that overlap their source too much (n-gram containment) or change its length too much."""

    name: ClassVar[str] = "novelty"

    class Config(ComponentConfig):
        max_n: int = Field(default=2, ge=1, description="n-gram orders 1..max_n are averaged")
        ceiling: float = Field(default=0.9, ge=0.0, le=1.0, description="largest n-gram overlap kept")
        min_length_ratio: float = Field(default=0.5, ge=0.0, description="smallest len(paraphrase)/len(source) kept")
        max_length_ratio: float = Field(default=2.0, gt=0.0, description="largest len(paraphrase)/len(source) kept")
        previous_ceiling: float | None = Field(
            default=None,
            ge=0.0,
            le=1.0,
            description="largest n-gram overlap kept with any earlier output of the same source (none: not checked); "
            "0.9 keeps a whole-sentence job's rounds from returning near-copies of each other",
        )

        @model_validator(mode="after")
        def _ordered(self) -> NoveltyFilter.Config:
            if self.min_length_ratio > self.max_length_ratio:
                raise ValueError(f"min_length_ratio {self.min_length_ratio} > max_length_ratio {self.max_length_ratio}")
            return self

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        cfg = self.config
        ratio = len(record.tokens) / len(context.source.tokens)
        if not cfg.min_length_ratio <= ratio <= cfg.max_length_ratio:
            return f"length ratio {ratio:.2f} outside [{cfg.min_length_ratio:g}, {cfg.max_length_ratio:g}]"
        overlap = ngram_overlap(context.source.tokens, record.tokens, cfg.max_n)
        if overlap > cfg.ceiling:
            return f"{cfg.max_n}-gram overlap {overlap:.3f} > {cfg.ceiling:g}"
        if cfg.previous_ceiling is not None:
            source = context.source.text
            earlier = (ngram_overlap(tokenize(text), record.tokens, cfg.max_n) for text in context.previous_texts if text != source)
            closest = max(earlier, default=0.0)
            if closest > cfg.previous_ceiling:
                return f"{cfg.max_n}-gram overlap {closest:.3f} with an earlier output > {cfg.previous_ceiling:g}"
        return None
