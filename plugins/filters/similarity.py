"""The ``similarity`` filter: a paraphrase must still mean roughly what its source meant.

Source and paraphrase are encoded separately by the aligners' frozen sentence encoder
(all-MiniLM-L6-v2 by default); a sentence's vector is the mean of its word vectors, and
the paraphrase is dropped when the cosine of the two vectors is below ``floor``. This is
the meaning-preservation counterpart of the ``novelty`` filter: together they keep
paraphrases that are different in form but not in meaning (Wieting et al. 2017 filter
back-translations by overlap; Culkin et al. 2021 keep the decoder's and the aligner's
scores, neither of which compares whole sentences).

Every output of one source is compared with the same source, so source vectors are kept
(``SourceEncoding``, which the ``adequacy`` filter shares). torch is imported on the first
check, not at import time.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented
from spanaug_shared.encoder import DEFAULT_ENCODER, Encoder

if TYPE_CHECKING:
    import torch

Tokens = tuple[str, ...]

# A run visits a chunk of sources (64 by default) round after round; this holds many chunks.
_CACHED_SOURCES = 4096


class SourceEncoding:
    """Word vectors from a frozen encoder loaded on first use, each source sentence's kept.

    Every output of one source is compared with the same source, so a filter that encodes
    both (``similarity``, ``adequacy``) encodes each source once (least recently used first out).
    """

    def __init__(self, encoder: str, device: str) -> None:
        self.name, self.device = encoder, device
        self._encoder: Encoder | None = None
        self.source = lru_cache(maxsize=_CACHED_SOURCES)(self._encode_source)

    def encode(self, sentences: Sequence[Tokens]) -> list[torch.Tensor]:
        """Word vectors (n, dim) of each sentence, encoded alone."""
        if self._encoder is None:
            self._encoder = Encoder(self.name, device=self.device)
        return self._encoder.encode_sentences(sentences)

    def _encode_source(self, tokens: Tokens) -> torch.Tensor:
        (vectors,) = self.encode([tokens])
        return vectors


class SimilarityFilter:
    """Keep paraphrases whose encoder cosine with the source sentence is at least a floor."""

    name: ClassVar[str] = "similarity"

    class Config(ComponentConfig):
        floor: float = Field(default=0.7, ge=-1.0, le=1.0, description="smallest cosine kept")
        encoder: str = Field(default=DEFAULT_ENCODER, description="encoder preset or local folder")
        device: str = Field(default="cpu", description="torch device")

    def __init__(self, config: Config) -> None:
        self.config = config
        self.vectors = SourceEncoding(config.encoder, config.device)

    def similarity(self, source: Tokens, paraphrase: Tokens) -> float:
        """Cosine of the mean word vectors of two token sequences."""
        import torch

        (words,) = self.vectors.encode([paraphrase])
        return float(torch.nn.functional.cosine_similarity(words.mean(0), self.vectors.source(source).mean(0), dim=0))

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        cosine = self.similarity(context.source.tokens, record.tokens)
        if cosine < self.config.floor:
            return f"similarity {cosine:.3f} < {self.config.floor:g}"
        return None
