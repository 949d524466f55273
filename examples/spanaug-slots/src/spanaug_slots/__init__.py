"""spanaug plugin for slot-filling data (registrations only; the reader is in reader.py)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_slots.reader import SlotsDataset

    register(SlotsDataset)
