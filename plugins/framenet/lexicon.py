"""FrameNet's word lists put to work: the ``frame-lexicon`` filter and the ``framenet`` lexicon.

A paraphrase's aligned trigger carries the source's frame label. Most wrong labels of
judged FrameNet outputs are near-synonyms that evoke another frame ("source" for Supply,
"welcomed" for Receiving, "ability" for Attempt) or no trigger at all (a broken word); a
sentence-level score cannot see them. FrameNet itself lists which words evoke a frame, its
lexical units (LUs), and that list serves twice:

- after decoding, the ``frame-lexicon`` filter keeps a record only when its trigger,
  lemmatized as each part of speech in turn (``lu_form``), is one of the frame's LUs. That
  trades discovery for precision: a valid trigger FrameNet does not list yet is dropped
  too (Culkin et al. 2021 §6.1 found many valid triggers absent from FrameNet). With
  ``max_frames`` it also drops a trigger that many frames list ("could", "make", "part"):
  a record teaches a word-to-frame link, and a word of many frames taught as one of them
  is wrong in most of the contexts a downstream model will meet it in;
- before decoding, the ``framenet`` lexicon offers the prompt a few of the frame's LUs
  that WordNet relates to the source trigger ("attempt", "endeavor" for *efforts* in
  Attempt). The model still words the sentence as it likes, but it now knows words that
  keep the frame. The LUs WordNet does not relate to the trigger stay out: most belong to
  the frame but not to the meaning ("car" and "boat" for *plane* in Vehicle);
- after training, the same lexicon tells the ``frame-id`` trainer which frames some words
  may evoke (``labels_for``), so that its predictions keep to FrameNet's word lists, as
  frame identifiers since SEMAFOR (Das et al. 2014) do.

Both read the release their ``release`` option names; in a run of the framenet dataset
that defaults to the release ``--input`` names (the dataset's ``input_options``), so a
frame of the data is a frame of their release.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import AfterValidator, Field

from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented, Example, Span

from spanaug_shared.records import replacement
from spanaug_shared.wordnet import WordNetLexicon
from spanaug_framenet.ablation import lu_form
from spanaug_framenet.release import FrameInfo, find_release, frames

# FrameNet's LU part-of-speech suffixes; the trigger is tried as each (lemmatized for v/n/a/adv).
_POS = ("v", "n", "a", "adv", "prep", "num", "art", "c", "scon", "intj", "idio")
_WORDNET_POS = {"v": "verb", "n": "noun", "a": "adj", "adv": "adv"}
log = logging.getLogger(__name__)
_RELEASE_HELP = (
    "FrameNet release folder, or a folder holding one (as the framenet dataset's --input, which it defaults to in a run "
    "of that dataset); None: NLTK's framenet_v17/v15, else the embedded sample"
)


def _release_folder(path: Path | None) -> Path | None:
    """The release a given folder names (itself, or the fndata-* or NLTK folder inside), so that
    a run's manifest says which one was read; a folder that holds none fails here."""
    return None if path is None else find_release(path)


Release = Annotated[Path | None, AfterValidator(_release_folder)]


class FrameUnits:
    """The LUs of each frame of a release (lower-cased name -> corpus sentences), each
    frame file read once, on first use. A wrong folder fails at construction.

    A frame the release lacks (data of another release than the one read) gets none and
    one warning, which ends with ``hint``: how the component that asked is given the
    user's release, in words that work as written.
    """

    def __init__(self, release: Path | None, hint: str) -> None:
        self.release = find_release(release)
        self.hint = hint
        self._units: dict[str, dict[str, int]] = {}

    @cached_property
    def _frames(self) -> dict[str, FrameInfo]:
        return {info.name: info for info in frames(self.release)}

    @cached_property
    def frame_counts(self) -> dict[str, int]:
        """How many frames of the release list each LU name (``make.v`` -> 9 in FrameNet 1.5); reads every frame file once."""
        return {name: len(frames) for name, frames in self.frames_of.items()}

    @cached_property
    def frames_of(self) -> dict[str, frozenset[str]]:
        """The frames of the release that list each LU name (``make.v`` -> its 9 frames in FrameNet 1.5)."""
        out: dict[str, set[str]] = {}
        for info in self._frames.values():
            for lu in info.lexical_units():
                out.setdefault(lu.name.lower(), set()).add(info.name)
        return {name: frozenset(names) for name, names in out.items()}

    def __call__(self, frame: str) -> dict[str, int]:
        """The LUs (``buy.v``) of ``frame`` and how common each is; empty for a frame the release lacks."""
        if frame not in self._units:
            info = self._frames.get(frame)
            if info is None:
                log.warning("frame %r is not in the FrameNet release %s: %s", frame, self.release, self.hint)
            self._units[frame] = {lu.name.lower(): lu.sentences for lu in info.lexical_units()} if info else {}
        return self._units[frame]


