"""Fitting a BIO tagger with early stopping, and tagging with it.

Word vectors of every train and dev sentence are encoded once up front (cached in
:class:`~spanaug_trainers.vectors.WordVectors`); an epoch then shuffles the instances,
runs mini-batches of the BiLSTM-CRF with Adam and gradient clipping, and scores dev with
the trainer's metric. Training stops when dev F1 has not improved for ``patience``
epochs and the best epoch's weights are kept (without dev: the last epoch's).

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from spanaug_core.protocols import ProgressCallback, ProgressEvent

from spanaug_trainers.bio import Instance, Triple
from spanaug_trainers.tagger import BioTagger, TaggerConfig
from spanaug_trainers.vectors import WordVectors

Scorer = Callable[[Sequence[Instance], Sequence[Sequence[Triple]]], dict[str, dict[str, float]]]


class FitOptions(BaseModel):
    """How a tagger is optimised (the trainers' options minus the model's shape)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epochs: int
    patience: int
    lr: float
    batch_size: int
    clip: float
    seed: int
    device: str


def batch_tensors(
    instances: Sequence[Instance], vectors: WordVectors, tags: Sequence[Sequence[int]] | None, device: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded ``(vectors (B, T, dim), indicator (B, T), tags (B, T), mask (B, T))``; tags 0 when not given."""
    size, width = len(instances), max(len(inst.tokens) for inst in instances)
    x = torch.zeros(size, width, vectors.dim)
    indicator = torch.zeros(size, width, dtype=torch.long)
    gold = torch.zeros(size, width, dtype=torch.long)
    mask = torch.zeros(size, width, dtype=torch.bool)
    for b, inst in enumerate(instances):
        n = len(inst.tokens)
        x[b, :n] = vectors[inst.tokens]
        indicator[b, :n] = torch.tensor(inst.indicator())
        mask[b, :n] = True
        if tags is not None:
            gold[b, :n] = torch.tensor(tags[b])
    return x.to(device), indicator.to(device), gold.to(device), mask.to(device)


def tag(model: BioTagger, instances: Sequence[Instance], vectors: WordVectors, batch_size: int = 64) -> list[list[Triple]]:
    """Predicted spans of each instance (its sentence must be encoded in ``vectors``)."""
    model.eval()
    device = next(model.parameters()).device
    # Length-sorted batches pad little; results go back in input order.
    order = sorted(range(len(instances)), key=lambda i: len(instances[i].tokens))
    out: list[list[Triple]] = [[] for _ in instances]
    with torch.inference_mode():
        for i in range(0, len(order), batch_size):
            rows = order[i : i + batch_size]
            x, indicator, _, mask = batch_tensors([instances[k] for k in rows], vectors, None, str(device))
            for k, ids in zip(rows, model.decode(x, indicator, mask)):
                spans = model.tagset.decode(ids)
                marker = instances[k].marker
                # The tagger never tags the predicate (trained with it O); a stray tag is dropped.
                out[k] = [s for s in spans if marker is None or s[1] <= marker[0] or marker[1] <= s[0]]
    return out


def fit(
    config: TaggerConfig,
    train: Sequence[Instance],
    dev: Sequence[Instance] | None,
    vectors: WordVectors,
    score: Scorer,
    options: FitOptions,
    progress: ProgressCallback | None = None,
) -> BioTagger:
    """A tagger trained on ``train`` (the best dev epoch's weights), its summary in ``config.training``."""
    report = progress or (lambda event: None)
    torch.manual_seed(options.seed)  # before the model exists: its initial weights depend on it
    shuffler = random.Random(options.seed)
    vectors.encode([inst.tokens for inst in [*train, *(dev or [])]], report)
    model = BioTagger(config).to(options.device)
    gold_tags = [model.tagset.encode(inst.spans, len(inst.tokens)) for inst in train]
    optimizer = torch.optim.Adam(model.parameters(), lr=options.lr)
    order = list(range(len(train)))
    best: dict[str, Any] = {"f1": -1.0, "epoch": 0, "scores": {}}
    losses: list[float] = []
    dev_f1: list[float] = []
    for epoch in range(1, options.epochs + 1):
        model.train()
        shuffler.shuffle(order)
        total = 0.0
        for b in range(0, len(order), options.batch_size):
            rows = order[b : b + options.batch_size]
            x, indicator, tags, mask = batch_tensors([train[i] for i in rows], vectors, [gold_tags[i] for i in rows], options.device)
            loss = model.loss(x, indicator, tags, mask)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), options.clip)
            optimizer.step()
            total += loss.item() * len(rows)
        losses.append(total / len(train))
        message = f"loss {losses[-1]:.3f}"
        if dev:
            scores = score(dev, tag(model, dev, vectors))
            dev_f1.append(scores["all"]["f1"])
            message += f" dev F1 {dev_f1[-1]:.3f}"
            if dev_f1[-1] > best["f1"]:
                best = {"f1": dev_f1[-1], "epoch": epoch, "scores": scores,
                        "state": {k: v.detach().clone() for k, v in model.state_dict().items()}}
        report(ProgressEvent("epoch", epoch, options.epochs, message=message))
        if dev and epoch - best["epoch"] >= options.patience:
            break
    if "state" in best:
        model.load_state_dict(best["state"])
    model.config = config.model_copy(update={"training": {
        "epochs_run": len(losses),
        "best_epoch": best["epoch"] if dev else len(losses),
        "losses": [round(x, 5) for x in losses],
        "dev_f1": [round(x, 5) for x in dev_f1],
        "dev": best["scores"],
        "train_instances": len(train),
        "dev_instances": len(dev or []),
        "options": options.model_dump(),
    }})
    return model.eval()
