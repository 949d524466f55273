"""The numbers behind the report: histograms, filter counts, Table 4 rows and span pairs.

Everything here is plain Python over a ``Run`` (no HTML): binning for the charts, the
accepted/rejected counts per filter and stop reason, the precision, recall and size
multiple of filtering rules against human judgments (Culkin et al. 2021, Table 4), and the
(source span, aligned span) pairs behind the diversity section (Table 3, Figs. 4-5).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from spanaug_core.types import Augmented, Example
from spanaug_shared.judgments import Judgment
from spanaug_shared.records import rewritten_span
from spanaug_report.rundir import Run

Bins = tuple[list[str], dict[str, list[int]]]


def histogram(series: Mapping[str, Sequence[float]], bins: int | None = None) -> Bins:
    """Equal-width bins over all series together, so their bars line up; labels are the bins' lower edges.

    ``bins`` defaults to √n between 5 and 20: a handful of values in 20 bins would look like noise.
    """
    values = [v for vs in series.values() for v in vs if math.isfinite(v)]
    if not values:
        return [], {}
    lo, hi = min(values), max(values)
    count = (bins or min(20, max(5, math.ceil(math.sqrt(len(values)))))) if hi > lo else 1
    width = (hi - lo) / count or 1.0
    digits = max(0, 1 - math.floor(math.log10(width)))  # two significant digits of the width
    labels = [f"{lo + k * width:.{digits}f}" for k in range(count)]
    counts = {name: [0] * count for name in series}
    for name, vs in series.items():
        for v in vs:
            if math.isfinite(v):
                counts[name][min(int((v - lo) / width), count - 1)] += 1
    return labels, counts


def integer_bins(series: Mapping[str, Sequence[int]], width: int = 1, first: int = 0, cap: int | None = None) -> Bins:
    """Bins ``[first + k*width, first + (k+1)*width)`` up to the largest value; values at or past ``cap`` share a last ``cap+`` bin."""
    values = [v for vs in series.values() for v in vs]
    if not values:
        return [], {}
    top = max(values) if cap is None else min(max(values), cap)
    count = (top - first) // width + 1
    labels = [str(first + k * width) if width == 1 else f"{first + k * width}-{first + (k + 1) * width - 1}" for k in range(count)]
    if cap is not None and max(values) >= cap:
        labels[-1] = f"{first + (count - 1) * width}+"
    counts = {name: [0] * count for name in series}
    for name, vs in series.items():
        for v in vs:
            counts[name][min((v - first) // width, count - 1)] += 1
    return labels, counts


@dataclass(frozen=True)
class FilterRow:
    """One row of the filter table: ``kind`` is accepted, filter or stop."""

    kind: str
    name: str
    count: int
    example: str = ""


def filter_rows(run: Run) -> list[FilterRow]:
    """Accepted records, records dropped per filter and spans stopped per reason, largest first within each kind."""
    filtered: Counter[str] = Counter()
    stopped: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for r in run.rejected:
        if r.filter is not None:
            filtered[r.filter] += 1
            examples.setdefault(r.filter, r.reason.split(":", 1)[-1].strip())
        else:
            stopped[r.reason] += 1
    # The run's filters that dropped nothing get a row too: a zero is worth seeing.
    for spec in run.config.get("filters", []):
        filtered.setdefault(spec.get("name", "?"), 0)
    rows = [FilterRow("accepted", "augmented.jsonl", len(run.records))]
    rows += [FilterRow("filter", name, n, examples.get(name, "")) for name, n in filtered.most_common()]
    rows += [FilterRow("stop", name, n) for name, n in stopped.most_common()]
    return rows


Keep = Callable[[int, Mapping[str, float]], bool]


@dataclass(frozen=True)
class Rule:
    """A filtering rule over a record's iteration and scores; ``spec`` is the run config that applies it."""

    name: str
    spec: str
    keep: Keep


def _at_least(key: str, floor: float) -> Keep:
    # A record lacking the score is dropped, as the score filters do.
    return lambda iteration, scores: scores.get(key, -math.inf) >= floor


def _all(*keeps: Keep) -> Keep:
    return lambda iteration, scores: all(keep(iteration, scores) for keep in keeps)


_ITER1, _ITER3 = (lambda i, s: i <= 1), (lambda i, s: i <= 3)
# The paper's paraphrase score is a cost (lower is better); spanaug's is the length-normalised
# log-probability, so the paper's "score <= 0.6" is "paraphrase >= -0.6" here.
_P06, _P08 = _at_least("paraphrase", -0.6), _at_least("paraphrase", -0.8)
_A99, _A95 = _at_least("alignment", 0.99), _at_least("alignment", 0.95)
_MAXIT, _PARA, _ALIGN = "{name: max-iteration, max_iteration: %s}", "{name: paraphrase-score, min_score: %s}", "{name: alignment-score, min_score: %s}"

