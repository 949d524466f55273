"""Collected answers -> one judgment per item, acceptance rates per kind, and agreement.

Answer files come from the page (JSON lines: ``{"export", "annotator"}`` first, then one
``{"item", "score"}`` per rated sentence) or, as CSV with the columns
``annotator,item,score``, from anywhere else (a crowdsourcing platform's results, a
spreadsheet). After Culkin et al. 2021 §6.1 an item's judgments are averaged and a mean
of at least 50 accepts it. Agreement is Fleiss' kappa over the single judgments' accept
decisions (score >= 50), computed on the items that got the most common number of
judgments, since kappa needs the same number for every item. The system items become the
judgments file that ``spanaug train filter`` reads (see spanaug_shared.judgments).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spanaug_core.errors import DataError
from spanaug_core.files import read_text
from spanaug_core.text import detokenize
from spanaug_shared.jsonlines import objects
from spanaug_judge.agreement import fleiss_kappa
from spanaug_judge.tasks import KINDS, Item, TaskSet

ACCEPT = 50.0
CSV_COLUMNS = ("annotator", "item", "score")


@dataclass(frozen=True)
class Answer:
    """One annotator's score for one item, and where it was read."""

    annotator: str
    item: str
    score: float
    path: Path
    line: int


@dataclass(frozen=True)
class ItemResult:
    """An item with every judgment it got (``(annotator, score)`` pairs)."""

    item: Item
    judgments: tuple[tuple[str, float], ...]

    @property
    def mean(self) -> float:
        return sum(score for _, score in self.judgments) / len(self.judgments)

    @property
    def accepted(self) -> bool:
        return self.mean >= ACCEPT


@dataclass(frozen=True)
class RecordResult:
    """A judged system output: its items (one span each; several for a whole-sentence
    paraphrase's entities). It is accepted when every item is, and its mean is the lowest."""

    items: tuple[ItemResult, ...]

    @property
    def deciding(self) -> ItemResult:
        """The item with the lowest mean: the record's mean, and what rejects it if anything does."""
        return min(self.items, key=lambda r: r.mean)

    @property
    def kept(self) -> bool | None:
        """Whether the run's filters kept the record (None: the export did not record it)."""
        return self.items[0].item.kept

    @property
    def accepted(self) -> bool:
        return all(r.accepted for r in self.items)


def system_records(results: Iterable[ItemResult]) -> list[RecordResult]:
    """The judged system items grouped by the record they show, in order of first appearance."""
    grouped: dict[str, list[ItemResult]] = {}
    for r in results:
        if r.item.kind == "system":
            grouped.setdefault(r.item.source, []).append(r)
    return [RecordResult(tuple(items)) for items in grouped.values()]


def breakdown(results: Iterable[ItemResult], key: str) -> dict[str, tuple[int, int]]:
    """``value -> (judged, accepted)`` over the judged system items, by ``key``: ``label``,
    ``iteration``, ``kept``, or a key of the judged span's attrs (``pos``, ``lu``...); an
    item without it counts under ``-``. Items, not records: a whole-sentence paraphrase's
    entities count one by one, each under its own label."""
    found: dict[str, tuple[int, int]] = {}
    for r in results:
        if r.item.kind != "system":
            continue
        own = {"label": r.item.label, "iteration": r.item.iteration, "kept": r.item.kept}
        value = own[key] if key in own else r.item.attrs.get(key)
        name = "-" if value is None else str(value)
        judged, accepted = found.get(name, (0, 0))
        found[name] = (judged + 1, accepted + r.accepted)
    return dict(sorted(found.items(), key=lambda pair: (-pair[1][0], pair[0])))


@dataclass(frozen=True)
class Agreement:
    """Fleiss' kappa of accept decisions over ``items`` items with ``raters`` judgments each."""

    kappa: float
    items: int
    raters: int
    unanimous: float


@dataclass(frozen=True)
class FilterQuality:
    """The run's filters against the judgments of an export made with ``--rejected``.

    ``kept``/``dropped``: judged records (:class:`RecordResult`) the filters kept/dropped,
    and how many of each were accepted. Precision and recall are the paper's (Culkin et al.
    2021, Table 4): accepted among kept, and kept among accepted.
    """

    kept: int
    kept_accepted: int
    dropped: int
    dropped_accepted: int

    @property
    def precision(self) -> float:
        return self.kept_accepted / self.kept if self.kept else math.nan

    @property
    def recall(self) -> float:
        accepted = self.kept_accepted + self.dropped_accepted
        return self.kept_accepted / accepted if accepted else math.nan


def filter_quality(records: Sequence[RecordResult]) -> FilterQuality | None:
    """How the filters did, where the judged records include some they dropped; else None."""
    judged = [r for r in records if r.kept is not None]
    if not any(r.kept is False for r in judged):
        return None
    kept = [r for r in judged if r.kept]
    dropped = [r for r in judged if not r.kept]
    return FilterQuality(len(kept), sum(r.accepted for r in kept), len(dropped), sum(r.accepted for r in dropped))


