"""A span classifier over a sentence: every short span gets a label or NULL (the frame-id model).

Each word is the concatenation of its frozen encoder vector (cached in
:class:`~spanaug_shared.vectors.WordVectors`), a character CNN (width 3, max-pooled over
the word's first ``MAX_CHARS`` characters) and, when a POS tagger was available at
training time, a POS embedding. A stacked BiLSTM reads the words; a unidirectional LSTM
reads each span of at most ``max_span`` tokens of its output, and its last state goes
through a feed-forward layer to logits over NULL (index 0) and the labels. All spans of
a batch are gathered into one padded ``(spans, max_span, 2 * hidden)`` tensor and packed,
so the span LSTM runs once per batch. The BiLSTM states and the span state are layer
normalised (not in Culkin et al.): without it the stacked LSTMs start out nearly constant
and training sat at the NULL prior for hundreds of steps on real FrameNet.

Training minimises cross-entropy against a target distribution per span: one-hot for a
labelled span; for a NULL span, one-hot smoothed the standard way (Szegedy et al. 2016),
``(1 - ε)`` on NULL plus ``ε / (labels + 1)`` on every class, since a NULL in FrameNet
full text may be a trigger nobody annotated. Each span's loss is weighted by its sentence's
``weight`` (the frame-id trainer's ``paraphrase_share``). The epochs, early stopping on dev F1 and
the best weights are :func:`spanaug_trainers.training.run_epochs`. A model folder holds ``model.safetensors`` and
``config.json`` (:class:`ClassifierConfig`).

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, ValidationError

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressCallback

from spanaug_shared.vectors import WordVectors
from spanaug_trainers.bio import Triple
from spanaug_trainers.frame_id import FrameSentence, ScoredSpan, Tokens, resolve_overlaps, spans_up_to
from spanaug_trainers.tagger import CONFIG_FILE, WEIGHTS_FILE
from spanaug_trainers.training import EpochSteps, FitOptions, run_epochs, seeded_start, step, steps_per_epoch

PAD, UNK = 0, 1  # ids of padding and of unseen symbols in the character and POS vocabularies
SPECIALS = ["<pad>", "<unk>"]
MAX_CHARS = 20  # characters of a word the CNN reads
NULL = 0  # logit index of "no label"
# The null_scale values a model is calibrated over: 1 down to 1e-5, eight steps a decade. Near
# smoothing / (1 - smoothing) / (labels + 1), what a smoothed NULL target gives each label, every
# NULL span that a lexicon licenses turns into a trigger, and dev F1 falls off a cliff: the grid is
# fine so that the best scale just above that line is among it.
NULL_SCALES = tuple(10 ** (-k / 8) for k in range(41))

Tags = Mapping[Tokens, Sequence[str]]
Scorer = Callable[[Sequence[FrameSentence], Sequence[Sequence[Triple]]], dict[str, dict[str, float]]]


def vocabulary(symbols: Iterable[str]) -> list[str]:
    """The id -> symbol list of ``symbols``: padding, unknown, then the symbols sorted."""
    return [*SPECIALS, *sorted(set(symbols))]


class ClassifierConfig(BaseModel):
    """What a saved span classifier needs to be rebuilt: trainer, encoder, vocabularies, shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trainer: str
    encoder: str
    max_length: int
    dim: int
    frames: list[str]  # label i + 1 is logit i + 1; logit 0 is NULL
    chars: list[str]
    pos: bool
    pos_tags: list[str]
    tagger: str  # which POS tagger made the training tags (or why there were none)
    hidden: int
    layers: int
    dropout: float
    max_span: int
    span_hidden: int
    char_dim: int
    char_filters: int
    pos_dim: int
    negative_smoothing: float
    null_scale: float = 1.0  # a span is a trigger where its best label beats this times NULL (calibrated on dev)
    training: dict[str, Any] = {}


@dataclass(frozen=True)
class Features:
    """One sentence's inputs, computed once: word vectors (n, dim), character ids (n, MAX_CHARS), POS ids (n,)."""

    words: torch.Tensor
    chars: torch.Tensor
    pos: torch.Tensor


