"""spanaug plugin docbin: the ``spacy`` dataset, spaCy DocBin files (registrations only; code in sibling modules).

The folder is not called ``spacy``: a folder of that name beside the code would be imported
instead of spaCy by anything that puts ``plugins/`` on its path.
"""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_docbin.docbin import SpacyDataset

    register(SpacyDataset)
