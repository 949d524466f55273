"""Judgment tasks after Culkin et al. 2021 §6.1: each system output hidden among gold controls.

A task names one label (a FrameNet frame, an entity type...) and shows up to three
sentences, each with a highlighted span, to be rated 0-100 for how well the highlighted
words, in context, evoke the label: the system output (the rewritten span of an augmented
record, or one entity of a whole-sentence paraphrase, which gets a task per entity), a
gold *in-frame* sentence (same label, another trigger or LU) and a gold *out-of-frame*
sentence (another label of the same role), in a seeded random order. The controls ground
the scores of system outputs and show whether annotators understood the task (in the
paper, gold in-frame sentences were accepted 95% of the time, out-of-frame ones 7%).

An export is a folder: ``tasks.json`` (the key: every item's kind and where it came from;
never shown to annotators), ``judge.html`` (the static page annotators fill in) and
``tasks.csv`` (the same tasks for a crowdsourcing platform). Its id, a digest of the
tasks, ties answer files to it.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from spanaug_core.errors import DataError, one_line
from spanaug_core.text import detokenize, token_offsets
from spanaug_core.types import Augmented, Example, Span
from spanaug_shared.records import rewritten_span

TASKS_FILE = "tasks.json"
PAGE_FILE = "judge.html"
CSV_FILE = "tasks.csv"
Kind = Literal["system", "in-frame", "out-of-frame"]
KINDS: tuple[Kind, ...] = get_args(Kind)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Item(_Frozen):
    """One sentence to rate: ``source`` is the record id (system) or the gold example id (controls)."""

    item: str
    kind: Kind
    source: str
    tokens: tuple[str, ...]
    span: tuple[int, int]
    label: str
    iteration: int | None = None
    scores: dict[str, float] = {}
    # System items: whether the run's filters kept the record (False: rejected.jsonl); None
    # for controls and for exports made before this was recorded.
    kept: bool | None = None
    # System items: the judged span's attrs (a rewritten span keeps its source's: pos, lu,
    # lemma), so that `judge import --by` can tell which kinds of spans fail. Never shown.
    attrs: dict[str, Any] = {}

    def highlighted(self) -> tuple[str, str, str]:
        """The sentence as text before, inside and after the highlighted span."""
        return highlight(self.tokens, self.span)


class Task(_Frozen):
    """One screen of the page: the label every item of the task is judged against."""

    task: str
    label: str
    items: tuple[Item, ...]


class TaskSet(_Frozen):
    """Everything an export knows; ``export`` is the digest that answer files must carry."""

    export: str
    run: str
    controls: str | None
    judgments_per_item: int
    seed: int
    tasks: tuple[Task, ...]

    def items(self) -> dict[str, Item]:
        """Every item by its id."""
        return {item.item: item for task in self.tasks for item in task.items}


@dataclass
class ExportStats:
    """What ``build_tasks`` could not do, for the command to report."""

    records: int = 0
    no_span: int = 0
    missing: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass(frozen=True)
class _Gold:
    example_id: str
    tokens: tuple[str, ...]
    span: Span


def _trigger(tokens: Sequence[str], span: Span) -> str:
    return detokenize(tokens[span.start : span.end]).lower()


def _another_trigger(gold: _Gold, tokens: Sequence[str], span: Span) -> bool:
    """Whether a gold span uses another word than the system's and, where both name one, another LU."""
    lu, gold_lu = span.attrs.get("lu"), gold.span.attrs.get("lu")
    return _trigger(gold.tokens, gold.span) != _trigger(tokens, span) and (lu is None or gold_lu is None or lu != gold_lu)


class _GoldIndex:
    """Gold spans by role and label, to draw controls from."""

    def __init__(self, examples: Iterable[Example]) -> None:
        self.by_label: dict[tuple[str, str], list[_Gold]] = defaultdict(list)
        for example in examples:
            for span in example.spans:
                self.by_label[span.role, span.label].append(_Gold(example.id, example.tokens, span))
        self.labels: dict[str, list[str]] = defaultdict(list)
        for role, label in sorted(self.by_label):
            self.labels[role].append(label)

    def draw(self, record: Augmented, span: Span, rng: random.Random) -> list[tuple[Kind, _Gold]]:
        """An in-frame and an out-of-frame control for a record's span (gold spans of its role), each where the gold has one."""
        drawn: list[tuple[Kind, _Gold]] = []
        same = [g for g in self.by_label.get((span.role, span.label), ()) if g.example_id != record.source_id
                and _another_trigger(g, record.tokens, span)]
        if same:
            drawn.append(("in-frame", rng.choice(same)))
        # A label first, then a sentence of it: frequent labels do not crowd out the others.
        others = [label for label in self.labels.get(span.role, ()) if label != span.label]
        if others:
            pool = [g for g in self.by_label[span.role, rng.choice(others)] if g.example_id != record.source_id]
            if pool:
                drawn.append(("out-of-frame", rng.choice(pool)))
        return drawn


