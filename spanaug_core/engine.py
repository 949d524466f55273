"""Where a run's pipeline runs: the core's own engine, ``local``, runs it in this process.

Engines are a component kind like decoders (``register_engines``); another engine (the
``ray`` plugin) spreads the same pipeline over workers while this process stays the one
writer of the run folder. The local engine is registered by the core itself, through the
same hook a plugin uses, so that every registry, even an empty one built for a test, can
run a pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from spanaug_core.config import RunConfig
from spanaug_core.hookspecs import Register, hookimpl
from spanaug_core.pipeline import Pipeline
from spanaug_core.plugins import Registry
from spanaug_core.protocols import ComponentConfig, ProgressCallback


class LocalEngine:
    """Runs the pipeline in this process (the default)."""

    name = "local"

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    @contextmanager
    def start(self, config: RunConfig, registry: Registry, progress: ProgressCallback | None = None) -> Iterator[Pipeline]:
        yield Pipeline.from_config(config, registry, progress)


@hookimpl
def register_engines(register: Register) -> None:
    register(LocalEngine)