# The rows of Culkin et al. 2021, Table 4 (upper section): lax conjoins rows 3, 5 and 7, strict rows 2, 4 and 6.
PAPER_RULES: tuple[Rule, ...] = (
    Rule("unfiltered", "[]", lambda i, s: True),
    Rule("iteration = 1", f"[{_MAXIT % 1}]", _ITER1),
    Rule("iteration ≤ 3", f"[{_MAXIT % 3}]", _ITER3),
    Rule("paraphrase ≥ -0.6", f"[{_PARA % -0.6}]", _P06),
    Rule("paraphrase ≥ -0.8", f"[{_PARA % -0.8}]", _P08),
    Rule("alignment ≥ 0.99", f"[{_ALIGN % 0.99}]", _A99),
    Rule("alignment ≥ 0.95", f"[{_ALIGN % 0.95}]", _A95),
    Rule("lax conjunction", f"[{_MAXIT % 3}, {_PARA % -0.8}, {_ALIGN % 0.95}]", _all(_ITER3, _P08, _A95)),
    Rule("strict conjunction", f"[{_MAXIT % 1}, {_PARA % -0.6}, {_ALIGN % 0.99}]", _all(_ITER1, _P06, _A99)),
)


@dataclass(frozen=True)
class RuleScore:
    """A rule against the judgments: kept judged outputs, precision, recall, and the size multiple over the seed."""

    name: str
    spec: str
    kept: int
    precision: float
    recall: float
    multiple: float


def _score(name: str, spec: str, kept: Sequence[bool], accepted: Sequence[bool], size: int, seed: int) -> RuleScore:
    hits = sum(k and a for k, a in zip(kept, accepted))
    good = sum(accepted)
    return RuleScore(name, spec, sum(kept), hits / sum(kept) if any(kept) else math.nan,
                     hits / good if good else math.nan, 1 + size / seed if seed else math.nan)


def seed_size(run: Run) -> int:
    """The number of seed examples: the manifest's count, else the sources the records name."""
    counted = run.counts.get("examples")
    if isinstance(counted, int) and counted > 0:
        return counted
    return len({r.source_id for r in run.records} | {r.source_id for r in run.rejected})


def rule_scores(run: Run, judgments: Sequence[Judgment], rules: Sequence[Rule] = PAPER_RULES) -> list[RuleScore]:
    """Table 4: each rule's precision and recall on the judged outputs and the multiple its kept records make.

    Precision is the share of the judged outputs a rule keeps that people accepted, recall
    the share of accepted outputs it keeps. The multiple is (seed + records of
    augmented.jsonl the rule keeps) / seed, over every record, judged or not. When some
    judged outputs are records a filter of the run dropped, a last row scores the run's
    own filters as they decided.
    """
    seed = seed_size(run)
    accepted = [j.accepted for j in judgments]
    scores = []
    for rule in rules:
        size = sum(rule.keep(r.iteration, r.scores) for r in run.records)
        scores.append(_score(rule.name, rule.spec, [rule.keep(j.iteration, j.scores) for j in judgments], accepted, size, seed))
    dropped = {r.id for r in run.filtered}
    if any(j.id in dropped for j in judgments):
        kept = [j.id not in dropped for j in judgments]
        spec = ", ".join(f.get("name", "?") for f in run.config.get("filters", [])) or "?"
        scores.append(_score("this run's filters", f"[{spec}]", kept, accepted, len(run.records), seed))
    return scores


@dataclass(frozen=True)
class SpanPair:
    """A rewritten span in its source sentence and where the aligner put it in the paraphrase."""

    source_tokens: tuple[str, ...]
    source: tuple[int, int]
    tokens: tuple[str, ...]
    aligned: tuple[int, int]

    @property
    def shift(self) -> int:
        """d(a, b) = |a1 - b1| + |a2 - b2| of Culkin et al. 2021, Fig. 5."""
        return abs(self.source[0] - self.aligned[0]) + abs(self.source[1] - self.aligned[1])


def span_pairs(records: Sequence[Augmented], sources: Mapping[str, Example], rewrite_roles: Sequence[str]) -> list[SpanPair]:
    """The pairs of every record that rewrote one span of a source that is at hand."""
    pairs = []
    for record in records:
        source = sources.get(record.source_id)
        span = rewritten_span(record, rewrite_roles)
        if source is None or span is None or record.target is None or record.target >= len(source.spans):
            continue
        original = source.spans[record.target]
        pairs.append(SpanPair(source.tokens, (original.start, original.end), record.tokens, (span.start, span.end)))
    return pairs
