"""One ``spanaug run``: build the components a RunConfig names, stream the dataset
through the pipeline into a RunStore, and leave a manifest that says how it ended.

The settings of the run's preset and its dataset's suggested settings are applied (where
the run sets none) and every component's options validated, once, into a ``RunPlan``
before any output is touched, so a typo in a config costs nothing. The engine the config names (``local`` by default, or ``ray``) builds the plan's
pipeline where it runs; this process always reads the input and is the one writer of the
run folder, whose manifest keeps every component's options with their defaults filled in.
On resume the examples the last commit had read are skipped (the id of the last one is
checked, so that a changed input file is caught) and the ones it had in progress are
restored into the pipeline. A completed run resumed with more iterations is taken further:
the examples it had done come back as ``Continued`` ones, each with what its earlier
iterations wrote (``output.EarlierOutcomes``), and the rest of the input follows as usual.

SIGTERM (``docker stop``, Slurm, Kubernetes) and SIGHUP (a closed terminal) end a run the
way Ctrl-C does inside ``signals_as_interrupts``, which ``spanaug run`` uses: the run
commits, says ``interrupted`` and can be resumed. A run the machine stops (a full disk, a
read-only folder) fails with a ``FileSystemError`` whose hint says what was kept and to
resume once that is put right.
"""

from __future__ import annotations

import itertools
import json
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from spanaug_core.config import SUGGESTED, ComponentSpec, RunConfig, merge
from spanaug_core.errors import ConfigError, DataError, FileSystemError, RunStateError
from spanaug_core.jobs import Continued
from spanaug_core.kinds import SECTIONS
from spanaug_core.outcomes import Checkpoint
from spanaug_core.output import MANIFEST, EarlierOutcomes, RunStore
from spanaug_core.plugins import Registry, default_registry
from spanaug_core.protocols import Execution, ProgressCallback, RunPlan
from spanaug_core.settings import PipelineSettings, RunPreset
from spanaug_core.types import Example


class Terminated(KeyboardInterrupt):
    """A SIGTERM or SIGHUP, raised as an interrupt so that a run ends as it does after Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def signals_as_interrupts() -> Iterator[None]:
    """Inside, SIGTERM and SIGHUP raise ``Terminated`` in the main thread (elsewhere: no change).

    The first one raises; later ones are ignored until the block ends, so that the run's
    last commit is not itself interrupted.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = (signal.SIGTERM, signal.SIGHUP)

    def interrupt(signum: int, frame: Any) -> None:
        for sig in caught:
            signal.signal(sig, signal.SIG_IGN)
        raise Terminated(signum)

    previous = {sig: signal.signal(sig, interrupt) for sig in caught}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass(frozen=True)
class RunSummary:
    """How a run ended, for the CLI's last lines: its counts, and what its reader repaired or skipped."""

    status: str
    counts: dict[str, Any]
    output: str
    reader_warnings: dict[str, int]


def reader_warnings(reader: Any) -> dict[str, int]:
    """What a dataset reader repaired or skipped so far (its ``warnings``: what -> how many), sorted by what."""
    return {what: int(n) for what, n in sorted(dict(getattr(reader, "warnings", None) or {}).items())}


def run_input(config: dict[str, Any], registry: Registry | None = None) -> tuple[Iterator[Example], str] | None:
    """The examples a run read, from the ``config`` of its manifest, and where from in words.

    None when the config names no dataset. The reader is built at once (bad options raise
    here) and reads lazily, so a caller that needs only the first few stops early.
    """
    dataset = config.get("dataset")
    if not isinstance(dataset, dict) or "name" not in dataset:
        return None
    source = config.get("input")
    options = {k: v for k, v in dataset.items() if k != "name"}
    reader = (registry or default_registry()).create("dataset", dataset["name"], **options)
    where = f"{dataset['name']} dataset " + (str(source) if source else "(its default data)")
    return iter(reader.read(Path(source) if source else None)), where


def run_sources(records: Path, registry: Registry | None = None) -> Iterator[Example]:
    """The examples the run that wrote ``records`` (its ``augmented.jsonl``) read: its input, through
    its dataset and options, the first ``limit`` of them if it had one. The manifest beside the file says which."""
    manifest = Path(records).parent / "manifest.json"
    try:
        config = json.loads(manifest.read_text(encoding="utf-8")).get("config")
    except (OSError, ValueError, AttributeError):
        raise DataError("expected the manifest.json of the run whose records these are, beside them", path=manifest) from None
    found = run_input(config if isinstance(config, dict) else {}, registry)
    if found is None:
        raise DataError("names no dataset in its config; expected the manifest of a spanaug run", path=manifest)
    limit = config.get("limit")
    return itertools.islice(found[0], limit) if isinstance(limit, int) else found[0]


