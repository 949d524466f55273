"""``spanaug experiment``: learning curves (``learning-curve``; ``summarize`` joins one trained in
parts) and the lexical-substitution baseline (``lexsub``).

The commands read the gold data with any dataset reader, the augmented records from a
run folder (or its ``augmented.jsonl``), apply the filters asked for, and hand the rest
to :mod:`spanaug_experiments.curve`. One frozen-encoder cache serves every model of a
curve, so each sentence is encoded once however many models are trained.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from spanaug_core.cli import overwrite_option
from spanaug_core.console import note, out_console, progress_callback
from spanaug_core.errors import ConfigError
from spanaug_core.files import atomic_output, ensure_folder, output_target, replace_json

if TYPE_CHECKING:
    from spanaug_experiments.curve import CurveOptions

EXISTING = click.Path(exists=True, path_type=Path)
EXPERIMENT = "experiment.json"
PLOT = "learning-curve.png"


@click.group("experiment")
def experiment_group() -> None:
    """Measure whether augmented data helps a downstream model."""


def _augmented_file(path: Path) -> tuple[Path, dict[str, Any]]:
    """The records file and the manifest of a run folder (or of the folder holding the file)."""
    from spanaug_core.output import AUGMENTED
    from spanaug_shared.records import read_manifest

    folder = path if path.is_dir() else path.parent
    return (path / AUGMENTED if path.is_dir() else path), read_manifest(folder)


def load_additions(
    augmented: Path,
    pool: Sequence[Any],
    filters: Sequence[dict[str, Any]],
    conditions: Sequence[str],
    rewrite_roles: Sequence[str] | None,
    lexsub_from: str = "all",
) -> tuple[dict[str, dict[str, list[Any]]], dict[str, Any]]:
    """Per condition, the extra examples of each pool example; and counts of what was kept and why not.

    ``augmented`` gets every record whose source is in the pool, ``filtered`` those that
    ``filters`` keep, and ``lexsub`` is made from ``lexsub_from`` ("all" or "filtered").
    """
    from spanaug_core.choices import first_rejection
    from spanaug_core.plugins import default_registry
    from spanaug_core.protocols import FilterContext
    from spanaug_shared.records import read_records
    from spanaug_experiments.lexsub import lexical_substitutions

    path, manifest = _augmented_file(augmented)
    records = read_records(path)
    sources = {e.id: e for e in pool}
    registry = default_registry()
    made = [registry.create("filter", f["name"], **{k: v for k, v in f.items() if k != "name"}) for f in filters]
    counts: Counter[str] = Counter(records=len(records))
    every, kept = [], []
    seen: dict[str, set[str]] = defaultdict(set)
    for record in records:
        source = sources.get(record.source_id)
        if source is None:
            counts["source not in the gold pool"] += 1
            continue
        every.append(record)
        reason = first_rejection(made, record, FilterContext(source=source, previous_texts=frozenset(seen[record.source_id])))
        seen[record.source_id].add(record.text)
        if reason is not None:
            counts[f"dropped by {reason.split(':', 1)[0]}"] += 1
            continue
        kept.append(record)
    counts["kept"] = len(kept)
    additions: dict[str, dict[str, list[Any]]] = {}
    for condition, chosen in (("augmented", every), ("filtered", kept)):
        if condition in conditions:
            additions[condition] = defaultdict(list)
            for r in chosen:
                additions[condition][r.source_id].append(r.as_example())
    if "lexsub" in conditions:
        subs = lexical_substitutions(every if lexsub_from == "all" else kept, sources, target_roles(manifest, rewrite_roles))
        additions["lexsub"] = defaultdict(list)
        for e in subs.examples:
            additions["lexsub"][e.meta["source_id"]].append(e)
        counts.update({f"lexsub: {why}": n for why, n in subs.dropped.items()})
        counts["lexsub: kept"] = len(subs.examples)
    return additions, dict(counts)


def target_roles(manifest: dict[str, Any], rewrite_roles: Sequence[str] | None) -> list[str]:
    """The roles of the rewritten spans: as given, else the run's, else ``target``."""
    return list(rewrite_roles or (manifest.get("config") or {}).get("rewrite_roles") or ["target"])


def unseen_targets(examples: Sequence[Any], seen: set[Any], key: str, roles: Sequence[str]) -> list[Any]:
    """``examples`` with only those rewritten spans whose ``attrs[key]`` is not in ``seen``
    (the other spans kept), and only the examples that still have one."""
    out = []
    for example in examples:
        spans = tuple(s for s in example.spans if s.role not in roles or s.attrs.get(key) not in seen)
        if any(s.role in roles for s in spans):
            out.append(example.model_copy(update={"spans": spans}))
    return out


