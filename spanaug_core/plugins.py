"""Plugin discovery and the name -> component registry.

Plugins are Python packages listed under the ``spanaug`` entry-point group (built-ins
too) that implement the hooks of :mod:`spanaug_core.hookspecs`. A ``Registry`` loads
them (all, or those named in ``SPANAUG_LOAD_PLUGINS``), asks each for its components
and keeps ``kind -> name -> (class, plugin)``. Plugins are imported lazily, on the
first question asked of the registry, so that ``spanaug --help`` stays fast. The core's
own components (the ``local`` engine) come through the core's entry point, ``core``, and
are in every registry, even an empty one built for a test.

``Registry.plan(config)`` resolves a run config into a ``RunPlan``: each component's
class and its options, validated once, for the engine to build.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import os
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import pluggy
from pydantic import ValidationError

from spanaug_core import hookspecs
from spanaug_core.config import SUGGESTED, RunConfig
from spanaug_core.errors import ConfigError, DuplicateComponentError, SpanaugError, UnknownComponentError
from spanaug_core.kinds import KIND, KINDS, SECTIONS, kind_named
from spanaug_core.protocols import ComponentConfig, ModelPreset, Part, RunPlan, describe

ENTRY_POINT_GROUP = "spanaug"
LOAD_ENV = "SPANAUG_LOAD_PLUGINS"
CORE_PLUGIN = "core"


@dataclass(frozen=True)
class Registered:
    """A registered component class and the plugin that registered it."""

    kind: str
    name: str
    cls: type
    plugin: str

    @property
    def description(self) -> str:
        return describe(self.cls)


def _check_component(kind: str, cls: type, plugin: str) -> None:
    """Reject at registration what would fail later: no name, no Config, missing methods."""
    where = f"plugin '{plugin}' registered {kind} {cls.__qualname__}"
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise SpanaugError(f"{where} without a `name: ClassVar[str]`")
    config = getattr(cls, "Config", None)
    if not (isinstance(config, type) and issubclass(config, ComponentConfig)):
        raise SpanaugError(f"{where} ('{name}') whose Config is not a spanaug_core.ComponentConfig subclass")
    proto = KIND[kind].protocol
    missing = [
        attr
        for attr in dir(proto)
        if not attr.startswith("_") and attr not in ("name", "Config", "config") and callable(getattr(proto, attr))
        and not callable(getattr(cls, attr, None))
    ]
    if missing:
        raise SpanaugError(f"{where} ('{name}') lacking {', '.join(missing)} required of a {kind}")


class Registry:
    """Components by kind and name, gathered from plugins.

    ``Registry()`` discovers entry points; ``Registry(entry_points=False)`` starts empty
    (tests register plugins inline with :meth:`add_plugin`). ``only`` restricts which
    entry points load (default: the comma-separated ``SPANAUG_LOAD_PLUGINS``, or all).
    """

    def __init__(self, entry_points: bool = True, only: list[str] | None = None) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._components: dict[str, dict[str, Registered]] | None = None
        self._presets: dict[str, tuple[ModelPreset, str]] | None = None
        self._entry_points = entry_points
        if only is None and os.environ.get(LOAD_ENV, "").strip():
            only = [n.strip() for n in os.environ[LOAD_ENV].split(",") if n.strip()]
        self._only = only
        self._loaded = False
        self._added: list[tuple[Any, str | None]] = []
        # The core's own components (the local engine) are there whatever plugins load.
        self.pm.register(_core_plugin(), name=CORE_PLUGIN)

    # -- plugins ---------------------------------------------------------------------
    def add_plugin(self, plugin: Any, name: str | None = None) -> None:
        """Register a plugin object or module (one with ``@hookimpl`` functions)."""
        self.pm.register(plugin, name=name)
        self._added.append((plugin, name))
        self._components = None
        self._presets = None

    def __reduce__(self) -> tuple[Any, ...]:
        # A registry travels to another process (a Ray worker) as the recipe that rebuilds
        # it there: the same entry points, the same plugins added by hand (modules by name).
        added = [(p.__name__ if isinstance(p, ModuleType) else p, name) for p, name in self._added]
        return (_rebuild, (self._entry_points, self._only, added))

    def _load_entry_points(self) -> None:
        if self._loaded or not self._entry_points:
            return
        self._loaded = True
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        by_name = {ep.name: ep for ep in eps}
        if self._only is not None:
            unknown = [n for n in self._only if n not in by_name]
            if unknown:
                raise SpanaugError(
                    f"{LOAD_ENV} names plugins that are not installed: {', '.join(unknown)}. "
                    f"Installed: {', '.join(sorted(by_name)) or 'none'}"
                )
        for ep_name in sorted(by_name):
            if self._only is not None and ep_name not in self._only:
                continue
            if self.pm.has_plugin(ep_name):
                continue
            try:
                module = by_name[ep_name].load()
            except Exception as exc:  # a broken third-party plugin must not hide the others' names
                raise SpanaugError(f"plugin '{ep_name}' ({by_name[ep_name].value}) failed to import: {exc}") from exc
            self.pm.register(module, name=ep_name)

    def plugin_names(self) -> list[str]:
        self._load_entry_points()
        return sorted(n for n, _ in self.pm.list_name_plugin() if n != CORE_PLUGIN)

    # -- components ------------------------------------------------------------------
    def _collect(self) -> dict[str, dict[str, Registered]]:
        if self._components is not None:
            return self._components
        self._load_entry_points()
        table: dict[str, dict[str, Registered]] = {kind.name: {} for kind in KINDS}
        for kind in KINDS:
            for impl in getattr(self.pm.hook, kind.hook).get_hookimpls():
                plugin = impl.plugin_name

                def register(cls: type, _kind: str = kind.name, _plugin: str = plugin) -> None:
                    _check_component(_kind, cls, _plugin)
                    known = table[_kind].get(cls.name)
                    if known is not None and known.cls is not cls:
                        raise DuplicateComponentError(
                            f"{_kind} name '{cls.name}' is registered twice: by plugin '{known.plugin}' "
                            f"({known.cls.__module__}.{known.cls.__qualname__}) and by plugin '{_plugin}' "
                            f"({cls.__module__}.{cls.__qualname__}); uninstall one or restrict {LOAD_ENV}"
                        )
                    table[_kind][cls.name] = Registered(_kind, cls.name, cls, _plugin)

                _call_plugin(impl, register, f"register its {kind.name}s")
        self._components = table
        return table

    def names(self, kind: str) -> list[str]:
        """The registered names of one kind, sorted."""
        return sorted(self._collect()[_kind(kind)])

    def entries(self, kind: str | None = None) -> list[Registered]:
        """Every registered component (of one kind, or all), by kind then name."""
        table = self._collect()
        kinds = [_kind(kind)] if kind else list(KIND)
        return [table[k][n] for k in kinds for n in sorted(table[k])]

    def get(self, kind: str, name: str) -> type:
        """The class registered as ``name``; an unknown name lists the known ones."""
        table = self._collect()[_kind(kind)]
        if name not in table:
            raise UnknownComponentError(kind, name, table)
        return table[name].cls

    def create(self, kind: str, name: str | type, /, config: ComponentConfig | dict[str, Any] | None = None, **options: Any) -> Any:
        """Build a component from its registered name (or its class) and options."""
        cls = self.get(kind, name) if isinstance(name, str) else name
        return build(cls, config, kind=_kind(kind), siblings=self._siblings(kind, cls), **options)

    def part(self, kind: str, name: str, options: dict[str, Any]) -> Part:
        """The class registered as ``name`` and its options validated, without building it (no model is loaded)."""
        cls = self.get(kind, name)
        return Part(cls, validate_options(cls, dict(options), _kind(kind), self._siblings(kind, cls)))

    def resolved_options(self, kind: str, name: str, options: dict[str, Any]) -> dict[str, Any]:
        """Every option ``create`` would build ``name`` with, defaults filled in, as JSON (``Part.options``)."""
        return self.part(kind, name, options).options()

    def plan(self, config: RunConfig) -> RunPlan:
        """The components ``config`` names, each option validated (here, once), and its pipeline settings."""
        parts: dict[str, tuple[Part, ...]] = {}
        for kind, section in SECTIONS:
            named = getattr(config, section.key)
            specs = named if section.many else [] if named is None else [named]
            if any(spec.name == SUGGESTED for spec in specs):  # ``run.with_suggested_settings`` names it, where it can
                key = section.key
                raise ConfigError(f"{key} options given without a {key} to take them: name it too (--{key} NAME or {key}.name=NAME)")
            parts[section.key] = tuple(self.part(kind, spec.name, spec.options) for spec in specs)
        return RunPlan(config.pipeline_settings(), parts)

    def _siblings(self, kind: str, cls: type) -> dict[str, type]:
        """The kind's other components by name, so that an unknown option can name the one that has it."""
        return {e.name: e.cls for e in self.entries(kind) if e.cls is not cls}

    # -- model presets ---------------------------------------------------------------
    def presets(self) -> dict[str, ModelPreset]:
        """Every model preset the plugins registered, by name (in registration order)."""
        if self._presets is None:
            self._load_entry_points()
            found: dict[str, tuple[ModelPreset, str]] = {}
            for impl in self.pm.hook.register_models.get_hookimpls():
                def register(preset: Any, _plugin: str = impl.plugin_name) -> None:
                    if not isinstance(preset, ModelPreset):
                        raise SpanaugError(
                            f"plugin '{_plugin}' registered {preset!r} as a model preset; expected name, description, "
                            "role, sources, cached() and fetch(progress) (spanaug_shared.models.Preset has them)"
                        )
                    known = found.get(preset.name)
                    if known is not None and known[0] != preset:
                        raise DuplicateComponentError(
                            f"model preset '{preset.name}' is registered twice, differently: by plugin '{known[1]}' "
                            f"and by plugin '{_plugin}'; uninstall one or restrict {LOAD_ENV}"
                        )
                    found.setdefault(preset.name, (preset, _plugin))

                _call_plugin(impl, register, "register its model presets")
            self._presets = found
        return {name: preset for name, (preset, _) in self._presets.items()}

    def preset(self, name: str) -> ModelPreset:
        """The preset registered as ``name``; an unknown name lists the known ones."""
        found = self.presets()
        if name not in found:
            raise UnknownComponentError("model preset", name, found)
        return found[name]

    def add_commands(self, cli: Any) -> None:
        """Let every plugin add its sub-commands to the ``spanaug`` click group."""
        self._load_entry_points()
        for impl in self.pm.hook.register_commands.get_hookimpls():
            _call_plugin(impl, cli, "add its commands")


