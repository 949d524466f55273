"""What training a bert-span head is told: the head's shape and the optimisation settings.

Kept apart from head.py and train.py, which import torch at the top, so that the
command line can read its defaults from here (one copy of each default) and still start
quickly.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from spanaug_shared.encoder import DEFAULT_ENCODER


class HeadShape(BaseModel):
    """The scorer's features, size, labels and candidates: chosen for training, repeated by the saved head.

    The extra feature groups (Sim, Link) default to off so that a head saved before they
    existed loads as it was trained; ``spanaug train aligner`` turns both on. For the same
    reason ``link_edges`` (Link's hull column marks simalign's hull widened at its edges, not
    the bare hull) defaults to off here and on in ``spanaug train aligner``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    hidden: int = 770
    use_df: bool = True
    use_mx: bool = True
    use_cue: bool = True
    use_cos: bool = False
    use_links: bool = False
    link_edges: bool = False
    soft_labels: bool = True
    k: int = 2
    max_span: int = 6


class TrainOptions(BaseModel):
    """Settings of ``spanaug train aligner``: the head's shape (with the paper's ablations) and the optimisation.

    ``tune_layers`` > 0 trains the encoder's top layers with the head (at ``encoder_lr``);
    0 keeps the encoder frozen and caches its outputs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    encoder: str = DEFAULT_ENCODER
    shape: HeadShape = HeadShape()
    epochs: int = 30
    patience: int = 4
    lr: float = 1e-3
    batch_size: int = 32
    seed: int = 0
    device: str = "cpu"
    tune_layers: int = Field(default=0, ge=0)
    encoder_lr: float = 3e-5
