"""spanaug plugin ner: the ``conll-ner`` dataset (registrations only; code in sibling modules)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_ner.conll_ner import ConllNer

    register(ConllNer)
