"""The pluggy hooks a plugin implements to add components and CLI commands.

Each ``register_<kind>s`` hook receives a ``register(cls)`` callable and calls it once per
component class; the registry records which plugin registered what, so a name taken
twice is reported with both plugins. ``register_models`` registers model presets the
same way (``spanaug models`` lists them). ``register_commands`` receives the click group of
the ``spanaug`` command and may add sub-commands to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT = "spanaug"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Register = Callable[[type], None]


@hookspec
def register_datasets(register: Register) -> None:
    """Register dataset readers (and writers): ``register(MyReader)``."""


@hookspec
def register_expanders(register: Register) -> None:
    """Register constraint expanders."""


@hookspec
def register_decoders(register: Register) -> None:
    """Register constrained decoders."""


@hookspec
def register_aligners(register: Register) -> None:
    """Register span aligners."""


@hookspec
def register_filters(register: Register) -> None:
    """Register filters of augmented records."""


@hookspec
def register_lexicons(register: Register) -> None:
    """Register lexicons: words a rewritten span could become, named in the decoder's prompt."""


@hookspec
def register_trainers(register: Register) -> None:
    """Register downstream trainers."""


@hookspec
def register_engines(register: Register) -> None:
    """Register execution engines (where a run's pipeline runs: this process, a cluster)."""


@hookspec
def register_models(register: Callable[[Any], None]) -> None:
    """Register model presets: ``register(preset)``, a ``ModelPreset`` (e.g. ``spanaug_shared.models.Preset``).

    A plugin registers the presets its components can load; two plugins may register the
    same preset (equal values), as the users of the shared encoder do with its default.
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add sub-commands to the ``spanaug`` click group."""


KIND_HOOKS: dict[str, str] = {
    "dataset": "register_datasets",
    "expander": "register_expanders",
    "decoder": "register_decoders",
    "aligner": "register_aligners",
    "filter": "register_filters",
    "lexicon": "register_lexicons",
    "trainer": "register_trainers",
    "engine": "register_engines",
}
