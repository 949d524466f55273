"""spanaug plugin aligners: bert-span (trained), embed-sim and simalign (zero-shot), fast-align, string-match.

Registrations only; the code lives in sibling modules (see docs/aligners.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_aligners(register: Register) -> None:
    from spanaug_aligners.bert_span import BertSpanAligner
    from spanaug_aligners.embed_sim import EmbedSimAligner
    from spanaug_aligners.fast_align import FastAlignAligner
    from spanaug_aligners.simalign import SimAlignAligner
    from spanaug_aligners.string_match import StringMatchAligner

    for cls in (BertSpanAligner, EmbedSimAligner, FastAlignAligner, SimAlignAligner, StringMatchAligner):
        register(cls)


@hookimpl
def register_models(register: Callable[[Any], None]) -> None:
    from spanaug_shared.encoder import register_presets

    register_presets(register)


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_aligners import cli as commands

    cli.commands["train"].add_command(commands.train_aligner)
    cli.commands["train"].add_command(commands.train_aligner_threshold)
    cli.commands["eval"].add_command(commands.eval_align)
    cli.commands["convert"].add_command(commands.convert_word_alignments)
    cli.add_command(commands.align_command)
    cli.add_command(commands.make_align_data)
