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
    with pytest.raises(ConfigError, match=r"setting 'iterations' \(from a flag\): .*greater than or equal to 1 \(got 0\)"):
        load_run_config(None, {"iterations": 0})
    with pytest.raises(ConfigError, match=r"unknown setting 'iteratons' \(from --set\); did you mean 'iterations'\?"):
        load_run_config(None, {}, ["iteratons=3"])
    bad = tmp_path / "bad.toml"
    bad.write_text("iterations = [")
    with pytest.raises(ConfigError, match=r"config file .*bad.toml"):
        load_run_config(bad)
    # A bad value is blamed on where it came from, not on the config file beside it.
    good = tmp_path / "good.toml"
    good.write_text("iterations = 2\ntop-m = 3\n")
    with pytest.raises(ConfigError, match=r"unknown setting 'top-m' \(from .*good.toml\); did you mean 'top_m'\?"):
        load_run_config(good)
    good.write_text("iterations = 2\n")
    with pytest.raises(ConfigError, match=r"^run config: setting 'iterations' \(from --set\)"):
        load_run_config(good, {}, ["iterations=0"])
    with pytest.raises(ConfigError, match=r"setting 'decoder' \(from --set\): expected a name, or a table with its name and options \(got None\)"):
        load_run_config(None, {}, ["decoder="])


def test_yaml_slips_are_one_line_with_the_file_line_and_column(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("top_m: [3\nbeam: 2\n")
    with pytest.raises(ConfigError, match=r"^config file .*run.yaml: while parsing a flow sequence: .*\(at line 2, column 5\)$"):
        load_run_config(config)
    config.write_text("iterations: 2\niterations: 3\n")  # TOML refuses it; YAML would keep the second silently
    with pytest.raises(ConfigError, match=r"run.yaml: the key 'iterations' is given twice \(at line 2, column 1\)"):
        load_run_config(config)
    # A --set value that opens a list or a table and does not close it is a slip, not a name.
    with pytest.raises(ConfigError, match=r"^--set filters: '\[frame-lexicon' is not a valid YAML list or table"):
        parse_assignments(["filters=[frame-lexicon"])
    assert parse_assignments(["input=a: b: c"]) == {"input": "a: b: c"}  # text YAML cannot read stays text
    # ...so does text that merely starts with a bracket: a prompt, a pattern.
    assert parse_assignments(["decoder.prompt={text} - rewrite it", "x=[A-Z]+"]) == {"decoder": {"prompt": "{text} - rewrite it"}, "x": "[A-Z]+"}
    # YAML's merge keys still merge, a duplicate aside.
    config.write_text("base: &b {beam_size: 4}\ndecoder:\n  <<: *b\n  name: vdba\n")
    from spanaug_core.config import load_file

    assert load_file(config)["decoder"] == {"beam_size": 4, "name": "vdba"}
    with pytest.raises(ConfigError, match="does not exist"):
        load_run_config(tmp_path / "none.toml")


def test_options_without_a_name_tune_a_section_s_default_or_await_the_suggested_one() -> None:
    from spanaug_core.config import SUGGESTED

    config = load_run_config(None, {}, ["aligner.threshold=0.4", "lexicon.words=2"])
    assert (config.aligner.name, config.aligner.options) == ("bert-span", {"threshold": 0.4})
    # The lexicon has no default: the dataset's suggestion names it when the run starts (run.with_suggested_settings).
    assert (config.lexicon.name, config.lexicon.options) == (SUGGESTED, {"words": 2})
