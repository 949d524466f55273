"""The run configuration: one pydantic model from file, flags and ``--set`` overrides.

A run names its components (dataset, expander, decoder, aligner, filters) as tables
whose ``name`` picks the plugin and whose other keys are that component's options::

    iterations = 5
    [decoder]
    name = "vdba"
    beam_size = 8

Precedence, lowest first: defaults, the config file (TOML or YAML), command-line flags,
``--set key.path=value``. Component options are validated against the component's own
``Config`` when the run is built, so an error names the component and the field.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from spanaug_core.errors import ConfigError
from spanaug_core.flags import flag


class ComponentSpec(BaseModel):
    """A component by name plus its options (every key other than ``name``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class PipelineSettings(BaseModel):
    """How the iterative loop runs (Culkin et al. 2021, §5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    iterations: int = Field(default=10, ge=1, description="rounds of paraphrase + align per span", json_schema_extra=flag("--iterations"))
    top_m: int = Field(default=20, ge=1, description="candidates the aligner scores per round", json_schema_extra=flag("--top-m"))
    chain: bool = Field(
        default=False, description="paraphrase the previous output instead of the original", json_schema_extra=flag("--chain")
    )
    rewrite_roles: list[str] = Field(default=["target"], description="span roles that are rewritten")
    skip_labels: list[str] = Field(
        default=[],
        description="labels (shell patterns) of spans left alone though their role is rewritten; a dataset may suggest "
        "some (conll-srl: PropBank copulas and auxiliaries, whose paraphrases rarely keep the meaning; docs/quality.md)",
    )
    skip_pos: list[str] = Field(
        default=[],
        description="parts of speech of spans left alone though their role is rewritten, as a reader gives them in a "
        "span's attrs[\"pos\"] (conll-srl: each CoNLL-U Plus predicate's UPOS; it suggests NOUN and AUX: nominal "
        "predicates' paraphrases rarely keep the label, auxiliaries carry tense, not a meaning; docs/quality.md)",
    )
    keep_roles: list[str] = Field(default=["argument", "entity"], description="span roles carried into the paraphrase")
    avoid_words: bool = Field(
        default=True,
        description="when a span aligns to several words, also avoid each content word of it (and its forms) "
        "that the sentence has nowhere else, not only the whole phrase",
    )
    min_words: int = Field(
        default=3,
        ge=0,
        description="paraphrase a sentence with no span to rewrite (NER) only if it has at least this many words "
        "(letters, no digits) outside its kept spans: a table row or score line (\"Leeds 22 6 0 16 555 745 12\") has nothing to paraphrase",
    )
    rerank: dict[str, float] = Field(
        default={"alignment": 1.0},
        description="how a round chooses among its candidates: the one with the largest sum of weight x score, "
        "over the record scores named here (alignment, adequacy, paraphrase_fluency...; ties: the decoder's order); "
        "a score no component gives is an error",
    )
    filter_candidates: bool = Field(
        default=True,
        description="with filters, a round whose best candidate they drop keeps the next best they accept "
        "(false: the best is filtered alone, as in the paper, and the round keeps nothing when it is dropped)",
    )
    keep: Literal["include", "align", "drop"] = Field(
        default="align",
        description="how kept spans survive: align = no constraint, located by the aligner; "
        "include = positive constraints then exact match (slower, often broken text; docs/quality.md); drop = not carried",
    )
    keep_copies: bool = Field(
        default=True,
        description="keep = align: a kept span the paraphrase copies word for word, once, is kept where the copy is, "
        "and the aligner places the others (a copy needs no aligner; one that occurs twice could be either)",
    )
    content_targets: bool = Field(
        default=True,
        description="a rewritten span with a content word counts as found only on a span with one: the aligner settling on "
        "the function word of a rewording (\"signed\" as the \"into\" of \"entered into\") is no alignment "
        "(false: any span it finds; docs/quality.md)",
    )
    batch_size: int = Field(
        default=16,
        ge=1,
        description="sentences per call of a decoder that cannot stream (vdba keeps decoder.batch_size full)",
        json_schema_extra=flag("--batch-size"),
    )


# The components a run names one of each (filters are a list), each also a component kind.
COMPONENTS = ("dataset", "expander", "decoder", "aligner")

# Settings added after runs could already be resumed, with the value that reproduces what a
# run started before them did (a resumed run must go on as it began).
BEFORE_ADDED: dict[str, Any] = {"avoid_words": False, "rerank": {"alignment": 1.0}, "min_words": 0, "keep_copies": False, "filter_candidates": False, "content_targets": False}


class RunConfig(PipelineSettings):
    """Everything ``spanaug run`` needs; the embedded defaults are the main job."""

    dataset: ComponentSpec = Field(default=ComponentSpec(name="framenet"), description="dataset reader", json_schema_extra=flag("--dataset"))
    input: Path | None = Field(
        default=None, description="dataset file or folder (default: the dataset's own sample)", json_schema_extra=flag("--input")
    )
    limit: int | None = Field(default=None, ge=1, description="augment only the first N examples", json_schema_extra=flag("--limit"))
    expander: ComponentSpec = Field(default=ComponentSpec(name="inflect"), description="constraint expander", json_schema_extra=flag("--expander"))
    decoder: ComponentSpec = Field(default=ComponentSpec(name="vdba"), description="constrained decoder", json_schema_extra=flag("--decoder"))
    aligner: ComponentSpec = Field(default=ComponentSpec(name="bert-span"), description="span aligner", json_schema_extra=flag("--aligner"))
    filters: list[ComponentSpec] = Field(default_factory=list, description="all must accept a record")
    lexicon: ComponentSpec | None = Field(
        default=None,
        description="offers words the rewritten span could become, which the prompt names (framenet: the frame's "
        "lexical units near the old word); none unless given or the dataset suggests one (docs/quality.md)",
        json_schema_extra=flag("--lexicon"),
    )
    engine: ComponentSpec = Field(
        default=ComponentSpec(name="local"),
        description="where the pipeline runs: local (this process) or ray (docs/scale.md)",
        json_schema_extra=flag("--engine"),
    )
    output: Path = Field(default=Path("out"), description="output folder", json_schema_extra=flag("--output", "-o"))
    write_rejected: bool = Field(default=True, description="also write rejected.jsonl")
    commit_every_s: float = Field(
        default=30.0, ge=0, description="make the output resumable at least this often, in seconds (a kill loses at most this much finished work)"
    )

    @model_validator(mode="before")
    @classmethod
    def _names_as_specs(cls, data: Any) -> Any:
        # `decoder = "vdba"` is shorthand for `[decoder] name = "vdba"`.
        if isinstance(data, dict):
            data = dict(data)
            for key in (*COMPONENTS, "engine", "lexicon"):
                if isinstance(data.get(key), str):
                    data[key] = {"name": data[key]}
                elif isinstance(data.get(key), dict) and "name" not in data[key]:
                    # `--set aligner.threshold=0.4` tunes the default aligner.
                    default = cls.model_fields[key].default
                    if default is None:
                        # A ConfigError passes through pydantic as it is: one line, not a dump of the whole config.
                        raise ConfigError(f"{key} options given without a {key} to take them: name it too (--{key} NAME or {key}.name=NAME)")
                    data[key] = {"name": default.name, **data[key]}
            if isinstance(data.get("filters"), list):
                data["filters"] = [{"name": f} if isinstance(f, str) else f for f in data["filters"]]
        return data

    def pipeline_settings(self) -> PipelineSettings:
        return PipelineSettings(**{k: getattr(self, k) for k in PipelineSettings.model_fields})

    def fingerprint(self) -> dict[str, Any]:
        """What must not change between a run and its ``--resume``.

        Everything but output, limit, commit_every_s and the engine's options: a run may
        resume on more workers, or on another cluster, but not on another engine (each
        keeps its own in-progress state).
        """
        found = self.model_dump(mode="json", exclude={"output", "limit", "commit_every_s", "engine"})
        return {**found, "engine": self.engine.name}


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
            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"config file {path}: expected a .toml, .yaml or .yml file")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a table of settings at the top level")
    return data


def parse_value(text: str) -> Any:
    """A ``--set`` value as YAML reads a scalar or flow list: 8, 0.5, true, [a, b], text."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def parse_assignments(assignments: Iterable[str]) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` -> ``{"a": {"b": 1}, "c": "x"}``."""
    tree: dict[str, Any] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. decoder.beam_size=8")
        set_path(tree, key.strip(), parse_value(value))
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
    for dotted, value in (flags or {}).items():
        if value is not None:
            set_path(data, dotted, value)
    data = merge(data, parse_assignments(assignments))
    try:
        return RunConfig(**data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown setting '{loc}' (settings: {', '.join(sorted(RunConfig.model_fields))})")
            else:
                problems.append(f"setting '{loc}': {err['msg']} (got {err.get('input')!r})")
        source = f" in {config_file}" if config_file else ""
        raise ConfigError(f"run config{source}: " + "; ".join(problems)) from None
