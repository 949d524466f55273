"""How a setting declares its ``spanaug run`` shortcut flag: where the setting is defined.

``Field(10, description="beam width", json_schema_extra=flag("--beam"))`` on a field of the
run config (``--iterations``) or of a component's ``Config`` (``--beam`` on the decoders'
``beam_size``, ``--workers`` on the ray engine's). The flag sets that one setting
(``--beam 8`` is ``--set decoder.beam_size=8``); its help is the field's description and
the default it shows is the field's own default, so an option has one default, in one
place, whatever reads it. The CLI generates the flags (``cli.run_flags``).
"""

from __future__ import annotations

from pydantic.fields import FieldInfo

FLAG_KEY = "cli_flag"


def flag(*names: str) -> dict[str, list[str]]:
    """What a ``Field``'s ``json_schema_extra`` carries to give its setting a shortcut flag (and aliases)."""
    return {FLAG_KEY: list(names)}


def declared_flag(info: FieldInfo) -> tuple[str, ...]:
    """The flag (and its aliases) a field declares; empty when none."""
    extra = info.json_schema_extra
    return tuple(extra.get(FLAG_KEY, ())) if isinstance(extra, dict) else ()  # type: ignore[arg-type]
