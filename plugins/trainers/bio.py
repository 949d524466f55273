"""Tagging instances and their BIO (IOB2) tags: the task-neutral middle of every span tagger.

A trainer turns each example into one or more ``Instance`` s (NER: the sentence; SRL: the
sentence once per predicate, with the predicate marked) whose gold spans cannot overlap,
since one tag column holds one span per token. ``TagSet`` maps span labels to the tags
``O, B-L, I-L`` and says which tag may follow which, so the CRF can forbid ``I-L`` after
anything but ``B-L``/``I-L``: a decoded sequence is then always well formed. Tags are
written and read with the NER plugin's IOB2 coder, the one reading of chunk tags in
spanaug (it agrees with seqeval).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from spanaug_shared.tagging import decode, encode

Triple = tuple[int, int, str]  # (start, end exclusive, label)
OUTSIDE = "O"


@dataclass(frozen=True)
class Instance:
    """One tag sequence to learn or predict: tokens, an optional marked span, gold spans."""

    tokens: tuple[str, ...]
    spans: tuple[Triple, ...] = ()
    marker: tuple[int, int] | None = None  # the predicate of an SRL instance

    def indicator(self) -> list[int]:
        """1 on the marked tokens, 0 elsewhere (all 0 without a marker)."""
        start, end = self.marker or (0, 0)
        return [int(start <= i < end) for i in range(len(self.tokens))]


def non_overlapping(spans: Iterable[Triple], avoid: tuple[int, int] | None = None) -> tuple[list[Triple], int]:
    """The spans a tag column can hold (earlier start, then longer, wins) and how many were dropped.

    Spans overlapping ``avoid`` (an SRL predicate) are dropped too: the predicate's own
    tokens are tagged O so that predicted arguments never cover it.
    """
    kept: list[Triple] = []
    dropped = 0
    for span in sorted(set(spans), key=lambda s: (s[0], -s[1], s[2])):
        clash_avoid = avoid is not None and span[0] < avoid[1] and avoid[0] < span[1]
        if clash_avoid or (kept and span[0] < kept[-1][1]):
            dropped += 1
        else:
            kept.append(span)
    return kept, dropped


class TagSet:
    """The BIO tags of a label set: ``O`` first, then ``B-L, I-L`` per label in sorted order."""

    def __init__(self, labels: Iterable[str]) -> None:
        self.labels = sorted(set(labels))
        self.tags = [OUTSIDE] + [f"{p}-{label}" for label in self.labels for p in ("B", "I")]
        self.index = {tag: i for i, tag in enumerate(self.tags)}

    @classmethod
    def from_tags(cls, tags: Sequence[str]) -> TagSet:
        """The tag set a saved model was trained with (checked to be in this class's order)."""
        tagset = cls(tag[2:] for tag in tags if tag != OUTSIDE)
        if tagset.tags != list(tags):
            raise ValueError(f"tags {list(tags)[:6]}... are not O followed by B-/I- pairs in label order")
        return tagset

    def __len__(self) -> int:
        return len(self.tags)

    def encode(self, spans: Iterable[Triple], length: int) -> list[int]:
        """Tag ids of non-overlapping spans (labels of this set) over ``length`` tokens."""
        return [self.index[tag] for tag in encode(spans, length, "iob2")]

    def decode(self, ids: Sequence[int]) -> list[Triple]:
        """The spans of a sequence of tag ids."""
        return decode([self.tags[i] for i in ids])

    def allowed(self) -> tuple[list[bool], list[list[bool]]]:
        """Which tag may open a sentence, and ``allowed[i][j]``: may tag j follow tag i (IOB2)."""

        def may_follow(previous: str, tag: str) -> bool:
            return not tag.startswith("I-") or previous[2:] == tag[2:]

        start = [not tag.startswith("I-") for tag in self.tags]
        return start, [[may_follow(a, b) for b in self.tags] for a in self.tags]
