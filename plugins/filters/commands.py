"""The filter plugin's commands: ``spanaug train filter`` fits the learned filter on human judgments,
``spanaug train adequacy`` the adequacy classifier on labeled paraphrase pairs (MRPC).

``train filter`` reads a judgments file (``spanaug judge import`` writes one), holds out a seeded share
of its sources, trains on the rest, reports precision/recall/F1 and ROC AUC on the held-out
judgments (or on another file's, ``--test``) next to the unfiltered acceptance rate, and
saves the filter folder that ``--filter learned`` loads with ``model=FOLDER``. torch is
imported when the command runs.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from spanaug_core.cli import overwrite_option
from spanaug_core.console import note, out_console, progress_callback
from spanaug_core.files import atomic_output, output_target
from spanaug_filters.learned import WEIGHTINGS
from spanaug_shared.encoder import DEFAULT_ENCODER


@click.command("filter")
@click.option("--judgments", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path), help="judgments JSONL (from `spanaug judge import`)")
@click.option("--out", "--output", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder to write, with filter.safetensors and config.json")
@click.option("--weighting", type=click.Choice(WEIGHTINGS), default="balanced", show_default=True,
              help="precision: positives down-weighted (P-classifier); recall: negatives down-weighted (R-classifier)")
@click.option("--down-weight", type=click.FloatRange(0, 1, min_open=True), default=0.25, show_default=True,
              help="factor on the down-weighted class's loss")
@click.option("--holdout", type=click.FloatRange(0, 1, max_open=True),
              help="share of the judgments held out for the reported scores, whole sources at a time "
              "[default: 0.2; 0 with --test]")
@click.option("--test", "test_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="judgments of other outputs (another run's) to report the scores on; those from a source "
              "the training judgments share are left out")
@click.option("--seed", default=0, show_default=True, help="seed of the held-out split and of the initial weights")
@click.option("--epochs", type=click.IntRange(min=1), default=500, show_default=True, help="full-batch training steps")
@click.option("--lr", type=click.FloatRange(0, min_open=True), default=0.01, show_default=True, help="learning rate (Adam)")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="probability the scores are reported at (the filter's default)")
@overwrite_option
def train_filter_command(
    judgments: Path, out: Path, test_file: Path | None, holdout: float | None, overwrite: bool, **opts: object
) -> None:
    """Train the learned filter on human judgments and report precision, recall, F1 and ROC AUC on held-out
    judgments (whole sources at a time) or on another run's (--test).

    The filter is the classifier of Culkin et al. 2021, §6.1; --weighting precision and
    recall give their P- and R-classifiers.
    """
    from rich.table import Table

    from spanaug_shared.judgments import read_judgments
    from spanaug_filters.learned import SCORE_FEATURES
    from spanaug_filters.learned_net import TrainOptions, save_filter, train_filter

    if holdout is not None:
        opts["holdout"] = holdout
    elif test_file:
        opts["holdout"] = 0.0  # the test file scores the filter: train on every judgment
    options = TrainOptions(**opts)
    output_target(out, overwrite)  # an existing --out is refused before training, not after
    rows = read_judgments(judgments, SCORE_FEATURES)
    test = read_judgments(test_file, SCORE_FEATURES) if test_file else []
    with progress_callback("epochs") as progress:
        net, summary = train_filter(rows, options, progress, test)
    summary.update(command="spanaug " + " ".join(sys.argv[1:]), judgments=str(judgments), test_judgments=str(test_file) if test_file else None)
    with atomic_output(out, overwrite) as partial:  # the folder appears whole or not at all
        save_filter(net, partial, summary)
    losses = summary["losses"]
    if test_file and summary["test_shared_sources"]:
        note(f"{summary['test_shared_sources']} of the {len(test)} judgments in {test_file} come from sources the training "
             "judgments have; they are left out of its scores")
    reports = [(f"{int(summary['holdout']['items'])} held-out judgments", summary["holdout"])] if summary["holdout"] else []
    if test_file:
        reports.append((f"{summary['test_items']} judgments of {test_file}", summary["test"]))
    if not reports:
        note(f"no judgments held out (--holdout {options.holdout}) and no --test; nothing to score")
    for what, scores in reports:
        if scores is None:
            note(f"no judgments of {test_file} left to score")
            continue
        table = Table(title=f"{options.weighting} filter on {what} (threshold {options.threshold:g})")
        for col in ("filter", "precision", "recall", "F1", "kept"):
            table.add_column(col, justify="right" if col != "filter" else "left")
        base = scores["unfiltered_precision"]
        table.add_row("unfiltered", f"{base * 100:.1f}", "100.0", f"{200 * base / (1 + base):.1f}", "100.0")
        table.add_row("learned", *(f"{scores[k] * 100:.1f}" for k in ("precision", "recall", "f1", "kept")))
        if scores["run_filters"]:
            table.add_row("the run's filters", *(f"{scores['run_filters'][k] * 100:.1f}" for k in ("precision", "recall", "f1", "kept")))
        out_console.print(table)
        if scores["auc"] is not None:
            note(f"ROC AUC {scores['auc']:.3f} on them (0.5: no better than chance)")
    note(f"saved {out} (trained on {summary['train_items']} judgments; loss {losses[0]:.4f} -> {losses[-1]:.4f}); "
         f"use it with --set 'filters=[{{name: learned, model: {out}}}]'")


@click.command("adequacy")
@click.option("--train", "train_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="labeled sentence pairs in MRPC's format (msr_paraphrase_train.txt)")
@click.option("--test", "test_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="held-out pairs in the same format, scored after training (msr_paraphrase_test.txt)")
@click.option("--out", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="model file (JSON) to write")
@click.option("--encoder", default=DEFAULT_ENCODER, show_default=True, help="encoder preset or local folder")
@click.option("--l2", type=click.FloatRange(0), default=10.0, show_default=True, help="weight of the L2 penalty on the weights")
@click.option("--device", default="cpu", show_default=True, help="torch device of the encoder (cuda on a GPU)")
@overwrite_option
def train_adequacy_command(train_file: Path, test_file: Path | None, out: Path, encoder: str, l2: float, device: str, overwrite: bool) -> None:
    """Train the adequacy classifier (the `adequacy` filter's model) on paraphrase pairs such as MRPC.

    Reports accuracy, F1 and ROC AUC on the training pairs and, with --test, on held-out
    pairs; use the model with --set 'filters=[{name: adequacy, model: FILE}]'.
    """
    from rich.table import Table

    from spanaug_filters.adequacy import classification_report, fit, pairs_features, read_pairs
    from spanaug_shared.encoder import Encoder

    output_target(out, overwrite)  # an existing --out is refused before encoding every pair, not after
    files = {"train": train_file, **({"test": test_file} if test_file else {})}
    pairs = {split: read_pairs(path) for split, path in files.items()}
    words = Encoder(encoder, device=device)
    features = {}
    for split, rows in pairs.items():
        note(f"encoding {len(rows)} {split} pairs with {encoder}")
        features[split] = pairs_features(rows, words)
    labels = {split: [p.label for p in rows] for split, rows in pairs.items()}
    model = fit(features["train"], labels["train"], encoder, l2)
    report = {split: classification_report(model, features[split], labels[split]) for split in pairs}
    report.update(command="spanaug " + " ".join(sys.argv[1:]), files={k: str(v) for k, v in files.items()}, l2=l2)
    model = replace(model, report=report)
    model.save(out, overwrite)
    table = Table(title=f"adequacy classifier ({encoder})")
    for col in ("pairs", "n", "accuracy", "F1", "ROC AUC"):
        table.add_column(col, justify="left" if col == "pairs" else "right")
    for split in pairs:
        r = report[split]
        table.add_row(split, str(r["pairs"]), f"{r['accuracy'] * 100:.1f}", f"{r['f1'] * 100:.1f}", f"{r['roc_auc']:.3f}")
    out_console.print(table)
    note(f"saved {out}; use it with --set 'filters=[{{name: adequacy, model: {out}}}]'")
