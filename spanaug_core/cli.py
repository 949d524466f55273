"""The ``spanaug`` command: core sub-commands plus whatever plugins add.

The core owns ``run``, ``list`` and ``convert``, and ``train --trainer NAME`` (any
registered trainer); ``train`` and ``eval`` are also groups that plugins fill
(``spanaug train aligner``, ``spanaug eval framenet-lus``). Plugins add
commands through the ``register_commands(cli)`` hook. A ``SpanaugError`` becomes one red
line (and its hint, if any, on the next) and exit status 2, and so does an ``OSError`` the
machine caused (a full disk, a read-only folder: ``files.user_error``); anything else is an
internal error, exit status 1. Set ``SPANAUG_DEBUG=1`` to see tracebacks instead.

``spanaug run``'s shortcut flags are generated (``run_flags``) from the settings that
declare one (``spanaug_core.flags``): the run config's own, and the options of each
component a run config section names, the default component's first. A flag that only
some other component declares says whose it is (``ray: worker actors ...``); two settings
claiming one flag is a plugin conflict, reported with both.
"""

from __future__ import annotations

import os
import signal
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import click
from pydantic.fields import FieldInfo
from rich.markup import escape

from spanaug_core import __version__
from spanaug_core.console import error, note, out_console
from spanaug_core.errors import SpanaugError
from spanaug_core.files import user_error
from spanaug_core.flags import declared_flag

if TYPE_CHECKING:
    from spanaug_core.plugins import Registry
    from spanaug_core.types import Example


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="spanaug")
def cli() -> None:
    """Grow span-labeled datasets by iterative constrained paraphrasing and span alignment."""


@dataclass(frozen=True)
class RunFlag:
    """One generated flag: the setting it sets, its value type and its help."""

    names: tuple[str, ...]  # ("--output", "-o"): the first is the flag's name
    setting: str  # "decoder.beam_size"
    type: type  # int, float, str, Path or bool (a --x/--no-x switch)
    help: str


def run_flags(registry: Registry) -> list[RunFlag]:
    """Every shortcut flag: the run config's own, then each component kind's, in field order."""
    from spanaug_core.config import RunConfig
    from spanaug_core.kinds import SECTIONS

    found: dict[str, RunFlag] = {}

    def add(run_flag: RunFlag) -> None:
        known = found.get(run_flag.names[0])
        if known is not None and known.setting != run_flag.setting:
            raise SpanaugError(f"flag {run_flag.names[0]} is declared for both {known.setting} and {run_flag.setting}; rename one")
        found.setdefault(run_flag.names[0], run_flag)

    sections = {section.key: section for _, section in SECTIONS}
    for field_name, info in RunConfig.model_fields.items():
        names = declared_flag(info)
        if names and field_name in sections:  # --decoder NAME
            add(RunFlag(names, f"{field_name}.name", str, _help(info.description, sections[field_name].default)))
        elif names:
            add(RunFlag(names, field_name, _value_type(info), _help(info.description, info.default)))
    for kind, section in SECTIONS:
        if section.many:  # an option of one of a list of components has no one setting
            continue
        # The default component first: its defaults are the ones a run without the flag gets.
        for entry in sorted(registry.entries(kind), key=lambda e: e.name != section.default):
            for field_name, info in entry.cls.Config.model_fields.items():
                names = declared_flag(info)
                if not names:
                    continue
                owner = "" if entry.name == section.default else f"{entry.name}: "
                setting = f"{section.key}.{field_name}"
                described = f"{owner}{info.description or ''} (sets {setting})"
                add(RunFlag(names, setting, _value_type(info), _help(described, info.default)))
    return list(found.values())


def _help(description: str | None, default: Any) -> str:
    shown = "" if default is None or default is False else f"  [default: {default}]"
    return (description or "") + shown


def _value_type(info: FieldInfo) -> type:
    """The flag's value type: the annotation, with ``None`` taken out of an optional."""
    annotation = info.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else str
    return annotation if annotation in (int, float, str, bool, Path) else str


