"""Folders of trained downstream models: each names the trainer that saved it.

``spanaug train --trainer NAME`` leaves a folder whose ``config.json`` holds
``"trainer": NAME``, so whoever applies the model (``spanaug predict``, the label
consistency filter) needs only the folder to find the trainer that reads it back.
``save_model`` writes such a folder (any model's: aligner heads and filters too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spanaug_core.errors import ConfigError
from spanaug_core.files import atomic_output, replace_json

MODEL_CONFIG = "config.json"


def save_tensors(path: Path, tensors: Mapping[str, Any]) -> None:
    """Write ``tensors`` (a state dict) as the safetensors file ``path``, whole or not at all:
    a full disk or a read-only folder is a ``FileSystemError`` naming the file, and leaves no
    temporary."""
    from safetensors.torch import save_file

    with atomic_output(path, overwrite=True) as partial:
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(partial))


def save_model(folder: Path, weights: str, tensors: Mapping[str, Any], config: dict[str, Any]) -> None:
    """Write ``tensors`` as the safetensors file ``weights`` (:func:`save_tensors`), then
    ``config`` as ``config.json``, into ``folder``: a folder that has its config.json has its
    weights."""
    save_tensors(folder / weights, tensors)
    replace_json(folder / MODEL_CONFIG, config, indent=2)


def trainer_of(model_dir: Path) -> str:
    """The name of the trainer that saved ``model_dir`` (from its config.json)."""
    config = model_dir / MODEL_CONFIG
    try:
        name = json.loads(config.read_text(encoding="utf-8"))["trainer"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{model_dir} is not a trained model folder (expected {MODEL_CONFIG} naming its trainer)") from None
    return str(name)