def _jsonl_rows(path: Path, export: str) -> Iterator[tuple[int, Any, Any, Any]]:
    annotator = None
    for lineno, obj in objects(path):
        if not isinstance(obj, dict):
            raise DataError(f"expected a JSON object, got {type(obj).__name__}", path, lineno)
        if annotator is None:
            if "export" not in obj or not isinstance(obj.get("annotator"), str) or not obj["annotator"].strip():
                raise DataError('expected the header {"export": ..., "annotator": ...} that the page writes first', path, lineno)
            if obj["export"] != export:
                raise DataError(f"these answers are for export {obj['export']!r}, the tasks are export {export!r}", path, lineno)
            annotator = obj["annotator"].strip()
            continue
        if set(obj) != {"item", "score"}:
            raise DataError(f'expected {{"item": ..., "score": ...}}, got the keys {sorted(obj)}', path, lineno)
        yield lineno, annotator, obj["item"], obj["score"]
    if annotator is None:
        raise DataError("holds no answers", path)


def _csv_rows(path: Path) -> Iterator[tuple[int, Any, Any, Any]]:
    reader = csv.DictReader(io.StringIO(read_text(path, encoding="utf-8-sig"), newline=""))
    try:
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise DataError(f"the header lacks {', '.join(missing)} (expected the columns {','.join(CSV_COLUMNS)})", path, 1)
        for row in reader:
            annotator = (row["annotator"] or "").strip()
            if not annotator:
                raise DataError("empty annotator", path, reader.line_num)
            try:
                score = float(row["score"])
            except (TypeError, ValueError):
                raise DataError(f"score {row['score']!r} is not a number", path, reader.line_num) from None
            yield reader.line_num, annotator, row["item"], score
    except csv.Error as exc:
        raise DataError(f"not a CSV file ({exc})", path, reader.line_num) from None


def read_answers(path: Path, tasks: TaskSet) -> list[Answer]:
    """The answers of one file (``.csv``, else the page's JSON lines), checked against the tasks."""
    path = Path(path)
    items = tasks.items()
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else _jsonl_rows(path, tasks.export)
    answers = []
    for lineno, annotator, item, score in rows:
        if item not in items:
            raise DataError(f"item {item!r} is not one of the {len(items)} items of export {tasks.export}", path, lineno)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100:
            raise DataError(f"score {score!r} of item {item} is not a number from 0 to 100", path, lineno)
        answers.append(Answer(annotator, item, float(score), path, lineno))
    return answers


def aggregate(tasks: TaskSet, answers: Iterable[Answer]) -> list[ItemResult]:
    """Every item judged at least once, in task order; one annotator judging an item twice is an error."""
    seen: dict[tuple[str, str], Answer] = {}
    by_item: dict[str, list[tuple[str, float]]] = {}
    for answer in answers:
        first = seen.setdefault((answer.annotator, answer.item), answer)
        if first is not answer:
            raise DataError(
                f"annotator {answer.annotator!r} rated item {answer.item} again (first at {first.path}:{first.line})",
                answer.path, answer.line,
            )
        by_item.setdefault(answer.item, []).append((answer.annotator, answer.score))
    return [ItemResult(item, tuple(by_item[item.item])) for task in tasks.tasks for item in task.items if item.item in by_item]


def summarize(tasks: TaskSet, results: Sequence[ItemResult]) -> dict[str, dict[str, float]]:
    """Per kind: items exported, items judged, mean score and acceptance rate (of judged items)."""
    exported = Counter(item.kind for task in tasks.tasks for item in task.items)
    summary = {}
    for kind in KINDS:
        judged = [r for r in results if r.item.kind == kind]
        summary[kind] = {
            "items": float(exported[kind]),
            "judged": float(len(judged)),
            "mean": sum(r.mean for r in judged) / len(judged) if judged else math.nan,
            "acceptance": sum(r.accepted for r in judged) / len(judged) if judged else math.nan,
        }
    return summary


def agreement(results: Sequence[ItemResult]) -> Agreement | None:
    """Kappa over the items with the most common number (>= 2) of judgments; None when there are none."""
    sizes = Counter(len(r.judgments) for r in results if len(r.judgments) >= 2)
    if not sizes:
        return None
    raters = max(sizes, key=lambda n: (sizes[n], n))
    table = []
    for r in results:
        if len(r.judgments) == raters:
            accepts = sum(score >= ACCEPT for _, score in r.judgments)
            table.append([accepts, raters - accepts])
    unanimous = sum(max(row) == raters for row in table) / len(table)
    return Agreement(fleiss_kappa(table), len(table), raters, unanimous)


def _item_line(r: ItemResult) -> dict[str, Any]:
    return {"item": r.item.item, "mean": round(r.mean, 4), "judgments": [{"annotator": a, "score": s} for a, s in r.judgments],
            "label": r.item.label, "span": list(r.item.span)}


def write_judgments(results: Iterable[ItemResult], path: Path) -> int:
    """Write the judged system outputs, one line a record, as the judgments JSONL that
    ``spanaug train filter`` reads. The item fields are those of the deciding item; a record
    judged in several items (a whole-sentence paraphrase's entities) lists them all in ``items``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as fh:
        for record in system_records(results):
            item = record.deciding.item
            line = {"id": item.source, "iteration": item.iteration, "scores": item.scores, "accepted": record.accepted,
                    **_item_line(record.deciding), "text": detokenize(item.tokens)}
            if record.kept is not None:
                line["kept"] = record.kept
            if len(record.items) > 1:
                line["items"] = [_item_line(r) for r in record.items]
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    return count
