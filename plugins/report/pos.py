"""Syntactic diversity after Culkin et al. 2021, Table 3: do aligned spans keep their source's POS tags?

A part-of-speech tagger runs over each source sentence and each paraphrase (whole
sentences, so tags see context), and the Penn Treebank tags of the source span are
compared with those of the aligned span: ¬EXT is the share of pairs whose tag sequences
differ, JCD the mean Jaccard distance of their tag sets (1 - |S ∩ T| / |S ∪ T|) and WJCD
the mean weighted Jaccard distance of their tag counts (1 - Σ min / Σ max), which sees
tag frequency. The tagger is the core's :func:`~spanaug_shared.postag.find_tagger`; with
none installed the report says so and leaves the table out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from spanaug_shared.postag import Tagger, tag_sentences
from spanaug_report.stats import SpanPair


@dataclass(frozen=True)
class Diversity:
    """Table 3 over ``pairs`` span pairs, as shares in [0, 1]; ``changes`` counts the commonest tag rewrites."""

    pairs: int
    not_exact: float
    jaccard: float
    weighted_jaccard: float
    changes: list[tuple[tuple[str, str], int]]


def jaccard_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """1 - |A ∩ B| / |A ∪ B| of the tag sets."""
    sa, sb = set(a), set(b)
    return 1 - len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def weighted_jaccard_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """1 - Σ min(u_i, v_i) / Σ max(u_i, v_i) of the tag counts."""
    ca, cb = Counter(a), Counter(b)
    keys = ca.keys() | cb.keys()
    top = sum(max(ca[k], cb[k]) for k in keys)
    return 1 - sum(min(ca[k], cb[k]) for k in keys) / top if top else 0.0


def pos_diversity(pairs: Sequence[SpanPair], tagger: Tagger, batch_size: int = 256) -> Diversity:
    """Tag each distinct sentence once, then compare every pair's source and aligned span tags."""
    tags = tag_sentences(tagger, (s for p in pairs for s in (p.source_tokens, p.tokens)), batch_size)
    differ, jcd, wjcd = 0, 0.0, 0.0
    changes: Counter[tuple[str, str]] = Counter()
    for p in pairs:
        a = tags[p.source_tokens][p.source[0] : p.source[1]]
        b = tags[p.tokens][p.aligned[0] : p.aligned[1]]
        if a != b:
            differ += 1
            changes[(" ".join(a), " ".join(b))] += 1
        jcd += jaccard_distance(a, b)
        wjcd += weighted_jaccard_distance(a, b)
    n = len(pairs) or 1
    return Diversity(len(pairs), differ / n, jcd / n, wjcd / n, changes.most_common(8))
