"""Shortcut flags of `spanaug run` come from the settings that declare them: one default, one place."""

from __future__ import annotations

import json

import pytest
from pydantic import Field

from spanaug_core.cli import main
from spanaug_core.config import RunConfig
from spanaug_core.errors import SpanaugError
from spanaug_core.cli import run_flags
from spanaug_core.flags import flag
from spanaug_core.hookspecs import hookimpl
from spanaug_core.protocols import DecoderConfig
from spanaug_decoders.decoders import VDBADecoder


def by_name(registry) -> dict:
    return {f.names[0]: f for f in run_flags(registry)}


def test_a_flag_shows_the_default_of_the_setting_it_sets(installed_registry) -> None:
    flags = by_name(installed_registry)
    assert flags["--beam"].setting == "decoder.beam_size" and flags["--beam"].type is int
    assert f"[default: {VDBADecoder.Config().beam_size}]" in flags["--beam"].help
    assert f"[default: {VDBADecoder.Config().model}]" in flags["--model"].help
    assert f"[default: {RunConfig().iterations}]" in flags["--iterations"].help
    assert flags["--decoder"].setting == "decoder.name" and "[default: vdba]" in flags["--decoder"].help
    assert flags["--output"].names == ("--output", "--out", "-o")
    # A flag only a non-default component declares says whose it is.
    assert flags["--workers"].setting == "engine.workers" and flags["--workers"].help.startswith("ray: ")
    assert flags["--chain"].type is bool


def test_batch_size_is_the_decoders_and_says_what_it_does(installed_registry) -> None:
    flags = by_name(installed_registry)
    assert flags["--batch-size"].setting == "decoder.batch_size"
    assert "a decoder without a stream is handed this many per call" in flags["--batch-size"].help
    assert f"[default: {VDBADecoder.Config().batch_size}]" in flags["--batch-size"].help
    assert "batch_size" not in RunConfig.model_fields  # one name, one meaning: the decoder's


class _Plugin:
    def __init__(self, *decoders: type) -> None:
        self.decoders = decoders

    @hookimpl
    def register_decoders(self, register):
        for cls in self.decoders:
            register(cls)


def _decoder(name: str, **fields) -> type:
    config = type("Config", (DecoderConfig,), {"__annotations__": {k: int for k in fields}, **fields})
    return type(name.title(), (), {"name": name, "Config": config, "__init__": lambda self, c: setattr(self, "config", c),
                                   "decode": lambda self, requests, nbest: [[] for _ in requests], "__doc__": "a decoder"})


def test_a_plugin_declares_a_flag_where_it_defines_the_option(registry) -> None:
    registry.add_plugin(_Plugin(_decoder("wide", width=Field(default=3, description="how wide", json_schema_extra=flag("--width")))), "wide")
    flags = by_name(registry)
    assert flags["--width"].setting == "decoder.width" and flags["--width"].help == "wide: how wide (sets decoder.width)  [default: 3]"


def test_two_settings_claiming_one_flag_name_both(registry) -> None:
    registry.add_plugin(_Plugin(_decoder("beamy", beams=Field(default=3, json_schema_extra=flag("--beam")))), "beamy")
    with pytest.raises(SpanaugError, match="--beam is declared for both decoder.beam_size and decoder.beams"):
        run_flags(registry)


def test_flags_set_their_settings_through_the_cli(tmp_path, capsys) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"id": "a", "tokens": ["The", "panel", "will", "confirm", "it", "."],
                                "spans": [{"start": 3, "end": 4, "label": "Verify", "role": "target"}]}) + "\n")
    # --beam reaches decoder.beam_size: a value out of range is refused by the decoder's own Config.
    args = ["run", "--dataset", "jsonl", "--input", str(data), "--beam", "0", "-o", str(tmp_path / "out"), "--no-progress"]
    assert main(args) == 2
    assert "decoder 'vdba': option 'beam_size'" in capsys.readouterr().err
