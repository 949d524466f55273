"""spanaug plugin decoders (registrations only; code in sibling modules).

Registers the ``vdba`` and ``hf-beam`` decoders and the ``spanaug models`` and
``spanaug decode`` commands.
"""

from __future__ import annotations

from typing import Any

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_decoders(register: Register) -> None:
    from spanaug_decoders.decoders import HFBeamDecoder, VDBADecoder

    register(VDBADecoder)
    register(HFBeamDecoder)


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_decoders.commands import add_commands

    add_commands(cli)
