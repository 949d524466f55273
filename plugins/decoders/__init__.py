"""spanaug plugin decoders (registrations only; code in sibling modules).

Registers the ``vdba`` and ``hf-beam`` decoders, their paraphrase model presets and the
``spanaug decode`` command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_decoders(register: Register) -> None:
    from spanaug_decoders.decoders import HFBeamDecoder, VDBADecoder

    register(VDBADecoder)
    register(HFBeamDecoder)


@hookimpl
def register_models(register: Callable[[Any], None]) -> None:
    from spanaug_decoders.presets import PARAPHRASERS

    for preset in PARAPHRASERS:
        register(preset)


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_decoders.commands import add_commands

    add_commands(cli)
