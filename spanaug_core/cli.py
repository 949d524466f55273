"""The ``spanaug`` command: core sub-commands plus whatever plugins add.

The core owns ``run``, ``list`` and ``convert``, and ``train --trainer NAME`` (any
registered trainer); ``train`` and ``eval`` are also groups that plugins fill
(``spanaug train aligner``, ``spanaug eval framenet-lus``). Plugins add
commands through the ``register_commands(cli)`` hook. A ``SpanaugError`` becomes one red
line and exit status 2; set ``SPANAUG_DEBUG=1`` to see tracebacks instead.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import click

from spanaug_core import __version__
from spanaug_core.console import error, note, out_console
from spanaug_core.errors import SpanaugError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="spanaug")
def cli() -> None:
    """Grow span-labeled datasets by iterative constrained paraphrasing and span alignment."""


class SettingOption(click.Option):
    """A shortcut flag that sets one run setting (generated, see spanaug_core.flags)."""

    def __init__(self, names: tuple[str, ...], setting: str, value_type: type, help: str) -> None:
        dest = setting.replace(".", "__")
        if value_type is bool:
            long = names[0].removeprefix("--")
            super().__init__([f"{names[0]}/--no-{long}", *names[1:], dest], default=None, help=help)
        else:
            click_type = click.Path(path_type=Path) if value_type is Path else value_type
            super().__init__([*names, dest], type=click_type, metavar=setting.rsplit(".", 1)[-1].upper(), help=help)
        self.setting = setting


class RunCommand(click.Command):
    """``spanaug run``: its shortcut flags come from the settings that declare one, on first use."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not any(isinstance(p, SettingOption) for p in self.params):
            from spanaug_core.flags import run_flags
            from spanaug_core.plugins import default_registry

            generated = [SettingOption(f.names, f.setting, f.type, f.help) for f in run_flags(default_registry())]
            self.params[:0] = generated
        return super().get_params(ctx)


@cli.command("run", cls=RunCommand)
@click.option("--filter", "filters", multiple=True, metavar="NAME", help="keep only records this filter accepts (repeatable; all must accept)")
@click.option("--resume", is_flag=True, help="continue an interrupted run in --output")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="run config file (.toml, .yaml)")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="override any setting, e.g. decoder.beam_size=8 or aligner.threshold=0.4")
@click.option("--progress/--no-progress", default=None, help="show a progress bar  [default: when stderr is a terminal]")
def run_command(
    config_file: Path | None,
    assignments: tuple[str, ...],
    filters: tuple[str, ...],
    resume: bool,
    progress: bool | None,
    **flags: object,
) -> None:
    """Augment a dataset: paraphrase each labeled span under growing constraints and align it back.

    Writes OUT/augmented.jsonl (accepted records), OUT/rejected.jsonl (filtered records and
    why each span stopped) and OUT/manifest.json (config, versions, counts, timings). Any
    component option can be set with --set COMPONENT.OPTION=VALUE; `spanaug list --options`
    shows them. Settings come from defaults < --config file < flags < --set.
    """
    from spanaug_core.config import load_run_config, parse_assignments
    from spanaug_core.console import progress_callback
    from spanaug_core.run import execute, signals_as_interrupts, with_suggested_settings

    settings = {p.name: p.setting for p in click.get_current_context().command.params if isinstance(p, SettingOption)}
    dotted = {settings[k]: v for k, v in flags.items()}
    if filters:
        # --set wins over flags, so the two together would drop the --filter names unseen.
        if "filters" in parse_assignments(assignments):
            raise click.UsageError("--filter and --set filters=[...] both give the filters list; name them all in one of the two")
        dotted["filters"] = list(filters)
    config, suggested = with_suggested_settings(load_run_config(config_file, dotted, assignments))
    for key, value in suggested.items():
        shown = value.model_dump() if hasattr(value, "model_dump") else value  # a component, as a config file writes it
        note(f"{key} = {shown!r}: the {config.dataset.name} dataset's suggestion (set {key} to override it)")
    try:
        with signals_as_interrupts(), progress_callback("examples", enabled=progress) as on_progress:
            summary = execute(config, resume=resume, progress=on_progress)
    except KeyboardInterrupt:
        note(f"interrupted: {config.output} holds every record committed so far; continue with --resume")
        raise
    counts = summary.counts
    stopped = ", ".join(f"{k} {v}" for k, v in sorted(counts.get("stopped", {}).items())) or "none"
    runners_up = f" ({counts['filtered_choices']} of them a runner-up the filters accepted)" if counts.get("filtered_choices") else ""
    skipped = f" ({counts['skipped_spans']} more left alone by skip_labels or skip_pos)" if counts.get("skipped_spans") else ""
    out_console.print(
        f"[bold green]done[/]: {counts['examples']} examples, {counts['jobs']} spans{skipped} -> "
        f"{counts['accepted']} accepted{runners_up}, {counts['rejected']} rejected; stopped early: {stopped}; "
        f"decode {counts['decode_s']:.1f}s, align {counts['align_s']:.1f}s, score {counts['score_s']:.1f}s -> {summary.output}/augmented.jsonl"
    )


