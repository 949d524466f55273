"""``spanaug judge export`` and ``spanaug judge import``: human judgments of a run's outputs.

Export turns a run's augmented.jsonl (with ``--rejected`` also the records its filters
dropped) into tasks (each output among gold controls) and writes the annotators' page, a
CSV of the same tasks and the key; import reads the answer files back, prints acceptance
rates per kind, the filters' precision and recall where both kinds of record were
judged, and agreement, and writes the judgments file that ``spanaug train filter`` learns
from. Gold controls come from ``--gold`` or, when the run's manifest records its dataset,
from the run's own input.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from spanaug_core.cli import overwrite_option
from spanaug_core.console import note, out_console, tagged
from spanaug_core.errors import DataError, SpanaugError
from spanaug_core.files import atomic_output, ensure_folder, replace_files
from spanaug_core.types import Example

EXISTING = click.Path(exists=True, dir_okay=False, path_type=Path)


def _warn(message: str) -> None:
    tagged("warning", "bold yellow", message)


def _percent(share: float) -> str:
    return "n/a" if math.isnan(share) else f"{share * 100:.1f}%"


def _controls(run_dir: Path, gold: Path | None, manifest: dict[str, Any]) -> tuple[list[Example], str | None]:
    """The gold examples to draw controls from, and where they came from (None: there are none)."""
    from spanaug_core.plugins import default_registry
    from spanaug_core.run import run_input

    registry = default_registry()
    if gold is not None:
        return list(registry.create("dataset", "jsonl").read(gold)), str(gold)
    where = "the run's source examples"
    try:
        found = run_input(manifest.get("config", {}), registry)
        if found is None:
            _warn(f"no gold to draw controls from: {run_dir} has no manifest.json naming its dataset and no --gold was "
                  "given; exporting system outputs alone (no in-frame / out-of-frame controls)")
            return [], None
        examples, described = found
        where = f"the run's source examples ({described})"
        return list(examples), described
    except SpanaugError as exc:
        _warn(f"no gold to draw controls from: {where} cannot be read ({exc}); "
              "pass --gold FILE, or accept system outputs alone (exported now)")
        return [], None


@click.group("judge")
def judge_group() -> None:
    """Human judgments of a run's outputs: export tasks for annotators, import their answers.

    The tasks follow Culkin et al. 2021, §6.1: each output hidden among gold controls.
    """


@judge_group.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--output", "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder for judge.html, tasks.csv and tasks.json")
@click.option("--per-item", type=click.IntRange(min=1), default=3, show_default=True,
              help="judgments wanted per item, i.e. annotators per task (recorded in tasks.json; import warns about items with fewer)")
@click.option("--gold", type=EXISTING, help="gold examples JSONL for the controls (default: the run's input, if its manifest records it)")
@click.option("--sample", type=click.IntRange(min=1), help="judge a seeded sample of N records (default: all)")
@click.option("--seed", default=0, show_default=True, help="seed of the sample, the controls and the order of items")
@click.option("--rejected", "with_rejected", is_flag=True,
              help="also judge the records the run's filters dropped (rejected.jsonl): the judgments then cover the unfiltered "
              "output, and import reports the filters' precision and recall")
@click.option("--overwrite", "--force", "overwrite", is_flag=True, help="overwrite an earlier export in --output (its answers will no longer match)")
def export_command(
    run_dir: Path, output: Path, per_item: int, gold: Path | None, sample: int | None, seed: int, with_rejected: bool, overwrite: bool
) -> None:
    """Write judgment tasks for RUN_DIR/augmented.jsonl (with --rejected, also for the records in
    rejected.jsonl): a static page, a CSV and the key (tasks.json)."""
    from spanaug_core.output import REJECTED
    from spanaug_judge.tasks import CSV_FILE, PAGE_FILE, TASKS_FILE, build_tasks, export_files
    from spanaug_shared.records import read_manifest, read_records, read_rejected

    if (output / TASKS_FILE).exists() and not overwrite:
        raise SpanaugError(f"{output} already holds an export ({TASKS_FILE}); answers belong to it. Choose another --output or pass --overwrite")
    augmented = run_dir / "augmented.jsonl"
    if not augmented.is_file():
        raise DataError("expected a run folder with augmented.jsonl", path=run_dir)
    manifest = read_manifest(run_dir)
    records = read_records(augmented)
    dropped = []
    if with_rejected:
        if not (run_dir / REJECTED).is_file():
            raise DataError(f"--rejected: no {REJECTED} here (was the run made with write_rejected = false?)", path=run_dir)
        dropped = [line.record for line in read_rejected(run_dir / REJECTED) if line.record is not None]
    examples, controls = _controls(run_dir, gold, manifest)
    rewrite_roles = manifest.get("config", {}).get("rewrite_roles", ["target"])
    if controls is not None and not any(e.spans for e in examples):
        _warn(f"the gold examples ({controls}) have no spans; exporting system outputs alone")
        controls = None
    tasks, stats = build_tasks(
        records, examples if controls else [], rewrite_roles, per_item, seed, sample, str(run_dir), controls, dropped
    )
    # Its three files are written aside and moved in only when all are written; other files in
    # the folder (collected answers, notes) are left alone.
    ensure_folder(output)
    replace_files(output, export_files(tasks))
    if stats.no_span:
        note(f"skipped {stats.no_span} of {stats.records} records with nothing to judge (not exactly one rewritten span of role "
             f"{', '.join(rewrite_roles)}, or a whole-sentence paraphrase without spans)")
    for kind, count in sorted(stats.missing.items()):
        if count:
            _warn(f"{count} of {len(tasks.tasks)} tasks have no {kind} control (the gold has none that fits)")
    items = sum(len(t.items) for t in tasks.tasks)
    shown = {item.source: item.kept for task in tasks.tasks for item in task.items if item.kind == "system"}
    dropped_records = f", {sum(kept is False for kept in shown.values())} of them dropped by the filters" if with_rejected else ""
    note(f"export {tasks.export}: {len(tasks.tasks)} tasks for {len(shown)} records{dropped_records}, {items} sentences, "
         f"{per_item} judgments wanted per item; "
         f"controls from {controls or 'nowhere'}")
    note(f"give {output / PAGE_FILE} (or {output / CSV_FILE} on a crowdsourcing platform) to the annotators; "
         f"keep {output / TASKS_FILE}: it is the key for `spanaug judge import`")


@judge_group.command("import")
@click.argument("answers", nargs=-1, required=True, type=EXISTING)
@click.option("--tasks", "tasks_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path), help="the folder `spanaug judge export` wrote")
@click.option("--output", "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="judgments JSONL to write (what `spanaug train filter` reads)")
@click.option("--by", "by", multiple=True, metavar="KEY",
              help="also show acceptance of the system items by KEY: label, iteration, kept, or a key of the judged "
                   "span's attrs (pos, lu...; a rewritten span keeps its source's); repeatable")
@overwrite_option
def import_command(answers: tuple[Path, ...], tasks_dir: Path, output: Path, by: tuple[str, ...], overwrite: bool) -> None:
    """Aggregate answer files (.jsonl from the page, or .csv annotator,item,score) into judgments."""
    from rich.table import Table

    from spanaug_judge.answers import (
        agreement, aggregate, breakdown, filter_quality, read_answers, summarize, system_records, write_judgments
    )
    from spanaug_judge.tasks import read_export

    tasks = read_export(tasks_dir)
    results = aggregate(tasks, [a for path in answers for a in read_answers(path, tasks)])
    summary = summarize(tasks, results)
    table = Table(title=f"judgments of export {tasks.export} ({len(answers)} answer files)")
    table.add_column("kind", justify="left")
    for col in ("items", "judged", "mean score", "accepted"):
        table.add_column(col, justify="right")
    for kind, row in summary.items():
        if row["items"]:
            shown = ("-", "-") if math.isnan(row["mean"]) else (f"{row['mean']:.1f}", f"{row['acceptance'] * 100:.1f}%")
            table.add_row(kind, str(int(row["items"])), str(int(row["judged"])), *shown)
    out_console.print(table)
    records = system_records(results)
    if any(len(r.items) > 1 for r in records):
        accepted = sum(r.accepted for r in records)
        out_console.print(f"{len(records)} judged records, {accepted} accepted ({accepted / len(records) * 100:.1f}%): a record "
                          "judged in several items (a whole-sentence paraphrase's entities) counts when every item is accepted")
    quality = filter_quality(records)
    if quality is not None:
        judged = quality.kept + quality.dropped
        accepted = quality.kept_accepted + quality.dropped_accepted
        out_console.print(
            f"the run's filters kept {quality.kept} of the {judged} judged outputs ({accepted} accepted, "
            f"{accepted / judged * 100:.1f}% unfiltered): precision {_percent(quality.precision)} "
            f"({quality.kept_accepted} of the kept accepted), recall {_percent(quality.recall)} "
            f"({quality.kept_accepted} of the {accepted} accepted kept)"
        )
    for name, subset in (("system items", [r for r in results if r.item.kind == "system"]), ("all items", results)):
        found = agreement(subset)
        if found is None:
            out_console.print(f"Fleiss' kappa ({name}): n/a (no item has two judgments)")
        else:
            kappa = "n/a (every judgment in one category)" if math.isnan(found.kappa) else f"{found.kappa:.4f}"
            out_console.print(f"Fleiss' kappa ({name}, accept = score >= 50): {kappa} over {found.items} items with "
                              f"{found.raters} judgments each; unanimous on {found.unanimous * 100:.1f}%")
    for key in by:
        groups = breakdown(results, key)
        if set(groups) == {"-"}:
            _warn(f"--by {key}: no judged system item has it (keys: label, iteration, kept, or one of the spans' attrs)")
            continue
        table = Table(title=f"system items by {key}")
        for col, justify in ((key, "left"), ("judged", "right"), ("accepted", "right")):
            table.add_column(col, justify=justify)
        for value, (judged, accepted) in groups.items():
            table.add_row(value, str(judged), f"{accepted} ({accepted / judged * 100:.1f}%)")
        out_console.print(table)
    short = sum(len(r.judgments) < tasks.judgments_per_item for r in results)
    unjudged = sum(len(t.items) for t in tasks.tasks) - len(results)
    if short or unjudged:
        _warn(f"{short} items have fewer than the {tasks.judgments_per_item} judgments wanted and {unjudged} have none")
    with atomic_output(output, overwrite) as partial:
        count = write_judgments(results, partial)
    note(f"wrote {count} judged system outputs to {output}")