@experiment_group.command("learning-curve")
@click.option("--trainer", "trainer_name", required=True, help="downstream trainer (see `spanaug list trainer`): ner, srl, frame-id")
@click.option("--dataset", required=True, help="format of --train/--dev/--test (a dataset name, e.g. jsonl, conll-ner)")
@click.option("--train", "train_path", required=True, type=EXISTING, help="the gold training pool the fractions are taken from")
@click.option("--dev", "dev_path", type=EXISTING, help="dev data for early stopping (the same for every model)")
@click.option("--test", "test_path", required=True, type=EXISTING, help="test data every model is scored on")
@click.option("--augmented", type=EXISTING, help="run folder (or its augmented.jsonl) whose records augment the pool")
@click.option("--conditions", default="gold,augmented", show_default=True, help="comma-separated: gold, augmented, filtered, lexsub")
@click.option("--fractions", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1", show_default=True, help="comma-separated shares of the pool")
@click.option("--seeds", type=click.IntRange(min=1), default=5, show_default=True, help="resampled subsets per fraction")
@click.option("--first-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="the first seed trained, to extend a curve in another folder or on another machine (`summarize` joins them)")
@click.option("--filter", "filters", multiple=True, metavar="SPEC",
              help="filter of the records the filtered condition adds: a name or '{name: similarity, floor: 0.8}' (repeatable)")
@click.option("--rewrite-role", "rewrite_roles", multiple=True, metavar="ROLE",
              help="lexsub, --unseen: a role of the rewritten spans (repeatable)  [default: the run's rewrite_roles]")
@click.option("--unseen", "unseen_key", metavar="ATTR",
              help="also score the test targets whose attrs[ATTR] the cell's gold data never holds (frame-id: lu)")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="trainer.OPTION=V or dataset.OPTION=V, e.g. trainer.epochs=15")
@click.option("--out", "--output", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder for results.csv, summary.csv and the plot")
@click.option("--keep-models", is_flag=True, help="keep every trained model under OUT/models (default: deleted once scored)")
@click.option("--progress/--no-progress", default=None, help="show a progress bar  [default: when stderr is a terminal]")
def learning_curve_command(
    trainer_name: str, dataset: str, train_path: Path, dev_path: Path | None, test_path: Path, augmented: Path | None,
    conditions: str, fractions: str, seeds: int, first_seed: int, filters: tuple[str, ...], rewrite_roles: tuple[str, ...], unseen_key: str | None,
    assignments: tuple[str, ...], out: Path, keep_models: bool, progress: bool | None,
) -> None:
    """Train on growing shares of the gold data, with and without augmented data, and plot test F1.

    Every (fraction, seed) trains one model per condition on the same gold subset; rows go
    to OUT/results.csv as models finish (a rerun with the same options skips them), then
    OUT/summary.csv (mean and std over seeds), OUT/paired.csv (each condition against gold,
    seed by seed) and OUT/learning-curve.png are written.
    """
    from spanaug_core.cli import component_options
    from spanaug_core.config import component_specs
    from spanaug_core.plugins import default_registry
    from spanaug_experiments.curve import CurveOptions, run_curve

    from pydantic import ValidationError

    try:
        shares = tuple(float(f) for f in fractions.split(",") if f.strip())
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got {fractions!r}", param_hint="--fractions") from None
    try:
        options = CurveOptions(fractions=shares, seeds=seeds, first_seed=first_seed,
                               conditions=tuple(c.strip() for c in conditions.split(",") if c.strip()))
    except ValidationError as exc:
        raise click.UsageError("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())) from None
    if options.conditions != ("gold",) and augmented is None:
        raise click.UsageError(f"conditions {', '.join(c for c in options.conditions if c != 'gold')} need --augmented RUN_DIR")
    if bool(filters) != ("filtered" in options.conditions):
        raise click.UsageError("--filter chooses the records of the filtered condition: give both or neither "
                               "(the augmented condition adds every record)")
    sets = component_options(assignments, ("trainer", "dataset"))
    registry = default_registry()
    registry.create("trainer", trainer_name, **sets["trainer"])  # bad options fail before any data is read
    filter_specs = component_specs("--filter", filters)
    record = {
        **options.model_dump(mode="json"), "trainer": trainer_name, "trainer_options": sets["trainer"], "dataset": dataset,
        "dataset_options": sets["dataset"], "train": str(train_path), "dev": str(dev_path) if dev_path else None,
        "test": str(test_path), "augmented": str(augmented) if augmented else None, "filters": filter_specs,
        "rewrite_roles": list(rewrite_roles) or None, "unseen": unseen_key,
    }
    _check_same_experiment(out, record)
    _note_cells_left(out, options)
    reader = registry.create("dataset", dataset, **sets["dataset"])
    pool, test = list(reader.read(train_path)), list(reader.read(test_path))
    dev = list(reader.read(dev_path)) if dev_path else None
    additions, counts = ({}, {}) if augmented is None else load_additions(augmented, pool, filter_specs, options.conditions, rewrite_roles or None)
    if counts:
        note("augmented records: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    shared: dict[str, Any] = {}
    roles = target_roles(_augmented_file(augmented)[1] if augmented else {}, rewrite_roles)

    def train_and_test(gold: list[Any], extra: list[Any], model_dir: Path, seed: int) -> tuple[dict[str, float], dict[str, float]]:
        trainer = registry.create("trainer", trainer_name, **{**sets["trainer"], "seed": seed})
        if hasattr(trainer, "vectors"):
            from spanaug_shared.vectors import WordVectors

            c = trainer.config
            # One sentence a batch: a batch's size and padding move a vector's last bits, so with
            # batches a cell's F1 depended on which sentences earlier cells had encoded
            # (docs/results/learning-curve-frame-id.md). Encoding is a small part of a curve, so
            # the slower unbatched encoding costs little.
            trainer.vectors = shared.setdefault("vectors", WordVectors(c.encoder, c.device, c.max_length, batch_size=1))
        metrics = trainer.train([*gold, *extra], dev, model_dir)
        scores = trainer.evaluate(model_dir, test)
        if unseen_key:
            # Recall only: the cut test data lacks the seen targets, so a prediction of one would count as wrong.
            seen = {span.attrs.get(unseen_key) for example in gold for span in example.spans if span.role in roles}
            unseen = unseen_targets(test, seen, unseen_key, roles)
            found = trainer.evaluate(model_dir, unseen) if unseen else {"recall": 0.0, "gold": 0}
            scores = {**scores, "unseen_targets": found["gold"], "unseen_recall": found["recall"]}
        return metrics, scores

    ensure_folder(out)
    replace_json(out / EXPERIMENT, {**record, "command": "spanaug " + " ".join(sys.argv[1:]), "augmented_counts": counts}, indent=2)
    with progress_callback("models", enabled=progress) as on_progress:
        rows = run_curve(pool, additions, train_and_test, options, out, keep_models, on_progress)
    _write_outputs(rows, out, f"{trainer_name}: {len(pool)} gold examples in the pool, {options.seeds} seed(s)"
                   + (f" from seed {options.first_seed}" if options.first_seed else ""))


@experiment_group.command("summarize")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder for the joined results.csv, summary.csv, paired.csv and the plot")
@click.option("--title", default="learning curve", show_default=True, help="the plot's title")
def summarize_command(results: tuple[Path, ...], out: Path, title: str) -> None:
    """Join the results.csv files of one curve trained in parts and summarize them, training nothing.

    Parts trained in several processes or on several machines (each its own --out) become
    one OUT/results.csv, summary.csv, paired.csv and plot, as learning-curve writes them.
    A cell (condition, fraction, seed) in two files is refused, and so is a file that is not
    a learning curve's results.csv or holds no rows, before anything is written. Every
    condition is compared with the rows whose condition is gold, seed by seed.
    """
    from spanaug_experiments.curve import RESULTS, merge_results, own_rows, write_results

    target = out / RESULTS
    rows = merge_results(results)  # checked whole first: a bad row must leave no half-written --out behind
    # Joining the same parts again rewrites the summary; other rows there would be lost.
    if target.exists() and not any(target.resolve() == path.resolve() for path in results) and own_rows(target) != rows:
        raise ConfigError(f"{target} holds other rows than the files joined; pick another --out or remove it")
    ensure_folder(out)
    write_results(rows, target)
    _write_outputs(rows, out, title)


def _write_outputs(rows: Sequence[dict[str, str]], out: Path, title: str) -> None:
    """summary.csv, paired.csv and the plot of a curve's rows in ``out``, and its tables printed."""
    from spanaug_experiments.curve import PAIRED, SUMMARY, paired, summarize, write_paired, write_summary
    from spanaug_experiments.plot import plot_curve

    points = summarize(rows)
    write_summary(points, out / SUMMARY)
    comparisons = paired(rows)
    write_paired(comparisons, out / PAIRED)
    plot_curve(points, out / PLOT, title)
    _print_summary(points, list(dict.fromkeys(p.condition for p in points)), comparisons)
    note(f"wrote {out / 'results.csv'}, {out / SUMMARY}, {out / PAIRED} and {out / PLOT}")


def _check_same_experiment(out: Path, record: dict[str, Any]) -> None:
    """A rerun may only continue the same experiment: its results would otherwise mix.

    More seeds continue it: a cell is its (condition, fraction, seed), so the new seeds'
    cells are trained beside the old ones, which stay as they were.
    """
    path = out / EXPERIMENT
    if not path.is_file():
        return
    from spanaug_experiments.curve import CurveOptions

    # An option added since the folder was written (--first-seed) reads as its default there.
    before = {**CurveOptions().model_dump(mode="json"), **json.loads(path.read_text(encoding="utf-8"))}
    differ = sorted(k for k in record if before.get(k) != record[k])
    grown = differ == ["seeds"] and isinstance(before.get("seeds"), int) and record["seeds"] > before["seeds"]
    if differ and not grown:
        raise ConfigError(f"{out} holds another experiment ({', '.join(differ)} differ); pick another --out or remove it")


def _note_cells_left(out: Path, options: CurveOptions) -> None:
    """Say which cells a rerun trains: those results.csv lacks, an interrupted seed's among them.

    Read from the rows, not from experiment.json, which a run writes before its first cell
    and so already counts the seeds of a run stopped part way.
    """
    from spanaug_experiments.curve import RESULTS, cells_left

    done, todo = cells_left(options, out / RESULTS)
    if not done:
        return
    seeds = ", ".join(str(s) for s in sorted({cell.seed for cell in todo}))
    left = f"training the {len(todo)} it lacks, of seed(s) {seeds}" if todo else "none left to train"
    note(f"{out / RESULTS} holds {len(done)} cell(s): {left}")


def _print_summary(points: Sequence[Any], conditions: Sequence[str], comparisons: Sequence[Any]) -> None:
    from rich import box
    from rich.table import Table

    unseen = any(p.unseen_mean is not None for p in points)
    table = Table(title="test F1 (%), mean ± std over seeds" + (" (recall on unseen targets)" if unseen else ""))
    table.add_column("fraction", justify="right")
    for c in conditions:
        table.add_column(c, justify="right")
    by = {(p.condition, p.fraction): p for p in points}

    def cell(p: Any) -> str:
        if p is None:
            return ""
        text = f"{100 * p.mean:.1f} ± {100 * p.std:.1f}"
        return text + (f" ({100 * p.unseen_mean:.1f} ± {100 * p.unseen_std:.1f})" if p.unseen_mean is not None else "")

    for fraction in sorted({p.fraction for p in points}):
        table.add_row(f"{fraction:g}", *(cell(by.get((c, fraction))) for c in conditions))
    out_console.print(table)
    if comparisons:
        # A simple box with collapsed padding keeps seven columns on one line of a log's 80
        # characters; the Wilcoxon test's p is in paired.csv
        diffs = Table(title="against gold, seed by seed: mean difference ± std, paired t-test p, 95% interval of the"
                            " mean difference, seeds above gold", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        for column in ("fraction", "condition", "metric", "difference", "p", "95% interval", "above"):
            diffs.add_column(column, justify="right" if column != "condition" else "left")
        for c in comparisons:
            p = "" if c.p is None else f"{c.p:.3f}"
            interval = "" if c.ci_low is None or c.ci_high is None else f"[{100 * c.ci_low:+.1f}, {100 * c.ci_high:+.1f}]"
            diffs.add_row(f"{c.fraction:g}", c.condition, c.metric, f"{100 * c.mean_diff:+.1f} ± {100 * c.std_diff:.1f}", p,
                          interval, f"{c.wins}/{c.runs}")
        out_console.print(diffs)


@experiment_group.command("lexsub")
@click.option("--augmented", required=True, type=EXISTING, help="run folder (or its augmented.jsonl)")
@click.option("--dataset", required=True, help="format of --input (e.g. jsonl)")
@click.option("--input", "input_path", required=True, type=EXISTING, help="the source examples the run augmented")
@click.option("--output", "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="JSONL file to write")
@overwrite_option
@click.option("--rewrite-role", "rewrite_roles", multiple=True, metavar="ROLE",
              help="a role of the rewritten spans (repeatable)  [default: the run's rewrite_roles]")
@click.option("--filter", "filters", multiple=True, metavar="SPEC", help="filter applied to the records first (repeatable)")
def lexsub_command(
    augmented: Path, dataset: str, input_path: Path, output: Path, overwrite: bool, rewrite_roles: tuple[str, ...],
    filters: tuple[str, ...],
) -> None:
    """Write the lexical-substitution baseline of a run: source sentences with only the aligned span swapped in.

    The --output file appears only once written whole; an existing one is refused unless --overwrite.
    """
    from spanaug_core.config import component_specs
    from spanaug_core.plugins import create

    output_target(output, overwrite)  # refused before the records are read and filtered, not after
    pool = list(create("dataset", dataset).read(input_path))
    additions, counts = load_additions(augmented, pool, component_specs("--filter", filters), ("lexsub",), rewrite_roles or None, "filtered")
    with atomic_output(output, overwrite) as partial:
        count = create("dataset", "jsonl").write((e for examples in additions["lexsub"].values() for e in examples), partial)
    note(", ".join(f"{k} {v}" for k, v in counts.items()))
    note(f"wrote {count} substituted examples to {output}")