@cli.command("list")
@click.argument("kind", required=False)
@click.option("--options", is_flag=True, help="show each component's options (type, default, description)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def list_command(kind: str | None, options: bool, as_json: bool) -> None:
    """List the registered components (datasets, expanders, decoders, aligners, filters, lexicons, trainers, engines)."""
    import json

    from rich.table import Table

    from spanaug_core.plugins import default_registry

    entries = default_registry().entries(kind)
    if as_json:
        rows = []
        for e in entries:
            row: dict[str, object] = {"kind": e.kind, "name": e.name, "plugin": e.plugin, "description": e.description}
            if options:
                row["options"] = e.cls.Config.model_json_schema()
            rows.append(row)
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="spanaug components", show_lines=options)
    for col in ("kind", "name", "plugin", "description"):
        table.add_column(col, overflow="fold")
    for e in entries:
        desc = e.description
        if options:
            desc += "".join(f"\n  [cyan]{line}[/]" for line in _option_lines(e.cls.Config))
        table.add_row(e.kind, e.name, e.plugin, desc)
    out_console.print(table)


def _option_lines(config: type) -> list[str]:
    lines = []
    for field_name, info in config.model_fields.items():
        ann = info.annotation
        type_name = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
        default = "required" if info.is_required() else repr(info.get_default(call_default_factory=True))
        extra = f" - {info.description}" if info.description else ""
        lines.append(f"{field_name}: {type_name} = {default}{extra}")
    return lines or ["(no options)"]


EXISTING_PATH = click.Path(exists=True, path_type=Path)
# Every command that writes a file takes this flag: outputs are written all or nothing
# (spanaug_core.files.atomic_output) and an existing one is refused without it.
overwrite_option = click.option("--overwrite", is_flag=True, help="replace the output if it exists")


