"""Built-in plugin: human judgments of a run's outputs, `spanaug judge export|import` (registrations only).

See docs/judging.md for the workflow and the file formats.
"""

from typing import Any

from spanaug_core.hookspecs import hookimpl


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_judge.commands import judge_group

    cli.add_command(judge_group)
