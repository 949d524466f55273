"""Built-in plugin: filters of augmented records (registrations only)."""

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_filters(register: Register) -> None:
    from spanaug_filters.basic import AlignmentScoreFilter, CopyFilter, MaxIterationFilter, ParaphraseScoreFilter

    for cls in (MaxIterationFilter, ParaphraseScoreFilter, AlignmentScoreFilter, CopyFilter):
        register(cls)