def _rebuild(entry_points: bool, only: list[str] | None, added: list[tuple[Any, str | None]]) -> Registry:
    registry = Registry(entry_points=entry_points, only=only)
    for plugin, name in added:
        registry.add_plugin(importlib.import_module(plugin) if isinstance(plugin, str) else plugin, name)
    return registry


def _call_plugin(impl: Any, arg: Any, doing: str) -> None:
    """Call one plugin's hook implementation; a failure names the plugin."""
    try:
        impl.function(**{name: arg for name in impl.argnames})
    except SpanaugError:
        raise
    except Exception as exc:
        raise SpanaugError(
            f"plugin '{impl.plugin_name}' failed to {doing}: {type(exc).__name__}: {exc} "
            f"(exclude it with {LOAD_ENV}=<the other plugins>)"
        ) from exc


def _kind(kind: str) -> str:
    return kind_named(kind).name


@lru_cache(maxsize=1)
def _core_plugin() -> Any:
    """The module of the core's own components, found through its entry point like any plugin's."""
    found = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=CORE_PLUGIN))
    if len(found) != 1:
        # An install from before the core had an entry point: its metadata names no "core".
        raise SpanaugError(f"spanaug's '{CORE_PLUGIN}' entry point is not installed; reinstall spanaug (make setup, or pip install -e .)")
    return found[0].load()


