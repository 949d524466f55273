"""The BIO tagger every trainer here shares: frozen word vectors -> BiLSTM -> tag scores -> CRF.

Input per token is its frozen encoder vector, optionally concatenated with an embedding
of a 0/1 indicator (SRL marks the predicate, so one sentence yields a different tagging
per predicate). A BiLSTM reads the sentence, a linear layer scores each BIO tag and a
linear-chain CRF with IOB2 constraints (:mod:`spanaug_trainers.crf`) turns the scores
into a well-formed tag sequence. Only the tagger is trained; the encoder stays frozen.
A model folder holds ``model.safetensors`` (the state dict) and ``config.json``
(``TaggerConfig``: which trainer made it, the encoder, the tags, the shape, and the
training summary).

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from spanaug_core.errors import ConfigError

from spanaug_trainers.bio import TagSet
from spanaug_trainers.crf import LinearChainCRF

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


class TaggerConfig(BaseModel):
    """What a saved tagger needs to be rebuilt: its trainer, encoder, tags and shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trainer: str
    encoder: str
    max_length: int
    dim: int
    tags: list[str]
    hidden: int
    layers: int
    dropout: float
    indicator_dim: int = 0
    training: dict[str, Any] = {}


class BioTagger(torch.nn.Module):
    """BiLSTM-CRF over frozen word vectors (plus an optional indicator embedding)."""

    def __init__(self, config: TaggerConfig) -> None:
        super().__init__()
        self.config = config
        self.tagset = TagSet.from_tags(config.tags)
        self.indicator = torch.nn.Embedding(2, config.indicator_dim) if config.indicator_dim else None
        self.dropout = torch.nn.Dropout(config.dropout)
        self.lstm = torch.nn.LSTM(
            config.dim + config.indicator_dim, config.hidden, num_layers=config.layers, batch_first=True,
            bidirectional=True, dropout=config.dropout if config.layers > 1 else 0.0,
        )
        self.project = torch.nn.Linear(2 * config.hidden, len(self.tagset))
        self.crf = LinearChainCRF(len(self.tagset), *self.tagset.allowed())

    def emissions(self, vectors: torch.Tensor, indicator: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Tag scores: vectors (B, T, dim), indicator (B, T) of 0/1, mask (B, T) -> (B, T, K)."""
        inputs = vectors
        if self.indicator is not None:
            inputs = torch.cat([inputs, self.indicator(indicator)], dim=2)
        lengths = mask.sum(1).cpu()
        # Packing keeps the backward direction from reading padding into real tokens.
        packed = torch.nn.utils.rnn.pack_padded_sequence(self.dropout(inputs), lengths, batch_first=True, enforce_sorted=False)
        hidden, _ = self.lstm(packed)
        hidden, _ = torch.nn.utils.rnn.pad_packed_sequence(hidden, batch_first=True, total_length=vectors.shape[1])
        return self.project(self.dropout(hidden))

    def loss(self, vectors: torch.Tensor, indicator: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean CRF negative log-likelihood of the gold tags (B, T) over the batch."""
        return self.crf.nll(self.emissions(vectors, indicator, mask), tags, mask).mean()

    def decode(self, vectors: torch.Tensor, indicator: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """The best tag ids of each sentence, cut to its length."""
        return self.crf.decode(self.emissions(vectors, indicator, mask), mask)


def save_tagger(model: BioTagger, folder: Path) -> None:
    """Write ``model.safetensors`` and ``config.json`` (with ``model.config``) into ``folder``."""
    from spanaug_shared.trained import save_model

    save_model(folder, WEIGHTS_FILE, model.state_dict(), model.config.model_dump())


def read_config(folder: Path) -> TaggerConfig:
    """The config of the tagger saved in ``folder``; ConfigError if it holds none."""
    config_file, weights = folder / CONFIG_FILE, folder / WEIGHTS_FILE
    if not (config_file.is_file() and weights.is_file()):
        raise ConfigError(
            f"{folder} is not a saved tagger (expected {CONFIG_FILE} and {WEIGHTS_FILE}; train one with `spanaug train --trainer`)"
        )
    return TaggerConfig(**json.loads(config_file.read_text(encoding="utf-8")))


def load_tagger(folder: Path, device: str = "cpu") -> BioTagger:
    """The tagger saved in ``folder`` (by :func:`save_tagger`), in eval mode."""
    from safetensors.torch import load_file

    model = BioTagger(read_config(folder))
    model.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
    return model.to(device).eval()
