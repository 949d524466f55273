"""spanaug plugin conll_srl: the ``conll-srl`` dataset and the ``propbank`` lexicon (registrations only; code in sibling modules)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_conll_srl.dataset import ConllSrl

    register(ConllSrl)


@hookimpl
def register_lexicons(register: Register) -> None:
    from spanaug_conll_srl.lexicon import PropBankLexicon

    register(PropBankLexicon)
