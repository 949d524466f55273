"""Learning curves: does adding augmented data help a model trained on a fraction of the gold data?

For every seed the gold training pool is shuffled once and each fraction takes a prefix
of that order, so a seed's subsets are nested and every condition at one (fraction,
seed) sees the same gold sentences (paired comparisons; Culkin et al. 2021 §6.3, Fig. 8):

- ``gold``: the subset alone;
- ``augmented``: the subset plus every augmented record whose source is in it;
- ``filtered``: the subset plus those of the records that the experiment's filters keep;
- ``lexsub``: the subset plus the lexical-substitution baseline made from the records.

Each cell trains one model (the trainer's seed is the cell's seed), early-stops on dev
and is scored on test, overall and, where the curve names an attribute of the rewritten
spans (FrameNet's ``lu``), on the test targets whose value the cell's gold subset never
holds: new triggers are where paraphrases should help most. A row per cell is appended to
``results.csv`` as soon as the cell is done, so an interrupted experiment keeps its rows
and a rerun skips them. ``summarize`` gives mean and standard deviation per (condition,
fraction); ``paired`` compares each condition with gold seed by seed (a paired t-test).
"""

from __future__ import annotations

import csv
import math
import random
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ConfigDict, Field, field_validator

from spanaug_core.errors import ConfigError, DataError
from spanaug_core.files import atomic_output, read_lines, writing
from spanaug_core.protocols import ProgressCallback, ProgressEvent
from spanaug_core.types import Example

CONDITIONS = ("gold", "augmented", "filtered", "lexsub")
RESULTS = "results.csv"
SUMMARY = "summary.csv"
PAIRED = "paired.csv"
COLUMNS = ("condition", "fraction", "seed", "gold_examples", "added_examples", "dev_f1",
           "test_precision", "test_recall", "test_f1", "epochs_run", "seconds", "unseen_targets", "unseen_recall")
METRICS = ("test_f1", "unseen_recall")  # what summaries and paired tests are computed for


class CurveOptions(BaseModel):
    """Which cells a learning curve trains."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fractions: tuple[float, ...] = Field(default=tuple(k / 10 for k in range(1, 11)), min_length=1)
    seeds: int = Field(default=5, ge=1, description="resampled subsets (and initialisations) per fraction")
    first_seed: int = Field(default=0, ge=0, description="the first seed: seeds first_seed to first_seed + seeds - 1 are trained")
    conditions: tuple[str, ...] = Field(default=("gold", "augmented"), min_length=1)

    @property
    def seed_range(self) -> range:
        """The seeds trained at each fraction."""
        return range(self.first_seed, self.first_seed + self.seeds)

    @field_validator("fractions")
    @classmethod
    def _fractions(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(not 0 < f <= 1 for f in value):
            raise ValueError(f"fractions must lie in (0, 1], got {list(value)}")
        return tuple(sorted(set(value)))

    @field_validator("conditions")
    @classmethod
    def _conditions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in value if c not in CONDITIONS]
        if unknown:
            raise ValueError(f"unknown condition(s) {unknown}; choose from {list(CONDITIONS)}")
        return tuple(dict.fromkeys(value))


@dataclass(frozen=True)
class Cell:
    """One model to train."""

    condition: str
    fraction: float
    seed: int

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.condition, f"{self.fraction:g}", str(self.seed))


# (gold subset, added examples, model folder, seed) -> (the trainer's metrics, test scores: precision,
# recall, f1, and unseen_targets/unseen_recall where the curve scores unseen targets)
TrainAndTest = Callable[[list[Example], list[Example], Path, int], tuple[dict[str, float], dict[str, float]]]


def subset(pool: Sequence[Example], fraction: float, seed: int) -> list[Example]:
    """The first ``fraction`` of the pool in seed ``seed``'s order (at least one example)."""
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    return [pool[i] for i in order[: max(1, round(fraction * len(pool)))]]


def cells(options: CurveOptions) -> list[Cell]:
    """Every cell, smallest fraction first (the cheap, most telling cells land first)."""
    return [Cell(c, f, s) for f in options.fractions for s in options.seed_range for c in options.conditions]


def done_keys(path: Path) -> set[tuple[str, str, str]]:
    """Cells already in a results file (a rerun skips them)."""
    if not path.exists():
        return set()
    return {(row["condition"], row["fraction"], row["seed"]) for row in own_rows(path)}


