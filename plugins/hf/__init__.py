"""spanaug plugin hf: the ``hf`` dataset, Hugging Face ``datasets`` data (registrations only; code in sibling modules)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_hf.dataset import HfDataset

    register(HfDataset)
