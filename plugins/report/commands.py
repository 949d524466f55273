"""``spanaug report RUN_DIR``: write one self-contained HTML page that shows what a run made.

The command reads the run folder (and, with ``--judgments``, the judgments file of
``spanaug judge import``), renders the page and says where it went and what it had to
leave out (records past ``--limit``, sources it could not read, a missing POS tagger).
"""

from __future__ import annotations

from pathlib import Path

import click

from spanaug_core.console import note, tagged
from spanaug_core.files import atomic_output

EXISTING = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--output", "--out", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="HTML file to write, replaced if it exists  [default: RUN_DIR/report.html]")
@click.option("--judgments", type=EXISTING,
              help="judgments JSONL of `spanaug judge import`: adds precision/recall of filtering rules (Culkin et al. 2021, Table 4)")
@click.option("--limit", type=click.IntRange(min=1), default=500, show_default=True, help="records shown side by side (charts and tables count all)")
@click.option("--source", type=EXISTING, help="source examples JSONL (default: read the run's input again, as its manifest records it)")
def report_command(run_dir: Path, output: Path | None, judgments: Path | None, limit: int, source: Path | None) -> None:
    """Write a static HTML report of RUN_DIR: records side by side, score histograms, filters, diversity.

    An earlier report at the output (RUN_DIR/report.html by default) is replaced: a report is
    remade at will, so there is no --overwrite. The page is written aside and moved into place.
    """
    from spanaug_core.output import AUGMENTED
    from spanaug_shared.judgments import read_judgments
    from spanaug_shared.postag import TaggerChoice, find_tagger
    from spanaug_report.page import render_report
    from spanaug_report.rundir import load_run

    run = load_run(run_dir, source)
    judged = read_judgments(judgments) if judgments is not None else None
    used: list[TaggerChoice] = []

    def tagger() -> TaggerChoice:
        # Remembered to tell the user which tagger ran (or why none did).
        used.append(find_tagger())
        return used[-1]

    page = render_report(run, judged, limit, tagger)
    output = output or run_dir / "report.html"
    with atomic_output(output, overwrite=True) as partial:  # a report is remade at will, never half-written
        partial.write_text(page, encoding="utf-8")
    for line in run.notes + [u.description for u in used if u.tagger is None]:
        tagged("note", "bold yellow", line)
    shown = min(limit, len(run.records))
    note(f"wrote {output}: {shown} of {len(run.records)} records of {run_dir / AUGMENTED} shown"
         + (f", POS by {used[0].description}" if used and used[0].tagger is not None else ""))