def cells_left(options: CurveOptions, path: Path) -> tuple[set[tuple[str, str, str]], list[Cell]]:
    """The cells already in a results file, and those a (re)run of ``options`` still trains, in order."""
    done = done_keys(path)
    return done, [cell for cell in cells(options) if cell.key not in done]


def _count(text: str) -> bool:
    return int(text) >= 0


def _score(text: str) -> bool:
    return 0 <= float(text) <= 1


# What each column of a results file holds, as the message for a bad value says it, and a
# test of a value (False, or a ValueError, when it is not one).
_SCORE = ("a number from 0 to 1", _score)
_COUNT = ("a whole number, 0 or more", _count)
_VALUES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "condition": ("a condition's name", bool),
    "fraction": ("a number above 0, at most 1", lambda text: 0 < float(text) <= 1),
    "seed": _COUNT,
    "gold_examples": _COUNT,
    "added_examples": _COUNT,
    "dev_f1": _SCORE,
    "test_precision": _SCORE,
    "test_recall": _SCORE,
    "test_f1": _SCORE,
    "epochs_run": _COUNT,
    "seconds": ("a number of seconds", lambda text: 0 <= float(text) < math.inf),
    "unseen_targets": _COUNT,
    "unseen_recall": _SCORE,
}
# Empty where the curve had no dev set (dev_f1) or did not score unseen targets (--unseen).
_OPTIONAL = frozenset({"dev_f1", "unseen_targets", "unseen_recall"})


def _bad_value(column: str, text: str) -> str | None:
    """What is wrong with a column's value, or None when it is fine."""
    what, test = _VALUES[column]
    if not text:
        return None if column in _OPTIONAL else f"{column} is empty; expected {what}"
    try:
        good = test(text)
    except ValueError:
        good = False
    return None if good else f"{column} is {text!r}; expected {what}"


def _header_problem(header: Sequence[str]) -> str:
    """How a header that is not :data:`COLUMNS` differs from it."""
    missing = [c for c in COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    differences = []
    if missing:
        differences.append(f"lacks {', '.join(missing)}")
    if unknown:
        differences.append(f"has {', '.join(unknown)}")
    found = f"a header that {' and '.join(differences)}" if differences else f"them in another order or twice: {', '.join(header)}"
    return f"expected the columns {', '.join(COLUMNS)}; found {found}"


def _numbered_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, row)`` of a results file, each row checked: a DataError names the line and what was expected.

    Every row must have every column: one cut short (a copy or a disk that filled part way)
    would otherwise drop its cell out of the statistics, or join them with empty metrics.
    """
    reader = csv.reader(line for _, line in read_lines(path, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise DataError(f"is empty; expected a header with the columns {', '.join(COLUMNS)}", path)
        if tuple(header) != COLUMNS:
            raise DataError(_header_problem(header), path, reader.line_num)
        for fields in reader:
            if not fields:  # a blank line (a hand-edited file's last, say) holds no cell
                continue
            if len(fields) != len(COLUMNS):
                lacking = f": no value for {', '.join(COLUMNS[len(fields):])}" if len(fields) < len(COLUMNS) else ""
                raise DataError(f"expected {len(COLUMNS)} fields, found {len(fields)}{lacking}", path, reader.line_num)
            row = dict(zip(COLUMNS, fields))
            for column, text in row.items():
                if problem := _bad_value(column, text):
                    raise DataError(problem, path, reader.line_num)
            yield reader.line_num, row
    except csv.Error as exc:
        raise DataError(f"not a CSV file: {exc}", path, reader.line_num) from None


def checked_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a results file whose header is :data:`COLUMNS` and whose values are each column's (DataError otherwise)."""
    return [row for _, row in _numbered_rows(path)]


def own_rows(path: Path) -> list[dict[str, str]]:
    """The checked rows of an --out folder's own results file; a bad one says what the user can do about it."""
    try:
        return checked_rows(path)
    except DataError as exc:
        exc.hint = f"{path} is the --out folder's own results file: correct it, remove it or pick another --out"
        raise


def merge_results(paths: Sequence[Path]) -> list[dict[str, str]]:
    """The rows of several results files (parts of one curve trained apart), each cell once.

    A cell in two files is refused rather than averaged or dropped: two models of one cell
    mean the parts were trained with different settings or twice, and either would skew the
    summary without a trace. So is a file without rows: it was named to be joined, and
    joining nothing from it would pass for a complete curve.
    """
    rows: list[dict[str, str]] = []
    seen: dict[tuple[str, str, str], Path] = {}
    for path in paths:
        before = len(rows)
        for line, row in _numbered_rows(path):
            key = (row["condition"], row["fraction"], row["seed"])
            if key in seen:
                raise DataError(f"cell {' '.join(key)} (condition, fraction, seed) is already in {seen[key]}", path, line)
            seen[key] = path
            rows.append(row)
        if len(rows) == before:
            raise DataError("holds no results: a header and no rows, expected a row per trained cell", path)
    return rows


