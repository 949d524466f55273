"""The ``frame-id`` trainer: find the words that evoke a frame and name the frame (Culkin et al. 2021, §6.3).

Joint trigger and frame identification as span classification: every span of at most
``max_span`` tokens is labelled with a frame or NULL (no trigger) by the model of
:mod:`spanaug_trainers.span_classifier`. What a sentence teaches depends on how it was
annotated. A full-text sentence (``meta["source"]`` in ``negatives_from``) is annotated
exhaustively, so every unannotated span is a NULL instance — with label smoothing, since
FrameNet misses some triggers (Das et al. 2014). An exemplar or paraphrase carries one
annotated target and says nothing about its other spans, so only its targets are
instances. With ``project_source`` (the default), a paraphrase of a full-text sentence of
the same training set (``meta["source_id"]``) also learns the source's labels of the spans
whose words it kept unchanged (NULL, or another target's frame): without any NULL of their
own, paraphrases taught the model to see triggers everywhere and lowered F1 below gold
(docs/results/framenet-frame-id-10pct.md). Prediction keeps the spans whose best label is
a frame, the most probable first, dropping any that overlap one already kept; with a
``lexicon`` (a :class:`~spanaug_core.protocols.LabelLexicon` such as FrameNet's), a span's
best label is taken among NULL and the frames the lexicon lists for its words. ``null_scale``
moves the line between NULL and a frame: a span is a trigger where its best frame is more
probable than that times NULL. Trained with smoothed NULL targets on few sentences, the model
gives a trigger it has not seen little probability, and a scale well below 1, chosen on dev
('dev'), finds many more of them at little cost in precision when a lexicon holds the frames
(docs/results/framenet-frame-id-10pct.md). Dev is scored as the model will predict, held to
the lexicon and at its scale ('dev': at each epoch's best), so that early stopping keeps the
epoch that predicts best. The score is F1 over (start, end, frame): a trigger
counts only with the right span and the right frame.

This module is light (no torch): the model's module is imported inside the methods.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import LabelLexicon, ProgressCallback
from spanaug_core.settings import ComponentSpec
from spanaug_core.types import Example, Span

from spanaug_trainers.bio import Triple
from spanaug_trainers.metrics import entity_units, span_scores
from spanaug_trainers.trainers import PREDICT_CHUNK, TaggerOptions

if TYPE_CHECKING:
    from spanaug_shared.vectors import WordVectors
    from spanaug_trainers.span_classifier import SpanClassifier

log = logging.getLogger(__name__)

Tokens = tuple[str, ...]
LabelledSpan = tuple[int, int, str | None]  # (start, end exclusive, frame); None: NULL, not a trigger
ScoredSpan = tuple[int, int, str, float]  # (start, end exclusive, frame, probability)


def spans_up_to(length: int, max_span: int) -> list[tuple[int, int]]:
    """Every span ``(start, end)`` of at most ``max_span`` tokens in a sentence of ``length`` tokens."""
    return [(i, j) for i in range(length) for j in range(i + 1, min(i + max_span, length) + 1)]


@dataclass(frozen=True)
class FrameSentence:
    """A sentence, its gold triggers and whether its unannotated spans are true negatives."""

    tokens: Tokens
    targets: tuple[Triple, ...]  # (start, end, frame), one frame per span, any length
    exhaustive: bool  # annotated in full (FrameNet full text): every other span is NULL
    known: tuple[LabelledSpan, ...] = ()  # of a sentence not annotated in full: other spans whose label is known
    weight: float = 1.0  # of each of its spans in the loss, relative to an annotated sentence's

    def instances(self, max_span: int) -> list[LabelledSpan]:
        """The spans to learn from: the targets of at most ``max_span`` tokens, plus NULL spans if exhaustive
        (else the ``known`` spans)."""
        frames = {(s, e): frame for s, e, frame in self.targets if e - s <= max_span}
        if not self.exhaustive:
            return [*((s, e, frame) for (s, e), frame in frames.items()), *((s, e, f) for s, e, f in self.known if e - s <= max_span)]
        return [(s, e, frames.get((s, e))) for s, e in spans_up_to(len(self.tokens), max_span)]


def projected(sentence: FrameSentence, source: FrameSentence, max_span: int) -> FrameSentence:
    """``sentence`` (a paraphrase of the exhaustive ``source``) knowing the source's label of every span of at
    most ``max_span`` words that it kept unchanged and that does not overlap one of its own targets."""
    known: list[LabelledSpan] = []
    labels = {(s, e): frame for s, e, frame in source.targets}
    matcher = SequenceMatcher(a=source.tokens, b=sentence.tokens, autojunk=False)
    for block in matcher.get_matching_blocks():
        for i, j in spans_up_to(block.size, max_span):
            start, end = block.b + i, block.b + j
            if all(end <= s or e <= start for s, e, _ in sentence.targets):
                known.append((start, end, labels.get((block.a + i, block.a + j))))
    return replace(sentence, known=tuple(known))


def resolve_overlaps(scored: Iterable[ScoredSpan]) -> list[Triple]:
    """The most probable spans that do not overlap a more probable one, in sentence order."""
    kept: list[ScoredSpan] = []
    for span in sorted(scored, key=lambda s: (-s[3], s[0], s[1])):
        if all(span[1] <= k[0] or k[1] <= span[0] for k in kept):
            kept.append(span)
    return sorted((s, e, frame) for s, e, frame, _ in kept)


def _named(value: Any) -> Any:
    """A component given by its name alone (``framenet``) as the spec it stands for."""
    return {"name": value} if isinstance(value, str) else value


def paraphrases(examples: Sequence[Example], sentences: Sequence[FrameSentence]) -> list[bool]:
    """Whether each example is a paraphrase: not exhaustive, and made from a source (``meta["source_id"]``)."""
    return [not s.exhaustive and e.meta.get("source_id") is not None for e, s in zip(examples, sentences)]


class FrameIdTrainer:
    """Joint trigger and frame identification: a BiLSTM span classifier over frozen word vectors, characters and POS."""

    name: ClassVar[str] = "frame-id"

    class Config(TaggerOptions):
        layers: int = Field(default=2, ge=1, description="stacked BiLSTM layers")
        dropout: float = Field(default=0.3, ge=0.0, lt=1.0, description="dropout on the word inputs, the BiLSTM output and in the feed-forward layer")
        patience: int = Field(default=5, ge=1, description="dev scores (epochs, unless dev_every) without a better dev F1 before stopping, counted once one finds a correct trigger")
        batch_size: int = Field(default=16, ge=1, description="sentences per step")
        max_span: int = Field(default=3, ge=1, description="longest span (tokens) that can be a trigger")
        span_hidden: int = Field(default=128, ge=1, description="hidden units of the span LSTM and the feed-forward layer")
        char_dim: int = Field(default=16, ge=1, description="character embedding size")
        char_filters: int = Field(default=32, ge=1, description="character CNN filters (width 3)")
        pos_dim: int = Field(default=16, ge=1, description="POS embedding size (used when a POS tagger is installed)")
        negative_smoothing: float = Field(default=0.2, ge=0.0, lt=1.0, description="label smoothing on NULL (non-trigger) spans")
        negatives_from: list[str] = Field(
            default=["fulltext"], description="meta['source'] values of exhaustively annotated sentences (their other spans are NULL)"
        )
        project_source: bool = Field(
            default=True, description="a paraphrase of an exhaustive training sentence (meta['source_id']) learns the source's "
            "labels of the spans it kept word for word (NULL or another frame); false: only its own targets"
        )
        lexicon: Annotated[ComponentSpec | None, BeforeValidator(_named)] = Field(
            default=None, description="a lexicon that says which frames some words may evoke (framenet, or "
            "{name: framenet, release: DIR}): a predicted trigger keeps to it, on dev (choosing the epoch) as on test"
        )
        paraphrase_share: float | None = Field(
            default=None, gt=0.0, lt=1.0, description="the most of the loss that paraphrases (meta['source_id']) may take: "
            "their spans are weighted down to this share of all training spans; unset: every span weighs the same"
        )
        null_scale: Annotated[float, Field(gt=0.0)] | Literal["dev"] | None = Field(
            default=None, description="a span is a trigger where its best frame is more probable than this times NULL: "
            "below 1, more triggers; dev chooses the epoch at this scale. 'dev': each epoch scores the value of "
            "span_classifier.NULL_SCALES with its best dev F1, and the kept epoch's is saved with the model; unset: "
            "the model's own (1 unless it was calibrated)"
        )
        exhaustive_repeat: int = Field(
            default=1, ge=1, description="times each exhaustively annotated training sentence is seen per epoch: as many "
            "passes over the gold sentences as gold alone gets, where paraphrases outnumber them (each epoch is longer)"
        )
        finish_exhaustive: bool = Field(
            default=False, description="once trained, train on from the kept weights on the exhaustively annotated "
            "sentences alone (a fresh optimiser, patience but no min_epochs or min_steps), keeping that run's best "
            "weights where they beat the first run's on dev (needs dev)"
        )
        finish_lr: float | None = Field(
            default=None, gt=0.0, description="the learning rate of finish_exhaustive's run; unset: a tenth of lr"
        )

    def __init__(self, config: FrameIdTrainer.Config) -> None:
        self.config = config
        self._loaded: dict[Path, SpanClassifier] = {}
        self.vectors: WordVectors | None = None  # a cache shared across models (see TaggerTrainer)
        self._lexicon: LabelLexicon | None = None
        self._checked: set[Path] = set()  # models whose frames were checked against the lexicon

    def sentence(self, example: Example) -> FrameSentence:
        """The frame-id view of an example: its targets (first frame of a span kept) and whether it is exhaustive."""
        frames: dict[tuple[int, int], str] = {}
        for span in example.spans:
            if span.role == "target":
                # A span evoking two frames keeps the first, as Culkin et al. (footnote 26) do.
                frames.setdefault((span.start, span.end), span.label)
        targets = tuple((s, e, frame) for (s, e), frame in frames.items())
        return FrameSentence(example.tokens, targets, example.meta.get("source") in self.config.negatives_from)

    def with_sources(self, examples: Sequence[Example], sentences: Sequence[FrameSentence]) -> list[FrameSentence]:
        """``sentences`` with each paraphrase of an exhaustive one among them projected onto its source
        (unchanged without ``project_source``)."""
        if not self.config.project_source:
            return list(sentences)
        sources = {e.id: s for e, s in zip(examples, sentences) if s.exhaustive}
        out = []
        for example, sentence in zip(examples, sentences):
            source = None if sentence.exhaustive else sources.get(example.meta.get("source_id"))
            out.append(sentence if source is None else projected(sentence, source, self.config.max_span))
        log.debug("%d paraphrase(s) projected onto their full-text source", sum(s.known != () for s in out))
        return out

    def repeated(
        self, examples: Sequence[Example], sentences: Sequence[FrameSentence]
    ) -> tuple[list[Example], list[FrameSentence]]:
        """``examples`` and their ``sentences`` with each exhaustive one ``exhaustive_repeat`` times."""
        times = self.config.exhaustive_repeat
        pairs = [(e, s) for e, s in zip(examples, sentences) for _ in range(times if s.exhaustive else 1)]
        if times > 1:
            log.info("each of %d exhaustive sentence(s) is seen %d times an epoch (exhaustive_repeat)",
                     sum(s.exhaustive for s in sentences), times)
        return [e for e, _ in pairs], [s for _, s in pairs]

    def weighted(self, examples: Sequence[Example], sentences: Sequence[FrameSentence]) -> list[FrameSentence]:
        """``sentences`` with the paraphrases' spans weighted down to ``paraphrase_share`` of all training spans
        (unchanged when unset or when the paraphrases' share is already below it)."""
        share = self.config.paraphrase_share
        if share is None:
            return list(sentences)
        paraphrase = paraphrases(examples, sentences)
        counts = [len(s.instances(self.config.max_span)) for s in sentences]
        theirs = sum(n for n, p in zip(counts, paraphrase) if p)
        if theirs == 0:
            return list(sentences)
        weight = min(1.0, share / (1.0 - share) * (sum(counts) - theirs) / theirs)
        log.info("paraphrases hold %d of %d training spans; each weighs %.3f (paraphrase_share %.2f)",
                 theirs, sum(counts), weight, share)
        return [replace(s, weight=weight) if p else s for s, p in zip(sentences, paraphrase)]

    def with_predictions(self, example: Example, predicted: Sequence[Triple]) -> Example:
        """``example`` with its targets, and their frame elements, replaced by the predicted triggers."""
        groups = {s.group for s in example.spans if s.role == "target"}
        # Frame elements belong to the gold targets; with those gone they would point at nothing.
        kept = [s for s in example.spans if s.role != "target" and not (s.role == "argument" and s.group in groups)]
        new = [Span(start=s, end=e, label=frame, role="target", group=f"pred{k}") for k, (s, e, frame) in enumerate(predicted)]
        return example.model_copy(update={"spans": tuple(sorted([*kept, *new], key=lambda s: (s.start, s.end)))})

    # -- the Trainer protocol ---------------------------------------------------------
    def train(
        self,
        train: Iterable[Example],
        dev: Iterable[Example] | None,
        out_dir: Path,
        progress: ProgressCallback | None = None,
    ) -> dict[str, float]:
        """Fit the span classifier on ``train``, early-stop on ``dev`` F1, save it to ``out_dir``; returns dev metrics."""
        from spanaug_shared import postag
        from spanaug_shared.vectors import vectors_for
        from spanaug_trainers.span_classifier import NULL_SCALES, ClassifierConfig, fit, save_classifier, vocabulary
        from spanaug_trainers.training import fit_options, training_metrics

        c = self.config
        train = list(train)
        train_sentences = self.with_sources(train, [self.sentence(example) for example in train])
        dev_sentences = [self.sentence(example) for example in dev] if dev is not None else None
        if c.null_scale == "dev" and not dev_sentences:
            raise ConfigError(f"the {self.name} trainer's null_scale 'dev' is chosen on dev data: give dev examples, "
                              "or set null_scale to a number")
        if c.finish_exhaustive and not dev_sentences:
            raise ConfigError(f"the {self.name} trainer's finish_exhaustive keeps its second run only where dev says "
                              "it is better: give dev examples")
        if c.finish_exhaustive and not any(s.exhaustive for s in train_sentences):
            raise ConfigError(f"the {self.name} trainer's finish_exhaustive trains on the exhaustively annotated "
                              f"sentences, and no training example is one (meta source in {c.negatives_from})")
        frames = sorted({frame for s in train_sentences for _, _, frame in s.instances(c.max_span) if frame is not None})
        if not frames:
            raise ConfigError(f"the {self.name} trainer found nothing to learn: no training example has a target span "
                              f"of at most {c.max_span} tokens (role 'target', label = frame)")
        too_long = sum(e - s > c.max_span for sentence in train_sentences for s, e, _ in sentence.targets)
        if too_long:
            log.debug("%d training target(s) longer than %d tokens left out", too_long, c.max_span)
        choice = postag.find_tagger()
        if choice.tagger is None:
            log.info("training frame-id without POS embeddings: %s", choice.description)
        everything = [s.tokens for s in [*train_sentences, *(dev_sentences or [])]]
        tags = postag.tag_sentences(choice.tagger, everything) if choice.tagger is not None else None
        vectors = vectors_for(self.vectors, c.encoder, c.device, c.max_length)
        shape = ClassifierConfig(
            trainer=self.name, encoder=c.encoder, max_length=c.max_length, dim=vectors.dim, frames=frames,
            chars=vocabulary(ch for s in train_sentences for word in s.tokens for ch in word),
            pos=tags is not None, pos_tags=vocabulary(t for s in train_sentences for t in tags[s.tokens]) if tags is not None else [],
            tagger=choice.description, hidden=c.hidden, layers=c.layers, dropout=c.dropout, max_span=c.max_span,
            span_hidden=c.span_hidden, char_dim=c.char_dim, char_filters=c.char_filters, pos_dim=c.pos_dim,
            negative_smoothing=c.negative_smoothing,
        )
        options = fit_options(c, paraphrases(train, train_sentences).count(False))
        held = self._lookup(frames, out_dir) if dev_sentences else None
        # Repeated before weighting, so that paraphrase_share is a share of what an epoch sees; only
        # the fit sees the repeats (the counts and vocabularies above are of distinct sentences).
        epoch = self.weighted(*self.repeated(train, train_sentences))
        scales = NULL_SCALES if c.null_scale == "dev" else (c.null_scale or 1.0,)
        # A fresh Adam's first steps move every weight by about the learning rate: a tenth of it by
        # default, so that the second run starts near the weights it was given.
        finish_lr = (c.finish_lr or c.lr / 10) if c.finish_exhaustive else None
        model = fit(shape, epoch, dev_sentences, vectors, tags, self.score, options, progress, held, scales, finish_lr)
        metrics = training_metrics(model.config.training)
        if c.null_scale == "dev":
            by_scale = model.config.training["null_scales"]
            log.info("null_scale %g: dev F1 %.4f (%.4f at 1)", model.config.null_scale, metrics["dev_f1"], by_scale["1.0"])
            metrics.update(null_scale=model.config.null_scale, dev_f1_at_1=by_scale["1.0"])
        if c.finish_exhaustive:
            finish = model.config.training["finish"]
            log.info("finishing on %d exhaustive sentence(s) at lr %g: %d step(s), %s", finish["sentences"], finish_lr, finish["steps_run"],
                     "its best weights kept" if finish["kept"] else "no better on dev: the first run's weights kept")
            metrics.update(finish_kept=float(finish["kept"]), finish_steps_run=float(finish["steps_run"]))
        save_classifier(model, out_dir)
        self._loaded[out_dir.resolve()] = model
        return metrics

    def predict(self, model_dir: Path, examples: Iterable[Example]) -> Iterator[Example]:
        """Each example with its targets replaced by the predicted triggers and frames (frame elements dropped)."""
        from spanaug_trainers.span_classifier import classify

        model = self._model(model_dir)
        tagger = self._tagger(model_dir, model)
        stream = iter(examples)
        while chunk := list(islice(stream, PREDICT_CHUNK)):
            sentences = [example.tokens for example in chunk]
            vectors, tags = self._inputs(model, tagger, sentences)
            predicted = classify(model, sentences, vectors, tags, max(self.config.batch_size, 64), self._licensed(model_dir),
                                 self._null_scale(model))
            yield from (self.with_predictions(example, spans) for example, spans in zip(chunk, predicted))

    def calibrate(self, model_dir: Path, dev: Iterable[Example]) -> tuple[float, dict[float, float]]:
        """The ``null_scale`` that 'dev' would save with the model in ``model_dir``, chosen on ``dev`` (held to the
        lexicon when one is set), and the dev F1 of each scale tried; the saved model is left as it is."""
        from spanaug_trainers.span_classifier import best_null_scale

        model = self._model(model_dir)
        sentences = [self.sentence(example) for example in dev]
        if not sentences:
            raise ConfigError(f"calibrating {model_dir}'s null_scale needs dev examples; none were given")
        vectors, tags = self._inputs(model, self._tagger(model_dir, model), [s.tokens for s in sentences])
        return best_null_scale(model, sentences, vectors, tags, self.score, self._licensed(model_dir))

    def evaluate(self, model_dir: Path, examples: Iterable[Example]) -> dict[str, float]:
        """Precision, recall and F1 of (span, frame) on gold ``examples`` (and the gold/predicted/correct counts)."""
        gold = list(examples)
        predicted = [self.sentence(example).targets for example in self.predict(model_dir, gold)]
        return self.score([self.sentence(example) for example in gold], predicted)["all"]

    def score(self, gold: Sequence[FrameSentence], predicted: Sequence[Sequence[Triple]]) -> dict[str, dict[str, float]]:
        """Span scores of (start, end, frame) overall and per frame; ``predicted[i]`` goes with ``gold[i]``."""
        # Targets longer than max_span stay in the gold: missed, as in Culkin et al. (footnote 27).
        return span_scores([entity_units(s.targets) for s in gold], [entity_units(spans) for spans in predicted])

    def tagged_spans(self, example: Example) -> list[Span]:
        """The targets of ``example`` without their group: the model names triggers and frames, not annotation sets."""
        return [span.model_copy(update={"group": None}) for span in example.spans if span.role == "target"]

    # -- helpers ----------------------------------------------------------------------
    def _licensed(self, model_dir: Path) -> Callable[[str], frozenset[str]] | None:
        """The ``lexicon`` option's word -> frames lookup for predicting with the model in ``model_dir``."""
        if self.config.lexicon is None:
            return None
        return self._lookup(self._model(model_dir).config.frames, model_dir)

    def _lookup(self, frames: Sequence[str], model_dir: Path) -> Callable[[str], frozenset[str]] | None:
        """The ``lexicon`` option's word -> frames lookup, built once (None when unset); warns once per model
        of its ``frames`` the lexicon lists no word for."""
        spec = self.config.lexicon
        if spec is None:
            return None
        if self._lexicon is None:
            from spanaug_core.plugins import default_registry

            lexicon = default_registry().create("lexicon", spec.name, **spec.options)
            if not isinstance(lexicon, LabelLexicon):
                raise ConfigError(f"the {self.name} trainer's lexicon {spec.name!r} cannot say which frames words evoke "
                                  f"(it has no labels_for); pick one that can, e.g. framenet")
            self._lexicon = lexicon
        key = model_dir.resolve()
        if key not in self._checked:
            self._checked.add(key)
            missing = sorted(set(frames) - self._lexicon.labels())
            if missing:
                # A lexicon of another release (the framenet lexicon's embedded sample, say) would silence them.
                log.warning("%d of the model's %d frames are not in the lexicon %s, so they are never predicted: %s%s",
                            len(missing), len(frames), spec.name, ", ".join(missing[:5]), "..." if len(missing) > 5 else "")
        return self._lexicon.labels_for

    def _tagger(self, model_dir: Path, model: SpanClassifier) -> Any:
        """The POS tagger to predict with the model in ``model_dir`` (None if it was trained without POS tags)."""
        from spanaug_shared import postag

        if not model.config.pos:
            return None
        choice = postag.find_tagger()
        if choice.tagger is None:
            raise ConfigError(f"{model_dir} was trained with POS tags ({model.config.tagger}) but no POS tagger is "
                              f"installed here: {choice.description}")
        return choice.tagger

    def _inputs(self, model: SpanClassifier, tagger: Any, sentences: Sequence[Tokens]) -> tuple[WordVectors, Any]:
        """The word vectors (``sentences`` encoded) and POS tags (None without a tagger) ``model`` reads."""
        from spanaug_shared import postag
        from spanaug_shared.vectors import vectors_for

        vectors = vectors_for(self.vectors, model.config.encoder, self.config.device, model.config.max_length)
        vectors.encode(sentences)
        return vectors, postag.tag_sentences(tagger, sentences) if tagger is not None else None

    def _null_scale(self, model: SpanClassifier) -> float:
        """The option's number, else the model's own (calibrated when it was trained with 'dev')."""
        return self.config.null_scale if isinstance(self.config.null_scale, float) else model.config.null_scale

    def _model(self, model_dir: Path) -> SpanClassifier:
        """The saved classifier in ``model_dir`` (loaded once per trainer), checked to be a frame-id model."""
        from spanaug_trainers.span_classifier import load_classifier

        key = model_dir.resolve()
        if key not in self._loaded:
            self._loaded[key] = load_classifier(model_dir, self.name, self.config.device)
        return self._loaded[key]
