"""Shared fixtures: a fresh plugin registry per test, the command line over the doubles, a disk that fails on cue, and paths to optional real resources."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from doubles import DoublesPlugin
from faults import Disk

import spanaug_core.plugins
import spanaug_core.run
from spanaug_core.plugins import Registry

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def registry() -> Registry:
    """An empty registry: tests register their plugins inline with ``registry.add_plugin``."""
    return Registry(entry_points=False)


@pytest.fixture
def doubles_cli(monkeypatch) -> Registry:
    """The command line's registry: the installed plugins and the scripted decoder and aligner (``doubles``)."""
    registry = Registry()
    registry.add_plugin(DoublesPlugin(), "doubles")
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: registry)
    monkeypatch.setattr(spanaug_core.run, "default_registry", lambda: registry)
    return registry


@pytest.fixture
def disk(monkeypatch) -> Disk:
    """File operations that raise a full disk's (or a read-only folder's) error when told to (``faults.Disk``)."""
    return Disk(monkeypatch)


@pytest.fixture
def installed_registry() -> Registry:
    """A fresh registry of the installed plugins (entry points), not shared with other tests."""
    return Registry()


def shared_archive(name: str) -> Path:
    """The archive ``name`` in ../shared/data, or skip the test that asked."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"real data {name} not found in {SHARED_DATA} (only on the project's machines)")
    return path


@pytest.fixture
def shared_data():
    """``shared_data("conll2003.tar.xz")``: the archive's path in ../shared/data, or skip the test."""
    return shared_archive


@pytest.fixture(scope="session")
def shared_unpacked(tmp_path_factory):
    """``shared_unpacked("wnut17.tar.xz")``: the whole archive unpacked, once a session, in a temporary folder (or skip)."""
    unpacked: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in unpacked:
            archive = shared_archive(name)
            folder = tmp_path_factory.mktemp(name.split(".")[0])
            with tarfile.open(archive) as tar:
                tar.extractall(folder, filter="data")
            unpacked[name] = folder
        return unpacked[name]

    return get


@pytest.fixture
def shared_member(shared_data, tmp_path):
    """``shared_member("conll2003.tar.xz", "eng.testa")``: that file of the archive, extracted under tmp_path (or skip)."""

    def get(archive: str, suffix: str) -> Path:
        with tarfile.open(shared_data(archive)) as tar:
            member = next(m for m in tar.getmembers() if m.name.endswith(suffix))
            tar.extract(member, tmp_path, filter="data")
        return tmp_path / member.name

    return get