def component_options(assignments: tuple[str, ...], components: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """``--set COMPONENT.OPTION=VALUE`` pairs as options per component (each of ``components`` present)."""
    from spanaug_core.config import parse_assignments
    from spanaug_core.errors import ConfigError

    sets = parse_assignments(assignments)
    for key, value in sets.items():
        if key not in components or not isinstance(value, dict):
            expected = " or ".join(f"{c}.OPTION=VALUE" for c in components)
            raise ConfigError(f"--set {key}: expected {expected}")
    return {c: sets.get(c, {}) for c in components}


def options_of(kind: str, assignments: tuple[str, ...]) -> dict[str, object]:
    """One component's options from ``--set``: ``OPTION=V``, or ``KIND.OPTION=V`` as ``spanaug run`` spells it."""
    from spanaug_core.config import merge, parse_assignments

    sets = parse_assignments(assignments)
    prefixed = sets.pop(kind, {})
    if not isinstance(prefixed, dict):
        raise click.UsageError(f"--set {kind}={prefixed}: name the {kind} with --{kind}; --set takes its options")
    return merge(sets, prefixed)


@cli.group("train", invoke_without_command=True)
@click.option("--trainer", "trainer_name", help="downstream trainer (see `spanaug list trainer`), e.g. ner or srl")
@click.option("--dataset", help="format of the data files (a dataset name, e.g. conll-ner, conll-srl, jsonl)")
@click.option("--train", "train_path", type=EXISTING_PATH, help="training data")
@click.option("--dev", "dev_path", type=EXISTING_PATH, help="dev data: early stopping and model selection")
@click.option("--test", "test_path", type=EXISTING_PATH, help="test data, scored once with the saved model")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="folder for the model and metrics.json")
@click.option(
    "--set", "assignments", multiple=True, metavar="KEY=VALUE",
    help="trainer.OPTION=VALUE or dataset.OPTION=VALUE, e.g. trainer.epochs=10",
)
@click.option("--progress/--no-progress", default=None, help="show progress bars  [default: when stderr is a terminal]")
@click.pass_context
def train_group(
    ctx: click.Context,
    trainer_name: str | None,
    dataset: str | None,
    train_path: Path | None,
    dev_path: Path | None,
    test_path: Path | None,
    out: Path | None,
    assignments: tuple[str, ...],
    progress: bool | None,
) -> None:
    """Train a downstream model: `spanaug train --trainer ner --dataset conll-ner --train F --dev F --out DIR`.

    Writes the trainer's model folder and OUT/metrics.json (dev scores, and test scores
    with --test). Plugins add other training as sub-commands (e.g. `spanaug train aligner`).
    """
    if ctx.invoked_subcommand is not None:
        return
    flags = (("--trainer", trainer_name), ("--dataset", dataset), ("--train", train_path), ("--out", out))
    missing = [flag for flag, value in flags if value is None]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or name a sub-command; see --help)")
    import json

    from spanaug_core.console import progress_callback
    from spanaug_core.plugins import default_registry

    sets = component_options(assignments, ("trainer", "dataset"))
    registry = default_registry()
    reader = registry.create("dataset", dataset, **sets["dataset"])
    trainer = registry.create("trainer", trainer_name, **sets["trainer"])
    evaluate = getattr(trainer, "evaluate", None)
    if test_path is not None and not callable(evaluate):
        raise SpanaugError(f"trainer '{trainer_name}' has no evaluate(model_dir, examples); drop --test and score its predictions")
    with progress_callback(enabled=progress) as on_progress:
        dev = reader.read(dev_path) if dev_path is not None else None
        metrics = dict(trainer.train(reader.read(train_path), dev, out, on_progress))
    if test_path is not None:
        metrics.update({f"test_{k}": v for k, v in evaluate(out, reader.read(test_path)).items()})
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    shown = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items() if k.endswith("f1") or k == "epochs_run")
    out_console.print(f"[bold green]done[/]: {trainer_name} model saved in {out}; {shown or 'no dev scores'}")


@cli.group("eval")
def eval_group() -> None:
    """Evaluate a run or a model (sub-commands come from plugins)."""


