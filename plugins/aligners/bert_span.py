"""bert-span: the trained span aligner of Culkin et al. 2021 §4.1 (encoder + small head).

Each (S, S') pair is encoded once as ``[CLS] S [SEP] S' [SEP]``; the head (see head.py)
scores every candidate span of S' against the source span; the argmax wins unless its
score is under the threshold (by default the one tuned on dev when the head was trained).
The head folder names the encoder it was trained with, and holds the encoder's top layers
when they were tuned with the head (``encoder.safetensors``, applied over the preset). The
default head, trained with all six MiniLM layers on MultiMWA train's human alignments, its
threshold placed by the rate of None (``spanaug train aligner-threshold``), ships in
``heads/default``; its files are pinned by sha256.

A source span longer than any the head was trained on (the shipped head: 3 words) goes to
simalign's word links instead, computed with the same encoder: a head that has only seen
short spans reads a long one's length features as nothing it knows, and its candidates stop
at ``max_span`` + ``k`` words, so a clausal frame element or argument could never be placed.
On longer spans simalign places them better than the head (docs/results/bert-span-design.md).

Before either, a source span whose words occur exactly once in the paraphrase is aligned to
that copy (``copies``): a kept span is where its words are, and the head, which sees only
vectors, sometimes took a neighbour ("south korea" -> "south") or another mention.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from spanaug_core.errors import ConfigError
from spanaug_core.protocols import AlignerConfig
from spanaug_core.types import AlignItem, Alignment

from spanaug_shared.encoder import Encoder
from spanaug_aligners.simalign import SimAlignAligner
from spanaug_aligners.spans import encode_items, to_alignment
from spanaug_aligners.string_match import copied, only_copy

if TYPE_CHECKING:
    from spanaug_aligners.head import SpanScorer

DEFAULT_HEAD = Path(__file__).resolve().parent / "heads" / "default"
# The shipped head's files: a changed or damaged one stops the aligner instead of aligning with it.
DEFAULT_HEAD_SHA256 = {
    "config.json": "45c71e56272c3a87b76ef9df1e631930b6b8e08ca5c15f5e62d91c13307995db",
    "encoder.safetensors": "5f92bdbcbfc57081a192f1ffad3a9c78e1db20960dd4e3885945c6a6cbf4a742",
    "head.safetensors": "39348d0f1cc21e8b77f183d218260d4edeab6b8ccc9b2e5cde304c46880076e6",
}


class BertSpanAligner:
    """Trained span aligner: encoder (frozen or partly tuned), Df/Mx/Cue features, feed-forward scorer (paper §4.1)."""

    name: ClassVar[str] = "bert-span"

    class Config(AlignerConfig):
        threshold: float | None = Field(
            default=None, ge=0.0, le=1.0, description="answer None below this score (default: the head's tuned one)"
        )
        head: str | None = Field(default=None, description="folder of a trained head (default: the shipped one)")
        encoder: str | None = Field(default=None, description="encoder override (default: the head's own)")
        top_k: int = Field(default=5, ge=1, description="candidates reported per item")
        batch_size: int = Field(default=32, ge=1, description="sentence pairs per encoder batch")
        device: str = Field(default="cpu", description="torch device")
        simalign_over: int | None = Field(
            default=None,
            ge=1,
            description="source spans longer than this many words go to simalign (default: the longest span "
            "the head was trained on, 3 for the shipped head; a head that does not record it answers every span)",
        )
        copies: bool = Field(
            default=True,
            description="a source span whose words occur exactly once in the target (in their own case, else "
            "ignoring case) is aligned to that copy with score 1, without the head (docs/aligners.md)",
        )
        simalign_threshold: float = Field(
            default=0.3,
            ge=0.0,
            le=1.0,
            description="a span handed to simalign gets None under this score, so that a span the paraphrase dropped "
            "is not placed on a stray word (docs/results/bert-span-design.md)",
        )

    def __init__(self, config: Config) -> None:
        self.config = config
        self._loaded: tuple[SpanScorer, Encoder, SimAlignAligner] | None = None

    def _load(self) -> tuple[SpanScorer, Encoder, SimAlignAligner]:
        if self._loaded is None:
            from spanaug_shared.models import verify_pinned

            from spanaug_aligners.head import ENCODER_FILE, load_head

            folder = Path(self.config.head) if self.config.head else DEFAULT_HEAD
            if self.config.head is None:
                verify_pinned(folder, DEFAULT_HEAD_SHA256, "the shipped bert-span head")
            model = load_head(folder, self.config.device)
            name = self.config.encoder or model.config.encoder
            tuned = folder / ENCODER_FILE if model.config.tuned_layers else None
            if tuned is not None and name != model.config.encoder:
                raise ConfigError(
                    f"the head in {folder} tuned layers of {model.config.encoder}; it cannot run on encoder={name}"
                )
            encoder = Encoder(name, device=self.config.device, tuned=tuned)
            # Long spans go to simalign on the encoder as published: simalign was measured and tuned on it.
            zero_shot = SimAlignAligner(
                SimAlignAligner.Config(
                    encoder=name,
                    threshold=self.config.simalign_threshold,
                    batch_size=self.config.batch_size,
                    device=self.config.device,
                ),
                encoder if tuned is None else Encoder(name, device=self.config.device),
            )
            self._loaded = (model, encoder, zero_shot)
        return self._loaded

    def align(self, items: Sequence[AlignItem]) -> list[Alignment]:
        model, encoder, zero_shot = self._load()
        found: dict[int, Alignment] = {}
        if self.config.copies:
            found = {i: copied(span) for i, span in enumerate(map(only_copy, items)) if span}
        long = [i for i, it in enumerate(items) if i not in found and self.handed_over(it)]
        found.update(zip(long, zero_shot.align([items[i] for i in long])))
        short = [i for i in range(len(items)) if i not in found]
        found.update(zip(short, self._align_with_head(model, encoder, [items[i] for i in short])))
        return [found[i] for i in range(len(items))]

    def handed_over(self, item: AlignItem) -> bool:
        """Whether ``item`` goes to simalign: its source span is longer than ``simalign_over`` (the head's ``longest_span``)."""
        longest = self.config.simalign_over or self._load()[0].config.longest_span
        return longest is not None and item.source_span[1] - item.source_span[0] > longest

    def _align_with_head(self, model: SpanScorer, encoder: Encoder, items: Sequence[AlignItem]) -> list[Alignment]:
        from spanaug_aligners.head import links_of_items, score_items

        if not items:
            return []
        threshold = self.config.threshold if self.config.threshold is not None else model.config.threshold
        vectors = encode_items(encoder, items, joint=True, batch_size=self.config.batch_size)
        inputs = [(src, tgt, it.source_span) for it, (src, tgt) in zip(items, vectors)]
        links = links_of_items(inputs, [(it.source_tokens, it.target_tokens) for it in items], model.config)
        results: list[Alignment] = []
        # Items are scored in chunks so a huge call does not build one giant feature matrix.
        chunk = 256
        for i in range(0, len(items), chunk):
            for spans, probs in score_items(model, inputs[i : i + chunk], links[i : i + chunk]):
                results.append(to_alignment(spans, probs.tolist(), threshold, self.config.top_k))
        return results
