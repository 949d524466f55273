"""Shortcut flags of ``spanaug run``, generated from the settings that declare one.

A setting declares its flag where it is defined, ``Field(10, description="beam width",
json_schema_extra=flag("--beam"))``: a field of the run config (``--iterations``) or of a
component's ``Config`` (``--beam`` on the decoders' ``beam_size``, ``--workers`` on the
ray engine's). The flag sets that one setting (``--beam 8`` is ``--set
decoder.beam_size=8``); its help is the field's description and the default it shows is
the field's own default, so an option has one default, in one place, whatever reads it.

A component's flag shows the default of the component the run uses by default (the vdba
decoder's ``beam_size``); a flag that only some other component declares says whose it is
(``ray: worker actors ...``). Two settings claiming one flag is a plugin conflict, reported
with both.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from spanaug_core.errors import SpanaugError

if TYPE_CHECKING:
    from spanaug_core.plugins import Registry

FLAG_KEY = "cli_flag"


def flag(*names: str) -> dict[str, list[str]]:
    """What a ``Field``'s ``json_schema_extra`` carries to give its setting a shortcut flag (and aliases)."""
    return {FLAG_KEY: list(names)}


@dataclass(frozen=True)
class RunFlag:
    """One generated flag: the setting it sets, its value type and its help."""

    names: tuple[str, ...]  # ("--output", "-o"): the first is the flag's name
    setting: str  # "decoder.beam_size"
    type: type  # int, float, str, Path or bool (a --x/--no-x switch)
    help: str


def declared_flag(info: FieldInfo) -> tuple[str, ...]:
    """The flag (and its aliases) a field declares; empty when none."""
    extra = info.json_schema_extra
    return tuple(extra.get(FLAG_KEY, ())) if isinstance(extra, dict) else ()  # type: ignore[arg-type]


def run_flags(registry: Registry) -> list[RunFlag]:
    """Every shortcut flag: the run config's own, then each component kind's, in field order."""
    from spanaug_core.config import ComponentSpec, RunConfig

    found: dict[str, RunFlag] = {}

    def add(run_flag: RunFlag) -> None:
        known = found.get(run_flag.names[0])
        if known is not None and known.setting != run_flag.setting:
            raise SpanaugError(f"flag {run_flag.names[0]} is declared for both {known.setting} and {run_flag.setting}; rename one")
        found.setdefault(run_flag.names[0], run_flag)

    kinds = []
    for field_name, info in RunConfig.model_fields.items():
        names = declared_flag(info)
        if info.annotation is ComponentSpec:
            kinds.append((field_name, info.default.name))
            if names:
                add(RunFlag(names, f"{field_name}.name", str, _help(info.description, info.default.name)))
        elif names:
            add(RunFlag(names, field_name, _value_type(info), _help(info.description, info.default)))
    for kind, default_name in kinds:
        # The default component first: its defaults are the ones a run without the flag gets.
        entries = sorted(registry.entries(kind), key=lambda e: e.name != default_name)
        for entry in entries:
            for field_name, info in entry.cls.Config.model_fields.items():
                names = declared_flag(info)
                if not names:
                    continue
                owner = "" if entry.name == default_name else f"{entry.name}: "
                setting = f"{kind}.{field_name}"
                described = f"{owner}{info.description or ''} (sets {setting})"
                add(RunFlag(names, setting, _value_type(info), _help(described, info.default)))
    return list(found.values())


def _help(description: str | None, default: Any) -> str:
    shown = "" if default is None or default is False else f"  [default: {default}]"
    return (description or "") + shown


def _value_type(info: FieldInfo) -> type:
    """The flag's value type: the annotation, with ``None`` taken out of an optional."""
    annotation = info.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else str
    return annotation if annotation in (int, float, str, bool, Path) else str
