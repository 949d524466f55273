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
learns a threshold too. WordNet comes from ``spanaug_shared.wordnet``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from spanaug_core.protocols import ProgressCallback, ProgressEvent
from spanaug_core.text import detokenize, find_phrase, tokenize
from spanaug_core.types import AlignItem, Constraints, DecodeRequest

from spanaug_shared.wordnet import WN_POS, WordNet

from spanaug_aligners.convert import is_content, is_word
from spanaug_aligners.pairs import SpanPair

Tokens = tuple[str, ...]


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


def _widen(tokens: Tokens, focus: tuple[int, int], taken: set[int], rng: random.Random) -> tuple[int, int]:
    """Grow the focus word into a span of 1-3 tokens over neighbouring words.

    Word-alignment gold (and FrameNet arguments) mostly pairs multi-word spans ("respond
    to" -> "response to"), so a head trained only on single words learns the wrong span
    length; the lengths follow those of the converted MultiMWA spans.
    """
    s, e = focus
    want = rng.choices((1, 2, 3), weights=(0.3, 0.35, 0.35))[0]
    while e - s < want:
        sides = []
        if s > 0 and is_word(tokens[s - 1]) and s - 1 not in taken:
            sides.append(-1)
        if e < len(tokens) and is_word(tokens[e]) and e not in taken:
            sides.append(1)
        if not sides:
            break
        if rng.choice(sides) < 0:
            s -= 1
        else:
            e += 1
    return s, e


def _fragment(pool: Sequence[Sequence[str]], rng: random.Random, low: int, high: int) -> list[str]:
    """A run of ``low``-``high`` words from a random sentence of the pool (insertion material)."""
    words = [t.lower() for t in rng.choice(pool) if is_word(t)]
    size = min(len(words), rng.randint(low, high))
    start = rng.randint(0, len(words) - size)
    return words[start : start + size]


def _rewrite(
    tokens: Tokens,
    span: tuple[int, int],
    middle: Sequence[tuple[str, bool]],
    wordnet: WordNet,
    pool: Sequence[Sequence[str]],
    rng: random.Random,
) -> tuple[Tokens, tuple[int, int] | None]:
    """The target sentence: ``tokens`` with ``span`` replaced by ``middle``, the context rewritten.

    ``middle`` is (token, is gold) pairs; the result's gold span covers its gold tokens
    (None when there are none). Around it the sentence changes the way real paraphrases
    do, so that neither position nor length gives the answer away: other content words
    become synonyms (p = 0.3 each, at most two), other words are dropped (p = 0.08 each,
    at most three), a few words of another sentence are inserted (p = 0.3), a clause of
    another sentence is put before or after (p = 0.2), and the halves around a comma are
    exchanged (p = 0.3).
    """
    s, e = span
    flat: list[tuple[str, bool]] = []
    swaps = drops = 0
    for i, tok in enumerate(tokens):
        if i == s:
            flat.extend(middle)
        if s <= i < e:
            continue
        if swaps < 2 and is_content(tok) and rng.random() < 0.3:
            options = substitutes(wordnet, [tok])
            if options:
                swaps += 1
                flat.extend((t, False) for t in tokenize(rng.choice(options)))
                continue
        if drops < 3 and is_word(tok) and i < len(tokens) - 1 and rng.random() < 0.08:
            drops += 1
            continue
        flat.append((tok, False))
    if flat and flat[0][0] != "I":
        # Lower-cased here and the new first word capitalised below (an uncased encoder does not care).
        flat[0] = (flat[0][0].lower(), flat[0][1])
    gold_at = [i for i, (_, gold) in enumerate(flat) if gold]
    if rng.random() < 0.3:
        # Never inside the gold span, which must stay contiguous.
        places = [i for i in range(len(flat)) if not gold_at or i <= gold_at[0] or i > gold_at[-1]]
        at = rng.choice(places)
        flat[at:at] = [(t, False) for t in _fragment(pool, rng, 1, 4)]
    final = flat[-1][0] if flat and flat[-1][0] in {".", "!", "?"} else None
    body = flat[:-1] if final else flat
    commas = [i for i, (t, _) in enumerate(body) if t == "," and 3 <= i <= len(body) - 4]
    if commas and rng.random() < 0.3:
        c = rng.choice(commas)
        body = [*body[c + 1 :], (",", False), *body[:c]]
    if body and rng.random() < 0.2:
        clause = [(t, False) for t in _fragment(pool, rng, 3, 8)]
        body = [*clause, (",", False), *body] if rng.random() < 0.5 else [*body, (",", False), *clause]
    if body:
        first, gold = body[0]
        body[0] = (first[:1].upper() + first[1:], gold)
    flat = [*body, (final, False)] if final else body
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


@dataclass(frozen=True)
class _DecodeJob:
    """A decoder-route item waiting for its paraphrase: the gold is where ``substitute`` lands."""

    id: str
    tokens: Tokens
    span: tuple[int, int]
    substitute: str


