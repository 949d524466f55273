"""Built-in plugin: the ``ray`` engine, the pipeline on a Ray cluster (registrations only).

Ray itself is the ``ray`` extra (``pip install -e ".[ray]"``) and is imported only when a
run uses this engine.
"""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_engines(register: Register) -> None:
    from spanaug_ray.engine import RayEngine

    register(RayEngine)
