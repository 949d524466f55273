"""Built-in plugin: `spanaug report RUN_DIR`, a static HTML page about a run (registrations only).

See docs/report.md for what the page shows.
"""

from typing import Any

from spanaug_core.hookspecs import hookimpl


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_report.commands import report_command

    cli.add_command(report_command)
