"""The ``inflect`` expander: a phrase becomes every surface form a decoder must avoid.

Culkin et al. (2021, §5) constrain on the span text, its upper/lower-case counterparts
and its morphological variants, so that the paraphraser cannot simply reuse the word in
another form. Inflections come from lemminflect (all lemmas of each word, for every part
of speech, then all their inflections: *saw* -> see, sees, seeing, seen, saw, saws...).
A multi-word phrase inflects each word and takes the cross product, capped.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import ClassVar

from pydantic import Field

from spanaug_core.protocols import ComponentConfig
from spanaug_core.text import detokenize, tokenize
from spanaug_shared.lemmas import lemmas


@lru_cache(maxsize=65536)
def word_forms(word: str, oov: bool) -> tuple[str, ...]:
    """``word`` first, then the inflections of all its lemmas (lower case, as lemminflect gives them)."""
    from lemminflect import getAllInflections, getAllInflectionsOOV

    lower = word.lower()
    known = lemmas(lower)
    forms: list[str] = [word]
    for lemma in sorted(known):
        forms.append(lemma)
        forms.extend(f for group in getAllInflections(lemma).values() for f in group)
    if not known and oov and lower.isalpha():
        for upos in ("VERB", "NOUN"):
            forms.extend(f for group in getAllInflectionsOOV(lower, upos).values() for f in group)
    return tuple(dict.fromkeys(forms))


def case_variants(phrase: str) -> list[str]:
    """The phrase as given, lower case, Capitalized (first letter) and UPPER CASE."""
    lower = phrase.lower()
    return list(dict.fromkeys([phrase, lower, lower[:1].upper() + lower[1:], phrase.upper()]))


class InflectExpander:
    """The phrase, its case variants and all inflections of its words (lemminflect)."""

    name: ClassVar[str] = "inflect"

    class Config(ComponentConfig):
        inflections: bool = Field(default=True, description="add the inflections of every word")
        case_variants: bool = Field(default=True, description="add lower, Capitalized and UPPER forms")
        oov: bool = Field(default=False, description="guess inflections of words lemminflect does not know")
        max_variants: int = Field(default=64, ge=1, description="cap on a multi-word phrase's cross product")

    def __init__(self, config: Config) -> None:
        self.config = config

    def expand(self, phrase: str) -> list[str]:
        words = tokenize(phrase)
        if not words:
            return []
        if self.config.inflections:
            per_word = [word_forms(w, self.config.oov) for w in words]
        else:
            per_word = [(w,) for w in words]
        phrases = [detokenize(combo) for combo in itertools.islice(itertools.product(*per_word), self.config.max_variants)]
        if self.config.case_variants:
            phrases = [v for p in phrases for v in case_variants(p)]
        out = [phrase.strip()] + phrases
        return list(dict.fromkeys(out))
