"""The ``adequacy`` score and filter: does a paraphrase still say everything its source said?

A logistic regression over fourteen signals of a (source, paraphrase) pair, trained on
MRPC (Dolan & Brockett 2005) with ``spanaug train adequacy``, answers the probability
that the pair is a paraphrase. The signals are those Wieting et al. 2017 filter
paraphrase pairs by (length ratio, word n-gram overlap, embedding similarity) plus
word-level matching of the encoder's contextual vectors, BERTScore-style (Zhang et al.
2020): ``recall`` (each source word's best match in the paraphrase) is what falls when
a paraphrase drops content ("Catastrophe losses reduced Aetna's net income" ->
"Aetna's net income decreased": the cause has no match), ``precision`` what falls when
it adds some. Word vectors come from the shared frozen encoder (all-MiniLM-L6-v2 by
default), each sentence encoded alone.

The pipeline asks the filter for the score of every candidate (``score``) so that it can
rerank the n-best by it (``PipelineSettings.rerank``); every record then carries
``adequacy``, and ``check`` reads it from the record instead of encoding again. The
shipped model (``heads/adequacy/adequacy.json``, 14 weights) records how it was trained
and its MRPC test scores (docs/results/adequacy-mrpc.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from spanaug_core.errors import ConfigError, DataError
from spanaug_core.files import atomic_output, read_lines
from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.text import is_content_word, tokenize
from spanaug_core.types import Augmented, Example
from spanaug_filters.novelty import ngrams
from spanaug_filters.similarity import SourceEncoding
from spanaug_shared.encoder import Encoder, word_similarity

if TYPE_CHECKING:
    import torch

Tokens = tuple[str, ...]
FEATURES = (
    "cosine",
    "bertscore_precision",
    "bertscore_recall",
    "bertscore_f1",
    "content_recall",
    "content_precision",
    "length_ratio",
    "abs_log_length_ratio",
    "unigram_precision",
    "unigram_recall",
    "bigram_precision",
    "bigram_recall",
    "trigram_precision",
    "trigram_recall",
)
SHIPPED = Path(__file__).parent / "heads" / "adequacy" / "adequacy.json"


def pair_features(source: Tokens, paraphrase: Tokens, source_vectors: torch.Tensor, paraphrase_vectors: torch.Tensor) -> list[float]:
    """The ``FEATURES`` of one pair, from both token sequences and their word vectors (n, dim), (m, dim)."""
    import torch

    if not source or not paraphrase:
        raise ValueError("adequacy needs two non-empty sentences")
    sim = word_similarity(source_vectors, paraphrase_vectors)
    best_for_source, best_for_paraphrase = sim.max(1).values, sim.max(0).values
    recall, precision = float(best_for_source.mean()), float(best_for_paraphrase.mean())

    def content_mean(tokens: Tokens, best: torch.Tensor, fallback: float) -> float:
        rows = [i for i, t in enumerate(tokens) if is_content_word(t)]
        return float(best[rows].mean()) if rows else fallback

    ratio = len(paraphrase) / len(source)
    features = [
        float(torch.nn.functional.cosine_similarity(source_vectors.mean(0), paraphrase_vectors.mean(0), dim=0)),
        precision,
        recall,
        2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0,
        content_mean(source, best_for_source, recall),
        content_mean(paraphrase, best_for_paraphrase, precision),
        ratio,
        abs(math.log(ratio)),
    ]
    for n in (1, 2, 3):
        mine, theirs = ngrams(paraphrase, n), ngrams(source, n)
        common = sum((mine & theirs).values())
        features += [common / max(sum(mine.values()), 1), common / max(sum(theirs.values()), 1)]
    return features


@dataclass(frozen=True)
class AdequacyModel:
    """A logistic regression over standardized ``FEATURES``, with the encoder it was trained with."""

    encoder: str
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    report: dict[str, Any]

    def probability(self, features: Sequence[float]) -> float:
        z = self.bias + sum(w * (x - m) / s for w, x, m, s in zip(self.weights, features, self.mean, self.scale, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0

    def save(self, path: Path, overwrite: bool = True) -> None:
        data = {"features": list(FEATURES), **asdict(self)}
        with atomic_output(path, overwrite) as partial:
            partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> AdequacyModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"filter 'adequacy': cannot read the model {path}: {exc}") from exc
        if not isinstance(data, dict) or data.get("features") != list(FEATURES):
            raise ConfigError(
                f"filter 'adequacy': {path} is not an adequacy model of this version (expected the features {', '.join(FEATURES)}; "
                "write one with `spanaug train adequacy`)"
            )
        try:
            return cls(
                encoder=str(data["encoder"]),
                mean=tuple(map(float, data["mean"])),
                scale=tuple(map(float, data["scale"])),
                weights=tuple(map(float, data["weights"])),
                bias=float(data["bias"]),
                report=dict(data.get("report", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"filter 'adequacy': {path} lacks a valid field ({exc})") from exc


@dataclass(frozen=True)
class LabeledPair:
    """A sentence pair and whether it is a paraphrase (1) or not (0)."""

    label: int
    source: Tokens
    paraphrase: Tokens


def read_pairs(path: Path) -> list[LabeledPair]:
    """MRPC's tab-separated format: a header, then ``label, id, id, sentence 1, sentence 2`` per line."""
    pairs: list[LabeledPair] = []
    for number, line in read_lines(path):
        if not line.strip() or (number == 1 and line.lstrip("\ufeff").startswith("Quality")):
            continue
        cells = line.rstrip("\n").split("\t")
        if len(cells) != 5 or cells[0] not in ("0", "1") or not cells[3].strip() or not cells[4].strip():
            raise DataError(f"{path}:{number}: expected 5 tab-separated cells (label 0/1, id, id, sentence, sentence), got {line[:80]!r}")
        pairs.append(LabeledPair(int(cells[0]), tuple(tokenize(cells[3])), tuple(tokenize(cells[4]))))
    if not pairs:
        raise DataError(f"{path}: no sentence pairs")
    return pairs