@dataclass(frozen=True)
class Batch:
    """Padded inputs of B sentences and the spans to classify: rows ``(sentence, start, end)``."""

    words: torch.Tensor  # (B, T, dim)
    chars: torch.Tensor  # (B, T, MAX_CHARS)
    pos: torch.Tensor  # (B, T)
    lengths: torch.Tensor  # (B,) on the CPU, as packing wants
    spans: torch.Tensor  # (N, 3)


class SpanClassifier(torch.nn.Module):
    """Words (vector, character CNN, POS) -> stacked BiLSTM -> span LSTM -> feed-forward -> NULL + label logits."""

    def __init__(self, config: ClassifierConfig) -> None:
        super().__init__()
        self.config = config
        self.char_ids = {ch: i for i, ch in enumerate(config.chars)}
        self.pos_ids = {tag: i for i, tag in enumerate(config.pos_tags)}
        self.char_embedding = torch.nn.Embedding(len(config.chars), config.char_dim, padding_idx=PAD)
        self.char_cnn = torch.nn.Conv1d(config.char_dim, config.char_filters, kernel_size=3, padding=1)
        self.pos_embedding = torch.nn.Embedding(len(config.pos_tags), config.pos_dim, padding_idx=PAD) if config.pos else None
        width = config.dim + config.char_filters + (config.pos_dim if config.pos else 0)
        self.dropout = torch.nn.Dropout(config.dropout)
        self.lstm = torch.nn.LSTM(
            width, config.hidden, num_layers=config.layers, batch_first=True, bidirectional=True,
            dropout=config.dropout if config.layers > 1 else 0.0,
        )
        # Without these norms the stacked LSTMs' states barely differ at initialisation (see the module docstring).
        self.context_norm = torch.nn.LayerNorm(2 * config.hidden)
        self.span_lstm = torch.nn.LSTM(2 * config.hidden, config.span_hidden, batch_first=True)
        self.span_norm = torch.nn.LayerNorm(config.span_hidden)
        self.feed_forward = torch.nn.Sequential(
            torch.nn.Linear(config.span_hidden, config.span_hidden), torch.nn.ReLU(), torch.nn.Dropout(config.dropout),
            torch.nn.Linear(config.span_hidden, len(config.frames) + 1),
        )

    def features(self, tokens: Tokens, vectors: WordVectors, tags: Tags | None) -> Features:
        """The inputs of one sentence (encoded in ``vectors``; tagged in ``tags`` if the model reads POS)."""
        chars = [[self.char_ids.get(ch, UNK) for ch in word[:MAX_CHARS]] for word in tokens]
        pos = torch.zeros(len(tokens), dtype=torch.long)
        if self.config.pos:
            if tags is None:
                raise ValueError("this model reads POS tags; none were given")
            pos = torch.tensor([self.pos_ids.get(tag, UNK) for tag in tags[tuple(tokens)]])
        padded = torch.tensor([ids + [PAD] * (MAX_CHARS - len(ids)) for ids in chars])
        return Features(vectors[tokens], padded, pos)

    def contextual(self, batch: Batch) -> torch.Tensor:
        """BiLSTM states (B, T, 2 * hidden) of the batch's words."""
        size, width, chars = batch.chars.shape
        embedded = self.char_embedding(batch.chars.view(size * width, chars)).transpose(1, 2)
        # ReLU output is >= 0, so zeroing the padding positions keeps them out of the max.
        convolved = torch.relu(self.char_cnn(embedded)).masked_fill((batch.chars.view(size * width, 1, chars) == PAD), 0.0)
        inputs = [batch.words, convolved.max(dim=2).values.view(size, width, -1)]
        if self.pos_embedding is not None:
            inputs.append(self.pos_embedding(batch.pos))
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            self.dropout(torch.cat(inputs, dim=2)), batch.lengths, batch_first=True, enforce_sorted=False
        )
        hidden, _ = self.lstm(packed)
        hidden, _ = torch.nn.utils.rnn.pad_packed_sequence(hidden, batch_first=True, total_length=width)
        return self.dropout(self.context_norm(hidden))

    def forward(self, batch: Batch) -> torch.Tensor:
        """Logits (N, 1 + labels) of the batch's spans; column 0 is NULL."""
        hidden = self.contextual(batch)
        sentence, start, end = batch.spans.unbind(1)
        offsets = torch.arange(self.config.max_span, device=hidden.device)
        # Positions past a span's end are padding the packed LSTM never reads; clamping keeps them in range.
        positions = (start[:, None] + offsets[None, :]).clamp(max=hidden.shape[1] - 1)
        pieces = hidden[sentence[:, None], positions]
        packed = torch.nn.utils.rnn.pack_padded_sequence(pieces, (end - start).cpu(), batch_first=True, enforce_sorted=False)
        _, (last, _) = self.span_lstm(packed)
        return self.feed_forward(self.span_norm(last[-1]))


