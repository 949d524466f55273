"""Training of a bert-span head: cached encoder outputs or tuned top layers, early stopping, threshold tuning.

With a frozen encoder each distinct sentence pair is encoded once and its word vectors are
cached on disk (float16, keyed by a hash of encoder and pairs); every epoch after that
costs only the small head. With ``tune_layers`` the encoder's top layers learn with the
head: each step encodes its batch's pairs (the frozen layers below run without gradients),
so an epoch costs about two encoder passes over the training pairs. After each epoch the
head is scored on dev: the threshold that maximises dev exact F1 is found by an exact
sweep, and training stops when that F1 has not improved for ``patience`` epochs. The best
epoch's head is saved with its tuned threshold and dev scores (head.safetensors +
config.json, and encoder.safetensors with the tuned layers).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from spanaug_core.errors import ConfigError
from spanaug_core.files import atomic_output
from spanaug_core.protocols import ProgressCallback, ProgressEvent

from spanaug_shared.encoder import Encoder
from spanaug_aligners.head import HeadConfig, SpanScorer, item_rows, labels, links_of_items, save_head, score_items, stacked
from spanaug_aligners.metrics import best_threshold, evaluate
from spanaug_aligners.options import TrainOptions
from spanaug_aligners.pairs import Bounds, SpanPair

Tokens = tuple[str, ...]
WordVectors = dict[tuple[Tokens, Tokens], tuple[torch.Tensor, torch.Tensor]]


def encode_cached(
    encoder: Encoder, pairs: Sequence[tuple[Tokens, Tokens]], cache_dir: Path | None, progress: ProgressCallback
) -> WordVectors:
    """Joint word vectors of each distinct pair, from ``cache_dir`` when this exact set was encoded before."""
    keys = list(dict.fromkeys(pairs))
    digest = hashlib.sha256(repr((str(encoder.path), encoder.max_length, keys)).encode()).hexdigest()[:20]
    cache = cache_dir / f"encoded-{digest}.pt" if cache_dir else None
    if cache is not None and cache.is_file():
        vectors = torch.load(cache, weights_only=True)
        progress(ProgressEvent("encode", len(keys), len(keys), message="from cache"))
    else:
        vectors = []
        step = 256
        for i in range(0, len(keys), step):
            vectors += [(s.half(), t.half()) for s, t in encoder.encode(keys[i : i + step], joint=True)]
            progress(ProgressEvent("encode", min(i + step, len(keys)), len(keys)))
        if cache is not None:
            # Whole or not at all: a cache cut short by a full disk would fail every later load.
            with atomic_output(cache, overwrite=True) as partial, partial.open("wb") as handle:
                torch.save(vectors, handle)
    return dict(zip(keys, vectors))


def item_inputs(
    pairs: Sequence[SpanPair], vectors: WordVectors, config: HeadConfig
) -> tuple[list[tuple[torch.Tensor, torch.Tensor, Bounds]], list[torch.Tensor | None]]:
    """Each item's ``(source words, target words, source span)`` and its link signals (None
    without Link features), which depend only on the frozen vectors: computed once, not every epoch."""
    keys = [(p.item.source_tokens, p.item.target_tokens) for p in pairs]
    inputs = [(*vectors[key], p.item.source_span) for key, p in zip(keys, pairs)]
    return inputs, links_of_items(inputs, keys, config)


def _dev_predictions(
    model: SpanScorer, dev: Sequence[SpanPair], inputs: Sequence[tuple[torch.Tensor, torch.Tensor, Bounds]], links: Sequence[torch.Tensor | None]
) -> list[tuple[Any, float, Any]]:
    """``(argmax span, its score, gold)`` per dev item."""
    model.eval()
    rows = []
    for i in range(0, len(dev), 256):
        chunk = dev[i : i + 256]
        for pair, (spans, probs) in zip(chunk, score_items(model, inputs[i : i + 256], links[i : i + 256])):
            if spans:
                best = int(probs.argmax())
                rows.append((spans[best], float(probs[best]), pair.gold_span))
            else:
                rows.append((None, 0.0, pair.gold_span))
    return rows


def _batches(train: Sequence[SpanPair], size: int, shuffler: random.Random, by_pair: bool) -> list[list[int]]:
    """One epoch's batches of item indices, about ``size`` items each.

    With a frozen encoder items are shuffled one by one. A tuned encoder runs once per
    batch over the batch's sentence pairs, so there a batch takes whole pairs (shuffled),
    and every item of a pair shares its one encoder pass.
    """
    if not by_pair:
        order = list(range(len(train)))
        shuffler.shuffle(order)
        return [order[b : b + size] for b in range(0, len(order), size)]
    groups: dict[tuple[Tokens, Tokens], list[int]] = {}
    for i, p in enumerate(train):
        groups.setdefault((p.item.source_tokens, p.item.target_tokens), []).append(i)
    pairs = list(groups.values())
    shuffler.shuffle(pairs)
    batches: list[list[int]] = [[]]
    for group in pairs:
        if len(batches[-1]) >= size:
            batches.append([])
        batches[-1].extend(group)
    return batches


class _Vectors:
    """Word vectors of the training and dev pairs: cached once for a frozen encoder, computed live for a tuned one."""

    def __init__(self, encoder: Encoder, pairs: Sequence[SpanPair], tuned: bool, cache_dir: Path | None, report: ProgressCallback) -> None:
        self.encoder, self.tuned = encoder, tuned
        keys = [(p.item.source_tokens, p.item.target_tokens) for p in pairs]
        self.cached = {} if tuned else encode_cached(encoder, keys, cache_dir, report)

    def of(self, pairs: Sequence[SpanPair], grad: bool) -> WordVectors:
        """The pairs' word vectors; ``grad``: through the tuned layers, for a training step."""
        if not self.tuned:
            return self.cached
        keys = list(dict.fromkeys((p.item.source_tokens, p.item.target_tokens) for p in pairs))
        self.encoder.model.train(grad)
        if grad:
            return dict(zip(keys, self.encoder.joint_words(keys)))
        return dict(zip(keys, self.encoder.encode(keys, joint=True)))


