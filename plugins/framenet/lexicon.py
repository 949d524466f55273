"""The ``frame-lexicon`` filter: keep a FrameNet record only when its new trigger is a lexical unit of the frame.

A paraphrase's aligned trigger carries the source's frame label. Most wrong labels of
judged FrameNet outputs are near-synonyms that evoke another frame ("source" for Supply,
"welcomed" for Receiving, "capital" for Political_locales) or no trigger at all (a broken
word); a sentence-level score cannot see them. FrameNet itself lists which words evoke a
frame, so the check is a lookup: the trigger, lemmatized as each part of speech in turn
(``lu_form``), must be one of the frame's LUs in the release. That trades discovery for
precision: a valid trigger FrameNet does not list yet is dropped too, so this filter is
for growing training data for known LUs, not for finding new ones (Culkin et al. 2021 §6.1
found many valid triggers absent from FrameNet).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented

from spanaug_shared.records import replacement
from spanaug_framenet.ablation import lu_form
from spanaug_framenet.release import FrameInfo, find_release, frames

# FrameNet's LU part-of-speech suffixes; the trigger is tried as each (lemmatized for v/n/a/adv).
_POS = ("v", "n", "a", "adv", "prep", "num", "art", "c", "scon", "intj", "idio")


class FrameLexiconFilter:
    """Drop a record whose rewritten trigger is not a lexical unit of its frame in the FrameNet release."""

    name: ClassVar[str] = "frame-lexicon"

    class Config(ComponentConfig):
        release: Path | None = Field(
            default=None,
            description="FrameNet release folder (as the framenet dataset's --input); None: NLTK's framenet_v17/v15, else the embedded sample",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        # A wrong folder fails here, before any decoding; the frame files are read on the first check.
        self.release = find_release(config.release)
        self._units: dict[str, frozenset[str]] = {}

    @cached_property
    def _frames(self) -> dict[str, FrameInfo]:
        return {info.name: info for info in frames(self.release)}

    def units(self, frame: str) -> frozenset[str]:
        """The LU names (``buy.v``) of ``frame``, read from its frame file once; empty for a frame the release lacks."""
        if frame not in self._units:
            info = self._frames.get(frame)
            self._units[frame] = frozenset(name.lower() for name, _, _ in info.lexical_units()) if info else frozenset()
        return self._units[frame]

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        spans = replacement(record, context.source)
        if spans is None:
            return None  # a whole-sentence paraphrase (NER), or no single new trigger to tell
        trigger = spans[1]
        frame = trigger.label
        units = self.units(frame)
        if not units:
            return f"the release has no lexical units for frame {frame!r}"
        words = " ".join(trigger.text(record.tokens).split())
        if any(lu_form(words, pos) in units for pos in _POS):
            return None
        return f"{words!r} is not a lexical unit of {frame}"

