"""The filter plugin's command: ``spanaug train filter`` fits the learned filter on human judgments.

It reads a judgments file (``spanaug judge import`` writes one), holds out a seeded share
of it, trains on the rest, reports precision/recall/F1 on the held-out judgments next to
the unfiltered acceptance rate, and saves the filter folder that ``--filter learned``
loads with ``model=FOLDER``. torch is imported when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from spanaug_core.console import note, out_console, progress_callback
from spanaug_filters.learned import WEIGHTINGS


@click.command("filter")
@click.option("--judgments", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path), help="judgments JSONL (from `spanaug judge import`)")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder for filter.safetensors and config.json")
@click.option("--weighting", type=click.Choice(WEIGHTINGS), default="balanced", show_default=True,
              help="precision: positives down-weighted (P-classifier); recall: negatives down-weighted (R-classifier)")
@click.option("--down-weight", type=click.FloatRange(0, 1, min_open=True), default=0.25, show_default=True,
              help="factor on the down-weighted class's loss")
@click.option("--holdout", type=click.FloatRange(0, 1, max_open=True), default=0.2, show_default=True,
              help="share of the judgments held out for the reported scores")
@click.option("--seed", default=0, show_default=True)
@click.option("--epochs", type=click.IntRange(min=1), default=500, show_default=True, help="full-batch training steps")
@click.option("--lr", type=click.FloatRange(0, min_open=True), default=0.01, show_default=True)
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="probability the scores are reported at (the filter's default)")
def train_filter_command(judgments: Path, out: Path, **opts: object) -> None:
    """Train the learned filter on human judgments and report held-out precision, recall and F1.

    The filter is the classifier of Culkin et al. 2021, §6.1; --weighting precision and
    recall give their P- and R-classifiers.
    """
    from rich.table import Table

    from spanaug_shared.judgments import read_judgments
    from spanaug_filters.learned import SCORE_FEATURES
    from spanaug_filters.learned_net import TrainOptions, save_filter, train_filter

    options = TrainOptions(**opts)
    rows = read_judgments(judgments, SCORE_FEATURES)
    with progress_callback("epochs") as progress:
        net, summary = train_filter(rows, options, progress)
    summary.update(command="spanaug " + " ".join(sys.argv[1:]), judgments=str(judgments))
    save_filter(net, out, summary)
    scores = summary["holdout"]
    losses = summary["losses"]
    if scores is None:
        note(f"no judgments held out (--holdout {options.holdout}); nothing to score")
    else:
        table = Table(title=f"{options.weighting} filter on {int(scores['items'])} held-out judgments (threshold {options.threshold:g})")
        for col in ("filter", "precision", "recall", "F1", "kept"):
            table.add_column(col, justify="right" if col != "filter" else "left")
        base = scores["unfiltered_precision"]
        table.add_row("unfiltered", f"{base * 100:.1f}", "100.0", f"{200 * base / (1 + base):.1f}", "100.0")
        table.add_row("learned", *(f"{scores[k] * 100:.1f}" for k in ("precision", "recall", "f1", "kept")))
        out_console.print(table)
    note(f"saved {out} (trained on {summary['train_items']} judgments; loss {losses[0]:.4f} -> {losses[-1]:.4f}); "
         f"use it with --set 'filters=[{{name: learned, model: {out}}}]'")