def write_results(rows: Sequence[Mapping[str, str]], path: Path) -> None:
    """A ``results.csv`` holding ``rows``."""
    _write_csv(path, list(COLUMNS), ([row[c] for c in COLUMNS] for row in rows))


def run_curve(
    pool: Sequence[Example],
    additions: Mapping[str, Mapping[str, Sequence[Example]]],
    train_and_test: TrainAndTest,
    options: CurveOptions,
    out_dir: Path,
    keep_models: bool = False,
    progress: ProgressCallback | None = None,
) -> list[dict[str, str]]:
    """Train every cell not yet in ``out_dir/results.csv``, appending a row each; returns all rows.

    ``additions[condition][source_id]`` are the extra examples a condition adds for a gold
    example (``gold`` needs none).
    """
    missing = [c for c in options.conditions if c != "gold" and c not in additions]
    if missing:
        raise ConfigError(f"condition(s) {missing} need their extra examples (augmented records)")
    if not pool:
        raise ConfigError("the gold training pool is empty")
    out_dir.mkdir(parents=True, exist_ok=True)
    results = out_dir / RESULTS
    _, todo = cells_left(options, results)
    report = progress or (lambda event: None)
    new_file = not results.exists()
    with results.open("a", encoding="utf-8", newline="") as fh:
        _lock(fh, out_dir)
        writer = csv.writer(fh)
        if new_file:
            with writing(results):
                writer.writerow(COLUMNS)
                fh.flush()
        for n, cell in enumerate(todo, 1):
            gold = subset(pool, cell.fraction, cell.seed)
            extra = [] if cell.condition == "gold" else [e for g in gold for e in additions[cell.condition].get(g.id, ())]
            started = time.perf_counter()
            model_dir = out_dir / "models" / "-".join(cell.key) if keep_models else Path(tempfile.mkdtemp(prefix="spanaug-curve-"))
            try:
                dev, test = train_and_test(gold, extra, model_dir, cell.seed)
            finally:
                if not keep_models:
                    shutil.rmtree(model_dir, ignore_errors=True)
            with writing(results):
                writer.writerow([
                    cell.condition, f"{cell.fraction:g}", cell.seed, len(gold), len(extra),
                    _fmt(dev.get("dev_f1")), _fmt(test["precision"]), _fmt(test["recall"]), _fmt(test["f1"]),
                    int(dev.get("epochs_run", 0)), f"{time.perf_counter() - started:.1f}",
                    "" if "unseen_targets" not in test else int(test["unseen_targets"]), _fmt(test.get("unseen_recall")),
                ])
                fh.flush()  # a row on disk per model: Ctrl-C loses at most the model in training
            report(ProgressEvent("models", n, len(todo), message=f"{cell.condition} {cell.fraction:g} seed {cell.seed}: test F1 {test['f1']:.3f}"))
    return checked_rows(results)


def _lock(fh: IO[str], out_dir: Path) -> None:
    """Hold ``results.csv`` exclusively: two experiments appending to one file would train every cell twice."""
    import fcntl

    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ConfigError(f"another experiment is writing {out_dir} right now; wait for it or pick another --out") from None


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


@dataclass(frozen=True)
class Point:
    """Mean and sample standard deviation over a (condition, fraction)'s seeds: of test F1,
    and of recall on unseen test targets (None when the curve did not score them)."""

    condition: str
    fraction: float
    runs: int
    mean: float
    std: float
    gold_examples: float
    added_examples: float
    unseen_mean: float | None = None
    unseen_std: float | None = None


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _values(rows: Sequence[Mapping[str, str]], metric: str) -> list[float]:
    return [float(r[metric]) for r in rows if r.get(metric)]


def _order(condition: str) -> int:
    return CONDITIONS.index(condition) if condition in CONDITIONS else len(CONDITIONS)


