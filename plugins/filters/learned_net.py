"""The learned filter's network, its training on judgments, and its folder on disk.

After Culkin et al. 2021 §6.1: a feed-forward net with two hidden layers of 10 units
(tanh here; the paper does not say) and a sigmoid output reads (iteration, paraphrase
score, alignment score) and is trained with binary cross-entropy on people's
accept/reject labels. The paper made a P-classifier by down-weighting the loss of
positive examples and an R-classifier by down-weighting negatives. Here every weighting
starts *balanced* (each class weighted by its inverse frequency, so that the majority
class does not decide alone); ``precision`` then multiplies the positive weight by
``down_weight`` and ``recall`` the negative weight.

Inputs are standardised with the training split's mean and std, kept as buffers next to
the weights, so a saved filter reads raw scores. A filter is a folder holding
``filter.safetensors`` (the state dict) and ``config.json`` (features, shape, training
summary). Training is full-batch: judgment sets are thousands of rows at most.

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ProgressCallback, ProgressEvent
from spanaug_shared.judgments import Judgment
from spanaug_filters.adequacy import roc_auc
from spanaug_filters.learned import CONFIG_FILE, FEATURES, WEIGHTINGS, WEIGHTS_FILE, feature_vector, is_filter_folder

FORMAT = "spanaug-learned-filter"


class TrainOptions(BaseModel):
    """How ``train_filter`` splits, weights and fits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weighting: Literal[WEIGHTINGS] = "balanced"  # type: ignore[valid-type]
    down_weight: float = Field(default=0.25, gt=0.0, le=1.0)
    holdout: float = Field(default=0.2, ge=0.0, lt=1.0)
    seed: int = 0
    epochs: int = Field(default=500, ge=1)
    lr: float = Field(default=0.01, gt=0.0)
    hidden: tuple[int, ...] = (10, 10)
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)


class FilterNet(torch.nn.Module):
    """Standardise, then feed forward: features (rows, len(FEATURES)) -> logits (rows,)."""

    def __init__(self, hidden: Sequence[int] = (10, 10), n_features: int = len(FEATURES)) -> None:
        super().__init__()
        layers: list[torch.nn.Module] = []
        size = n_features
        for width in hidden:
            layers += [torch.nn.Linear(size, width), torch.nn.Tanh()]
            size = width
        layers.append(torch.nn.Linear(size, 1))
        self.net = torch.nn.Sequential(*layers)
        self.hidden = tuple(hidden)
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net((features - self.mean) / self.std).squeeze(1)

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """Acceptance probability of each feature row."""
        with torch.inference_mode():
            return torch.sigmoid(self(torch.tensor(rows, dtype=torch.float32))).tolist()


def split(judgments: Sequence[Judgment], holdout: float, seed: int) -> tuple[list[Judgment], list[Judgment]]:
    """A seeded (train, held-out) split that keeps each source on one side; ``holdout`` is the held-out share.

    Sources are shuffled and held out in that order until they cover ``holdout`` of the
    judgments. Splitting outputs one by one would score the filter on near-copies of
    what it was trained on, and score it too kindly (docs/results/learned-filter.md).
    """
    sources = list(dict.fromkeys(j.source for j in judgments))
    random.Random(seed).shuffle(sources)
    sizes = Counter(j.source for j in judgments)
    wanted, held, held_sources = round(len(judgments) * holdout), 0, set[str]()
    for source in sources:
        if held >= wanted:
            break
        held_sources.add(source)
        held += sizes[source]
    return [j for j in judgments if j.source not in held_sources], [j for j in judgments if j.source in held_sources]


def class_weights(labels: Sequence[bool], weighting: str, down_weight: float) -> tuple[float, float]:
    """(positive, negative) loss weights: inverse class frequency, one side down-weighted for P or R."""
    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        raise ConfigError(
            f"the training judgments are all {'accepted' if positives else 'rejected'} "
            f"({len(labels)} of them); a filter needs examples of both"
        )
    w_pos, w_neg = len(labels) / (2 * positives), len(labels) / (2 * negatives)
    if weighting == "precision":
        w_pos *= down_weight
    elif weighting == "recall":
        w_neg *= down_weight
    return w_pos, w_neg


def selection_scores(kept: Sequence[bool], judgments: Sequence[Judgment]) -> dict[str, float]:
    """Precision, recall and F1 of keeping the outputs flagged in ``kept``, and the share kept."""
    hits = sum(k and j.accepted for k, j in zip(kept, judgments, strict=True))
    predicted, gold = sum(kept), sum(j.accepted for j in judgments)
    precision = hits / predicted if predicted else 0.0
    recall = hits / gold if gold else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "kept": predicted / len(judgments) if judgments else 0.0,
    }


