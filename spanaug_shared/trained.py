"""Folders of trained downstream models: each names the trainer that saved it.

``spanaug train --trainer NAME`` leaves a folder whose ``config.json`` holds
``"trainer": NAME``, so whoever applies the model (``spanaug predict``, the label
consistency filter) needs only the folder to find the trainer that reads it back.
"""

from __future__ import annotations

import json
from pathlib import Path

from spanaug_core.errors import ConfigError

MODEL_CONFIG = "config.json"


def trainer_of(model_dir: Path) -> str:
    """The name of the trainer that saved ``model_dir`` (from its config.json)."""
    config = model_dir / MODEL_CONFIG
    try:
        name = json.loads(config.read_text(encoding="utf-8"))["trainer"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{model_dir} is not a trained model folder (expected {MODEL_CONFIG} naming its trainer)") from None
    return str(name)
