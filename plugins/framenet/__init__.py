"""spanaug plugin framenet: the ``framenet`` dataset, the ``frame-lexicon`` filter, the ``framenet`` lexicon and ``spanaug eval framenet-lus`` (registrations only)."""

from typing import Any

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_datasets(register: Register) -> None:
    from spanaug_framenet.reader import FrameNetReader

    register(FrameNetReader)


@hookimpl
def register_filters(register: Register) -> None:
    from spanaug_framenet.lexicon import FrameLexiconFilter

    register(FrameLexiconFilter)


@hookimpl
def register_lexicons(register: Register) -> None:
    from spanaug_framenet.lexicon import FrameNetLexicon

    register(FrameNetLexicon)


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_framenet.commands import framenet_lus, framenet_seed

    cli.commands["eval"].add_command(framenet_lus)
    cli.commands["convert"].add_command(framenet_seed)
