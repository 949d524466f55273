"""The learning-curve figure: test F1 against the share of gold data, mean ± std per condition.

Drawn like Culkin et al. 2021, Fig. 8: one line per condition with a shaded band of one
standard deviation over seeds. matplotlib (the ``experiments`` extra) is imported here
only, with the Agg backend, so no display is needed.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

from spanaug_core.errors import SpanaugError
from spanaug_core.files import atomic_output
from spanaug_experiments.curve import CONDITIONS, Point

LABELS = {"gold": "gold", "augmented": "gold + augmented", "filtered": "gold + augmented, filtered", "lexsub": "gold + lexical substitution"}
COLORS = {"gold": "#4c72b0", "augmented": "#dd8452", "filtered": "#c44e52", "lexsub": "#55a868"}
TITLE_WIDTH = 64  # characters of the default title font that fit the figure's width


def title_lines(title: str) -> str:
    """``title`` broken into lines that fit the figure (one line past the width was cut at both ends)."""
    return textwrap.fill(title, TITLE_WIDTH)


def plot_curve(points: Sequence[Point], path: Path, title: str) -> None:
    """Write the figure to ``path`` (PNG, or any format matplotlib knows by the suffix)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SpanaugError("plotting needs matplotlib: pip install 'spanaug[experiments]' (results.csv and summary.csv are written)") from None
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for condition in CONDITIONS:
        line = sorted((p for p in points if p.condition == condition), key=lambda p: p.fraction)
        if not line:
            continue
        xs = [100 * p.fraction for p in line]
        means = [100 * p.mean for p in line]
        stds = [100 * p.std for p in line]
        ax.plot(xs, means, marker="o", color=COLORS[condition], label=LABELS[condition])
        ax.fill_between(xs, [m - s for m, s in zip(means, stds)], [m + s for m, s in zip(means, stds)],
                        color=COLORS[condition], alpha=0.2, linewidth=0)
    ax.set_xlabel("gold training data used (%)")
    ax.set_ylabel("test F1 (%)")
    ax.set_title(title_lines(title))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        with atomic_output(path, overwrite=True) as partial:  # the temporary's name has no suffix to go by
            fig.savefig(partial, format=path.suffix.removeprefix(".") or "png")
    finally:
        plt.close(fig)
