"""The settings of the iterative loop, a component named with its options, and run presets.

These sit below the protocols and the run config: a ``RunPlan`` (what an engine runs)
carries ``PipelineSettings``, and the run config (``spanaug_core.config``) names each
component as a ``ComponentSpec``. A setting that deserves a ``spanaug run`` flag declares
it on its field with ``flag()`` (``spanaug_core.flags``). A ``RunPreset`` is a named set
of run settings a dataset offers (``spanaug run --preset NAME``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spanaug_core.flags import flag


class ComponentSpec(BaseModel):
    """A component by name plus its options (every key other than ``name``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


@dataclass(frozen=True)
class RunPreset:
    """Run settings under one name, offered by a dataset (its class-level ``presets``).

    ``settings`` are written as a config file writes them (``{"filters": [...],
    "iterations": 2, "decoder": {"beam_size": 4}}``); a run that names the preset takes each
    one it does not set itself, a component's options one by one. ``description`` says in a
    line what the settings are for and links the results page that measured them.
    """

    name: str
    description: str
    settings: dict[str, Any]


class PipelineSettings(BaseModel):
    """How the iterative loop runs (Culkin et al. 2021, §5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    iterations: int = Field(default=10, ge=1, description="rounds of paraphrase + align per span (raised with --resume, it takes a completed run further)", json_schema_extra=flag("--iterations"))
    top_m: int = Field(default=20, ge=1, description="candidates the aligner scores per round", json_schema_extra=flag("--top-m"))
    per_round: int = Field(
        default=1,
        ge=1,
        description="records a round may keep (the paper: 1): above 1, after its choice also the next candidates, best "
        "first, that the filters accept and whose phrase for the span holds nothing the avoid set would then bar (a "
        "whole-sentence job: a sentence not yet written), so one decode yields up to this many (docs/results/per-round.md)",
        json_schema_extra=flag("--per-round"),
    )
    chain: bool = Field(
        default=False, description="paraphrase the previous output instead of the original", json_schema_extra=flag("--chain")
    )
    rewrite_roles: list[str] = Field(default=["target"], description="span roles that are rewritten")
    skip_labels: list[str] = Field(
        default=[],
        description="labels (shell patterns) of spans left alone though their role is rewritten; a dataset may suggest "
        "some (conll-srl: PropBank copulas and auxiliary do; docs/results/srl-skips.md)",
    )
    skip_pos: list[str] = Field(
        default=[],
        description="parts of speech of spans left alone though their role is rewritten, as a reader gives them in a "
        "span's attrs[\"pos\"] (conll-srl: each CoNLL-U Plus predicate's UPOS; it suggests NOUN and AUX; docs/datasets.md)",
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
        "include = positive constraints then exact match (slower, can break the sentence; docs/results/prompting-kept-spans.md); drop = not carried",
    )
    keep_copies: bool = Field(
        default=True,
        description="keep = align: a kept span the paraphrase copies word for word, once, is kept where the copy is, "
        "and the aligner places the others (a copy needs no aligner; one that occurs twice could be either)",
    )
    carry: bool = Field(
        default=True,
        description="a record also carries the source's other spans (other groups, ungrouped spans, spans across the "
        "rewritten one) where a copy or the aligner finds them, marked attrs.carried; another group comes whole or not "
        "at all, and the record lists the source spans it lacks in dropped (false: only the rewritten span and its "
        "group's kept spans; docs/data-format.md)",
    )
    source_tokens: bool = Field(
        default=True,
        description="a paraphrase keeps as one token a word its source holds as one token that spanaug's tokenizer "
        "splits (UD's \"M.\", CoNLL-2003's \"F-16\"), so records are tokenized as their sources (false: as spanaug tokenizes)",
    )
    content_targets: bool = Field(
        default=True,
        description="a rewritten span with a content word counts as found only on a span with one: the aligner settling on "
        "the function word of a rewording (\"signed\" as the \"into\" of \"entered into\") is no alignment "
        "(false: any span it finds; docs/results/srl-skips.md)",
    )

    @model_validator(mode="after")
    def _per_round_within_top_m(self) -> PipelineSettings:
        if self.per_round > self.top_m:
            raise ValueError(f"per_round ({self.per_round}) is above top_m ({self.top_m}): a round keeps at most its top_m candidates")
        return self