class SettingOption(click.Option):
    """A shortcut flag that sets one run setting (generated by ``run_flags``)."""

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
            from spanaug_core.plugins import default_registry

            generated = [SettingOption(f.names, f.setting, f.type, f.help) for f in run_flags(default_registry())]
            self.params[:0] = generated
        return super().get_params(ctx)


@cli.command("run", cls=RunCommand)
@click.option(
    "--filter", "filters", multiple=True, metavar="SPEC",
    help="keep only records this filter accepts: a name, or '{name: frame-lexicon, release: DIR}' with options "
    "(repeatable; all must accept; replaces the filters the dataset suggests)",
)
@click.option("--resume", is_flag=True, help="continue an interrupted run in --output, or take a completed one to more --iterations")
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
    shows them. Settings come from defaults < the dataset's suggestions (they fill only
    what the run leaves unset, and the run notes each: docs/datasets.md) < --preset <
    --config file < flags < --set.
    """
    from spanaug_core.config import component_specs, load_run_config, parse_assignments
    from spanaug_core.console import progress_callback
    from spanaug_core.run import execute, signals_as_interrupts

    settings = {p.name: p.setting for p in click.get_current_context().command.params if isinstance(p, SettingOption)}
    dotted = {settings[k]: v for k, v in flags.items()}
    if filters:
        # --set wins over flags, so the two together would drop the --filter names unseen.
        if "filters" in parse_assignments(assignments):
            raise click.UsageError("--filter and --set filters=[...] both give the filters list; name them all in one of the two")
        dotted["filters"] = component_specs("--filter", filters)
    config = load_run_config(config_file, dotted, assignments)
    try:
        with signals_as_interrupts(), progress_callback("examples", enabled=progress) as on_progress:
            summary = execute(config, resume=resume, progress=on_progress, note=note)
    except KeyboardInterrupt:
        note(f"interrupted: {config.output} holds every record committed so far; continue with --resume")
        raise
    counts = summary.counts
    stopped = ", ".join(f"{k} {v}" for k, v in sorted(counts.get("stopped", {}).items())) or "none"
    extra = [f"{counts['filtered_choices']} of them a runner-up the filters accepted"] if counts.get("filtered_choices") else []
    extra += [f"{counts['more_records']} a round's further record (per_round)"] if counts.get("more_records") else []
    runners_up = f" ({'; '.join(extra)})" if extra else ""
    skipped = f" ({counts['skipped_spans']} more left alone by skip_labels or skip_pos)" if counts.get("skipped_spans") else ""
    out_console.print(
        f"[bold green]done[/]: {counts['examples']} examples, {counts['jobs']} spans{skipped} -> "
        f"{counts['accepted']} accepted{runners_up}, {counts['rejected']} rejected; stopped early: {stopped}; "
        f"decode {counts['decode_s']:.1f}s, align {counts['align_s']:.1f}s, score {counts['score_s']:.1f}s -> {escape(str(summary.output))}/augmented.jsonl"
    )
    if summary.reader_warnings:
        note(f"{_repairs(config.dataset.name, summary.reader_warnings)} (the manifest's reader_warnings)")


def _repairs(dataset: str, warnings: dict[str, int]) -> str:
    """What a dataset reader repaired or skipped, in words."""
    return f"the {dataset} dataset repaired or skipped in its input: " + ", ".join(f"{n:,} {what}" for what, n in warnings.items())


@cli.command("list")
@click.argument("kind", required=False)
@click.option("--options", is_flag=True, help="show each component's options (type, default, description)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def list_command(kind: str | None, options: bool, as_json: bool) -> None:
    """List the registered components (datasets, expanders, decoders, aligners, filters, lexicons, trainers, engines)
    and the run presets each dataset offers (`spanaug list presets`: what `spanaug run --preset NAME` sets)."""
    import json

    from rich.table import Table

    from spanaug_core.plugins import default_registry

    registry = default_registry()
    only_presets = kind in ("preset", "presets")
    entries = [] if only_presets else registry.entries(kind)
    presets = [(e, p) for e in registry.entries("dataset") for p in getattr(e.cls, "presets", ())] if kind is None or only_presets else []
    if as_json:
        rows = []
        for e in entries:
            row: dict[str, object] = {"kind": e.kind, "name": e.name, "plugin": e.plugin, "description": e.description}
            if options:
                row["options"] = e.cls.Config.model_json_schema()
            rows.append(row)
        rows += [{"kind": "preset", "name": p.name, "dataset": e.name, "plugin": e.plugin, "description": p.description, "settings": p.settings}
                 for e, p in presets]
        click.echo(json.dumps(rows, indent=2))
        return
    if entries:
        table = Table(title="spanaug components", show_lines=options)
        for col in ("kind", "name", "plugin", "description"):
            table.add_column(col, overflow="fold")
        for e in entries:
            desc = e.description
            if options:
                desc += "".join(f"\n  [cyan]{line}[/]" for line in _option_lines(e.cls.Config))
            table.add_row(e.kind, e.name, e.plugin, desc)
        out_console.print(table)
    if presets:
        table = Table(title="run presets (spanaug run --dataset NAME --preset PRESET; an option you give wins)", show_lines=True)
        for col in ("dataset", "preset", "sets", "for"):
            table.add_column(col, overflow="fold")
        for e, p in presets:
            sets = "\n".join(f"{key} = {json.dumps(value)}" for key, value in p.settings.items())
            table.add_row(e.name, p.name, sets, p.description)
        out_console.print(table, markup=False)


def _type_name(annotation: Any) -> str:
    """An option's type as a user reads it: ``float | 'dev' | None``, not ``Union`` or ``Literal``."""
    origin = get_origin(annotation)
    if origin is Annotated:  # constraints (gt=0...) are the description's business
        return _type_name(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in get_args(annotation))
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(annotation))
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _option_lines(config: type) -> list[str]:
    lines = []
    for field_name, info in config.model_fields.items():
        type_name = _type_name(info.annotation)
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
@click.option("--out", "--output", type=click.Path(file_okay=False, path_type=Path), help="folder for the model and metrics.json")
@click.option(
    "--set", "assignments", multiple=True, metavar="KEY=VALUE",
    help="trainer.OPTION=VALUE or dataset.OPTION=VALUE, e.g. trainer.epochs=10",
)
@click.option("--progress/--no-progress", default=None, help="show progress bars  [default: when stderr is a terminal]")
@click.option("--overwrite", is_flag=True, help="train into --out though it holds files (those the trainer writes are replaced, others stay)")
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
    overwrite: bool,
) -> None:
    """Train a downstream model: `spanaug train --trainer ner --dataset conll-ner --train F --dev F --out DIR`.

    --trainer, --dataset, --train and --out are required unless a sub-command is named.
    Writes the trainer's model folder and OUT/metrics.json (dev scores, and test scores
    with --test); a folder that holds files is refused unless --overwrite. Plugins add
    other training as sub-commands (e.g. `spanaug train aligner`).
    """
    if ctx.invoked_subcommand is not None:
        if overwrite:  # else it would be dropped unseen: the sub-command has its own
            raise click.UsageError(f"--overwrite goes after the sub-command: spanaug train {ctx.invoked_subcommand} ... --overwrite")
        return
    flags = (("--trainer", trainer_name), ("--dataset", dataset), ("--train", train_path), ("--out", out))
    missing = [flag for flag, value in flags if value is None]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or name a sub-command; see --help)")
    # A trained model is hours of work: training into its folder again must be asked for.
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise SpanaugError(f"{out} holds files (an earlier model?); pass --overwrite to train into it, or choose another --out")
    from spanaug_core.console import progress_callback
    from spanaug_core.files import ensure_folder, replace_json
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
    ensure_folder(out)
    replace_json(out / "metrics.json", metrics, indent=2)
    shown = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items() if k.endswith("f1") or k == "epochs_run")
    out_console.print(f"[bold green]done[/]: {escape(trainer_name)} model saved in {escape(str(out))}; {shown or 'no dev scores'}")


