"""spanaug plugin trainers: the ``ner`` and ``srl`` taggers, the ``frame-id`` span classifier, ``spanaug predict``.

Registrations only; the code lives in sibling modules (see docs/trainers.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spanaug_core.hookspecs import Register, hookimpl


@hookimpl
def register_trainers(register: Register) -> None:
    from spanaug_trainers.frame_id import FrameIdTrainer
    from spanaug_trainers.trainers import NerTrainer, SrlTrainer

    for cls in (NerTrainer, SrlTrainer, FrameIdTrainer):
        register(cls)


@hookimpl
def register_models(register: Callable[[Any], None]) -> None:
    from spanaug_shared.encoder import register_presets

    register_presets(register)


@hookimpl
def register_commands(cli: Any) -> None:
    from spanaug_trainers.commands import predict_command

    cli.add_command(predict_command)