def unique_ids(examples: Iterable[Example], source: object) -> Iterator[Example]:
    """The examples, refusing an id seen before: records, resume and reports all go by id."""
    seen: dict[str, int] = {}
    for number, example in enumerate(examples, start=1):
        first = seen.setdefault(example.id, number)
        if first != number:
            raise DataError(f"example {number} has the id {example.id!r} of example {first}; ids must be unique", path=source)
        yield example


def _continued(examples: Iterator[Example], folder: Path, continuing: dict[str, Any]) -> Iterator[Example | Continued]:
    """The input, its first ``continuing["examples"]`` examples (those the run had done) as
    ``Continued`` ones with what their earlier iterations wrote."""
    done = continuing["examples"]
    earlier = EarlierOutcomes(folder, continuing)
    number = 0
    for number, example in enumerate(itertools.islice(examples, done), start=1):
        if number == done:  # before it is yielded: a moved example would fail less clearly in its replay
            _check_place(example, done, continuing["last_id"], "add iterations", "the run had done")
        yield Continued(example, earlier.of(example.id), continuing["iterations"])
    if number < done:
        _check_place(None, done, None, "add iterations", "the run had done")
    earlier.check_all_read()
    yield from examples


def _check_place(found: Example | Continued | None, number: int, last_id: str | None, doing: str, had: str) -> None:
    """Refuse an input whose example ``number`` (``found``, None when the input is shorter) is not the run's ``last_id``."""
    if found is None:
        raise RunStateError(f"cannot {doing}: the input now has fewer than the {number} examples {had}")
    if last_id is not None and found.id != last_id:
        raise RunStateError(
            f"cannot {doing}: example {number} of the input is '{found.id}', but the run had '{last_id}' "
            "there (did the input change?)"
        )


def _skip(examples: Iterator[Example | Continued], read: int, last_id: str | None) -> Iterator[Example | Continued]:
    """Drop the ``read`` examples a commit had read, checking the last one is where it was."""
    if read:
        _check_place(next(itertools.islice(examples, read - 1, read), None), read, last_id, "resume", "already read")
    return examples


