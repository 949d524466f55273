"""spanaug plugin ner: the ``conll-ner`` dataset and the ``entity-tagger`` filter (registrations only; code in sibling modules)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_ner.conll_ner import ConllNer

    register(ConllNer)


@hookimpl
def register_filters(register: Register) -> None:
    from spanaug_ner.entity_tagger import EntityTaggerFilter

    register(EntityTaggerFilter)
