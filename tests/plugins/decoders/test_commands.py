"""`spanaug decode` over the scripted decoder: its output file, its input lines and its help."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from spanaug_core.cli import main
from spanaug_core.protocols import DecoderConfig


@pytest.fixture
def decode(doubles_cli) -> Callable[..., int]:
    """``decode(ARGS...)``: ``spanaug decode --decoder synonym --no-expand ARGS...``."""
    return lambda *args: main(["decode", "--decoder", "synonym", "--no-expand", *(str(a) for a in args)])


def test_an_existing_output_is_refused_before_the_decoder_is_made(decode, doubles_cli, monkeypatch, tmp_path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("earlier\n")
    made: list[str] = []
    create = doubles_cli.create
    monkeypatch.setattr(doubles_cli, "create", lambda kind, *args, **kwargs: made.append(kind) or create(kind, *args, **kwargs))
    assert decode("they buy a car", "--output", out) == 2
    assert capsys.readouterr().err == f"error: {out} exists; pass --overwrite to replace it, or choose another output\n"
    assert out.read_text() == "earlier\n" and made == []
    assert decode("they buy a car", "--output", out, "--overwrite") == 0
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["source"] == "they buy a car" and line["nbest"][0]["text"] == "they purchase a car"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temporary left beside it


def test_input_lines_name_their_keys_and_a_bare_string_is_no_list(decode, tmp_path, capsys) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('they buy a car\n{"text": "we buy it", "avoid": ["purchase"], "include": []}\n')
    assert decode("--input", source) == 0
    first, second = (json.loads(x) for x in capsys.readouterr().out.splitlines())
    assert first["source"] == "they buy a car" and second["avoid"] == ["purchase"]
    assert [c["text"] for c in second["nbest"]] == ["we acquire it"]
    source.write_text('{"text": "we buy it", "avoid": "purchase"}\n')
    assert decode("--input", source) == 2
    assert capsys.readouterr().err == f'error: {source}:1: "avoid" must be a list of phrases, e.g. ["the car"]\n'


def test_the_help_shows_the_decoder_settings_own_words_and_defaults(capsys) -> None:
    assert main(["decode", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert f"--beam INTEGER {DecoderConfig.model_fields['beam_size'].description} [default: {DecoderConfig().beam_size}]" in shown
    assert "hub id" in shown and '{"text": ..., "avoid": [...], "include": [...]}' in shown and "--overwrite" in shown
