"""WordVectors: which sentences share an encoder batch must not depend on Python's hash seed."""

from __future__ import annotations

import random

import torch

from spanaug_shared.vectors import WordVectors


class RecordingEncoder:
    """Stands in for the encoder: records each batch, returns one vector per word."""

    dim = 2

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, ...]]] = []

    def encode_sentences(self, sentences, batch_size):
        self.batches.append(list(sentences))
        return [torch.zeros(len(s), self.dim) for s in sentences]


def _batches(sentences: list[tuple[str, ...]]) -> list[list[tuple[str, ...]]]:
    vectors = WordVectors("unused", batch_size=4)
    vectors._encoder = RecordingEncoder()  # type: ignore[assignment]
    vectors.encode(sentences)
    assert len(vectors) == len(set(sentences))
    return vectors._encoder.batches  # type: ignore[union-attr]


def test_batches_follow_length_then_words_whatever_the_input_order():
    words = [f"w{i}" for i in range(40)]
    sentences = [(w, "x") for w in words] + [(w,) for w in words[:10]] + [("a", "b", "c")]
    shuffled = sentences[:]
    random.Random(1).shuffle(shuffled)
    batches = _batches(sentences)
    assert batches == _batches(shuffled)
    flat = [s for batch in batches for s in batch]
    assert flat == sorted(set(sentences), key=lambda s: (len(s), s))  # a total order, not the set's
