"""The ``ner`` and ``srl`` trainers: one BiLSTM-CRF tagger, two ways of cutting examples into instances.

``ner`` tags each sentence's entity spans (role ``entity``; label = type). ``srl`` makes
one instance per predicate (a ``target`` span), marks the predicate with an indicator
embedding and tags that predicate's ``argument`` spans (same ``group``). Everything else
— frozen word vectors cached per sentence, the tagger, early stopping on dev F1, the
saved model folder, prediction — is the shared :class:`TaggerTrainer`. Prediction
replaces the spans a trainer is responsible for and leaves every other span, and the
example's layout meta, untouched, so a dataset writer writes the predictions back in the
input's own format.

No torch at import time: the modules that need it are imported inside the methods.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig, ProgressCallback
from spanaug_core.types import Example, Span
from spanaug_shared.encoder import DEFAULT_ENCODER

from spanaug_trainers.bio import Instance, TagSet, Triple, non_overlapping
from spanaug_trainers.metrics import Unit, conll05_units, entity_units, span_scores

if TYPE_CHECKING:
    from spanaug_shared.vectors import WordVectors
    from spanaug_trainers.tagger import BioTagger

log = logging.getLogger(__name__)

# Examples predicted together: their vectors are encoded in one go and then dropped.
PREDICT_CHUNK = 512


class TaggerOptions(ComponentConfig):
    """Options of every tagger trainer (the model's shape, the optimisation, the device)."""

    encoder: str = Field(default=DEFAULT_ENCODER, description="frozen encoder: preset name or local Hugging Face folder")
    max_length: int = Field(default=256, ge=8, description="sub-words per sentence the encoder reads (words beyond get zero vectors)")
    hidden: int = Field(default=128, ge=1, description="BiLSTM hidden units per direction")
    layers: int = Field(default=1, ge=1, description="BiLSTM layers")
    dropout: float = Field(default=0.3, ge=0.0, lt=1.0, description="dropout on the word vectors and the BiLSTM output")
    epochs: int = Field(default=30, ge=1, description="most epochs (more when min_steps needs them)")
    patience: int = Field(default=5, ge=1, description="dev scores (epochs, unless dev_every) without a better dev F1 before stopping")
    min_epochs: int = Field(default=1, ge=1, description="epochs always trained before early stopping may stop (tiny training sets need many)")
    min_steps: int = Field(default=0, ge=0, description="optimiser steps always trained before early stopping may stop, past epochs if need be "
                           "(the same floor for training sets of any size)")
    dev_every: Annotated[int, Field(ge=0)] | Literal["gold"] = Field(
        default=0, description="score dev every this many optimiser steps, not at each epoch's end (0): conditions whose "
        "epochs differ in length are then chosen among as many checkpoints; 'gold': every pass over the training examples "
        "that are not paraphrases (no meta source_id), as often as those alone would be scored")
    lr: float = Field(default=1e-3, gt=0.0, description="Adam learning rate")
    batch_size: int = Field(default=16, ge=1, description="instances per step")
    clip: float = Field(default=5.0, gt=0.0, description="gradient norm clipping")
    seed: int = Field(default=0, description="random seed (initialisation, shuffling, dropout)")
    device: str = Field(default="cpu", description="torch device")


class TaggerTrainer(ABC):
    """Shared BiLSTM-CRF span tagger; subclasses say how examples become instances and back."""

    name: ClassVar[str]
    Config: ClassVar[type[TaggerOptions]] = TaggerOptions

    def __init__(self, config: TaggerOptions) -> None:
        self.config = config
        self._loaded: dict[Path, BioTagger] = {}
        # Set by callers that train many models over the same sentences (learning curves):
        # every train/predict call then reuses one cache instead of encoding again.
        self.vectors: WordVectors | None = None

    # -- what subclasses define -------------------------------------------------------
    @abstractmethod
    def instances(self, example: Example) -> list[Instance]:
        """The tag sequences of one example, gold spans included."""

    @abstractmethod
    def units(self, spans: Iterable[Triple]) -> list[Unit]:
        """What the metric counts in one instance's spans."""

    @abstractmethod
    def with_predictions(self, example: Example, predicted: Sequence[Sequence[Triple]]) -> Example:
        """``example`` with the spans of its instances replaced by ``predicted`` (one list per instance)."""

    def indicator_dim(self) -> int:
        """Size of the embedding of the instances' marker (0: instances mark nothing)."""
        return 0

    # -- the Trainer protocol ---------------------------------------------------------
    def train(
        self,
        train: Iterable[Example],
        dev: Iterable[Example] | None,
        out_dir: Path,
        progress: ProgressCallback | None = None,
    ) -> dict[str, float]:
        """Fit a tagger on ``train``, early-stop on ``dev`` F1, save it to ``out_dir``; returns dev metrics."""
        from spanaug_shared.vectors import vectors_for
        from spanaug_trainers.tagger import TaggerConfig, save_tagger
        from spanaug_trainers.training import fit, fit_options, training_metrics

        per_example = [(example, self.instances(example)) for example in train]
        train_instances = [inst for _, insts in per_example for inst in insts]
        dev_instances = self._all_instances(dev) if dev is not None else None
        labels = {label for inst in train_instances for _, _, label in inst.spans}
        if not train_instances or not labels:
            raise ConfigError(f"the {self.name} trainer found nothing to learn: no training instance has a span it tags")
        vectors = vectors_for(self.vectors, self.config.encoder, self.config.device, self.config.max_length)
        c = self.config
        shape = TaggerConfig(
            trainer=self.name, encoder=c.encoder, max_length=c.max_length, dim=vectors.dim, tags=TagSet(labels).tags,
            hidden=c.hidden, layers=c.layers, dropout=c.dropout, indicator_dim=self.indicator_dim(),
        )
        options = fit_options(c, sum(len(insts) for example, insts in per_example if example.meta.get("source_id") is None))
        model = fit(shape, train_instances, dev_instances, vectors, self._score, options, progress)
        save_tagger(model, out_dir)
        self._loaded[out_dir.resolve()] = model
        return training_metrics(model.config.training)

    def predict(self, model_dir: Path, examples: Iterable[Example]) -> Iterator[Example]:
        """Each example with the spans this trainer tags replaced by the model's predictions."""
        from spanaug_shared.vectors import vectors_for
        from spanaug_trainers.training import tag

        model = self._model(model_dir)
        stream = iter(examples)
        while chunk := list(islice(stream, PREDICT_CHUNK)):
            per_example = [self.instances(example) for example in chunk]
            flat = [inst for insts in per_example for inst in insts]
            vectors = vectors_for(self.vectors, model.config.encoder, self.config.device, model.config.max_length)
            vectors.encode([inst.tokens for inst in flat])
            predicted = iter(tag(model, flat, vectors, batch_size=max(self.config.batch_size, 64)))
            for example, insts in zip(chunk, per_example):
                yield self.with_predictions(example, [next(predicted) for _ in insts])

    def evaluate(self, model_dir: Path, examples: Iterable[Example]) -> dict[str, float]:
        """Precision, recall and F1 of the saved model on gold ``examples`` (and the gold/predicted counts)."""
        gold = list(examples)
        predicted = list(self.predict(model_dir, gold))
        gold_instances = self._all_instances(gold)
        predicted_spans = [inst.spans for inst in self._all_instances(predicted)]
        return self._score(gold_instances, predicted_spans)["all"]

    def tagged_spans(self, example: Example) -> list[Span]:
        """The spans of ``example`` this trainer predicts (those its predictions would replace)."""
        cleared = self.with_predictions(example, [[] for _ in self.instances(example)])
        left = list(cleared.spans)
        tagged = []
        for span in example.spans:
            if span in left:
                left.remove(span)
            else:
                tagged.append(span)
        return tagged

    # -- shared helpers ---------------------------------------------------------------
    def _all_instances(self, examples: Iterable[Example]) -> list[Instance]:
        return [inst for example in examples for inst in self.instances(example)]

    def _score(self, gold: Sequence[Instance], predicted: Sequence[Sequence[Triple]]) -> dict[str, dict[str, float]]:
        return span_scores([self.units(inst.spans) for inst in gold], [self.units(spans) for spans in predicted])

    def _model(self, model_dir: Path) -> BioTagger:
        """The saved tagger in ``model_dir`` (loaded once per trainer), checked to be this trainer's."""
        from spanaug_trainers.tagger import load_tagger, read_config

        key = model_dir.resolve()
        if key not in self._loaded:
            made_by = read_config(model_dir).trainer
            if made_by != self.name:
                raise ConfigError(f"{model_dir} holds a '{made_by}' model; use the {made_by} trainer, not {self.name}")
            self._loaded[key] = load_tagger(model_dir, self.config.device)
        return self._loaded[key]


def _triples(spans: Iterable[Span]) -> list[Triple]:
    return [(s.start, s.end, s.label) for s in spans]


class NerTrainer(TaggerTrainer):
    """BiLSTM-CRF NER tagger over frozen encoder word vectors (span F1 as seqeval computes it)."""

    name: ClassVar[str] = "ner"

    class Config(TaggerOptions):
        roles: list[str] = Field(default=["entity"], min_length=1, description="span roles tagged as entities (predictions get the first)")

    def instances(self, example: Example) -> list[Instance]:
        spans, dropped = non_overlapping(_triples(s for s in example.spans if s.role in self.config.roles))
        if dropped:
            log.debug("%s: %d overlapping entity span(s) left out (one tag per token)", example.id, dropped)
        return [Instance(tokens=example.tokens, spans=tuple(spans))]

    def units(self, spans: Iterable[Triple]) -> list[Unit]:
        return entity_units(spans)

    def with_predictions(self, example: Example, predicted: Sequence[Sequence[Triple]]) -> Example:
        (entities,) = predicted
        kept = [s for s in example.spans if s.role not in self.config.roles]
        role = self.config.roles[0]
        new = [Span(start=s, end=e, label=label, role=role) for s, e, label in entities]
        return example.model_copy(update={"spans": tuple(sorted([*kept, *new], key=lambda s: (s.start, s.end)))})


class SrlTrainer(TaggerTrainer):
    """BiLSTM-CRF SRL tagger, one pass per predicate with an indicator embedding (CoNLL-2005 F1)."""

    name: ClassVar[str] = "srl"

    class Config(TaggerOptions):
        indicator_dim: int = Field(default=16, ge=1, description="size of the predicate-indicator embedding")

    def indicator_dim(self) -> int:
        return self.config.indicator_dim

    def instances(self, example: Example) -> list[Instance]:
        out = []
        for target in (s for s in example.spans if s.role == "target"):
            marker = (target.start, target.end)
            arguments = _triples(s for s in example.spans if s.role == "argument" and s.group == target.group)
            spans, dropped = non_overlapping(arguments, avoid=marker)
            if dropped:
                log.debug("%s: %d argument span(s) of predicate %s left out (overlap)", example.id, dropped, target.group)
            out.append(Instance(tokens=example.tokens, spans=tuple(spans), marker=marker))
        return out

    def units(self, spans: Iterable[Triple]) -> list[Unit]:
        return conll05_units(spans)

    def with_predictions(self, example: Example, predicted: Sequence[Sequence[Triple]]) -> Example:
        targets = [s for s in example.spans if s.role == "target"]
        groups = {t.group for t in targets}
        # Arguments of a predicted predicate are replaced; anything else (orphans, other roles) stays.
        others = [s for s in example.spans if s.role != "target" and not (s.role == "argument" and s.group in groups)]
        spans: list[Span] = []
        for target, arguments in zip(targets, predicted, strict=True):
            spans.append(target)
            spans += [Span(start=s, end=e, label=label, role="argument", group=target.group) for s, e, label in arguments]
        return example.model_copy(update={"spans": tuple(spans + others)})
