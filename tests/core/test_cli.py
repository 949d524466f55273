"""The command line as a user runs it, including a third-party plugin from examples/."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
from doubles import DoublesPlugin

import spanaug_core.plugins
import spanaug_core.run
from spanaug_core.cli import main
from spanaug_core.plugins import Registry

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spanaug-slots"


@pytest.fixture
def cli_registry(monkeypatch) -> Registry:
    """The installed plugins plus the example plugin (imported) and the test doubles, as the CLI's registry."""
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    import spanaug_slots

    reg = Registry()
    reg.add_plugin(spanaug_slots, "slots")
    reg.add_plugin(DoublesPlugin(), "doubles")
    monkeypatch.setattr(spanaug_core.plugins, "default_registry", lambda: reg)
    monkeypatch.setattr(spanaug_core.run, "default_registry", lambda: reg)
    return reg


def test_example_plugin_declares_its_entry_point() -> None:
    meta = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["spanaug"] == {"slots": "spanaug_slots"}


def test_third_party_plugin_runs_through_spanaug_run(tmp_path, cli_registry, capsys) -> None:
    out = tmp_path / "out"
    args = ["run", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--decoder", "synonym",
            "--aligner", "diff", "--iterations", "3", "--output", str(out), "--filter", "copy", "--no-progress"]
    assert main(args) == 0
    assert "accepted" in capsys.readouterr().out
    records = [json.loads(line) for line in (out / "augmented.jsonl").read_text().splitlines()]
    # Line 2 has "buy" and "quickly": its slot "new york" is kept while the rest is paraphrased.
    texts = {r["text"] for r in records if r["source_id"] == "sample-2"}
    assert texts == {
        "i want to purchase a ticket to new york quickly",
        "i want to acquire a ticket to new york quickly",
        "i want to buy a ticket to new york rapidly",
    }
    assert all(r["spans"][0]["label"] == "toloc" for r in records if r["source_id"] == "sample-2")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["config"]["dataset"] == {"name": "slots"}
    # The same command again refuses to overwrite; with --resume it completes without duplicates.
    assert main(args) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert len((out / "augmented.jsonl").read_text().splitlines()) == len(records)