def execute(
    config: RunConfig,
    resume: bool = False,
    registry: Registry | None = None,
    progress: ProgressCallback | None = None,
    note: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run (or resume) the augmentation a config describes, writing into ``config.output``.

    The settings of the config's ``preset``, then the dataset's suggested settings, apply
    where the config sets none, and its input gives the options it names of the run's
    components where the config sets none (``note`` is told what each applied, before
    the run starts).
    """
    reg = registry or default_registry()
    config, preset = with_preset(config, reg)
    config, suggested = with_suggested_settings(config, reg)
    config, from_input = with_input_options(config, reg)
    if note is not None:
        if preset:
            given = ", ".join(f"{key} = {value!r}" for key, value in preset.items())
            note(f"preset {config.preset} of the {config.dataset.name} dataset: {given} (an option you give wins over these)")
        for key, value in suggested.items():
            # Components (a lexicon, a list of filters) as a config file writes them.
            note(f"{key} = {to_jsonable_python(value)!r}: the {config.dataset.name} dataset's suggestion (set {key} to override it)")
        for given in from_input:
            note(f"{given.where} = {given.value!r}: the {config.dataset.name} dataset's input (to read another: {given.override})")
    plan = reg.plan(config)
    if resume and note is not None and not (config.output / MANIFEST).is_file():
        # A script may pass --resume on every call; a mistyped --output must not go unnoticed.
        where = "is not there" if not config.output.exists() else f"holds no {MANIFEST}"
        note(f"--resume: {config.output} {where}, so there is no run to continue; starting a new run in it")
    reader = plan.one("dataset").build()
    engine = plan.one("engine").build()
    with engine.start(plan, progress) as execution:
        return _drive(config, reader, execution, resume, resolved_component_options(plan))


def presets_of(dataset: str, registry: Registry | None = None) -> dict[str, RunPreset]:
    """The run presets a dataset offers, by name (``spanaug list presets`` shows every dataset's)."""
    found = getattr((registry or default_registry()).get("dataset", dataset), "presets", ())
    return {preset.name: preset for preset in found}


def with_preset(config: RunConfig, registry: Registry | None = None) -> tuple[RunConfig, dict[str, Any]]:
    """The config with the settings of its ``preset`` that it does not set itself, and those settings.

    What the run sets anywhere (config file, flag, ``--set``) wins: a setting whole, a
    component's options one by one (``--beam 8`` keeps the preset's other decoder options),
    a list whole (``--filter sense`` replaces the preset's filters). The dataset's suggested
    settings then fill in what neither sets (``with_suggested_settings``).
    """
    if config.preset is None:
        return config, {}
    name = config.dataset.name
    offered = presets_of(name, registry)
    preset = offered.get(config.preset)
    if preset is None:
        known = f"its presets: {', '.join(offered)}" if offered else "it offers none"
        raise ConfigError(f"dataset '{name}' has no preset '{config.preset}'; {known} (spanaug list presets)")
    mine = config.model_dump(mode="json", exclude_unset=True)
    applied: dict[str, Any] = {}
    for key, value in preset.settings.items():
        if key not in mine:
            applied[key] = value
        elif isinstance(value, dict) and isinstance(mine[key], dict):
            options = {option: v for option, v in value.items() if option not in mine[key]}
            if options:
                applied[key] = options
    try:
        return RunConfig(**merge(preset.settings, mine)), applied
    except ValidationError as exc:
        raise ConfigError(f"preset '{preset.name}' of dataset '{name}' is not a valid run config (a bug in its plugin): {exc}") from None


def with_suggested_settings(config: RunConfig, registry: Registry | None = None) -> tuple[RunConfig, dict[str, Any]]:
    """The config with each pipeline setting its dataset suggests that the run left unset, and those settings.

    A setting given anywhere (config file, flag, ``--set``) wins, even when it equals the
    default; options given to a section that has no default without naming a component
    (``--set lexicon.words=2``) go to the component the dataset suggests for it. Applied
    settings are part of the config, so the manifest records them and ``--resume``
    compares them like any other.
    """
    name = config.dataset.name
    suggested = getattr((registry or default_registry()).get("dataset", name), "suggested_settings", None) or {}
    nameless = {section.key: spec for _, section in SECTIONS if (spec := _nameless(config, section.key)) is not None}
    for key in nameless:
        if suggested.get(key) is None:
            raise ConfigError(
                f"{key} options given without a {key} to take them, and the {name} dataset suggests none: "
                f"name it too (--{key} NAME or {key}.name=NAME)"
            )
    wanted = {key: value for key, value in suggested.items() if key not in config.model_fields_set or key in nameless}
    if not wanted:
        return config, {}
    unknown = sorted(set(wanted) - set(PipelineSettings.model_fields) - {"lexicon", "filters"})
    if unknown:
        raise ConfigError(f"dataset '{name}' suggests unknown setting(s) {', '.join(unknown)} (a bug in its plugin)")
    try:
        checked = RunConfig(**wanted)
    except ValidationError as exc:
        raise ConfigError(f"dataset '{name}' suggests an invalid setting (a bug in its plugin): {exc}") from None
    applied = {key: getattr(checked, key) for key in wanted}
    for key, spec in nameless.items():
        applied[key] = ComponentSpec(name=applied[key].name, **{**applied[key].options, **spec.options})
    return config.model_copy(update=applied), applied


def _nameless(config: RunConfig, key: str) -> ComponentSpec | None:
    """The run's component of section ``key`` when it was given options but no name (``config.SUGGESTED``)."""
    spec = getattr(config, key, None)
    return spec if isinstance(spec, ComponentSpec) and spec.name == SUGGESTED else None


@dataclass(frozen=True)
class InputOption:
    """An option of a run's component set to the run's input, where it is shown and how a user sets another."""

    where: str
    value: str
    override: str


def with_input_options(config: RunConfig, registry: Registry | None = None) -> tuple[RunConfig, list[InputOption]]:
    """The config with the run's ``--input`` as each component option its dataset says the input gives, and those options.

    A dataset reader may have ``input_options``, a class-level dict ``{(kind, component
    name): option}``: the framenet dataset's input is a FrameNet release, which the
    ``framenet`` lexicon and the ``frame-lexicon`` filter read too. Each such component the
    run has (named or suggested) whose options the run left without that one gets it, so
    that they read the data the dataset reads; an option given anywhere wins. Without
    ``--input`` nothing is set: the component's own default reads the default data, as
    the dataset does.
    """
    if config.input is None:
        return config, []
    declared = getattr((registry or default_registry()).get("dataset", config.dataset.name), "input_options", None) or {}
    value = str(config.input)
    update: dict[str, Any] = {}
    applied: list[InputOption] = []
    for kind, section in SECTIONS:
        named = getattr(config, section.key)
        specs = list(named) if section.many else [] if named is None else [named]
        for i, spec in enumerate(specs):
            option = declared.get((kind, spec.name))
            if option is None or option in spec.options:
                continue
            specs[i] = ComponentSpec(name=spec.name, **{**spec.options, option: value})
            if section.many:
                where = f"{section.key}: {spec.name}.{option}"
                override = f"--set '{section.key}=[{{name: {spec.name}, {option}: PATH}}]' in place of --{kind} {spec.name}"
            else:
                where, override = f"{section.key}.{option}", f"--set {section.key}.{option}=PATH"
            applied.append(InputOption(where, value, override))
            update[section.key] = specs if section.many else specs[0]
    return config.model_copy(update=update), applied


def resolved_component_options(plan: RunPlan) -> dict[str, Any]:
    """Every option of the run's components, defaults filled in, per section the manifest keeps.

    The run config holds only what the user set; a default that changed in a newer spanaug
    (the decoder's prompt, a filter's threshold, the lexicon's reach) changes what a
    resumed run writes just as much, so the manifest keeps these and ``--resume`` compares
    them. A section that is not ``resumed`` (the engine) is left out.
    """
    options: dict[str, Any] = {}
    for _, section in SECTIONS:
        if section.resumed:
            found = [part.options() for part in plan.parts[section.key]]
            options[section.key] = found if section.many else next(iter(found), None)
    return options


def _after_fault(fault: FileSystemError, committed: int, output: object) -> str:
    """What to do after the machine refused a write mid-run (a full disk): put it right, resume.

    ``--resume`` is right even when nothing was committed: a folder without work starts afresh.
    """
    done = f"{committed} example{'' if committed == 1 else 's'} done"
    return f"the run stopped; {output} keeps what it committed ({done}): {fault.remedy}, then continue with --resume"


def _drive(config: RunConfig, reader: Any, execution: Execution, resume: bool, options: dict[str, Any]) -> RunSummary:
    """Stream the input through ``execution`` into the run folder, committing at checkpoints."""
    store = RunStore(config.output, config, options)
    committed = store.open(resume)

    def commit(in_flight: list[dict[str, Any]], pending: int = 0, last_read_id: str | None = None) -> None:
        # Workers may join while the run goes on: the manifest says who ran it so far.
        store.describe_engine({"name": config.engine.name, **execution.resources()})
        store.describe_reading(reader_warnings(reader))
        store.commit(done, last_id, execution.stats.as_dict(), in_flight, pending, last_read_id)

    def finish(status: str, error: str | None = None) -> None:
        # A resume reads the input from its start again, so the reader's counts are whole without restoring.
        store.describe_reading(reader_warnings(reader))
        store.finish(status, execution.stats.as_dict(), error=error)

    done = committed.get("examples_done", 0)
    last_id = committed.get("last_example_id")
    # From here on every failure is recorded in the manifest: a folder never stays "running"
    # behind a run that ended (a wrong --input fails in count() or in the first read).
    try:
        store.describe_engine({"name": config.engine.name, **execution.resources()})
        if committed.get("counts"):
            execution.stats.restore(committed["counts"])
        execution.restore(committed.get("in_flight", []))
        read = committed.get("examples_read", done)
        source = config.input or config.dataset.name
        inputs: Iterator[Example | Continued] = unique_ids(reader.read(config.input), source)
        if "continuing" in committed:
            inputs = _continued(inputs, config.output, committed["continuing"])
        examples = _skip(inputs, read, committed.get("last_read_id", last_id))
        if config.limit is not None:
            examples = itertools.islice(examples, max(config.limit - read, 0))
        total = reader.count(config.input) if callable(getattr(reader, "count", None)) else None
        if config.limit is not None:
            total = config.limit if total is None else min(total, config.limit)
        for outcome in execution.outcomes(examples, total):
            if isinstance(outcome, Checkpoint):
                done += outcome.examples
                last_id = outcome.last_id or last_id
                if store.due():
                    commit(execution.in_flight(), outcome.pending, outcome.last_read_id)
            else:
                store.write(outcome)
        commit([])
    except KeyboardInterrupt:
        finish("interrupted")
        raise
    except BaseException as exc:
        finish("failed", error=f"{type(exc).__name__}: {exc}")
        if isinstance(exc, FileSystemError):
            exc.hint = _after_fault(exc, store.committed_examples, config.output)
        raise
    finish("completed")
    return RunSummary("completed", execution.stats.as_dict(), str(config.output), reader_warnings(reader))