def build(
    cls: type,
    config: ComponentConfig | dict[str, Any] | None = None,
    kind: str = "component",
    siblings: dict[str, type] | None = None,
    **options: Any,
) -> Any:
    """Instantiate ``cls`` with a validated config; errors name the component and field.

    ``siblings`` (other components of the kind, by name) let an unknown option name the
    component that has it.
    """
    if isinstance(config, ComponentConfig) and not options:
        return cls(config)
    base = config.model_dump() if isinstance(config, ComponentConfig) else dict(config or {})
    return cls(validate_options(cls, {**base, **options}, kind, siblings))


def validate_options(
    cls: type, options: dict[str, Any], kind: str = "component", siblings: dict[str, type] | None = None
) -> ComponentConfig:
    """``cls.Config(**options)``, with a pydantic error turned into a readable ConfigError."""
    label = f"{kind} '{getattr(cls, 'name', cls.__name__)}'"
    try:
        return cls.Config(**options)
    except ValidationError as exc:
        fields = cls.Config.model_fields
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(options)"
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown option '{loc}'{_option_hint(loc, fields, kind, siblings or {})}")
            else:
                message = str(err["msg"]).removeprefix("Value error, ")  # a validator's own words need no pydantic prefix
                problems.append(f"option '{loc}': {message} (got {err.get('input')!r})")
        raise ConfigError(f"{label}: " + "; ".join(problems)) from None


def _option_hint(option: str, fields: dict[str, Any], kind: str, siblings: dict[str, type]) -> str:
    """What to say after an unknown option: a close valid name, or the components that have it."""
    close = difflib.get_close_matches(option, list(fields), n=1)
    owners = [name for name, other in sorted(siblings.items()) if option in getattr(other, "Config").model_fields]
    if close:
        hint = f" Did you mean '{close[0]}'?"
    elif owners:
        hint = f" It is an option of {kind} {', '.join(repr(o) for o in owners)}: choose that {kind} to use it."
    else:
        hint = ""
    return f" (valid options: {', '.join(sorted(fields)) or 'none'}).{hint}"


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The process-wide registry of installed plugins (entry points)."""
    return Registry()


def create(kind: str, name: str | type, /, config: ComponentConfig | dict[str, Any] | None = None, **options: Any) -> Any:
    """Build a component by kind and name from the installed plugins, e.g.
    ``create("expander", "inflect", max_variants=32)``; a class works in place of a name."""
    return default_registry().create(kind, name, config, **options)
