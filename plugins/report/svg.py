"""Bar charts as inline SVG strings, small enough to need no plotting library.

One chart kind serves every figure of the report: categories along x (histogram bins,
iterations, span lengths) and one or more series as side-by-side bars, with a y axis of
counts, a legend when there are several series, and a tooltip (``<title>``) per bar. The
SVG uses no external font or stylesheet, so it renders the same in any browser offline.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

WIDTH, HEIGHT = 440, 240
# TOP leaves room for the title and, below it, the legend.
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 40, 44
COLORS = ("#4c78a8", "#e45756", "#54a24b", "#b279a2")


def _ticks(top: int) -> list[int]:
    """About five round y ticks from 0 to at least ``top``."""
    raw = max(top, 1) / 5
    step = 10 ** math.floor(math.log10(raw))
    step = next(m * step for m in (1, 2, 5, 10) if m * step >= raw)
    return [int(k * step) for k in range(math.ceil(max(top, 1) / step) + 1)]


def bar_chart(title: str, categories: Sequence[str], series: Mapping[str, Sequence[int]], x_label: str, y_label: str = "count") -> str:
    """An SVG bar chart: ``series[name][k]`` is the bar of series ``name`` in ``categories[k]``."""
    esc = html.escape
    ticks = _ticks(max((v for vs in series.values() for v in vs), default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(categories), 1)
    bar = slot * 0.8 / max(len(series), 1)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / ticks[-1])

    parts = [
        (f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
         f'height="{HEIGHT}" role="img" aria-label="{esc(title)}" font-family="system-ui, sans-serif" font-size="11">'),
        f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-size="13" font-weight="600">{esc(title)}</text>',
    ]
    for t in ticks:
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#e3e3e3"/>'
                     f'<text x="{LEFT - 4}" y="{y(t) + 4:.1f}" text-anchor="end" fill="#555">{t}</text>')
    # Labels of many narrow bins would overlap: show every k-th.
    every = math.ceil(len(categories) / 8) or 1
    for k, category in enumerate(categories):
        x0 = LEFT + k * slot + slot * 0.1
        for s, (name, counts) in enumerate(series.items()):
            value = counts[k]
            parts.append(f'<rect x="{x0 + s * bar:.1f}" y="{y(value):.1f}" width="{max(bar - 1, 1):.1f}" '
                         f'height="{TOP + plot_h - y(value):.1f}" fill="{COLORS[s % len(COLORS)]}">'
                         f'<title>{esc(name)}, {esc(x_label)} {esc(category)}: {value}</title></rect>')
        if k % every == 0:
            parts.append(f'<text x="{LEFT + (k + 0.5) * slot:.1f}" y="{TOP + plot_h + 14}" text-anchor="middle" fill="#333">{esc(category)}</text>')
    parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="#888"/>')
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle" fill="#333">{esc(x_label)}</text>')
    parts.append(f'<text transform="translate(11 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle" fill="#333">{esc(y_label)}</text>')
    if len(series) > 1:
        x = WIDTH - RIGHT
        for s, name in reversed(list(enumerate(series))):
            x -= 12 + 6.2 * len(name)
            parts.append(f'<rect x="{x:.1f}" y="{TOP - 18}" width="9" height="9" fill="{COLORS[s % len(COLORS)]}"/>'
                         f'<text x="{x + 12:.1f}" y="{TOP - 10}" fill="#333">{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
