"""Fitting a BIO tagger with early stopping, and tagging with it.

Word vectors of every train and dev sentence are encoded once up front (cached in
:class:`~spanaug_shared.vectors.WordVectors`); an epoch then shuffles the instances,
runs mini-batches of the BiLSTM-CRF with Adam and gradient clipping, and scores dev with
the trainer's metric at each epoch's end, or every ``dev_every`` optimiser steps. Training
stops when dev F1 has not improved for ``patience`` dev scores (counted from the first one
above 0, and not before ``min_epochs`` epochs and ``min_steps`` steps) and the best
weights are kept (without dev: the last epoch's). ``run_epochs`` is that loop for any
model; the frame-id classifier uses it too.

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressCallback, ProgressEvent

from spanaug_shared.vectors import WordVectors
from spanaug_trainers.bio import Instance, Triple
from spanaug_trainers.tagger import BioTagger, TaggerConfig

Scorer = Callable[[Sequence[Instance], Sequence[Sequence[Triple]]], dict[str, dict[str, float]]]
# One epoch's optimiser steps, run as they are drawn, each yielding (its loss times its weight, its weight).
EpochSteps = Callable[[], Iterator[tuple[float, float]]]


class FitOptions(BaseModel):
    """How a tagger is optimised (the trainers' options minus the model's shape)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epochs: int
    patience: int
    min_epochs: int = 1
    min_steps: int = 0
    dev_every: int = 0
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


def seeded_start(options: FitOptions, vectors: WordVectors, sentences: Sequence[Sequence[str]], report: ProgressCallback) -> random.Random:
    """Seed torch (before the model exists: its initial weights depend on it), encode the sentences; the shuffler."""
    torch.manual_seed(options.seed)
    vectors.encode([tuple(s) for s in sentences], report)
    return random.Random(options.seed)


def fit_options(config: BaseModel, gold: int) -> FitOptions:
    """``config``'s optimisation options, its ``dev_every: gold`` made the steps of one pass over ``gold``
    instances (those of the training examples that are not paraphrases)."""
    values = {key: getattr(config, key) for key in FitOptions.model_fields}
    if values["dev_every"] == "gold":
        if not gold:
            raise ConfigError("dev_every 'gold' scores dev every pass over the training examples that are not "
                              "paraphrases, and every training example is one (meta source_id): give a number of steps")
        values["dev_every"] = steps_per_epoch(gold, values["batch_size"])
    return FitOptions(**values)


def training_metrics(summary: dict[str, Any]) -> dict[str, float]:
    """What ``train`` returns (metrics.json): epochs, the last loss and the best epoch's dev scores."""
    metrics = {"epochs_run": float(summary["epochs_run"]), "steps_run": float(summary["steps_run"]),
               "best_epoch": float(summary["best_epoch"]), "best_step": float(summary["best_step"]),
               "dev_every": float(summary["dev_every"]),
               "train_loss": summary["losses"][-1]}
    if summary["dev"]:
        metrics.update({f"dev_{key}": summary["dev"]["all"][key] for key in ("precision", "recall", "f1")})
    return metrics


def step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor, clip: float) -> float:
    """One optimiser step on ``loss`` with gradient-norm clipping; returns the loss."""
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return loss.item()


def steps_per_epoch(examples: int, batch_size: int) -> int:
    """Optimiser steps in one pass over ``examples`` in batches of ``batch_size`` (the last one may be short)."""
    return max(1, math.ceil(examples / batch_size))


