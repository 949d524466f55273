"""The decoders plugin's presets and commands: registered, complete, and usable from `spanaug decode`."""

from __future__ import annotations

import json

import pytest

from spanaug_core.cli import main
from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ConstrainedDecoder
from spanaug_decoders.presets import PARAPHRASERS

PRESETS = {preset.name: preset for preset in PARAPHRASERS}


def test_the_default_paraphraser_is_joined_from_22_parts():
    assert len(PRESETS["qwen2.5-coder-1.5b-instruct"].pypi) == 22


def test_decoders_are_registered_and_satisfy_the_protocol(installed_registry):
    for name in ("vdba", "hf-beam"):
        decoder = installed_registry.create("decoder", name)
        assert isinstance(decoder, ConstrainedDecoder) and decoder.config.beam_size == 10


def test_a_wrong_avoid_hint_is_refused_before_any_model_loads(installed_registry):
    assert installed_registry.create("decoder", "vdba").config.avoid_hint.count("{avoid}") == 1
    assert installed_registry.create("decoder", "vdba", avoid_hint="").config.avoid_hint == ""
    for hint, found in (("Do not use {words}.", "'words'"), ("Do not use them.", "none"), ("{avoid} in {text}", "'avoid', 'text'")):
        with pytest.raises(ConfigError, match=f"avoid_hint.*found \\[?{found}"):
            installed_registry.create("decoder", "vdba", avoid_hint=hint)
    # {prefer} is where a lexicon's words go: allowed, not required.
    assert installed_registry.create("decoder", "vdba").config.avoid_hint.count("{prefer}") == 1
    assert installed_registry.create("decoder", "vdba", avoid_hint="Not {avoid}.").config.avoid_hint == "Not {avoid}."
    with pytest.raises(ConfigError, match="prefer_hint.*found \\['avoid'\\]"):
        installed_registry.create("decoder", "vdba", prefer_hint=" (like {avoid})")
    with pytest.raises(ConfigError, match="avoid_hint.*the hint is not a format string.*literal brace"):
        installed_registry.create("decoder", "vdba", avoid_hint="Replace {avoid")


def test_decode_input_errors_name_the_line(tmp_path, capsys):
    bad = tmp_path / "in.jsonl"
    bad.write_text('{"text": "ok"}\n{"txt": "x"}\n')
    assert main(["decode", "--no-expand", "--input", str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err


@pytest.mark.real_model
def test_decode_command_on_the_small_real_model(tmp_path, capsys):
    if PRESETS["smollm2-135m-instruct"].cached() is None:
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
    if PRESETS["qwen2.5-coder-1.5b-instruct"].cached() is None:
        pytest.skip("preset qwen2.5-coder-1.5b-instruct is not in the cache (spanaug models fetch qwen2.5-coder-1.5b-instruct)")
    out = tmp_path / "out.jsonl"
    args = ["decode", "--model", "qwen2.5-coder-1.5b-instruct", "--avoid", "corroborate", "--beam", "4",
            "--nbest", "2", "--output", str(out), "The committee will corroborate the account."]
    assert main(args) == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert {"corroborates", "corroborated", "Corroborate"} <= set(line["avoid"]) and line["nbest"]
    assert all("corroborat" not in c["text"].lower() and c["text"].endswith(".") for c in line["nbest"])
