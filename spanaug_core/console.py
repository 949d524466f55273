"""Terminal rendering for the CLI: error lines and progress bars built with rich.

Library code never prints; it calls a ``ProgressCallback``. ``progress_callback`` turns
those events into a rich progress bar (rate and ETA) on stderr, one task per stage.
Commands added by plugins use the same helpers so every command looks alike.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from spanaug_core.protocols import ProgressCallback, ProgressEvent


def _console(stderr: bool) -> Console:
    """A console that wraps long lines to the terminal's width, and in a log or a pipe, where
    rich would assume 80 columns, does not wrap at all: each line stays whole for grep."""
    stream = sys.stderr if stderr else sys.stdout
    terminal = getattr(stream, "isatty", lambda: False)()
    return Console(stderr=stderr, highlight=False, soft_wrap=not terminal)


err_console = _console(stderr=True)
out_console = _console(stderr=False)


def tagged(tag: str, style: str, message: str) -> None:
    """Print ``tag: message`` on stderr, the tag in ``style``. The message is printed as
    written: its brackets ("[PER]", a YAML list) and backslashes are text, not rich markup."""
    err_console.print(Text.assemble((f"{tag}:", style), " ", message), soft_wrap=True)


def error(message: str) -> None:
    """Print one red error line on stderr."""
    tagged("error", "bold red", message)


def note(message: str) -> None:
    """Print one dim informational line on stderr."""
    err_console.print(Text(message, style="dim"), soft_wrap=True)


class _RateColumn(TextColumn):
    """Items per second of a task, in the task's own unit."""

    def __init__(self) -> None:
        super().__init__("")

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        unit = task.fields.get("unit", "it")
        text = f"{speed:.2f} {unit}/s" if speed else f"- {unit}/s"
        return Text(text, style="progress.data.speed")


@contextmanager
def progress_callback(unit: str = "examples", enabled: bool | None = None) -> Iterator[ProgressCallback]:
    """A context whose value is a ProgressCallback drawing one bar per stage on stderr."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda event: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[message]}"),
        console=err_console,
        transient=False,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def on_event(event: ProgressEvent) -> None:
            if event.stage not in tasks:
                tasks[event.stage] = bar.add_task(
                    event.stage, total=event.total, unit=unit if event.stage == "examples" else event.stage, message=""
                )
            bar.update(tasks[event.stage], completed=event.done, total=event.total, message=event.message)

        yield on_event
