"""Discovery, registration errors and name errors of the plugin registry."""

from __future__ import annotations

from typing import ClassVar

import pytest

import spanaug_expanders
from spanaug_core import ComponentConfig, ConfigError, UnknownComponentError
from spanaug_core.errors import DuplicateComponentError, SpanaugError
from spanaug_core.hookspecs import hookimpl
from spanaug_core.plugins import Registry


class Upper:
    """Upper-cases phrases (a test expander)."""

    name: ClassVar[str] = "upper"

    class Config(ComponentConfig):
        repeat: int = 1

    def __init__(self, config: Config) -> None:
        self.config = config

    def expand(self, phrase: str) -> list[str]:
        return [phrase.upper()] * self.config.repeat


class OtherUpper(Upper):
    """Another class claiming the same name."""


def plugin_of(*classes: type) -> object:
    class Plugin:
        @hookimpl
        def register_expanders(self, register):  # type: ignore[no-untyped-def]
            for cls in classes:
                register(cls)

    return Plugin()


def test_inline_plugin_registers_and_builds(registry) -> None:
    registry.add_plugin(plugin_of(Upper), "mine")
    assert registry.names("expander") == ["upper"]
    (entry,) = registry.entries("expanders")
    assert (entry.plugin, entry.description) == ("mine", "Upper-cases phrases (a test expander).")
    assert registry.create("expander", "upper", repeat=2).expand("ab") == ["AB", "AB"]


def test_duplicate_name_names_both_plugins(registry) -> None:
    registry.add_plugin(plugin_of(Upper), "first")
    registry.add_plugin(plugin_of(OtherUpper), "second")
    with pytest.raises(DuplicateComponentError) as info:
        registry.names("expander")
    assert "'upper'" in str(info.value) and "'first'" in str(info.value) and "'second'" in str(info.value)


def test_unknown_name_lists_known_names(registry) -> None:
    registry.add_plugin(plugin_of(Upper), "mine")
    with pytest.raises(UnknownComponentError, match=r"unknown expander 'uper'\. Did you mean 'upper'\? Known expanders: upper"):
        registry.get("expander", "uper")
    with pytest.raises(SpanaugError, match="unknown component kind 'widget'"):
        registry.names("widget")


def test_bad_options_name_component_and_field(registry) -> None:
    registry.add_plugin(plugin_of(Upper), "mine")
    with pytest.raises(ConfigError, match=r"expander 'upper': unknown option 'repeats' \(valid options: repeat\)"):
        registry.create("expander", "upper", repeats=2)
    with pytest.raises(ConfigError, match=r"expander 'upper': option 'repeat': .*integer.*\(got 'many'\)"):
        registry.create("expander", "upper", repeat="many")


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"name": ""}, "without a `name"),
        ({"Config": dict}, "Config is not a spanaug_core.ComponentConfig"),
        ({"expand": None}, "lacking expand"),
    ],
)
def test_malformed_components_are_rejected_at_registration(registry, attrs, message) -> None:
    broken = type("Broken", (Upper,), attrs)
    registry.add_plugin(plugin_of(broken), "broken")
    with pytest.raises(SpanaugError, match=message):
        registry.names("expander")


def test_entry_points_load_and_can_be_restricted(monkeypatch) -> None:
    everything = Registry()
    assert {"jsonl", "expanders", "filters"} <= set(everything.plugin_names())
    monkeypatch.setenv("SPANAUG_LOAD_PLUGINS", "expanders")
    only = Registry()
    assert only.plugin_names() == ["expanders"]
    assert only.names("expander") == ["inflect"] and only.names("dataset") == []
    monkeypatch.setenv("SPANAUG_LOAD_PLUGINS", "expanders,nosuch")
    with pytest.raises(SpanaugError, match="not installed: nosuch"):
        Registry().names("expander")


def test_fresh_registries_do_not_share_state(registry) -> None:
    registry.add_plugin(plugin_of(Upper), "mine")
    other = Registry(entry_points=False)
    other.add_plugin(spanaug_expanders, "expanders")
    assert other.names("expander") == ["inflect"] and registry.names("expander") == ["upper"]


def test_a_failing_plugin_is_named(registry) -> None:
    class Broken:
        @hookimpl
        def register_expanders(self, register):  # type: ignore[no-untyped-def]
            import spanaug_no_such_module  # noqa: F401

        @hookimpl
        def register_commands(self, cli):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    registry.add_plugin(Broken(), "broken")
    with pytest.raises(SpanaugError, match="plugin 'broken' failed to register its expanders: ModuleNotFoundError"):
        registry.names("expander")
    with pytest.raises(SpanaugError, match="plugin 'broken' failed to add its commands: RuntimeError: boom"):
        registry.add_commands(object())