def _plan(
    pool: Sequence[Tokens],
    wordnet: WordNet,
    rng: random.Random,
    per_sentence: int,
    mix: tuple[float, float],
    use_decoder: bool,
    start: int = 0,
) -> Iterator[SpanPair | _DecodeJob | int]:
    """Every item in order, as a finished pair or a job for the decoder; after each sentence its index.

    Nothing here depends on what the decoder returns, so the same seed plans the same items
    whatever the batch size. The sentences before ``start`` are planned (the random stream
    must be the same) but nothing of them is yielded: a resumed run goes on from there.
    """
    vocabulary = sorted({t.lower() for s in pool for t in s if is_content(t) and t.isalpha()})
    for n, tokens in enumerate(pool):
        keep = n >= start
        taken: set[int] = set()
        for k in range(per_sentence):
            focus = _pick_span(tokens, wordnet, rng, taken)
            if focus is None:
                break
            roll = rng.random()
            kind = "identical" if roll < mix[0] else "unaligned" if roll < mix[0] + mix[1] else "paraphrased"
            if kind == "paraphrased" and use_decoder:
                # The decoder route knows only where the substitute landed: the span stays the focus word.
                taken.update(range(*focus))
                job = _DecodeJob(f"gen-{n}/{k}", tokens, focus, rng.choice(substitutes(wordnet, tokens[focus[0] : focus[1]])))
                if keep:
                    yield job
                continue
            extra: dict[str, Any] = {}
            span = _widen(tokens, focus, taken, rng)
            s, e = span
            if kind == "identical":
                middle = [(t, True) for t in tokens[s:e]]
            elif kind == "unaligned":
                # Either the meaning is gone from the target, or an unrelated word stands there.
                middle = [] if rng.random() < 0.5 else [(rng.choice(vocabulary), False)]
            else:
                choice = rng.choice(substitutes(wordnet, tokens[focus[0] : focus[1]]))
                replaced = [*tokens[s : focus[0]], *tokenize(choice), *tokens[focus[1] : e]]
                middle = [(t, True) for t in replaced]
                extra = {"substitute": choice}
            target, gold = _rewrite(tokens, span, middle, wordnet, pool, rng)
            taken.update(range(*span))
            item = AlignItem(source_tokens=tokens, source_span=span, target_tokens=target)
            if keep:
                yield SpanPair(id=f"gen-{n}/{k}", item=item, gold_span=gold, kind=kind, extra=extra)
        if keep:
            yield n


def generate(
    sentences: Iterable[Tokens],
    wordnet: WordNet,
    seed: int = 0,
    per_sentence: int = 2,
    mix: tuple[float, float] = (0.2, 0.1),
    decoder: Any = None,
    nbest: int = 4,
    batch_size: int = 64,
    progress: ProgressCallback | None = None,
    start: int = 0,
    on_sentence: Callable[[int], None] | None = None,
) -> Iterator[SpanPair]:
    """Span-alignment items from sentences: ``mix`` is the share of (identical, unaligned) items.

    ``decoder`` (a ConstrainedDecoder) turns on the paraphraser route for ``paraphrased``
    items, ``batch_size`` requests per decoder call (so the batched beam search keeps its
    batch full); items it cannot produce (no candidate kept the
    substitute) are skipped. Items come out in sentence order either way. For a resumable
    writer: ``start`` skips to that sentence (the items an uninterrupted run makes from
    there on), and ``on_sentence(n)`` is called once all items of the first n sentences
    have been yielded.
    """
    pool = [tuple(s) for s in sentences]
    made = 0
    buffer: list[SpanPair | _DecodeJob | int] = []

    def flush() -> Iterator[SpanPair]:
        nonlocal made
        jobs = [x for x in buffer if isinstance(x, _DecodeJob)]
        found = iter(_decode(decoder, jobs, nbest) if jobs else [])
        for entry in buffer:
            if isinstance(entry, int):
                if progress is not None:
                    progress(ProgressEvent("sentences", entry + 1, len(pool), stats={"items": made}))
                if on_sentence is not None:
                    on_sentence(entry + 1)
                continue
            if isinstance(entry, _DecodeJob):
                paraphrase = next(found)
                if paraphrase is None:
                    continue
                item = AlignItem(source_tokens=entry.tokens, source_span=entry.span, target_tokens=paraphrase[0])
                entry = SpanPair(id=entry.id, item=item, gold_span=paraphrase[1], kind="paraphrased", extra={"substitute": entry.substitute})
            made += 1
            yield entry
        buffer.clear()

    waiting = 0
    for entry in _plan(pool, wordnet, random.Random(seed), per_sentence, mix, decoder is not None, start):
        buffer.append(entry)
        waiting += isinstance(entry, _DecodeJob)
        # Without a decoder nothing waits, so each sentence's items go out as soon as it is done.
        if isinstance(entry, int) and (waiting == 0 or waiting >= batch_size):
            yield from flush()
            waiting = 0
    yield from flush()


def _decode(decoder: Any, jobs: Sequence[_DecodeJob], nbest: int) -> list[tuple[Tokens, tuple[int, int]] | None]:
    """Paraphrase each job's sentence avoiding its span's forms and including its substitute, in one
    decoder call; per job the first candidate where the substitute occurs once and where (else None)."""
    requests = []
    for job in jobs:
        avoid = [form for word in job.tokens[job.span[0] : job.span[1]] if is_content(word) for form in _inflections(word)]
        requests.append(DecodeRequest(text=detokenize(job.tokens), constraints=Constraints(avoid=tuple(avoid), include=(job.substitute,))))
    out: list[tuple[Tokens, tuple[int, int]] | None] = []
    for job, candidates in zip(jobs, decoder.decode(requests, nbest)):
        needle = tokenize(job.substitute)
        out.append(None)
        for cand in candidates:
            where = find_phrase(cand.tokens, needle, case_sensitive=False)
            if where is not None and find_phrase(cand.tokens[where[1] :], needle, case_sensitive=False) is None:
                out[-1] = (tuple(cand.tokens), where)
                break
    return out
