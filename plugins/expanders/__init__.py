"""Built-in plugin: constraint expanders (registrations only)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_expanders(register: Register) -> None:
    from spanaug_expanders.inflect import InflectExpander

    register(InflectExpander)
