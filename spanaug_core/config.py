"""The run configuration: one pydantic model from file, flags and ``--set`` overrides.

A run names its components in one section per kind it is made of (dataset, expander,
decoder, aligner, filters, lexicon, engine: the table in ``spanaug_core.kinds``), each a
table whose ``name`` picks the plugin and whose other keys are that component's options::

    iterations = 5
    [decoder]
    name = "vdba"
    beam_size = 8

Precedence, lowest first: defaults, the config file (TOML or YAML), command-line flags,
``--set key.path=value``. Component options are validated against the component's own
``Config`` when the run is built, so an error names the component and the field.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, create_model, model_validator
from pydantic.fields import FieldInfo

from spanaug_core.errors import ConfigError
from spanaug_core.flags import flag
from spanaug_core.kinds import SECTIONS, Section
from spanaug_core.settings import ComponentSpec, PipelineSettings, RunPreset

__all__ = ["BEFORE_ADDED", "REMOVED", "SUGGESTED", "ComponentSpec", "PipelineSettings", "RunConfig", "RunPreset", "load_run_config"]

# Settings added after runs could already be resumed, with the value that reproduces what a
# run started before them did (a resumed run must go on as it began).
BEFORE_ADDED: dict[str, Any] = {"avoid_words": False, "rerank": {"alignment": 1.0}, "min_words": 0, "keep_copies": False, "filter_candidates": False, "content_targets": False, "carry": False, "source_tokens": False, "preset": None}

# Settings a run may have begun with that spanaug no longer has, none of which changed a
# record: a resume does not compare them. batch_size (requests per call of a decoder that
# cannot stream) became the decoder's own batch_size, which --batch-size now sets.
REMOVED: frozenset[str] = frozenset({"batch_size"})

# The name of a component given options but no name in a section that has no default (the
# lexicon): the component the run's dataset suggests for the section takes them
# (``run.with_suggested_settings``), so `--set lexicon.release=...` tunes the suggested lexicon.
SUGGESTED = "(the dataset's suggestion)"


class _RunSettings(PipelineSettings):
    """Everything ``spanaug run`` needs; the embedded defaults are the main job.

    Besides the settings below, one section per kind of component a run is made of
    (``spanaug_core.kinds``): ``dataset``, ``expander``, ``decoder``, ``aligner``,
    ``filters`` (a list), ``lexicon`` (none unless named) and ``engine``.
    """

    preset: str | None = Field(
        default=None,
        description="a named set of settings the dataset offers, e.g. precise or more (`spanaug list presets`); "
        "an option you give wins over the preset's",
        json_schema_extra=flag("--preset"),
    )
    input: Path | None = Field(
        default=None, description="dataset file or folder (default: the dataset's own sample)", json_schema_extra=flag("--input")
    )
    limit: int | None = Field(default=None, ge=1, description="augment only the first N examples", json_schema_extra=flag("--limit"))
    output: Path = Field(default=Path("out"), description="output folder", json_schema_extra=flag("--output", "--out", "-o"))
    write_rejected: bool = Field(default=True, description="also write rejected.jsonl")
    commit_every_s: float = Field(
        default=30.0, ge=0, description="make the output resumable at least this often, in seconds (a kill loses at most this much finished work)"
    )

    @model_validator(mode="before")
    @classmethod
    def _names_as_specs(cls, data: Any) -> Any:
        # `decoder = "vdba"` is shorthand for `[decoder] name = "vdba"`.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for _, section in SECTIONS:
            key, value = section.key, data.get(section.key)
            if section.many:
                if isinstance(value, list):
                    data[key] = [{"name": v} if isinstance(v, str) else v for v in value]
            elif isinstance(value, str):
                data[key] = {"name": value}
            elif isinstance(value, dict) and "name" not in value:
                # `--set aligner.threshold=0.4` tunes the default aligner, `--set lexicon.words=2` the suggested lexicon.
                data[key] = {"name": section.default or SUGGESTED, **value}
        return data

    def pipeline_settings(self) -> PipelineSettings:
        return PipelineSettings(**{k: getattr(self, k) for k in PipelineSettings.model_fields})

    def fingerprint(self) -> dict[str, Any]:
        """What must not change between a run and its ``--resume``.

        Everything but output, limit, commit_every_s and the options of a section that
        is not ``resumed`` (the engine's): a run may resume on more workers, or on another
        cluster, but not on another engine (each keeps its own in-progress state).
        """
        loose = [section.key for _, section in SECTIONS if not section.resumed]
        found = self.model_dump(mode="json", exclude={"output", "limit", "commit_every_s", *loose})
        return {**found, **{key: getattr(self, key).name for key in loose}}


def _section_field(section: Section) -> tuple[Any, FieldInfo]:
    """A run config section's type and field: one component, a list of them, or one or none."""
    extra = flag(section.flag) if section.flag else None
    if section.many:
        return list[ComponentSpec], Field(default_factory=list, description=section.description, json_schema_extra=extra)
    if section.default is None:
        return ComponentSpec | None, Field(default=None, description=section.description, json_schema_extra=extra)
    return ComponentSpec, Field(default=ComponentSpec(name=section.default), description=section.description, json_schema_extra=extra)


RunConfig: type[_RunSettings] = create_model(  # type: ignore[call-overload]
    "RunConfig",
    __base__=_RunSettings,
    __module__=__name__,
    __doc__=_RunSettings.__doc__,
    **{section.key: _section_field(section) for _, section in SECTIONS},
)


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one table: the second would win
    silently, where TOML refuses it."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            # A merge key (<<) is no setting, and a complex key is PyYAML's to refuse.
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str):
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is given twice", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)


