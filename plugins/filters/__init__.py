"""Built-in plugin: filters of augmented records and `spanaug train filter` (registrations only).

See docs/filters.md: the heuristic filters (basic.py), similarity and novelty of a
paraphrase against its source, the learned filter trained on human judgments, and
label consistency with a downstream model trained on gold data, and the span checks
(WordNet, and ``sense``: the paraphrase model asked whether the new span means the old).
"""

from collections.abc import Callable
from typing import Any

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_filters(register: Register) -> None:
    from spanaug_filters.adequacy import AdequacyFilter
    from spanaug_filters.basic import (
        AlignmentScoreFilter,
        CopyFilter,
        FactsFilter,
        FluencyFilter,
        KeptTextFilter,
        MaxIterationFilter,
        ParaphraseScoreFilter,
        RecoveryFilter,
    )
    from spanaug_filters.consistency import LabelConsistencyFilter
    from spanaug_filters.learned import LearnedFilter
    from spanaug_filters.novelty import NoveltyFilter
    from spanaug_filters.sense import SenseFilter
    from spanaug_filters.similarity import SimilarityFilter
    from spanaug_filters.wordnet import WordNetFilter

    for cls in (MaxIterationFilter, ParaphraseScoreFilter, AlignmentScoreFilter, CopyFilter,
                SimilarityFilter, NoveltyFilter, LearnedFilter, LabelConsistencyFilter, AdequacyFilter, FluencyFilter, RecoveryFilter, FactsFilter,
                KeptTextFilter, WordNetFilter, SenseFilter):
        register(cls)


@hookimpl
def register_models(register: Callable[[Any], None]) -> None:
    from spanaug_shared.encoder import register_presets

    register_presets(register)


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_filters.commands import train_adequacy_command, train_filter_command

    cli.commands["train"].add_command(train_filter_command)
    cli.commands["train"].add_command(train_adequacy_command)