@cli.group("eval")
def eval_group() -> None:
    """Evaluate a run or a model (sub-commands come from plugins)."""


@cli.group("convert", invoke_without_command=True)
@click.option("--dataset", "dataset", help="format of the input (a dataset name; `jsonl` is spanaug's own)")
@click.option("--input", "input_path", type=click.Path(path_type=Path), help="file or folder to read (none: the dataset's own sample, where it has one)")
@click.option("--to", "to", help="format to write (a dataset name that can write, e.g. jsonl)")
@click.option("--output", "--out", "output", type=click.Path(path_type=Path), help="file or folder to write")
@click.option("--set", "reader_sets", multiple=True, metavar="KEY=VALUE", help="an option of the input dataset (OPTION=V or dataset.OPTION=V)")
@click.option("--to-set", "writer_sets", multiple=True, metavar="KEY=VALUE", help="an option of the output dataset (OPTION=V or dataset.OPTION=V)")
@click.option("--sample", type=click.IntRange(min=1), help="write a random sample of N examples (in input order) instead of all")
@click.option("--seed", type=int, default=0, show_default=True, help="random seed of --sample")
@click.option("--rest", type=click.Path(path_type=Path), help="with --sample: write the examples not sampled here (same format)")
@click.option(
    "--with-sources", is_flag=True,
    help="--input is a run's augmented.jsonl (--dataset jsonl): write the examples the run read (its manifest's dataset, input and limit) first, "
    "then the records: the data to train on",
)
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
    with_sources: bool,
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
    if rest is not None and rest.resolve() == output.resolve():
        raise click.UsageError("--rest names the --output path; the examples not sampled need a path of their own")
    from spanaug_core.files import atomic_output
    from spanaug_core.run import reader_warnings, run_sources, unique_ids

    if with_sources and input_path is None:
        raise click.UsageError("--with-sources needs --input RUN/augmented.jsonl")
    source = input_path or dataset
    read = reader.read(input_path)
    if with_sources:
        import itertools

        read = itertools.chain(run_sources(input_path, registry), read)
    def write(examples: Iterable[Example], partial: Path, target: Path) -> int:
        # A writer that writes beside the path it was given (its name with another suffix)
        # would leave hidden files under the temporary name and nothing at the target.
        count = writer.write(examples, partial)
        if count and not partial.exists():
            raise SpanaugError(
                f"dataset '{to}' reports {count} examples written but wrote nothing at the path it was given, so {target} "
                "would not exist; a writer writes exactly that path, a folder when its format has several files "
                "(docs/writing-a-plugin.md#readers-and-writers)"
            )
        return count

    if sample is None:
        with atomic_output(output, overwrite) as partial:
            count = write(unique_ids(read, source), partial, output)
    else:
        import random
        from contextlib import nullcontext

        # A sample needs the count first, so the input is held in memory.
        examples = list(unique_ids(read, source))
        if sample > len(examples):
            raise SpanaugError(f"--sample {sample}: {input_path} holds only {len(examples)} examples")
        chosen = set(random.Random(seed).sample(range(len(examples)), sample))
        # Both outputs are checked before either is written, and appear together or not at all.
        with atomic_output(output, overwrite) as partial, (atomic_output(rest, overwrite) if rest else nullcontext()) as rest_partial:
            count = write((e for i, e in enumerate(examples) if i in chosen), partial, output)
            if rest is not None:
                others = write((e for i, e in enumerate(examples) if i not in chosen), rest_partial, rest)
        if rest is not None:
            note(f"wrote the other {others} examples to {rest}")
    if reader_warnings(reader):
        note(_repairs(dataset, reader_warnings(reader)))
    # An empty input converts to an empty output; say so, since it is rarely what was meant.
    note(f"wrote {count} examples to {output}" + ("" if count else f": {source} holds no examples"))


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
    except Exception as exc:
        if debug:
            raise
        # A full disk or a read-only folder is the user's to fix, wherever a command met it.
        found = exc if isinstance(exc, SpanaugError) else user_error(exc) if isinstance(exc, OSError) else None
        if found is None:  # the last line of defence: one line, not a traceback
            error(f"internal error: {type(exc).__name__}: {exc} (rerun with SPANAUG_DEBUG=1 for the traceback)")
            return 1
        error(str(found))
        if found.hint:
            note(found.hint)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
