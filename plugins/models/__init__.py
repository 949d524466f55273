"""spanaug plugin models: the ``spanaug models`` commands (registrations only).

Lists, fetches, locates and verifies the model presets every installed plugin registers
(``register_models``), with the cache of ``spanaug_shared.models``.
"""

from __future__ import annotations

from typing import Any

from spanaug_core.hookspecs import hookimpl


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_models.commands import models_group

    cli.add_command(models_group)