def evaluate(net: FilterNet, judgments: Sequence[Judgment], threshold: float) -> dict[str, Any]:
    """Precision, recall and F1 of keeping outputs with probability >= threshold, against people's labels.

    ``kept`` is the share of outputs kept and ``unfiltered_precision`` the share people
    accepted (the precision of keeping everything), as in Culkin et al. Table 4; ``auc``
    (the adequacy report's ROC AUC) says how well the probabilities order them at any
    threshold, None without both accepted and rejected outputs.
    ``run_filters`` scores the same way what the run's own filters kept, when every
    judgment says (``kept``, from an export made with ``--rejected``); else None.
    """
    probs = net.probabilities([feature_vector(j.iteration, j.scores) for j in judgments]) if judgments else []
    auc = roc_auc(probs, [j.accepted for j in judgments])
    run_kept = [j.kept for j in judgments]
    known = bool(judgments) and all(k is not None for k in run_kept) and not all(run_kept)
    return {
        "items": float(len(judgments)),
        **selection_scores([p >= threshold for p in probs], judgments),
        "unfiltered_precision": sum(j.accepted for j in judgments) / len(judgments) if judgments else 0.0,
        "auc": None if math.isnan(auc) else auc,
        "run_filters": selection_scores([bool(k) for k in run_kept], judgments) if known else None,
    }


def train_filter(
    judgments: Sequence[Judgment],
    options: TrainOptions = TrainOptions(),
    progress: ProgressCallback | None = None,
    test: Sequence[Judgment] = (),
) -> tuple[FilterNet, dict[str, Any]]:
    """Fit a filter on the training split; returns it and a summary with losses, held-out and test scores.

    ``test`` holds judgments of other outputs (another run's) to score the filter on; those
    whose source is among the training judgments' are left out of that score and counted.
    """
    train, held = split(judgments, options.holdout, options.seed)
    if not train:
        raise ConfigError(f"--holdout {options.holdout} leaves none of the {len(judgments)} judgments to train on")
    labels = [j.accepted for j in train]
    w_pos, w_neg = class_weights(labels, options.weighting, options.down_weight)
    torch.manual_seed(options.seed)
    x = torch.tensor([feature_vector(j.iteration, j.scores) for j in train], dtype=torch.float32)
    y = torch.tensor(labels, dtype=torch.float32)
    weights = y * w_pos + (1 - y) * w_neg
    net = FilterNet(options.hidden, len(FEATURES))
    net.mean.copy_(x.mean(0))
    net.std.copy_(x.std(0, unbiased=False).clamp(min=1e-6))  # a constant feature (all iteration 1) stays finite
    optimizer = torch.optim.Adam(net.parameters(), lr=options.lr)
    losses = []
    for epoch in range(1, options.epochs + 1):
        loss = (torch.nn.functional.binary_cross_entropy_with_logits(net(x), y, reduction="none") * weights).sum()
        loss = loss / weights.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if progress is not None and (epoch % 50 == 0 or epoch == options.epochs):
            progress(ProgressEvent("epoch", epoch, options.epochs, message=f"loss {losses[-1]:.4f}"))
    net.eval()
    trained_on = {j.source for j in train}
    unseen = [j for j in test if j.source not in trained_on]
    summary = {
        "options": options.model_dump(mode="json"),
        "weights": {"positive": w_pos, "negative": w_neg},
        "train_items": len(train),
        "holdout_items": len(held),
        "losses": [round(x, 5) for x in [*losses[:: max(1, len(losses) // 20)], losses[-1]]],  # ~20 points and the last
        "train": evaluate(net, train, options.threshold),
        "holdout": evaluate(net, held, options.threshold) if held else None,
        "test_items": len(unseen),
        "test_shared_sources": len(test) - len(unseen),
        "test": evaluate(net, unseen, options.threshold) if unseen else None,
    }
    return net, summary


def save_filter(net: FilterNet, folder: Path, summary: dict[str, Any]) -> None:
    """Write ``filter.safetensors`` and ``config.json`` into ``folder``."""
    from spanaug_shared.trained import save_model

    config = {"format": FORMAT, "features": list(FEATURES), "hidden": list(net.hidden), "training": summary}
    save_model(folder, WEIGHTS_FILE, net.state_dict(), config)


def load_filter(folder: Path) -> FilterNet:
    """The filter saved in ``folder`` by :func:`save_filter`, in eval mode."""
    from safetensors.torch import load_file

    if not is_filter_folder(folder):
        raise ConfigError(f"{folder} is not a trained filter (expected {CONFIG_FILE} and {WEIGHTS_FILE})")
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    if config.get("format") != FORMAT or tuple(config.get("features", ())) != FEATURES:
        raise ConfigError(
            f"{folder / CONFIG_FILE} is not a filter of this spanaug (format {config.get('format')!r}, "
            f"features {config.get('features')}; expected {FORMAT!r} reading {list(FEATURES)})"
        )
    net = FilterNet(config["hidden"], len(FEATURES))
    net.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
    return net.eval()
