"""Built-in plugin: spanaug's own JSONL dataset format (registrations only)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_jsonl.dataset import JsonlDataset

    register(JsonlDataset)
