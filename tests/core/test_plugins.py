"""Discovery, registration errors and name errors of the plugin registry."""

from __future__ import annotations

import importlib.metadata
import pickle
from contextlib import contextmanager
from typing import ClassVar

import pytest

import spanaug_expanders
from spanaug_core import ComponentConfig, ConfigError, UnknownComponentError
from spanaug_core.errors import DuplicateComponentError, SpanaugError
from spanaug_core.hookspecs import hookimpl
from spanaug_core.pipeline import Pipeline
from spanaug_core import plugins
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
    # A validator's own message reads without pydantic's "Value error, " in front.
    with pytest.raises(ConfigError, match=r"^dataset 'jsonl': option 'encoding': unknown text encoding; expected .*\(got 'utf-9'\)$"):
        Registry().create("dataset", "jsonl", encoding="utf-9")
    # An option a component would ignore is not one: string-match answers copies, with no threshold.
    with pytest.raises(ConfigError, match=r"aligner 'string-match': unknown option 'threshold' \(valid options: none\)"):
        Registry().create("aligner", "string-match", threshold=0.3)


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


class TinyDataset:
    """Two fixed examples."""

    name: ClassVar[str] = "tiny"

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    def read(self, path):  # type: ignore[no-untyped-def]
        from spanaug_core import Example

        yield from (Example(id=str(i), tokens=("a", "b")) for i in range(2))


class KeepShort:
    """Keeps records of at most N tokens."""

    name: ClassVar[str] = "keep-short"

    class Config(ComponentConfig):
        max_tokens: int = 3

    def __init__(self, config: Config) -> None:
        self.config = config

    def check(self, record, context):  # type: ignore[no-untyped-def]
        return None if len(record.tokens) <= self.config.max_tokens else "too long"


class MajorityTrainer:
    """Predicts the most frequent span label at every token (a baseline)."""

    name: ClassVar[str] = "majority"

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    def train(self, train, dev, out_dir, progress=None):  # type: ignore[no-untyped-def]
        from collections import Counter

        labels = Counter(span.label for ex in train for span in ex.spans)
        self.label = labels.most_common(1)[0][0]
        return {"labels": float(len(labels))}

    def predict(self, model_dir, examples):  # type: ignore[no-untyped-def]
        from spanaug_core import Span

        for ex in examples:
            yield ex.model_copy(update={"spans": (Span(start=0, end=1, label=self.label),)})


class CountingEngine:
    """Runs the pipeline in this process and counts the runs it started."""

    name = "counting"
    started = 0

    class Config(ComponentConfig):
        pass

    def __init__(self, config: Config) -> None:
        self.config = config

    @contextmanager
    def start(self, plan, progress=None):  # type: ignore[no-untyped-def]
        CountingEngine.started += 1
        yield Pipeline.from_plan(plan, progress)


class EveryHookPlugin:
    @hookimpl
    def register_datasets(self, register):  # type: ignore[no-untyped-def]
        register(TinyDataset)

    @hookimpl
    def register_engines(self, register):  # type: ignore[no-untyped-def]
        register(CountingEngine)

    @hookimpl
    def register_filters(self, register):  # type: ignore[no-untyped-def]
        register(KeepShort)

    @hookimpl
    def register_trainers(self, register):  # type: ignore[no-untyped-def]
        register(MajorityTrainer)

    @hookimpl
    def register_commands(self, cli):  # type: ignore[no-untyped-def]
        import click

        @cli.command("hello")
        def hello() -> None:
            click.echo("hello from a plugin")


def test_every_kind_registers_through_its_hook(registry) -> None:
    from spanaug_core import Example, Span

    registry.add_plugin(EveryHookPlugin(), "every")
    assert [(e.kind, e.name) for e in registry.entries()] == [
        ("dataset", "tiny"),
        ("filter", "keep-short"),
        ("trainer", "majority"),
        ("engine", "counting"),
        ("engine", "local"),  # the core's own, in every registry
    ]
    assert registry.plugin_names() == ["every"]
    assert [ex.id for ex in registry.create("dataset", "tiny").read(None)] == ["0", "1"]
    trainer = registry.create("trainer", "majority")
    gold = [Example(id="g", tokens=("x", "y"), spans=(Span(start=0, end=1, label="L"),))]
    assert trainer.train(gold, None, None) == {"labels": 1.0}
    assert next(trainer.predict(None, [Example(id="p", tokens=("z",))])).spans[0].label == "L"


def test_plugin_commands_join_the_cli(registry) -> None:
    import click
    from click.testing import CliRunner

    @click.group()
    def cli() -> None:
        pass

    registry.add_plugin(EveryHookPlugin(), "every")
    registry.add_commands(cli)
    result = CliRunner().invoke(cli, ["hello"])
    assert result.exit_code == 0 and result.output == "hello from a plugin\n"


def test_a_registry_pickles_as_the_recipe_that_rebuilds_it(registry) -> None:
    # Ray workers get the driver's registry this way: same plugins, modules by name.
    registry.add_plugin(spanaug_expanders, "expanders")
    registry.add_plugin(EveryHookPlugin(), "every")
    again = pickle.loads(pickle.dumps(registry))
    assert again is not registry
    assert [(e.kind, e.name, e.plugin) for e in again.entries()] == [(e.kind, e.name, e.plugin) for e in registry.entries()]
    assert again.plugin_names() == ["every", "expanders"]


def test_an_install_without_the_core_entry_point_says_to_reinstall(monkeypatch) -> None:
    # The local engine comes through the core's entry point; an install older than it lacks one.
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **selection: [])
    plugins._core_plugin.cache_clear()
    try:
        with pytest.raises(SpanaugError, match="'core' entry point is not installed; reinstall spanaug"):
            Registry(entry_points=False)
    finally:
        plugins._core_plugin.cache_clear()
