"""Fixtures shared by plugin tests: the CLI with chosen plugins, a tiny random BERT encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from spanaug_core.cli import main
from spanaug_core.plugins import default_registry


@pytest.fixture
def cli(monkeypatch):
    """``cli("a,b")`` -> a function running ``spanaug ARGS...`` with only those built-in plugins loaded."""

    def load(plugins: str):
        monkeypatch.setenv("SPANAUG_LOAD_PLUGINS", plugins)
        default_registry.cache_clear()
        return lambda *args: main([str(a) for a in args])

    yield load
    default_registry.cache_clear()

WORDS = (
    "the a cat dog sat lay on mat rug quickly slowly big small house home saw watched man woman "
    "bought purchased car auto red blue and . , she he it was is in"
).split()


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-dim BERT with random weights and a word-level vocabulary, saved to a folder."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s", "##ed"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder)
    return folder
