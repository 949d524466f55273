"""Turn word-alignment gold (MultiMWA TSV, jacana JSON) into span-alignment items.

A word-aligned sentence pair yields one item per source span of 1-3 tokens (other lengths
on request: long spans test what happens to a clause or a long argument) that contains
a content word and neither starts nor ends on punctuation. Its gold is the tight target
span over the target tokens linked to the span's tokens, kept only when the pair is
*consistent* (no link from inside that target span leaves the source span — the phrase
extraction rule of phrase-based MT); an inconsistent span is skipped, since no single
target span means it. A span none of whose tokens is linked gets a null gold. Items are
labelled ``identical`` (the gold text equals the source text, case aside), ``paraphrased``
(it differs) or ``unaligned`` (null gold). Sure and possible links are both used: the
possible links of MultiMWA mark phrasal correspondences, exactly what a span aligner is for.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from spanaug_core.errors import DataError
from spanaug_core.files import read_lines, read_text
from spanaug_core.types import AlignItem

from spanaug_aligners.pairs import SpanPair

# English function words: a span made only of these is not worth aligning on its own.
STOPWORDS = frozenset(
    """a an the and or but nor so yet for of in on at to from by with without about into onto over under
    up down out off as than then that this these those there here it its it's he him his she her hers they
    them their theirs we us our ours you your yours i me my mine who whom whose which what when where why how
    is are was were be been being am do does did done have has had having will would shall should can could
    may might must not no n't 's 're 've 'll 'd 'm all any each some such own same other very too just also
    if because while although though whether either neither both per via upon onto""".split()
)

FORMATS = ("multimwa", "jacana-json")


@dataclass(frozen=True)
class WordAligned:
    """A tokenized sentence pair with its gold links ``(source index, target index)``."""

    id: str
    source: tuple[str, ...]
    target: tuple[str, ...]
    links: frozenset[tuple[int, int]]


def is_word(token: str) -> bool:
    """Whether a token is a word (has a letter or digit), not punctuation."""
    return any(ch.isalnum() for ch in token)


def is_content(token: str) -> bool:
    """Whether a token is a content word (a word, and not a function word)."""
    return is_word(token) and token.lower() not in STOPWORDS


def _links(text: str, n: int, m: int) -> set[tuple[int, int]]:
    links = set()
    for link in text.split():
        try:
            i, j = (int(x) for x in link.split("-"))
        except ValueError:
            raise ValueError(f"link {link!r} is not 'i-j'") from None
        if not (0 <= i < n and 0 <= j < m):
            raise ValueError(f"link {link} is outside the sentences ({n} and {m} tokens)")
        links.add((i, j))
    return links


def read_multimwa(path: Path) -> Iterator[WordAligned]:
    """MultiMWA TSV: id, sentence 1, -, sentence 2, -, -, -, sure links, possible links."""
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) < 8:
            raise DataError(f"expected at least 8 tab-separated columns, found {len(cols)}", path=path, line=lineno)
        source, target = tuple(cols[1].split()), tuple(cols[3].split())
        try:
            links = _links(cols[7], len(source), len(target))
            if len(cols) > 8:
                links |= _links(cols[8], len(source), len(target))
        except ValueError as exc:
            raise DataError(str(exc), path=path, line=lineno) from None
        yield WordAligned(f"{path.stem}-{cols[0].split(':')[0]}", source, target, frozenset(links))


def read_jacana_json(path: Path) -> Iterator[WordAligned]:
    """jacana JSON: a list (or JSON lines) of ``{"source", "target", "sureAlign", "possibleAlign"}``.

    ``source``/``target`` are space-tokenized strings (or token lists); the alignments are
    ``"i-j"`` strings with source index first.
    """
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = list(enumerate(json.loads(text), 1))
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    else:
        records = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append((lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise DataError(f"not valid JSON ({exc.msg})", path=path, line=lineno) from None
    for lineno, rec in records:
        try:
            if not isinstance(rec, dict) or "source" not in rec or "target" not in rec:
                raise ValueError("expected an object with 'source', 'target', 'sureAlign' and 'possibleAlign'")
            source = tuple(rec["source"].split() if isinstance(rec["source"], str) else rec["source"])
            target = tuple(rec["target"].split() if isinstance(rec["target"], str) else rec["target"])
            links = _links(rec.get("sureAlign", ""), len(source), len(target))
            links |= _links(rec.get("possibleAlign", ""), len(source), len(target))
        except (ValueError, AttributeError, TypeError) as exc:
            raise DataError(str(exc), path=path, line=lineno) from None
        yield WordAligned(str(rec.get("id", f"{path.stem}-{lineno}")), source, target, frozenset(links))


def gold_for(pair: WordAligned, start: int, end: int) -> tuple[bool, tuple[int, int] | None]:
    """``(usable, gold)`` for the source span ``[start, end)`` of ``pair``.

    Null gold when no token of the span is linked; unusable when the tight target span
    holds a token linked to a source token outside the span.
    """
    linked = [j for i, j in pair.links if start <= i < end]
    if not linked:
        return True, None
    t0, t1 = min(linked), max(linked) + 1
    consistent = all(start <= i < end for i, j in pair.links if t0 <= j < t1)
    return consistent, ((t0, t1) if consistent else None)


def span_pairs(pair: WordAligned, max_len: int = 3, min_len: int = 1) -> Iterator[SpanPair]:
    """The span-alignment items one word-aligned pair yields (see the module docstring)."""
    for start in range(len(pair.source)):
        for end in range(start + min_len, min(start + max_len, len(pair.source)) + 1):
            toks = pair.source[start:end]
            if not (is_word(toks[0]) and is_word(toks[-1])):
                continue
            if not any(is_content(t) for t in toks):
                continue
            usable, gold = gold_for(pair, start, end)
            if not usable:
                continue
            if gold is None:
                kind = "unaligned"
            else:
                same = [t.lower() for t in toks] == [t.lower() for t in pair.target[gold[0] : gold[1]]]
                kind = "identical" if same else "paraphrased"
            yield SpanPair(
                id=f"{pair.id}/{start}-{end}",
                item=AlignItem(source_tokens=pair.source, source_span=(start, end), target_tokens=pair.target),
                gold_span=gold,
                kind=kind,
            )


def convert(
    pairs: Iterable[WordAligned], max_len: int = 3, max_per_pair: int | None = None, seed: int = 0, min_len: int = 1
) -> Iterator[SpanPair]:
    """Span items of every pair, ``min_len`` to ``max_len`` tokens; ``max_per_pair`` keeps a seeded random sample per pair."""
    for pair in pairs:
        items = list(span_pairs(pair, max_len, min_len))
        if max_per_pair is not None and len(items) > max_per_pair:
            # A string seed hashes deterministically, so a pair's sample never depends on the others.
            keep = sorted(random.Random(f"{seed}:{pair.id}").sample(range(len(items)), max_per_pair))
            items = [items[i] for i in keep]
        yield from items


def read_word_alignments(path: Path, fmt: str) -> Iterator[WordAligned]:
    """Read a word-alignment file in one of ``FORMATS``."""
    if fmt == "multimwa":
        return read_multimwa(path)
    if fmt == "jacana-json":
        return read_jacana_json(path)
    raise DataError(f"unknown word-alignment format '{fmt}' (known: {', '.join(FORMATS)})", path=path)