def _yaml(text: str) -> Any:
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line, with its line and column (PyYAML's own text spans several
    lines, draws a caret and names the text as "<unicode string>")."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return " ".join(str(exc).split())
    mark = exc.problem_mark
    context = f"{exc.context}: " if exc.context else ""
    return f"{context}{exc.problem} (at line {mark.line + 1}, column {mark.column + 1})"


def load_file(path: Path) -> dict[str, Any]:
    """Read a TOML or YAML config file into a plain dict."""
    if not path.is_file():
        raise ConfigError(f"config file {path} {'is a folder' if path.is_dir() else 'does not exist'}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path}: not valid UTF-8 (byte {exc.start + 1}); save it as UTF-8") from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            data = _yaml(text) or {}
        else:
            raise ConfigError(f"config file {path}: expected a .toml, .yaml or .yml file")
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path}: {_yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a table of settings at the top level")
    return data


def parse_value(text: str) -> Any:
    """A ``--set`` value as YAML reads a scalar or flow list: 8, 0.5, true, [a, b], text.

    Text YAML cannot read stays text (``a: b: c``, ``{text} - rewrite it``), unless it is
    meant as a list or a table: a bracket left open, or a value wrapped in one, is a slip to
    report, not a name to look up.
    """
    try:
        return _yaml(text)
    except yaml.YAMLError as exc:
        body = text.strip()
        wrapped = body[:1] + body[-1:] in ("[]", "{}")
        left_open = body.count("[") > body.count("]") or body.count("{") > body.count("}")
        if body.startswith(("[", "{")) and (wrapped or left_open):
            raise ConfigError(f"{text!r} is not a valid YAML list or table: {_yaml_problem(exc)}") from None
        return text


def component_specs(flag: str, specs: Iterable[str]) -> list[dict[str, Any]]:
    """A repeatable component flag's values (``--filter``): each a name, or a YAML mapping
    with ``name`` and the component's options (``'{name: frame-lexicon, release: DIR}'``)."""
    out = []
    for spec in specs:
        try:
            value = parse_value(spec)
        except ConfigError as exc:
            raise ConfigError(f"{flag}: {exc}") from None
        if isinstance(value, str):
            value = {"name": value}
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise ConfigError(f"{flag} {spec!r}: expected a name or a mapping such as '{{name: similarity, floor: 0.8}}'")
        out.append(value)
    return out


def parse_assignments(assignments: Iterable[str]) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` -> ``{"a": {"b": 1}, "c": "x"}``."""
    tree: dict[str, Any] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. decoder.beam_size=8")
        try:
            parsed = parse_value(value)
        except ConfigError as exc:
            raise ConfigError(f"--set {key.strip()}: {exc}") from None
        set_path(tree, key.strip(), parsed)
    return tree


def set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``tree[a][b] = value`` for ``dotted == "a.b"``, creating tables on the way."""
    *parents, leaf = dotted.split(".")
    node = tree
    for part in parents:
        child = node.get(part)
        if isinstance(child, str):  # `decoder = "vdba"` then `--set decoder.beam_size=8`
            child = {"name": child}
        if not isinstance(child, dict):
            child = {}
        node[part] = child
        node = child
    node[leaf] = value


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge two config dicts; ``override`` wins."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), (dict, str)):
            current = out[key] if isinstance(out[key], dict) else {"name": out[key]}
            out[key] = merge(current, value)
        else:
            out[key] = value
    return out


def load_run_config(
    config_file: Path | None = None,
    flags: dict[str, Any] | None = None,
    assignments: Iterable[str] = (),
) -> RunConfig:
    """Build the run config: defaults < file < flags (dotted keys) < ``--set`` assignments."""
    data: dict[str, Any] = load_file(config_file) if config_file else {}
    # Where each setting's value came from, the last to set anything under it: an error
    # names that, not the config file for a value a flag gave.
    origin = dict.fromkeys(data, str(config_file))
    for dotted, value in (flags or {}).items():
        if value is not None:
            set_path(data, dotted, value)
            origin[dotted.split(".")[0]] = "a flag"
    assigned = parse_assignments(assignments)
    origin.update(dict.fromkeys(assigned, "--set"))
    data = merge(data, assigned)
    try:
        return RunConfig(**data)
    except ValidationError as exc:
        raise ConfigError("run config: " + "; ".join(_problem(err, origin) for err in exc.errors())) from None


def _problem(err: Any, origin: dict[str, str]) -> str:
    """One validation error of a run config, naming the setting, where its value came from and what it takes."""
    loc = ".".join(str(p) for p in err["loc"])
    where = f" (from {origin[str(err['loc'][0])]})" if err["loc"] and str(err["loc"][0]) in origin else ""
    if err["type"] == "extra_forbidden":
        close = difflib.get_close_matches(str(err["loc"][0]).replace("-", "_"), list(RunConfig.model_fields), n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"settings: {', '.join(sorted(RunConfig.model_fields))}"
        return f"unknown setting '{loc}'{where}; {hint}"
    sections = {section.key: section for _, section in SECTIONS}
    if len(err["loc"]) == 1 and loc in sections and not isinstance(err.get("input"), (str, dict, list)):
        what = "a list of names or tables" if sections[loc].many else "a name, or a table with its name and options"
        return f"setting '{loc}'{where}: expected {what} (got {err.get('input')!r})"
    return f"setting '{loc}'{where}: {err['msg']} (got {err.get('input')!r})"
