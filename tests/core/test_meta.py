"""Meta-tests that keep the plugin system honest.

1. Every hookspec is exercised by a test and documented in docs/writing-a-plugin.md.
2. The built-in component names match a checked-in snapshot: a rename is a visible change
   (regenerate with ``python tests/core/test_meta.py`` and review the diff).
3. Every registered built-in satisfies its kind's protocol, and its default Config() validates.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import sys
from pathlib import Path

import pytest

from spanaug_core import hookspecs
from spanaug_core.plugins import ENTRY_POINT_GROUP, Registry
from spanaug_core.kinds import KIND

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("builtin_names.json")
HOOKS = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]


def builtin_plugins() -> list[str]:
    dist = importlib.metadata.distribution("spanaug")
    return sorted(ep.name for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP)


def builtin_names() -> dict[str, list[str]]:
    reg = Registry(only=builtin_plugins())
    names: dict[str, list[str]] = {}
    for entry in reg.entries():
        names.setdefault(entry.kind, []).append(entry.name)
    return names


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hookspec_is_tested_and_documented(hook: str) -> None:
    tests = "".join(p.read_text() for p in (REPO / "tests").rglob("*.py") if p.name != "test_meta.py")
    assert f"def {hook}" in tests, f"no test implements the hook {hook}"
    assert f"`{hook}" in (REPO / "docs" / "writing-a-plugin.md").read_text(), f"{hook} is not documented"


def test_builtin_names_match_the_snapshot() -> None:
    assert builtin_names() == json.loads(SNAPSHOT.read_text())


def test_every_builtin_satisfies_its_protocol() -> None:
    for entry in Registry(only=builtin_plugins()).entries():
        config = entry.cls.Config()  # every default must validate
        instance = entry.cls(config)  # constructors are cheap: models load lazily
        assert isinstance(instance, KIND[entry.kind].protocol), f"{entry.kind} {entry.name} breaks its protocol"
        assert entry.description, f"{entry.kind} {entry.name} has no docstring"
        assert entry.name == entry.name.lower() and " " not in entry.name and "_" not in entry.name


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(builtin_names(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {SNAPSHOT}\n")


def _writers() -> list[str]:
    return sorted(e.name for e in Registry(only=builtin_plugins()).entries("dataset") if callable(getattr(e.cls, "write", None)))


@pytest.mark.parametrize("name", _writers())
def test_every_dataset_reads_and_writes_a_path_given_as_a_string(name: str, tmp_path: Path) -> None:
    """``read``, ``count`` and ``write`` take ``str | Path`` (a notebook passes strings)."""
    from spanaug_core.errors import SpanaugError
    from spanaug_core.types import Example, Span

    reg = Registry(only=builtin_plugins())
    dataset = reg.create("dataset", name)
    example = Example(
        id="s1",
        tokens=("The", "panel", "will", "confirm", "it", "."),
        spans=(Span(start=3, end=4, label="Evidence", group="0"), Span(start=1, end=2, label="Support", role="argument", group="0")),
    )
    out = str(tmp_path / "out")
    try:
        written = dataset.write([example], out)
    except (ImportError, SpanaugError) as exc:  # an optional extra (datasets, spaCy) missing
        pytest.skip(f"{name} cannot write here: {exc}")
    assert written == 1
    assert len(list(dataset.read(out))) == 1
    if callable(getattr(dataset, "count", None)):
        assert dataset.count(out) in (1, None)