def judged_spans(record: Augmented, rewrite_roles: Sequence[str]) -> list[Span]:
    """What annotators judge of a record: its rewritten span or, for a whole-sentence
    paraphrase (NER), every span it carries (each entity must still be one, of its type)."""
    span = rewritten_span(record, rewrite_roles)
    if span is not None:
        return [span]
    return list(record.spans) if record.target is None else []


def highlight(tokens: Sequence[str], span: tuple[int, int]) -> tuple[str, str, str]:
    """``tokens`` as detokenized text split around ``tokens[start:end]`` (spaces stay outside the span)."""
    text, offsets = detokenize(tokens), token_offsets(tokens)
    first, last = offsets[span[0]][0], offsets[span[1] - 1][1]
    return text[:first], text[first:last], text[last:]


def build_tasks(
    records: Sequence[Augmented],
    gold: Iterable[Example],
    rewrite_roles: Sequence[str] = ("target",),
    judgments_per_item: int = 3,
    seed: int = 0,
    sample: int | None = None,
    run: str = "",
    controls: str | None = None,
    dropped: Sequence[Augmented] = (),
) -> tuple[TaskSet, ExportStats]:
    """One task per judged span (:func:`judged_spans`) of each record (all, or a seeded
    sample), each with the controls the gold allows.

    ``dropped`` are records the run's filters rejected: judged like the kept ``records``
    (their system items say ``kept=False``), so the judgments cover the unfiltered output.
    Controls are gold spans of the judged span's role (with the same label, and with
    another); a control never comes from the record's own source sentence.
    """
    rng = random.Random(seed)
    index = _GoldIndex(gold)
    pool = [(record, True) for record in records] + [(record, False) for record in dropped]
    chosen = range(len(pool))
    if sample is not None and sample < len(pool):
        chosen = sorted(rng.sample(chosen, sample))
    stats = ExportStats(records=len(chosen))
    judged: list[tuple[Augmented, bool, Span]] = []
    for record, kept in (pool[i] for i in chosen):
        spans = judged_spans(record, rewrite_roles)
        stats.no_span += not spans
        judged += [(record, kept, span) for span in spans]
    tasks = []
    width = len(str(len(judged)))
    for record, kept, span in judged:
        number = f"t{len(tasks) + 1:0{width}d}"
        drawn = index.draw(record, span, rng)
        if index.labels.get(span.role):
            for kind in ("in-frame", "out-of-frame"):
                stats.missing[kind] += all(k != kind for k, _ in drawn)
        items = [
            dict(kind="system", source=record.id, tokens=record.tokens, span=(span.start, span.end), label=span.label,
                 iteration=record.iteration, scores=record.scores, kept=kept, attrs=dict(span.attrs)),
            *(dict(kind=kind, source=g.example_id, tokens=g.tokens, span=(g.span.start, g.span.end), label=g.span.label)
              for kind, g in drawn),
        ]
        rng.shuffle(items)
        tasks.append(Task(task=number, label=span.label,
                          items=tuple(Item(item=f"{number}-{k}", **item) for k, item in enumerate(items, 1))))
    body = {"run": run, "controls": controls, "judgments_per_item": judgments_per_item, "seed": seed,
            "tasks": [t.model_dump(mode="json") for t in tasks]}
    export = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
    return TaskSet(export=export, **body), stats


def export_files(tasks: TaskSet) -> dict[str, str]:
    """The text of ``tasks.json``, ``judge.html`` and ``tasks.csv``, by file name."""
    from spanaug_judge.page import render_page

    slots = max((len(t.items) for t in tasks.tasks), default=1)
    table = io.StringIO(newline="")
    writer = csv.writer(table)
    writer.writerow(["export", "task", "label", *(f"{col}{k}" for k in range(1, slots + 1) for col in ("item", "sentence", "trigger"))])
    for task in tasks.tasks:
        cells = []
        for item in task.items:
            before, inside, after = item.highlighted()
            cells += [item.item, f"{html.escape(before)}<mark>{html.escape(inside)}</mark>{html.escape(after)}", inside]
        writer.writerow([tasks.export, task.task, task.label, *cells, *[""] * (3 * (slots - len(task.items)))])
    return {TASKS_FILE: tasks.model_dump_json(indent=1) + "\n", PAGE_FILE: render_page(tasks), CSV_FILE: table.getvalue()}


def read_export(folder: Path) -> TaskSet:
    """The tasks an export folder holds."""
    path = folder / TASKS_FILE
    if not path.is_file():
        raise DataError(f"no {TASKS_FILE} here (expected a folder written by `spanaug judge export`)", path=folder)
    try:
        return TaskSet.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise DataError(f"not a task file of `spanaug judge export` ({one_line(exc)})", path=path) from None
