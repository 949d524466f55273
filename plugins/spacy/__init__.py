"""spanaug plugin spacy: the ``spacy`` dataset, spaCy DocBin files (registrations only; code in sibling modules)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_spacy.docbin import SpacyDataset

    register(SpacyDataset)