def run_epochs(
    model: torch.nn.Module,
    one_epoch: EpochSteps,
    score_dev: Callable[[], dict[str, dict[str, float]]] | None,
    options: FitOptions,
    report: ProgressCallback,
    epoch_steps: int,
) -> dict[str, Any]:
    """Train epoch by epoch with early stopping on dev F1; the best weights are loaded at the end.

    ``one_epoch`` runs one pass of ``epoch_steps`` optimiser steps, yielding after each (see
    :data:`EpochSteps`); ``score_dev`` scores the model on dev (None: no dev, the last epoch
    is kept). Dev is scored at each epoch's end, or every ``dev_every`` steps when that is
    set: conditions whose epochs differ in length (gold alone, or with many paraphrases) are
    then chosen among as many checkpoints per step. ``patience`` counts dev scores.
    Until dev F1 first rises above 0 every score counts as the best and patience does not
    run: a model on little data (or with a dominant "nothing here" label) may find no span
    for several epochs, and stopping then would keep an untrained model. Nor does it stop
    before ``min_epochs`` epochs and ``min_steps`` steps, which may run past ``epochs``: a
    few dozen sentences make a handful of steps per epoch, and patience counted in epochs
    would stop such a model long before one trained on more data has had as many updates.
    Returns the training summary saved with the model (``best_check``: the kept score's
    index in ``dev_f1``).
    """
    best: dict[str, Any] = {"f1": 0.0, "epoch": 0, "step": 0, "check": -1, "scores": {}}
    losses: list[float] = []
    dev_f1: list[float] = []
    floor = max(options.min_epochs * epoch_steps, options.min_steps)
    last = max(options.epochs * epoch_steps, floor)
    # Once an epoch is every epoch_steps steps: one_epoch yields exactly that many.
    every = options.dev_every or epoch_steps
    steps, epoch, stop = 0, 0, False

    def check() -> bool:
        """Score dev, keep the weights if best; whether training may stop here."""
        nonlocal best
        model.eval()
        scores = score_dev()
        model.train()
        dev_f1.append(scores["all"]["f1"])
        if dev_f1[-1] > best["f1"] or best["f1"] == 0.0:
            best = {"f1": dev_f1[-1], "epoch": epoch, "step": steps, "check": len(dev_f1) - 1, "scores": scores,
                    "state": {k: v.detach().clone() for k, v in model.state_dict().items()}}
        return best["f1"] > 0.0 and steps >= floor and len(dev_f1) - 1 - best["check"] >= options.patience

    while steps < last and not stop:
        epoch += 1
        model.train()
        total = weight = 0.0
        for loss, size in one_epoch():
            total, weight, steps = total + loss, weight + size, steps + 1
            if score_dev is not None and steps % every == 0 and check():
                stop = True
                break
        losses.append(total / max(weight, 1e-12))
        message = f"loss {losses[-1]:.3f}" + (f" dev F1 {dev_f1[-1]:.3f}" if dev_f1 else "")
        report(ProgressEvent("epoch", epoch, math.ceil(last / epoch_steps), message=message))
    if score_dev is not None and not stop and steps % every:
        check()  # the last weights are a candidate too (and with dev_every past the end, the only one)
    if "state" in best:
        model.load_state_dict(best["state"])
    kept = score_dev is not None
    return {
        "epochs_run": len(losses),
        "steps_run": steps,
        "best_epoch": best["epoch"] if kept else len(losses),
        "best_step": best["step"] if kept else steps,
        "best_check": best["check"] if kept else -1,
        "dev_every": every,
        "losses": [round(x, 5) for x in losses],
        "dev_f1": [round(x, 5) for x in dev_f1],
        "dev": best["scores"],
    }


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
    shuffler = seeded_start(options, vectors, [inst.tokens for inst in [*train, *(dev or [])]], report)
    model = BioTagger(config).to(options.device)
    gold_tags = [model.tagset.encode(inst.spans, len(inst.tokens)) for inst in train]
    optimizer = torch.optim.Adam(model.parameters(), lr=options.lr)
    order = list(range(len(train)))

    def one_epoch() -> Iterator[tuple[float, float]]:
        shuffler.shuffle(order)
        for b in range(0, len(order), options.batch_size):
            rows = order[b : b + options.batch_size]
            x, indicator, tags, mask = batch_tensors([train[i] for i in rows], vectors, [gold_tags[i] for i in rows], options.device)
            yield step(model, optimizer, model.loss(x, indicator, tags, mask), options.clip) * len(rows), len(rows)

    score_dev = (lambda: score(dev, tag(model, dev, vectors))) if dev else None
    summary = run_epochs(model, one_epoch, score_dev, options, report, steps_per_epoch(len(train), options.batch_size))
    model.config = config.model_copy(update={"training": {
        **summary, "train_instances": len(train), "dev_instances": len(dev or []), "options": options.model_dump(),
    }})
    return model.eval()
