"""Where a run's pipeline runs: the core's own engine, ``local``, runs it in this process.

Engines are a component kind like decoders (``register_engines``); another engine (the
``ray`` plugin) spreads the same pipeline over workers while this process stays the one
writer of the run folder. This module is the core's own plugin: it is registered through
the core's entry point (``core``), the way a plugin is, and every registry loads it, even
an empty one built for a test, so that any registry can run a pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from spanaug_core.hookspecs import Register, hookimpl
from spanaug_core.pipeline import Pipeline
from spanaug_core.protocols import ComponentConfig, ProgressCallback, RunPlan


class LocalEngine:
    """Runs the pipeline in this process (the default)."""

    name = "local"

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    @contextmanager
    def start(self, plan: RunPlan, progress: ProgressCallback | None = None) -> Iterator[Pipeline]:
        yield Pipeline.from_plan(plan, progress)


@hookimpl
def register_engines(register: Register) -> None:
    register(LocalEngine)
