"""Run configuration: files, flags, --set overrides and their precedence; readable errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from spanaug_core.config import load_run_config, parse_assignments
from spanaug_core.errors import ConfigError


def test_defaults_are_the_main_job() -> None:
    config = load_run_config()
    assert (config.dataset.name, config.decoder.name, config.aligner.name, config.expander.name) == (
        "framenet",
        "vdba",
        "bert-span",
        "inflect",
    )
    assert config.iterations == 10 and config.top_m == 20


def test_precedence_file_then_flags_then_set(tmp_path: Path) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text(
        'iterations = 5\ntop_m = 3\n[decoder]\nname = "vdba"\nbeam_size = 30\nmodel = "smollm2-135m-instruct"\n'
        '[[filters]]\nname = "max-iteration"\nmax_iteration = 2\n'
    )
    config = load_run_config(toml, {"iterations": 7, "decoder.beam_size": None}, ["decoder.beam_size=8", "aligner.threshold=0.4"])
    assert config.iterations == 7 and config.top_m == 3
    assert config.decoder.name == "vdba"
    assert config.decoder.options == {"beam_size": 8, "model": "smollm2-135m-instruct"}
    assert config.aligner.name == "bert-span" and config.aligner.options == {"threshold": 0.4}
    assert config.filters[0].name == "max-iteration" and config.filters[0].options == {"max_iteration": 2}


def test_yaml_file_and_name_shorthand(tmp_path: Path) -> None:
    yml = tmp_path / "run.yaml"
    yml.write_text("decoder: hf-beam\nfilters: [copy]\nkeep_roles: [entity]\n")
    config = load_run_config(yml, {}, ["decoder.beam_size=4"])
    assert config.decoder.name == "hf-beam" and config.decoder.options == {"beam_size": 4}
    assert [f.name for f in config.filters] == ["copy"] and config.keep_roles == ["entity"]


def test_set_values_are_typed() -> None:
    assert parse_assignments(["a.b=8", "c=0.5", "d=true", "e=[x, y]", "f=text"]) == {
        "a": {"b": 8},
        "c": 0.5,
        "d": True,
        "e": ["x", "y"],
        "f": "text",
    }
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_assignments(["beam"])


def test_errors_name_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"setting 'iterations': .*greater than or equal to 1 \(got 0\)"):
        load_run_config(None, {"iterations": 0})
    with pytest.raises(ConfigError, match=r"unknown setting 'iteratons'"):
        load_run_config(None, {}, ["iteratons=3"])
    bad = tmp_path / "bad.toml"
    bad.write_text("iterations = [")
    with pytest.raises(ConfigError, match=r"config file .*bad.toml"):
        load_run_config(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_run_config(tmp_path / "none.toml")


def test_options_without_a_name_tune_a_section_s_default_or_await_the_suggested_one() -> None:
    from spanaug_core.config import SUGGESTED

    config = load_run_config(None, {}, ["aligner.threshold=0.4", "lexicon.words=2"])
    assert (config.aligner.name, config.aligner.options) == ("bert-span", {"threshold": 0.4})
    # The lexicon has no default: the dataset's suggestion names it when the run starts (run.with_suggested_settings).
    assert (config.lexicon.name, config.lexicon.options) == (SUGGESTED, {"words": 2})