def test_user_errors_are_one_red_line(tmp_path, cli_registry, capsys) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("a b\tO\tx\n")
    code = main(["run", "--dataset", "slots", "--input", str(bad), "--decoder", "synonym", "--aligner", "diff",
                 "--output", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "bad.tsv:1: 2 tokens but 1 tags" in err and "Traceback" not in err
    assert main(["run", "--decoder", "vdbb", "--aligner", "diff", "--dataset", "slots", "--no-progress"]) == 2
    assert "unknown decoder 'vdbb'" in capsys.readouterr().err
    assert main(["run", "--set", "decoder.beam_size=0", "--decoder", "synonym", "--aligner", "diff", "--dataset", "slots",
                 "--output", str(tmp_path / "o2"), "--no-progress"]) == 2
    assert "decoder 'synonym': option 'beam_size'" in capsys.readouterr().err
    # --set outranks flags, so --filter beside --set filters=... would be dropped unseen.
    assert main(["run", "--filter", "copy", "--set", "filters=[novelty]", "--decoder", "synonym", "--aligner", "diff",
                 "--dataset", "slots", "--output", str(tmp_path / "o3"), "--no-progress"]) == 2
    assert "--filter and --set filters=[...] both give the filters list" in capsys.readouterr().err


def test_filter_flag_takes_options_as_a_mapping(tmp_path, cli_registry, capsys) -> None:
    base = ["run", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--decoder", "synonym",
            "--aligner", "diff", "--no-progress"]
    out = tmp_path / "out"
    assert main([*base, "--filter", "{name: novelty, ceiling: 0.5}", "--filter", "copy", "--output", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["filters"] == [{"name": "novelty", "ceiling": 0.5}, {"name": "copy"}]
    rejected = (out / "rejected.jsonl").read_text()
    assert "novelty: " in rejected and "> 0.5\"" in rejected
    capsys.readouterr()
    for bad in ("{ceiling: 0.5}", "[novelty]", "{name: novelty"):
        assert main([*base, "--filter", bad, "--output", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert "--filter" in err and repr(bad) in err and "Traceback" not in err


def test_per_round_flag_and_its_count_in_the_summary(tmp_path, cli_registry, capsys) -> None:
    args = ["run", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--decoder", "synonym",
            "--aligner", "diff", "--iterations", "1", "--no-progress"]
    assert main([*args, "--per-round", "2", "--output", str(tmp_path / "two")]) == 0
    summary = capsys.readouterr().out
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text())
    more = manifest["counts"]["more_records"]
    assert manifest["config"]["per_round"] == 2 and more > 0
    assert f"{more} a round's further record (per_round)" in summary
    assert main([*args, "--output", str(tmp_path / "one")]) == 0
    assert "further record" not in capsys.readouterr().out
    one, two = (len((tmp_path / d / "augmented.jsonl").read_text().splitlines()) for d in ("one", "two"))
    assert two == one + more
    assert main([*args, "--per-round", "30", "--output", str(tmp_path / "bad")]) == 2
    assert "per_round (30) is above top_m (20)" in capsys.readouterr().err


def test_list_table_and_json(cli_registry, capsys) -> None:
    assert main(["list", "--json", "--options"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {(r["kind"], r["name"]): r for r in rows}
    assert by_name[("dataset", "slots")]["plugin"] == "slots"
    assert "rewrite_slots" in by_name[("dataset", "slots")]["options"]["properties"]
    assert main(["list", "filter"]) == 0
    table = capsys.readouterr().out
    assert "max-iteration" in table and "jsonl" not in table


def test_option_types_read_as_written() -> None:
    from typing import Annotated, Literal

    from pydantic import Field

    from spanaug_core.cli import _type_name

    assert _type_name(Annotated[float, Field(gt=0)] | Literal["dev"] | None) == "float | 'dev' | None"
    assert _type_name(Literal["keep", "rewrite"]) == "'keep' | 'rewrite'"
    assert _type_name(Path | None) == "Path | None" and _type_name(int) == "int"


def test_convert_between_formats(tmp_path, cli_registry, capsys) -> None:
    jsonl = tmp_path / "x.jsonl"
    assert main(["convert", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--to", "jsonl", "--output", str(jsonl)]) == 0
    back = tmp_path / "back.tsv"
    assert main(["convert", "--dataset", "jsonl", "--input", str(jsonl), "--to", "slots", "--output", str(back)]) == 0
    assert back.read_text() == (EXAMPLE / "data" / "sample.tsv").read_text()


def test_a_dataset_option_has_the_same_spelling_in_convert_and_run(tmp_path, cli_registry, capsys) -> None:
    source = str(EXAMPLE / "data" / "sample.tsv")
    for spelling in ("encoding=utf-8", "dataset.encoding=utf-8"):
        out = tmp_path / f"{spelling}.jsonl"
        assert main(["convert", "--dataset", "slots", "--input", source, "--to", "jsonl", "--to-set", spelling, "--output", str(out)]) == 0
    assert main(["convert", "--dataset", "slots", "--input", source, "--to", "jsonl", "--to-set", "dataset.encodng=utf-8",
                 "--output", str(tmp_path / "x.jsonl")]) == 2
    assert "unknown option 'encodng'" in capsys.readouterr().err


def test_an_unknown_option_suggests_the_right_one_or_its_component(tmp_path, cli_registry, capsys) -> None:
    base = ["run", "--decoder", "synonym", "--aligner", "diff", "--dataset", "slots", "--output", str(tmp_path / "o"), "--no-progress"]
    assert main([*base, "--set", "aligner.treshold=0.4"]) == 2
    assert "Did you mean 'threshold'?" in capsys.readouterr().err
    assert main([*base, "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "engine 'local': unknown option 'workers'" in err and "option of engine 'ray'" in err and "choose that engine" in err
    assert not (tmp_path / "o").exists()


def test_convert_sample_and_rest(tmp_path, cli_registry, capsys) -> None:
    every = tmp_path / "all.jsonl"
    assert main(["convert", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--to", "jsonl", "--output", str(every)]) == 0
    ids = [json.loads(line)["id"] for line in every.read_text().splitlines()]
    base = ["convert", "--dataset", "jsonl", "--input", str(every), "--to", "jsonl"]
    picked, rest = tmp_path / "s.jsonl", tmp_path / "r.jsonl"
    assert main([*base, "--output", str(picked), "--sample", "2", "--seed", "3", "--rest", str(rest)]) == 0
    chosen = [json.loads(line)["id"] for line in picked.read_text().splitlines()]
    others = [json.loads(line)["id"] for line in rest.read_text().splitlines()]
    assert len(chosen) == 2 and sorted(chosen + others) == sorted(ids) and chosen == [i for i in ids if i in chosen]
    again = tmp_path / "again.jsonl"
    assert main([*base, "--output", str(again), "--sample", "2", "--seed", "3"]) == 0
    assert again.read_text() == picked.read_text()  # the seed fixes the sample
    capsys.readouterr()
    assert main([*base, "--output", str(again), "--sample", str(len(ids) + 1)]) == 2
    assert f"holds only {len(ids)} examples" in capsys.readouterr().err
    assert main([*base, "--output", str(again), "--rest", str(rest)]) == 2
    assert "--rest needs --sample" in capsys.readouterr().err
    # One path for both would keep only the second set written.
    fresh = tmp_path / "fresh.jsonl"
    assert main([*base, "--output", str(fresh), "--sample", "2", "--rest", str(tmp_path / "." / "fresh.jsonl")]) == 2
    assert "--rest names the --output path" in capsys.readouterr().err and not fresh.exists()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["convert", "--dataset", "jsonl", "--input", str(empty), "--to", "jsonl", "--output", str(fresh)]) == 0
    assert f"wrote 0 examples to {fresh}: {empty} holds no examples" in capsys.readouterr().err


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; from spanaug_core.cli import main; rc = main(['list']);"
        "heavy = [m for m in ('torch', 'transformers', 'spacy', 'nltk') if m in sys.modules];"
        "print(heavy); sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_convert_with_sources_writes_what_the_run_read_then_its_records(tmp_path, cli_registry, capsys) -> None:
    out = tmp_path / "run"
    assert main(["run", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--decoder", "synonym",
                 "--aligner", "diff", "--iterations", "1", "--limit", "2", "--output", str(out), "--no-progress"]) == 0
    records = [json.loads(line)["id"] for line in (out / "augmented.jsonl").read_text().splitlines()]
    both = tmp_path / "train.jsonl"
    assert main(["convert", "--dataset", "jsonl", "--input", str(out / "augmented.jsonl"), "--with-sources", "--to", "jsonl",
                 "--output", str(both)]) == 0
    ids = [json.loads(line)["id"] for line in both.read_text().splitlines()]
    assert ids == ["sample-1", "sample-2", *records] and records  # the run's --limit 2 holds for its sources too
    capsys.readouterr()
    assert main(["convert", "--dataset", "jsonl", "--input", str(both), "--with-sources", "--to", "jsonl", "--output", str(tmp_path / "x.jsonl")]) == 2
    assert f"{tmp_path / 'manifest.json'}: expected the manifest.json of the run whose records these are" in capsys.readouterr().err


def test_convert_refuses_a_writer_that_wrote_beside_the_path_it_was_given(tmp_path, cli_registry, capsys) -> None:
    """A brat-like writer deriving its files from the path (x.ann -> x.txt) writes under the temporary name:
    convert must not report an output that does not exist."""
    from spanaug_core.hookspecs import hookimpl
    from spanaug_core.protocols import ComponentConfig

    class Standoff:
        """Writes NAME.txt beside the NAME.ann it is given (wrongly)."""

        name = "standoff"

        class Config(ComponentConfig):
            pass

        def __init__(self, config: Config) -> None:
            self.config = config

        def read(self, path):
            return iter(())

        def write(self, examples, path) -> int:
            examples = list(examples)
            Path(path).with_suffix(".txt").write_text("".join(" ".join(e.tokens) + "\n" for e in examples))
            return len(examples)

    class Plugin:
        @hookimpl
        def register_datasets(self, register) -> None:
            register(Standoff)

    cli_registry.add_plugin(Plugin(), "standoff")
    output = tmp_path / "rt.ann"
    before = sorted(p.name for p in tmp_path.iterdir())
    args = ["convert", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--to", "standoff", "--output", str(output)]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert f"wrote nothing at the path it was given, so {output} would not exist" in captured.err
    assert "wrote" not in captured.err.replace("wrote nothing", "")
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nor the hidden .rt.ann.txt it wrote


def test_resume_of_a_missing_folder_says_it_starts_a_new_run_and_last_lines_stay_whole(tmp_path, cli_registry, capsys) -> None:
    out = tmp_path / "typo"
    args = ["run", "--dataset", "slots", "--input", str(EXAMPLE / "data" / "sample.tsv"), "--decoder", "synonym",
            "--aligner", "diff", "--iterations", "1", "--output", str(out), "--no-progress", "--resume"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert f"--resume: {out} is not there, so there is no run to continue; starting a new run in it" in captured.err
    # Piped or logged, the summary is one line however long (rich would wrap it at 80 columns).
    done = [line for line in captured.out.splitlines() if line.startswith("done:")]
    assert len(done) == 1 and "stopped early:" in done[0] and done[0].endswith(f"{out}/augmented.jsonl")
    assert main(args) == 0  # a real run to continue now: no note
    assert "no run to continue" not in capsys.readouterr().err


def test_list_shows_the_run_presets_each_dataset_offers(cli_registry, capsys) -> None:
    assert main(["list", "presets"]) == 0
    table = capsys.readouterr().out
    assert "run presets" in table and "spanaug components" not in table and "precise" in table
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    presets = {(r["dataset"], r["name"]): r for r in rows if r["kind"] == "preset"}
    assert {("framenet", "precise"), ("framenet", "more"), ("conll-srl", "precise"), ("conll-ner", "more"), ("jsonl", "precise")} <= set(presets)
    assert "frame-lexicon" in presets[("framenet", "precise")]["settings"]["filters"]
    assert any(r["kind"] == "dataset" for r in rows)  # the components too


def test_an_error_with_brackets_prints_them(tmp_path, capsys) -> None:
    """Messages are text, not rich markup: "[frame-lexicon" must not vanish as an unknown tag."""
    assert main(["run", "--dataset", "jsonl", "--input", str(tmp_path / "x.jsonl"), "--output", str(tmp_path / "o"),
                 "--set", "filters=[frame-lexicon"]) == 2
    assert "error: --set filters: '[frame-lexicon' is not a valid YAML list or table" in capsys.readouterr().err


def _every_command(group: click.Group, ctx: click.Context, path: str = "spanaug"):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        sub = click.Context(command, parent=ctx, info_name=name)
        yield f"{path} {name}", command, sub
        if isinstance(command, click.Group):
            yield from _every_command(command, sub, f"{path} {name}")


def test_every_command_takes_out_and_output_alike_and_overwrite_for_replacing() -> None:
    # Users carry a spelling from one command to the next: an output path is --out or
    # --output on every command, and replacing an output is --overwrite (models fetch's
    # --force re-fetches the cache instead and keeps its own name).
    from spanaug_core.cli import _load_plugin_commands, cli

    _load_plugin_commands()
    seen = 0
    for path, command, ctx in _every_command(cli, click.Context(cli, info_name="spanaug")):
        for param in command.get_params(ctx):
            names = set(param.opts) | set(param.secondary_opts)
            if names & {"--out", "--output"}:
                seen += 1
                assert {"--out", "--output"} <= names, f"{path}: {sorted(names)}"
            if "--force" in names and path != "spanaug models fetch":
                assert "--overwrite" in names, f"{path}: {sorted(names)}"
    assert seen >= 15
