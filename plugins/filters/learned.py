"""The ``learned`` filter: a small classifier trained on human judgments decides (Culkin et al. 2021 §6.1).

The classifier reads three numbers every record carries: its iteration, its paraphrase
score and its alignment score, and answers the probability that a person would accept
the output. Trained with the positive class down-weighted it is the paper's
P-classifier (a small, clean subset), with the negative class down-weighted the
R-classifier (most good outputs, some bad); see ``learned_net`` for the network and its
training, and ``spanaug train filter`` for the command. A trained filter is a folder
(``filter.safetensors`` + ``config.json``) named by the ``model`` option; it is loaded,
and torch imported, on the first record checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import ComponentConfig, FilterContext
from spanaug_core.types import Augmented

if TYPE_CHECKING:
    from spanaug_filters.learned_net import FilterNet

SCORE_FEATURES = ("paraphrase", "alignment")
FEATURES = ("iteration", *SCORE_FEATURES)
WEIGHTINGS = ("precision", "recall", "balanced")
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "filter.safetensors"


def missing_features(scores: Mapping[str, float]) -> list[str]:
    """The scores the classifier needs that ``scores`` lacks."""
    return [key for key in SCORE_FEATURES if key not in scores]


def feature_vector(iteration: int, scores: Mapping[str, float]) -> list[float]:
    """The classifier's input for one output, in ``FEATURES`` order (every score must be present)."""
    return [float(iteration), *(float(scores[key]) for key in SCORE_FEATURES)]


def is_filter_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a filter saved by ``spanaug train filter``."""
    return (folder / CONFIG_FILE).is_file() and (folder / WEIGHTS_FILE).is_file()


class LearnedFilter:
    """Keep records a classifier trained on human judgments accepts (the paper's P-/R-classifiers)."""

    name: ClassVar[str] = "learned"

    class Config(ComponentConfig):
        model: Path | None = Field(default=None, description="folder written by `spanaug train filter` (required)")
        threshold: float = Field(default=0.5, ge=0.0, le=1.0, description="smallest acceptance probability kept")

    def __init__(self, config: Config) -> None:
        self.config = config
        self._net: FilterNet | None = None
        # A wrong path fails when the run is built, before any output is written; a
        # missing one cannot, since every component must build from its default Config.
        if config.model is not None and not is_filter_folder(config.model):
            raise ConfigError(
                f"filter 'learned': {config.model} is not a trained filter (expected {CONFIG_FILE} and "
                f"{WEIGHTS_FILE}, written by `spanaug train filter`)"
            )

    def probability(self, iteration: int, scores: Mapping[str, float]) -> float:
        """The classifier's probability that a person accepts an output with these features."""
        if self._net is None:
            if self.config.model is None:
                raise ConfigError("filter 'learned' needs model=FOLDER, a filter written by `spanaug train filter`")
            from spanaug_filters.learned_net import load_filter

            self._net = load_filter(self.config.model)
        return self._net.probabilities([feature_vector(iteration, scores)])[0]

    def check(self, record: Augmented, context: FilterContext) -> str | None:
        missing = missing_features(record.scores)
        if missing:
            return f"no '{missing[0]}' score"
        p = self.probability(record.iteration, record.scores)
        if p < self.config.threshold:
            return f"learned probability {p:.3f} < {self.config.threshold:g}"
        return None