def train_head(
    train: Sequence[SpanPair],
    dev: Sequence[SpanPair],
    out: Path,
    options: TrainOptions = TrainOptions(),
    cache_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train a head on ``train`` (with the encoder's top ``options.tune_layers`` layers), early-stop and
    tune the threshold on ``dev``, save it to ``out``.

    Returns the training summary that is also stored under ``training`` in out/config.json.
    """
    if not train or not dev:
        raise ConfigError("training a bert-span head needs non-empty --data and --dev files")
    report = progress or (lambda event: None)
    torch.manual_seed(options.seed)
    shuffler = random.Random(options.seed)
    encoder = Encoder(options.encoder, device=options.device)
    tuned = encoder.tune_top(options.tune_layers) if options.tune_layers else []
    vectors = _Vectors(encoder, [*train, *dev], bool(tuned), cache_dir, report)
    longest = max(e - s for s, e in (p.item.source_span for p in train))
    config = HeadConfig(
        encoder=options.encoder, dim=encoder.dim, longest_span=longest, tuned_layers=options.tune_layers,
        **options.shape.model_dump(),
    )
    model = SpanScorer(config).to(options.device)
    optimizer = torch.optim.Adam([{"params": model.parameters()}, {"params": tuned, "lr": options.encoder_lr}], lr=options.lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    if not tuned:  # the frozen encoder's inputs and link signals are the same every epoch
        train_inputs, train_links = item_inputs(train, vectors.cached, config)
        dev_inputs, dev_links = item_inputs(dev, vectors.cached, config)
    best: dict[str, Any] = {"f1": -1.0}
    losses: list[float] = []
    stale = 0
    for epoch in range(1, options.epochs + 1):
        model.train()
        total, batches = 0.0, 0
        for batch in _batches(train, options.batch_size, shuffler, by_pair=bool(tuned)):
            if tuned:
                inputs, links = item_inputs([train[i] for i in batch], vectors.of([train[i] for i in batch], grad=True), config)
            else:
                inputs, links = [train_inputs[i] for i in batch], [train_links[i] for i in batch]
            rows = [(item_rows(*inp, config, link), train[i].gold_span) for inp, link, i in zip(inputs, links, batch)]
            rows = [(r, gold) for r, gold in rows if r[0]]
            if sum(len(r[0]) for r, _ in rows) < 2:  # batchnorm needs two rows
                continue
            logits = model(*stacked([r for r, _ in rows], options.device))
            target = torch.cat([labels(r[0], gold, config.soft_labels) for r, gold in rows]).to(options.device)
            loss = loss_fn(logits, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        losses.append(total / max(batches, 1))
        if tuned:
            dev_inputs, dev_links = item_inputs(dev, vectors.of(dev, grad=False), config)
        threshold, f1 = best_threshold(_dev_predictions(model, dev, dev_inputs, dev_links))
        report(ProgressEvent("epoch", epoch, options.epochs, message=f"loss {losses[-1]:.4f} dev exact F1 {f1:.3f}"))
        if f1 > best["f1"]:
            best = {
                "f1": f1, "epoch": epoch, "threshold": threshold, "state": {k: v.clone() for k, v in model.state_dict().items()},
                "encoder": encoder.tuned_parameters() if tuned else None,
            }
            stale = 0
        else:
            stale += 1
            if stale >= options.patience:
                break
    model.load_state_dict(best["state"])
    if tuned:  # dev is scored with the float16 layers that are saved, as the aligner will load them
        encoder.model.load_state_dict(best["encoder"], strict=False)
        dev_inputs, dev_links = item_inputs(dev, vectors.of(dev, grad=False), config)
    final = config.model_copy(update={"threshold": best["threshold"]})
    model.config = final
    preds = _dev_predictions(model, dev, dev_inputs, dev_links)
    kinds = [p.kind for p in dev]
    dev_scores = evaluate(
        (span if score >= best["threshold"] else None, gold, kind) for (span, score, gold), kind in zip(preds, kinds)
    )
    summary = {
        "epochs_run": len(losses),
        "best_epoch": best["epoch"],
        "losses": [round(x, 5) for x in losses],
        "threshold": best["threshold"],
        "dev": {name: {k: round(v, 4) for k, v in s.items()} for name, s in dev_scores.items()},
        "train_items": len(train),
        "dev_items": len(dev),
        "options": options.model_dump(),
        **(provenance or {}),
    }
    save_head(model, final.model_copy(update={"training": summary}), out, best["encoder"])
    return summary
