"""Frozen-encoder word vectors, computed once per distinct sentence and kept in memory.

The encoder (the aligners' ``Encoder``: a Hugging Face BERT-family model, each word the
mean of its sub-word vectors) is frozen, so a sentence's word vectors never change
during training: they are encoded on first request and served from memory afterwards,
which makes every epoch after the first cost only the tagger. Vectors are stored as
float16 (half the memory; the tagger's input noise is far above that rounding) and
handed out as float32. Any model that reads frozen word vectors (the taggers here, a
frame-id classifier) can share one ``WordVectors``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spanaug_core.protocols import ProgressCallback, ProgressEvent
from spanaug_shared.encoder import Encoder

if TYPE_CHECKING:
    import torch

Tokens = tuple[str, ...]


class WordVectors:
    """Word vectors (n, dim) of token sequences from a frozen encoder, cached per sentence."""

    def __init__(self, encoder: str, device: str = "cpu", max_length: int = 256, batch_size: int = 32) -> None:
        self.encoder_name = encoder
        self.device = device
        self.max_length = max_length
        self.batch_size = batch_size
        self._encoder: Encoder | None = None
        self._cache: dict[Tokens, torch.Tensor] = {}

    @property
    def encoder(self) -> Encoder:
        """The encoder, loaded on first use."""
        if self._encoder is None:
            self._encoder = Encoder(self.encoder_name, device=self.device, max_length=self.max_length)
        return self._encoder

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def encode(self, sentences: Sequence[Tokens], progress: ProgressCallback | None = None) -> None:
        """Encode the sentences not seen before (length-sorted batches, so padding is small)."""
        # Sorted by length, then by the words: a set's order changes with Python's hash seed, and
        # so would the batches, whose padding moves the vectors in their last bits and, through
        # training, a learning curve's cells (docs/results/learning-curve-frame-id.md). Which sentences share a batch
        # still matters; batch_size 1 makes each sentence's vectors its own (the curve's).
        todo = sorted({tuple(s) for s in sentences} - self._cache.keys(), key=lambda s: (len(s), s))
        report = progress or (lambda event: None)
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i : i + self.batch_size]
            for tokens, words in zip(chunk, self.encoder.encode_sentences(chunk, self.batch_size)):
                self._cache[tokens] = words.half()
            report(ProgressEvent("encode", min(i + self.batch_size, len(todo)), len(todo)))

    def __getitem__(self, tokens: Tokens) -> torch.Tensor:
        """The word vectors (n, dim) of an encoded sentence, float32."""
        return self._cache[tuple(tokens)].float()

    def __len__(self) -> int:
        return len(self._cache)


def vectors_for(shared: WordVectors | None, encoder: str, device: str, max_length: int) -> WordVectors:
    """``shared`` when it reads with ``encoder`` and ``max_length``, else a fresh cache.

    A caller that trains many models over the same sentences (a learning curve) hands the
    trainers one cache; every other caller gets a cache that is dropped after use.
    """
    if shared is not None and (shared.encoder_name, shared.max_length) == (encoder, max_length):
        return shared
    return WordVectors(encoder, device, max_length)
