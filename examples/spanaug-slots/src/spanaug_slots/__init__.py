"""spanaug plugin for slot-filling data (registrations only; the reader is in reader.py)."""

from spanaug_core.hookspecs import hookimpl


@hookimpl
def register_datasets(register):
    from spanaug_slots.reader import SlotsDataset

    register(SlotsDataset)
