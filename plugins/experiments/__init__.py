"""spanaug plugin experiments: ``spanaug experiment learning-curve`` and ``spanaug experiment lexsub``.

Registrations only; see docs/experiments.md.
"""

from typing import Any

from spanaug_core.hookspecs import hookimpl


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_experiments.commands import experiment_group

    cli.add_command(experiment_group)