@cli.group("convert", invoke_without_command=True)
@click.option("--dataset", "dataset", help="format of the input (a dataset name; `jsonl` is spanaug's own)")
@click.option("--input", "input_path", type=click.Path(path_type=Path), help="file or folder to read")
@click.option("--to", "to", help="format to write (a dataset name that can write, e.g. jsonl)")
@click.option("--output", "output", type=click.Path(path_type=Path), help="file or folder to write")
@click.option("--set", "reader_sets", multiple=True, metavar="KEY=VALUE", help="an option of the input dataset (OPTION=V or dataset.OPTION=V)")
@click.option("--to-set", "writer_sets", multiple=True, metavar="KEY=VALUE", help="an option of the output dataset (OPTION=V or dataset.OPTION=V)")
@click.option("--sample", type=click.IntRange(min=1), help="write a random sample of N examples (in input order) instead of all")
@click.option("--seed", type=int, default=0, show_default=True, help="random seed of --sample")
@click.option("--rest", type=click.Path(path_type=Path), help="with --sample: write the examples not sampled here (same format)")
@overwrite_option
@click.pass_context
def convert_group(
    ctx: click.Context,
    dataset: str | None,
    input_path: Path | None,
    to: str | None,
    output: Path | None,
    reader_sets: tuple[str, ...],
    writer_sets: tuple[str, ...],
    sample: int | None,
    seed: int,
    rest: Path | None,
    overwrite: bool,
) -> None:
    """Convert a dataset between formats: `spanaug convert --dataset conll-ner --input eng.train --to jsonl --output x.jsonl`.

    The output appears only when the conversion succeeded (it is written under a temporary
    name first); an existing output is refused unless --overwrite. Plugins add other
    conversions as sub-commands (e.g. `spanaug convert word-alignments`).
    """
    if ctx.invoked_subcommand is not None:
        return
    missing = [flag for flag, value in (("--dataset", dataset), ("--to", to), ("--output", output)) if value is None]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or name a sub-command; see --help)")
    from spanaug_core.plugins import default_registry
    from spanaug_core.protocols import DatasetWriter

    registry = default_registry()
    reader = registry.create("dataset", dataset, **options_of("dataset", reader_sets))
    writer = registry.create("dataset", to, **options_of("dataset", writer_sets))
    if not isinstance(writer, DatasetWriter):
        writers = [e.name for e in registry.entries("dataset") if callable(getattr(e.cls, "write", None))]
        raise SpanaugError(f"dataset '{to}' cannot write; datasets that can: {', '.join(writers)}")
    if rest is not None and sample is None:
        raise click.UsageError("--rest needs --sample")
    from spanaug_core.files import atomic_output
    from spanaug_core.run import unique_ids

    source = input_path or dataset
    if sample is None:
        with atomic_output(output, overwrite) as partial:
            count = writer.write(unique_ids(reader.read(input_path), source), partial)
    else:
        import random
        from contextlib import nullcontext

        # A sample needs the count first, so the input is held in memory.
        examples = list(unique_ids(reader.read(input_path), source))
        if sample > len(examples):
            raise SpanaugError(f"--sample {sample}: {input_path} holds only {len(examples)} examples")
        chosen = set(random.Random(seed).sample(range(len(examples)), sample))
        # Both outputs are checked before either is written, and appear together or not at all.
        with atomic_output(output, overwrite) as partial, (atomic_output(rest, overwrite) if rest else nullcontext()) as rest_partial:
            count = writer.write((e for i, e in enumerate(examples) if i in chosen), partial)
            if rest is not None:
                others = writer.write((e for i, e in enumerate(examples) if i not in chosen), rest_partial)
        if rest is not None:
            note(f"wrote the other {others} examples to {rest}")
    note(f"wrote {count} examples to {output}")


def _load_plugin_commands() -> None:
    from spanaug_core.plugins import default_registry

    default_registry().add_commands(cli)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    debug = bool(os.environ.get("SPANAUG_DEBUG"))
    try:
        _load_plugin_commands()
        cli.main(args=argv, prog_name="spanaug", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        # click turns Ctrl-C into Abort; the command has already said what it left behind.
        # A SIGTERM/SIGHUP exits as the shell reports a death by that signal (143, 129).
        cause = exc if isinstance(exc, KeyboardInterrupt) else exc.__context__
        return 128 + getattr(cause, "signum", signal.SIGINT)
    except SpanaugError as exc:
        if debug:
            raise
        error(str(exc))
        return 2
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if debug:
            raise
        error(f"internal error: {type(exc).__name__}: {exc} (rerun with SPANAUG_DEBUG=1 for the traceback)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