def pairs_features(pairs: Sequence[LabeledPair], encoder: Encoder) -> list[list[float]]:
    """``pair_features`` of each pair, both sentences encoded alone."""
    sources = encoder.encode_sentences([p.source for p in pairs])
    paraphrases = encoder.encode_sentences([p.paraphrase for p in pairs])
    return [pair_features(p.source, p.paraphrase, a, b) for p, a, b in zip(pairs, sources, paraphrases)]


def fit(features: Sequence[Sequence[float]], labels: Sequence[int], encoder: str, l2: float = 10.0) -> AdequacyModel:
    """Logistic regression on standardized features by Newton's method; ``l2`` weighs ||w||^2 / 2 against the summed log-loss."""
    import numpy as np

    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not shrunk
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return AdequacyModel(encoder, tuple(mean.tolist()), tuple(scale.tolist()), tuple(w[:-1].tolist()), float(w[-1]), {})


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """ROC AUC as the Mann-Whitney statistic: the share of (positive, negative) pairs the
    scores rank right, a tie counting half; NaN without both classes."""
    positives = sum(1 for y in labels if y)
    negatives = len(labels) - positives
    rank_sum, seen_negatives = 0.0, 0
    for _, tied in groupby(sorted(zip(scores, (int(bool(y)) for y in labels))), key=lambda pair: pair[0]):
        tied_labels = [y for _, y in tied]
        negatives_here = tied_labels.count(0)
        rank_sum += (len(tied_labels) - negatives_here) * (seen_negatives + negatives_here / 2)
        seen_negatives += negatives_here
    return rank_sum / (positives * negatives) if positives and negatives else float("nan")


def classification_report(model: AdequacyModel, features: Sequence[Sequence[float]], labels: Sequence[int]) -> dict[str, float]:
    """Accuracy, F1 of the paraphrase class, and ROC AUC of ``model`` on labeled features."""
    probs = [model.probability(f) for f in features]
    predicted = [int(p >= 0.5) for p in probs]
    tp = sum(1 for p, y in zip(predicted, labels) if p and y)
    fp = sum(1 for p, y in zip(predicted, labels) if p and not y)
    fn = sum(1 for p, y in zip(predicted, labels) if not p and y)
    return {
        "pairs": len(labels),
        "accuracy": sum(1 for p, y in zip(predicted, labels) if p == y) / len(labels),
        "f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        "roc_auc": roc_auc(probs, labels),
    }


class AdequacyFilter:
    """Keep paraphrases that an MRPC-trained classifier judges to keep their source's meaning."""

    name: ClassVar[str] = "adequacy"

    class Config(ComponentConfig):
        threshold: float = Field(
            default=0.7, ge=0.0, le=1.0, description="smallest adequacy (paraphrase probability) kept (how it was chosen: docs/results/rerank.md)"
        )
        model: Path | None = Field(default=None, description="model written by `spanaug train adequacy` (default: the shipped one)")
        encoder: str | None = Field(default=None, description="encoder preset or folder (default: the one the model was trained with)")
        device: str = Field(default="cpu", description="torch device")

    def __init__(self, config: Config) -> None:
        self.config = config
        self.model = AdequacyModel.load(config.model or SHIPPED)
        self.vectors = SourceEncoding(config.encoder or self.model.encoder, config.device)

    def adequacy(self, source: Tokens, paraphrases: Sequence[Tokens]) -> list[float]:
        """The paraphrase probability of each of ``paraphrases`` against ``source``."""
        source_vectors = self.vectors.source(source)
        vectors = self.vectors.encode(list(paraphrases)) if paraphrases else []
        return [self.model.probability(pair_features(source, p, source_vectors, v)) for p, v in zip(paraphrases, vectors)]

    def score(self, source: Example, paraphrases: Sequence[Tokens]) -> list[dict[str, float]]:
        return [{"adequacy": p} for p in self.adequacy(source.tokens, paraphrases)]

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        value = record.scores.get("adequacy")
        if value is None:
            (value,) = self.adequacy(context.source.tokens, [record.tokens])
        if value < self.config.threshold:
            return f"adequacy {value:.3f} < {self.config.threshold:g}"
        return None