def collate(features: Sequence[Features], spans: Sequence[torch.Tensor], device: str) -> Batch:
    """One padded batch of sentences with their spans (``spans[b]``: (m, 2) rows ``(start, end)``)."""
    pad = torch.nn.utils.rnn.pad_sequence
    index = torch.cat([torch.cat([torch.full((len(s), 1), b), s], dim=1) for b, s in enumerate(spans)])
    return Batch(
        words=pad([f.words for f in features], batch_first=True).to(device),
        chars=pad([f.chars for f in features], batch_first=True, padding_value=PAD).to(device),
        pos=pad([f.pos for f in features], batch_first=True, padding_value=PAD).to(device),
        lengths=torch.tensor([len(f.words) for f in features]),
        spans=index.to(device),
    )


def soft_targets(labels: torch.Tensor, smoothing: torch.Tensor, classes: int) -> torch.Tensor:
    """Target distributions (N, classes): one-hot of ``labels`` smoothed by ``smoothing[i]`` (0: none)."""
    one_hot = torch.nn.functional.one_hot(labels, classes).float()
    return one_hot * (1.0 - smoothing[:, None]) + smoothing[:, None] / classes


def span_loss(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``logits`` (N, classes) against ``targets`` (N, classes), each span's times its weight, over N."""
    # Over N, not over the weights' sum: a batch of down-weighted spans alone must move the model less too.
    return -((targets * logits.log_softmax(dim=1)).sum(dim=1) * weights).mean()


def classify(
    model: SpanClassifier,
    sentences: Sequence[Tokens],
    vectors: WordVectors,
    tags: Tags | None,
    batch_size: int = 64,
    licensed: Callable[[str], frozenset[str]] | None = None,
    null_scale: float = 1.0,
) -> list[list[Triple]]:
    """Predicted (start, end, label) of each sentence (encoded in ``vectors``), overlaps resolved.

    With ``licensed`` (a span's words -> the labels they may carry), a span takes its most probable
    label among NULL and those: words the lexicon does not list are never a trigger. A span is a
    trigger where its best label is more probable than ``null_scale`` times NULL."""
    features = [model.features(tokens, vectors, tags) for tokens in sentences]
    return labelled(model, odds(model, features, batch_size, sentences, licensed), null_scale)


@dataclass(frozen=True)
class SpanOdds:
    """One sentence's candidate spans with, for each, NULL's probability and its best label's (index and probability)."""

    spans: list[tuple[int, int]]
    null: list[float]
    best: list[float]
    label: list[int]  # logit index, never NULL

    def above(self, scale: float) -> SpanOdds:
        """Only the spans whose best label is more probable than ``scale`` times NULL: the triggers at any
        scale from ``scale`` up are among them."""
        rows = [row for row in zip(self.spans, self.null, self.best, self.label) if row[2] > scale * row[1]]
        return SpanOdds(*(list(column) for column in zip(*rows))) if rows else SpanOdds([], [], [], [])


def odds(
    model: SpanClassifier,
    features: Sequence[Features],
    batch_size: int,
    sentences: Sequence[Tokens],
    licensed: Callable[[str], frozenset[str]] | None = None,
) -> list[SpanOdds]:
    """Each sentence's :class:`SpanOdds`, computed once so that any ``null_scale`` can label them."""
    model.eval()
    device = str(next(model.parameters()).device)
    label_ids = {label: i + 1 for i, label in enumerate(model.config.frames)}
    # Length-sorted batches pad little; results go back in input order.
    order = sorted(range(len(features)), key=lambda i: len(features[i].words))
    out: list[SpanOdds | None] = [None] * len(features)
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            rows = order[b : b + batch_size]
            candidates = [spans_up_to(len(features[i].words), model.config.max_span) for i in rows]
            batch = collate([features[i] for i in rows], [torch.tensor(c) for c in candidates], device)
            probabilities = model(batch).softmax(dim=1)
            if licensed is not None:
                allowed = torch.zeros_like(probabilities, dtype=torch.bool)
                every = ((i, s, e) for i, sentence_spans in zip(rows, candidates) for s, e in sentence_spans)
                for k, (i, s, e) in enumerate(every):
                    ids = [label_ids[label] for label in licensed(" ".join(sentences[i][s:e])) if label in label_ids]
                    allowed[k, ids] = True
                allowed[:, NULL] = True
                probabilities = probabilities.masked_fill(~allowed, 0.0)
            best, label = probabilities[:, NULL + 1 :].max(dim=1)
            null, best, label = probabilities[:, NULL].tolist(), best.tolist(), (label + NULL + 1).tolist()
            k = 0
            for i, spans in zip(rows, candidates):
                out[i] = SpanOdds(spans, null[k : k + len(spans)], best[k : k + len(spans)], label[k : k + len(spans)])
                k += len(spans)
    return [o for o in out if o is not None]


def labelled(model: SpanClassifier, odds: Sequence[SpanOdds], null_scale: float = 1.0) -> list[list[Triple]]:
    """The triggers of each sentence's odds at ``null_scale``, overlaps resolved (most probable first)."""
    frames = model.config.frames
    out = []
    for sentence in odds:
        # Strictly more probable: at 1 a tie goes to NULL, as an argmax over NULL and the labels gives it.
        scored: list[ScoredSpan] = [
            (start, end, frames[label - 1], p)
            for (start, end), null, p, label in zip(sentence.spans, sentence.null, sentence.best, sentence.label)
            if p > null_scale * null
        ]
        out.append(resolve_overlaps(scored))
    return out


def by_null_scale(
    model: SpanClassifier,
    found: Sequence[SpanOdds],
    dev: Sequence[FrameSentence],
    score: Scorer,
    scales: Sequence[float] = NULL_SCALES,
) -> tuple[float, dict[str, dict[str, float]], dict[float, float]]:
    """The scale of ``scales`` with the best F1 on ``dev`` (whose odds are ``found``; the one nearest 1 among
    equals), its scores, and each scale's dev F1."""
    # Narrowed once to the spans that are triggers at the smallest scale, each scale looks at a
    # few spans a sentence, not at every one.
    found = [sentence.above(min(scales)) for sentence in found]
    scores = {scale: score(dev, labelled(model, found, scale)) for scale in scales}
    f1 = {scale: result["all"]["f1"] for scale, result in scores.items()}
    best = max(sorted(scales, reverse=True), key=lambda scale: f1[scale])
    return best, scores[best], f1


def best_null_scale(
    model: SpanClassifier,
    dev: Sequence[FrameSentence],
    vectors: WordVectors,
    tags: Tags | None,
    score: Scorer,
    licensed: Callable[[str], frozenset[str]] | None = None,
    scales: Sequence[float] = NULL_SCALES,
) -> tuple[float, dict[float, float]]:
    """The scale of ``scales`` with the best F1 on ``dev`` (the one nearest 1 among equals) and each scale's dev F1."""
    features = [model.features(s.tokens, vectors, tags) for s in dev]
    scale, _, f1 = by_null_scale(model, odds(model, features, 64, [s.tokens for s in dev], licensed), dev, score, scales)
    return scale, f1


@dataclass(frozen=True)
class _TrainingSentence:
    features: Features
    spans: torch.Tensor  # (m, 2)
    labels: torch.Tensor  # (m,) logit index
    smoothing: torch.Tensor  # (m,) ε of each span's target
    weights: torch.Tensor  # (m,) each span's weight in the loss
    exhaustive: bool  # annotated in full (gold), not a paraphrase or exemplar


def _training_sentences(
    model: SpanClassifier, sentences: Sequence[FrameSentence], vectors: WordVectors, tags: Tags | None
) -> list[_TrainingSentence]:
    label_ids = {frame: i + 1 for i, frame in enumerate(model.config.frames)}
    # A sentence repeated in the training set (exhaustive_repeat) shares one set of tensors:
    # its features hold its word vectors, the bulk of a training set's memory.
    built: dict[FrameSentence, _TrainingSentence | None] = {}
    for sentence in sentences:
        if sentence in built:
            continue
        instances = sentence.instances(model.config.max_span)
        built[sentence] = _TrainingSentence(
            model.features(sentence.tokens, vectors, tags),
            torch.tensor([(s, e) for s, e, _ in instances]),
            torch.tensor([NULL if frame is None else label_ids[frame] for _, _, frame in instances]),
            torch.tensor([model.config.negative_smoothing if frame is None else 0.0 for _, _, frame in instances]),
            torch.full((len(instances),), sentence.weight),
            sentence.exhaustive,
        ) if instances else None
    return [item for item in (built[sentence] for sentence in sentences) if item is not None]


def fit(
    config: ClassifierConfig,
    train: Sequence[FrameSentence],
    dev: Sequence[FrameSentence] | None,
    vectors: WordVectors,
    tags: Tags | None,
    score: Scorer,
    options: FitOptions,
    progress: ProgressCallback | None = None,
    licensed: Callable[[str], frozenset[str]] | None = None,
    null_scales: Sequence[float] = (1.0,),
    finish_lr: float | None = None,
) -> SpanClassifier:
    """A classifier trained on ``train`` (the best dev epoch's weights), its summary in ``config.training``.

    Dev is scored as the model will predict: held to ``licensed`` (as :func:`classify` takes it),
    and at each of ``null_scales``. Each dev score (an epoch's, or one every ``dev_every`` steps) is
    its best scale's F1, so the weights kept are the best at their best scale, and that scale is
    saved as the model's ``null_scale`` (with each scale's dev F1 under ``training.null_scales``
    when there are several). Without dev it is the only one.

    With ``finish_lr`` (dev needed) training goes on from the kept weights on the exhaustive
    sentences of ``train`` alone, as a second run of epochs with a fresh optimiser at that learning
    rate and no floors (``min_epochs``, ``min_steps``: patience ends it); its best weights are kept
    where their dev F1 beats the first run's, and ``training.finish`` says how it went (``kept``:
    whether it won)."""
    if not dev and (len(null_scales) != 1 or finish_lr is not None):
        raise ValueError("choosing among null scales, or finishing on the exhaustive sentences, needs dev sentences")
    report = progress or (lambda event: None)
    shuffler = seeded_start(options, vectors, [s.tokens for s in [*train, *(dev or [])]], report)
    model = SpanClassifier(config).to(options.device)
    items = _training_sentences(model, train, vectors, tags)
    dev_features = [model.features(s.tokens, vectors, tags) for s in dev or []]
    classes = len(config.frames) + 1

    def epochs_over(chosen_items: Sequence[_TrainingSentence], lr: float) -> EpochSteps:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        order = list(range(len(chosen_items)))

        def one_epoch() -> Iterator[tuple[float, float]]:
            shuffler.shuffle(order)
            for b in range(0, len(order), options.batch_size):
                chosen = [chosen_items[i] for i in order[b : b + options.batch_size]]
                batch = collate([s.features for s in chosen], [s.spans for s in chosen], options.device)
                targets = soft_targets(
                    torch.cat([s.labels for s in chosen]), torch.cat([s.smoothing for s in chosen]), classes
                ).to(options.device)
                loss = span_loss(model(batch), targets, torch.cat([s.weights for s in chosen]).to(options.device))
                yield step(model, optimizer, loss, options.clip) * len(targets), len(targets)

        return one_epoch

    dev_tokens = [s.tokens for s in dev or []]
    calibrations: list[tuple[float, dict[float, float]]] = []  # each dev score's best scale and every scale's F1

    def score_dev() -> dict[str, dict[str, float]]:
        # One pass finds every span's odds; scoring a scale is then only counting.
        found = odds(model, dev_features, max(options.batch_size, 64), dev_tokens, licensed)
        scale, scores, f1 = by_null_scale(model, found, dev or [], score, null_scales)
        calibrations.append((scale, f1))
        return scores

    summary = run_epochs(model, epochs_over(items, options.lr), score_dev if dev else None, options, report,
                         steps_per_epoch(len(items), options.batch_size))
    kept = summary["best_check"]
    if finish_lr is not None:
        gold = [i for i in items if i.exhaustive]
        summary, kept = _finish_on_exhaustive(model, epochs_over(gold, finish_lr), len(gold), finish_lr, score_dev,
                                              options, report, summary, len(calibrations))
    scale, f1 = calibrations[kept] if calibrations else (null_scales[0], {})
    model.config = config.model_copy(update={"null_scale": scale, "training": {
        **summary,
        **({"null_scales": {str(k): v for k, v in f1.items()}} if len(null_scales) > 1 else {}),
        "train_sentences": len(items),
        "train_spans": sum(len(s.labels) for s in items),
        "dev_sentences": len(dev or []),
        "options": options.model_dump(),
    }})
    return model.eval()


def _finish_on_exhaustive(
    model: SpanClassifier,
    one_epoch: EpochSteps,
    sentences: int,
    lr: float,
    score_dev: Callable[[], dict[str, dict[str, float]]],
    options: FitOptions,
    report: ProgressCallback,
    first: dict[str, Any],
    offset: int,
) -> tuple[dict[str, Any], int]:
    """The second run of :func:`fit`, ``one_epoch`` over the ``sentences`` exhaustive ones at ``lr``:
    the summary to save and the kept dev score's index among all (``offset``: how many the first run made)."""
    if not sentences:
        raise ValueError("finishing on the exhaustive sentences needs some among the training sentences")
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # The floors made the first run as long as gold alone trains; from its weights, patience alone ends this one.
    second = run_epochs(model, one_epoch, score_dev, options.model_copy(update={"min_epochs": 1, "min_steps": 0}),
                        report, steps_per_epoch(sentences, options.batch_size))
    won = second["dev"]["all"]["f1"] > first["dev"]["all"]["f1"]
    if not won:
        model.load_state_dict(before)
    finish = {"kept": won, "sentences": sentences, "lr": lr, **{k: v for k, v in second.items() if k != "dev"}}
    kept = offset + second["best_check"] if won else first["best_check"]
    return {**first, "dev": (second if won else first)["dev"], "finish": finish}, kept


def save_classifier(model: SpanClassifier, folder: Path) -> None:
    """Write ``model.safetensors`` and ``config.json`` (with ``model.config``) into ``folder``."""
    from spanaug_shared.trained import save_model

    save_model(folder, WEIGHTS_FILE, model.state_dict(), model.config.model_dump())


def load_classifier(folder: Path, trainer: str, device: str = "cpu") -> SpanClassifier:
    """The classifier saved in ``folder``, in eval mode; ConfigError unless ``trainer`` made it."""
    from safetensors.torch import load_file

    config_file, weights = folder / CONFIG_FILE, folder / WEIGHTS_FILE
    if not (config_file.is_file() and weights.is_file()):
        raise ConfigError(f"{folder} is not a saved model (expected {CONFIG_FILE} and {WEIGHTS_FILE}; "
                          f"train one with `spanaug train --trainer {trainer}`)")
    raw = json.loads(config_file.read_text(encoding="utf-8"))
    if raw.get("trainer") != trainer:
        made_by = raw.get("trainer")
        raise ConfigError(f"{folder} holds a '{made_by}' model; use the {made_by} trainer, not {trainer}")
    try:
        config = ClassifierConfig(**raw)
    except ValidationError as exc:
        raise ConfigError(f"{folder / CONFIG_FILE} is not a valid {trainer} model config: {exc}") from None
    model = SpanClassifier(config)
    model.load_state_dict(load_file(str(weights)))
    return model.to(device).eval()
