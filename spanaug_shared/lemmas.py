"""Lemmas of an English word, from lemminflect: every lemma of every part of speech.

Three places ask whether words share a lemma or want a word's lemmas (the avoid hint's one
form per phrase, the inflection expander, WordNet lookup); they share this cached call.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=65536)
def lemmas(word: str) -> frozenset[str]:
    """Every lemma lemminflect knows for ``word`` as written (it is case-sensitive: lower-case
    a word first to look it up as a common word); empty for a word it does not know."""
    from lemminflect import getAllLemmas

    return frozenset(lemma for group in getAllLemmas(word).values() for lemma in group)
