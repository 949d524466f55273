"""The pluggy hooks a plugin implements to add components and CLI commands.

Each kind of component (a row of ``spanaug_core.kinds.KINDS``) has its hook,
``register_<kind>s(register)`` (``register_decoders``, ``register_filters``...), generated
from the row: it receives a ``register(cls)`` callable and calls it once per component
class; the registry records which plugin registered what, so a name taken twice is
reported with both plugins. ``register_models`` registers model presets the same way
(``spanaug models`` lists them). ``register_commands`` receives the click group of the
``spanaug`` command and may add sub-commands to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from spanaug_core.kinds import KINDS, Kind

PROJECT = "spanaug"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Register = Callable[[type], None]


def _register_hook(kind: Kind) -> Callable[[Register], None]:
    """The hookspec of one kind: ``register_<kind>s(register)``."""

    def spec(register: Register) -> None:
        pass

    spec.__name__ = spec.__qualname__ = kind.hook
    spec.__doc__ = f"Register {kind.registers}: ``register(MyClass)`` once per class."
    return hookspec(spec)  # type: ignore[no-any-return]


# pluggy reads a module's hookspecs from its attributes.
globals().update({kind.hook: _register_hook(kind) for kind in KINDS})


@hookspec
def register_models(register: Callable[[Any], None]) -> None:
    """Register model presets: ``register(preset)``, a ``ModelPreset`` (e.g. ``spanaug_shared.models.Preset``).

    A plugin registers the presets its components can load; two plugins may register the
    same preset (equal values), as the users of the shared encoder do with its default.
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add sub-commands to the ``spanaug`` click group."""