class FrameLexiconFilter:
    """Drop a record whose rewritten trigger is not a lexical unit of its frame in the FrameNet release."""

    name: ClassVar[str] = "frame-lexicon"

    class Config(ComponentConfig):
        release: Release = Field(default=None, description=_RELEASE_HELP)
        max_frames: int | None = Field(
            default=None,
            ge=1,
            description="also drop a trigger that more than this many frames of the release list as an LU "
            "(1: only triggers no other frame lists); None: any",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self.units = FrameUnits(
            config.release,
            "frame-lexicon drops its records; if your data is from another release, give the filter that one: "
            "--filter '{name: frame-lexicon, release: FOLDER}' in place of --filter frame-lexicon",
        )

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
        listed = [form for form in lu_forms(words) if form in units]
        if not listed:
            return f"{words!r} is not a lexical unit of {frame}"
        limit = self.config.max_frames
        if limit is not None:
            # a trigger the frame lists under two parts of speech counts by its less ambiguous one
            fewest = min(self.units.frame_counts[form] for form in listed)
            if fewest > limit:
                return f"{words!r} is a lexical unit of {fewest} frames (max_frames {limit})"
        return None


def lu_forms(words: str) -> list[str]:
    """``words`` as an LU name of each part of speech FrameNet uses (``bought`` -> ``buy.v``, ``bought.n``...)."""
    return [lu_form(words, pos) for pos in _POS]


class FrameNetLexicon(WordNetLexicon):
    """Offer the prompt the frame's lexical units WordNet relates to the trigger: synonyms first, most common first.

    ``labels_for`` also names the frames that list some words as an LU (the frame-id trainer's ``lexicon``)."""

    name: ClassVar[str] = "framenet"

    class Config(WordNetLexicon.Config):
        release: Release = Field(default=None, description=_RELEASE_HELP)

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.config: FrameNetLexicon.Config = config
        self.units = FrameUnits(
            config.release,
            "the lexicon offers no words for it; if your data is from another release, give the lexicon that one: "
            "--set lexicon.release=FOLDER",
        )
        self._labels: dict[str, frozenset[str]] = {}

    def alternatives(self, example: Example, span: Span, avoid: Sequence[str]) -> list[str]:
        """Up to ``words`` LUs of the span's frame, of the trigger's part of speech, that the
        decoder may write: first those sharing a WordNet sense with the trigger, then those
        one WordNet relation away, each group by how common the LU is."""
        lemma, pos = _lemma_and_pos(span, example.tokens)
        candidates: dict[str, int] = {}
        for unit, sentences in self.units(span.label).items():
            word, _, unit_pos = unit.rpartition(".")
            if not pos or unit_pos == pos:
                candidates[word] = max(sentences, candidates.get(word, 0))  # one word, two parts of speech
        return self.offer(lemma, _WORDNET_POS.get(pos or ""), candidates, avoid)

    def labels_for(self, words: str) -> frozenset[str]:
        """The frames of the release that list ``words``, lemmatized as any part of speech, as a lexical unit."""
        key = " ".join(words.lower().split())
        if key not in self._labels:  # a test set asks for the same words thousands of times
            self._labels[key] = frozenset().union(*(self.units.frames_of.get(form, frozenset()) for form in lu_forms(key)))
        return self._labels[key]

    def labels(self) -> frozenset[str]:
        """Every frame of the release that lists an LU."""
        return frozenset(frame for frames in self.units.frames_of.values() for frame in frames)


def _lemma_and_pos(span: Span, tokens: Sequence[str]) -> tuple[str, str | None]:
    """The trigger's lemma and LU part of speech from the span's ``lu`` attribute (the
    framenet dataset writes it), else its words as written and no part of speech."""
    lu = span.attrs.get("lu")
    if isinstance(lu, str) and "." in lu:
        lemma, _, pos = lu.rpartition(".")
        return lemma.lower(), pos
    return " ".join(span.text(tokens).split()).lower(), None