def summarize(rows: Sequence[Mapping[str, str]]) -> list[Point]:
    """One point per (condition, fraction), in condition then fraction order."""
    groups: dict[tuple[str, float], list[Mapping[str, str]]] = defaultdict(list)
    for row in rows:
        groups[(row["condition"], float(row["fraction"]))].append(row)
    points = []
    for (condition, fraction), group in sorted(groups.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1])):
        mean, std = _mean_std(_values(group, "test_f1"))
        unseen = _values(group, "unseen_recall")
        unseen_mean, unseen_std = _mean_std(unseen) if unseen else (None, None)
        points.append(Point(
            condition, fraction, len(group), mean, std,
            statistics.fmean(float(r["gold_examples"]) for r in group),
            statistics.fmean(float(r["added_examples"]) for r in group),
            unseen_mean, unseen_std,
        ))
    return points


def write_summary(points: Sequence[Point], path: Path) -> None:
    """``summary.csv``: one line per point."""
    header = ["condition", "fraction", "runs", "test_f1_mean", "test_f1_std", "gold_examples", "added_examples",
              "unseen_recall_mean", "unseen_recall_std"]
    _write_csv(path, header, ([p.condition, f"{p.fraction:g}", p.runs, f"{p.mean:.4f}", f"{p.std:.4f}", f"{p.gold_examples:.1f}",
                               f"{p.added_examples:.1f}", _fmt(p.unseen_mean), _fmt(p.unseen_std)] for p in points))


def _write_csv(path: Path, header: list[str], rows: Iterable[list[object]]) -> None:
    """A CSV file written whole or not at all: a full disk names it and leaves no temporary."""
    with atomic_output(path, overwrite=True) as partial, partial.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


@dataclass(frozen=True)
class Paired:
    """A condition against gold at one fraction, seed by seed: the mean and standard deviation
    of the differences (condition - gold), a paired t-test and the 95% interval of the mean
    difference (None below two seeds or without spread), the seeds where the condition is above
    gold, and a Wilcoxon signed-rank test, which a few lucky seeds sway less than the t-test
    (None below two seeds or where every difference is zero)."""

    condition: str
    fraction: float
    metric: str
    runs: int
    mean_diff: float
    std_diff: float
    t: float | None
    p: float | None
    ci_low: float | None
    ci_high: float | None
    wins: int
    wilcoxon_p: float | None


def paired(rows: Sequence[Mapping[str, str]]) -> list[Paired]:
    """Every condition against gold at each fraction, over the seeds both have, for each metric scored."""
    from scipy import stats

    by = {(r["condition"], float(r["fraction"]), r["seed"]): r for r in rows}
    out = []
    conditions = sorted({r["condition"] for r in rows} - {"gold"}, key=_order)
    for fraction in sorted({float(r["fraction"]) for r in rows}):
        for condition in conditions:
            for metric in METRICS:
                pairs = [(float(by[(condition, fraction, s)][metric]), float(g[metric]))
                         for (c, f, s), g in by.items()
                         if c == "gold" and f == fraction and (condition, fraction, s) in by and g.get(metric) and by[(condition, fraction, s)].get(metric)]
                if not pairs:
                    continue
                diffs = [a - b for a, b in pairs]
                mean, std = _mean_std(diffs)
                t = p = low = high = wilcoxon = None
                if len(pairs) > 1 and std > 0:
                    test = stats.ttest_rel([a for a, _ in pairs], [b for _, b in pairs])
                    t, p = float(test.statistic), float(test.pvalue)
                    low, high = (float(x) for x in stats.t.interval(0.95, len(diffs) - 1, loc=mean, scale=std / len(diffs) ** 0.5))
                if len(pairs) > 1 and any(diffs):
                    wilcoxon = float(stats.wilcoxon(diffs).pvalue)
                out.append(Paired(condition, fraction, metric, len(pairs), mean, std, t, p,
                                  low, high, sum(d > 0 for d in diffs), wilcoxon))
    return out


def write_paired(comparisons: Sequence[Paired], path: Path) -> None:
    """``paired.csv``: one line per (fraction, condition, metric)."""
    def number(value: float | None, digits: int) -> str:
        return "" if value is None else f"{value:.{digits}f}"

    _write_csv(path, ["fraction", "condition", "metric", "runs", "mean_diff", "std_diff", "t", "p", "ci_low", "ci_high", "wins", "wilcoxon_p"],
               ([f"{c.fraction:g}", c.condition, c.metric, c.runs, f"{c.mean_diff:.4f}", f"{c.std_diff:.4f}", number(c.t, 3), number(c.p, 4),
                 number(c.ci_low, 4), number(c.ci_high, 4), c.wins, number(c.wilcoxon_p, 4)] for c in comparisons))
