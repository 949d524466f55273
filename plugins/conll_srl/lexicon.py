"""The ``propbank`` lexicon: words of rolesets that share a FrameNet frame or VerbNet class.

A paraphrase's predicate keeps the source's roleset label, and the words that rewrite it
best are those that mean the same. PropBank says which rolesets evoke the same FrameNet frame
or belong to the same VerbNet class (its ``lexlinks``): take.01 links to Taking and
get-13.5.1, as do seize.01 and grab.01. Of those rolesets' words, the ones WordNet relates
to the predicate are offered to the prompt, synonyms first, each group the most common word
first (SemCor's counts, which WordNet ships). A word of a linked roleset that WordNet does
not relate ("ride" for take.01, through Ride_vehicle) stays out: the link is of one sense,
the word often of another. Unlike a frame's lexical units, a VerbNet class holds verbs of
many senses, so nearness counts from the predicate's most frequent senses only (the
``framenet`` lexicon counts it from any sense).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import ClassVar

from pydantic import Field
from spanaug_conll_srl.propbank import FrameFiles, Roleset

from spanaug_core.errors import ConfigError
from spanaug_core.types import Example, Span
from spanaug_shared.wordnet import WordNetLexicon

log = logging.getLogger(__name__)
_WORDNET_POS = {"v": "verb", "n": "noun", "j": "adj", "r": "adv"}
# A predicate's UPOS (attrs["pos"], from CoNLL-U Plus) as PropBank's alias part of speech.
_PROPBANK_POS = {"VERB": "v", "AUX": "v", "NOUN": "n", "PROPN": "n", "ADJ": "j", "ADV": "r"}


class PropBankLexicon(WordNetLexicon):
    """Offer the prompt words of the rolesets PropBank links to the predicate's, that WordNet relates to it."""

    name: ClassVar[str] = "propbank"

    class Config(WordNetLexicon.Config):
        frames: Path | None = Field(default=None, description="PropBank frames folder (one <lemma>.xml per predicate); required")

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.config: PropBankLexicon.Config = config
        # A folder given is checked now; none given is an error on first use, so that the
        # lexicon can be listed and described without frames.
        self._files = FrameFiles(config.frames) if config.frames is not None else None
        self._unknown: set[str] = set()

    @cached_property
    def rolesets(self) -> dict[str, Roleset]:
        if self._files is None:
            raise ConfigError(
                "the propbank lexicon needs PropBank frame files: set lexicon.frames to a PropBank frames folder "
                "(one <lemma>.xml per predicate, as the conll-srl dataset's frames option)"
            )
        return self._files.links()

    @cached_property
    def _linked(self) -> dict[str, list[str]]:
        """Link -> the rolesets that have it."""
        out: dict[str, list[str]] = {}
        for roleset_id, roleset in self.rolesets.items():
            for link in roleset.links:
                out.setdefault(link, []).append(roleset_id)
        return out

    def alternatives(self, example: Example, span: Span, avoid: Sequence[str]) -> list[str]:
        """Up to ``words`` words, of the predicate's part of speech, of the rolesets sharing a
        link with the span's roleset, that the decoder may write: WordNet synonyms of the
        predicate first, then words one WordNet relation away from one of its ``senses`` most
        frequent senses, each group the most common first."""
        roleset = self.rolesets.get(span.label)
        if roleset is None:
            if span.label not in self._unknown:
                self._unknown.add(span.label)
                log.warning("roleset %r is not in the PropBank frames %s: no words offered for it", span.label, self.config.frames)
            return []
        named = span.label.rpartition(".")[0].replace("_", " ")
        spoken = " ".join(span.text(example.tokens).split()).lower()
        stated = span.attrs.get("lemma")
        # The alias the sentence uses is the word WordNet looks up and gives the part of
        # speech ("decision" is decide.01's noun). Where it is one of several ("post" of
        # post.01), the word's UPOS decides when the reader gave it, else the verb. Without
        # an alias, the roleset's own lemma as a verb.
        used = next((w for w in (stated, spoken, named) if isinstance(w, str) and any(w == word for word, _ in roleset.words)), None)
        kinds = {kind for word, kind in roleset.words if word == used}
        tagged = _PROPBANK_POS.get(str(span.attrs.get("pos")))
        pos = tagged if tagged in kinds else "v" if "v" in kinds or not kinds else min(kinds)
        lemma = used or named
        wn_pos = _WORDNET_POS.get(pos)
        words = {
            word
            for link in roleset.links
            for other in self._linked[link]
            if other != span.label
            for word, word_pos in self.rolesets[other].words
            if word_pos == pos
        }
        # A linked word may share only a rare sense with the predicate ("put" for load,
        # "converge" for meet, in the first judged run): nearness from its frequent senses.
        counts = {word: self.wordnet.frequency(word, wn_pos) if wn_pos else 0 for word in words}
        return self.offer(lemma, wn_pos, counts, avoid, near_senses=self.config.senses)
