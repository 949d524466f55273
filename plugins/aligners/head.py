"""The bert-span scorer (Culkin et al. 2021 §4.1) and the features it reads.

For a source span S and each candidate span C of the paraphrase (mean-pooled word
vectors), the input is the concatenation of Df = S - C, Mx = max(S, C) and Cue = (start,
length) of both spans (starts relative to sentence length); any of the three can be left
out to reproduce the paper's ablations. An optional fourth group, not in the paper, is
Sim: the cosines of the two span vectors, of their first words and of their last words. A
one-hidden-layer net cannot easily compute a similarity from Df and Mx, and mean pooling
hides a span's edges ("one of" and "one of the" pool to nearly the same vector); given
the cosines directly the head finds the edges of a span that was kept word for word. A
fifth group, Link, gives the head what the zero-shot SimAlign method knows (Jalili Sabet et
al. 2020): from the word-by-word cosine matrix of the pair and its mutual-argmax links,
how much of the candidate is linked to the source span and to the rest of the source, how
much of the source span is linked into the candidate and elsewhere, whether the candidate
is the links' hull (for a head trained with ``link_edges``, the hull widened at its edges by
simalign's ``edges`` rule), BERTScore-style soft precision and recall of the two spans, and the
share of words whose single best match falls inside the other span. Without it the head
lost to SimAlign itself on MultiMWA (docs/results/bert-span-ablations.md).

The scorer is one hidden layer with batchnorm and PReLU and a sigmoid output. Its training
target is either the soft label 2^-d(C, gold) with d the summed start/end offset distance
(SBCE) or the hard 1/0 label. A head is saved as ``head.safetensors`` plus ``config.json``
(HeadConfig) in one folder, with ``encoder.safetensors`` when it tuned its encoder's top
layers (``tuned_layers``): only those layers, applied over the encoder preset when it loads.

This module imports torch at the top: import it only inside functions of light modules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from pydantic import ConfigDict

from spanaug_core.errors import ConfigError

from spanaug_shared.encoder import word_similarity
from spanaug_aligners.options import HeadShape
from spanaug_aligners.pairs import Bounds
from spanaug_aligners.simalign import mutual_argmax, span_hull
from spanaug_aligners.spans import candidate_spans, span_means

Tokens = tuple[str, ...]
CUE_DIM = 4
SIM_DIM = 3
LINK_DIM = 9


class HeadConfig(HeadShape):
    """What a saved head needs to be rebuilt and used: its shape, encoder and threshold.

    ``longest_span`` is the longest source span in the head's training data: the head has
    never seen a longer one, and bert-span hands those to simalign. A head saved before it
    was recorded has None and answers every span itself. ``tuned_layers`` is how many of the
    encoder's top layers were trained with the head (their weights: ``encoder.safetensors``).
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    encoder: str
    dim: int
    threshold: float = 0.5
    longest_span: int | None = None
    tuned_layers: int = 0

    @property
    def input_dim(self) -> int:
        return (
            self.dim * (self.use_df + self.use_mx) + CUE_DIM * self.use_cue + SIM_DIM * self.use_cos + LINK_DIM * self.use_links
        )


class SpanScorer(torch.nn.Module):
    """Feed-forward scorer: features (rows, input_dim) -> logits (rows,)."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__()
        if not (config.use_df or config.use_mx):
            raise ConfigError("a bert-span head needs Df or Mx (span vectors); both were turned off")
        self.config = config
        self.net = torch.nn.Sequential(
            torch.nn.Linear(config.input_dim, config.hidden),
            torch.nn.BatchNorm1d(config.hidden),
            torch.nn.PReLU(),
            torch.nn.Linear(config.hidden, 1),
        )

    def features(self, source: torch.Tensor, cands: torch.Tensor, cues: torch.Tensor) -> torch.Tensor:
        """Concatenate the enabled features: source/cands (rows, dim), cues (rows, 16) -> (rows, input_dim).

        ``cues`` holds the 4 position cues, the 3 similarities and the 9 link signals (see :func:`item_rows`).
        """
        parts = []
        if self.config.use_df:
            parts.append(source - cands)
        if self.config.use_mx:
            parts.append(torch.maximum(source, cands))
        if self.config.use_cue:
            parts.append(cues[:, :CUE_DIM])
        if self.config.use_cos:
            parts.append(cues[:, CUE_DIM : CUE_DIM + SIM_DIM])
        if self.config.use_links:
            parts.append(cues[:, CUE_DIM + SIM_DIM :])
        return torch.cat(parts, dim=1)

    def forward(self, source: torch.Tensor, cands: torch.Tensor, cues: torch.Tensor) -> torch.Tensor:
        return self.net(self.features(source, cands, cues)).squeeze(1)


def pair_alignment(src: torch.Tensor, tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A pair's word cosine matrix and its mutual-argmax links, (n, m) each: what every item of the pair shares."""
    sim = word_similarity(src.float(), tgt.float())
    return sim, mutual_argmax(sim)


def link_signals(
    sim: torch.Tensor,
    links: torch.Tensor,
    source_span: Bounds,
    spans: Sequence[Bounds],
    target_tokens: Sequence[str] | None = None,
) -> torch.Tensor:
    """SimAlign's view of each candidate, from the pair's :func:`pair_alignment` -> (c, LINK_DIM).

    Columns: share of the candidate's words linked to the source span, and to other source
    words; share of the source span's words linked into the candidate, and only outside it;
    1 if the candidate is the hull of the span's links (widened as simalign's ``edges`` does when
    ``target_tokens`` are given); soft recall (mean over the span's
    words of their best cosine inside the candidate) and soft precision (the converse); share
    of the candidate's words whose most similar source word is in the span, and of the
    span's words whose most similar target word is in the candidate.
    """
    if not spans:
        return torch.zeros(0, LINK_DIM)
    s, e = source_span
    m = sim.shape[1]
    starts = torch.tensor([a for a, _ in spans])
    ends = torch.tensor([b for _, b in spans])
    position = torch.arange(m)
    inside = ((position >= starts[:, None]) & (position < ends[:, None])).float()  # (c, m)
    length = inside.sum(1)
    span_links, span_sim = links[s:e], sim[s:e]
    other_links = torch.cat([links[:s], links[e:]]).any(0)
    hits = (inside @ span_links.float().T) > 0  # (c, span words): linked into the candidate
    hull = span_hull(links, s, e, target_tokens)
    if hull is not None:
        is_hull = (starts == hull[0]) & (ends == hull[1])
    else:
        is_hull = torch.zeros(len(spans), dtype=torch.bool)
    soft_recall = span_sim.unsqueeze(0).masked_fill(inside.unsqueeze(1) == 0, float("-inf")).amax(2).mean(1)
    best_source = sim.argmax(0)
    best_target = span_sim.argmax(1)
    return torch.stack(
        [
            inside @ span_links.any(0).float() / length,
            inside @ other_links.float() / length,
            hits.float().mean(1),
            (span_links.any(1) & ~hits).float().mean(1),
            is_hull.float(),
            soft_recall,
            inside @ span_sim.amax(0) / length,
            inside @ ((best_source >= s) & (best_source < e)).float() / length,
            ((best_target >= starts[:, None]) & (best_target < ends[:, None])).float().mean(1),
        ],
        dim=1,
    )


def item_links(
    src_words: torch.Tensor,
    tgt_words: torch.Tensor,
    source_span: Bounds,
    config: HeadConfig,
    target_tokens: Sequence[str] | None = None,
    alignment: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """The :func:`link_signals` of one item's candidates, in :func:`item_rows`' order (``target_tokens``:
    needed by a head with ``link_edges``; ``alignment``: the pair's :func:`pair_alignment`, when it was
    computed before)."""
    if config.link_edges and target_tokens is None:
        raise ValueError("a head with link_edges needs the target tokens to compute its link signals")
    spans = candidate_spans(tgt_words.shape[0], source_span[1] - source_span[0], config.k, config.max_span)
    edges = target_tokens if config.link_edges else None
    return link_signals(*(alignment or pair_alignment(src_words, tgt_words)), source_span, spans, edges)


def links_of_items(
    inputs: Sequence[tuple[torch.Tensor, torch.Tensor, Bounds]], pairs: Sequence[tuple[Tokens, Tokens]], config: HeadConfig
) -> list[torch.Tensor | None]:
    """Each item's :func:`item_links` (all None for a head without Link features); ``pairs`` holds each
    item's source and target tokens: a pair's word alignment is computed once for all of its items."""
    if not config.use_links:
        return [None] * len(inputs)
    by_pair: dict[tuple[Tokens, Tokens], tuple[torch.Tensor, torch.Tensor]] = {}
    out = []
    for (src, tgt, span), pair in zip(inputs, pairs):
        if pair not in by_pair:
            by_pair[pair] = pair_alignment(src, tgt)
        out.append(item_links(src, tgt, span, config, pair[1], by_pair[pair]))
    return out


def item_rows(
    src_words: torch.Tensor, tgt_words: torch.Tensor, source_span: Bounds, config: HeadConfig, links: torch.Tensor | None = None
) -> tuple[list[Bounds], torch.Tensor, torch.Tensor, torch.Tensor]:
    """Candidates of one item and their inputs.

    src_words (n, dim), tgt_words (m, dim) -> (spans, source (c, dim), cands (c, dim), cues (c, 7 or 16)):
    the cues are the source span's relative start and length, the candidate's, the cosines
    of span vectors, first words and last words, and (for a head with Link features) the
    :func:`link_signals` (pass ``links`` when they were computed before: training reuses them
    every epoch).
    """
    s, e = source_span
    n, m = src_words.shape[0], tgt_words.shape[0]
    spans = candidate_spans(m, e - s, config.k, config.max_span)
    starts = torch.tensor([a for a, _ in spans], dtype=torch.long)
    ends = torch.tensor([b for _, b in spans], dtype=torch.long)
    src, tgt = src_words.float(), tgt_words.float()
    cands = span_means(tgt, starts, ends)
    source = span_means(src, torch.tensor([s]), torch.tensor([e])).expand(len(spans), -1)
    cosine = torch.nn.functional.cosine_similarity
    first = cosine(src[s].unsqueeze(0), tgt[starts], dim=1)
    last = cosine(src[e - 1].unsqueeze(0), tgt[ends - 1], dim=1)
    cues = torch.stack(
        [
            torch.full((len(spans),), s / n),
            torch.full((len(spans),), float(e - s)),
            starts.float() / m,
            (ends - starts).float(),
            cosine(source, cands, dim=1),
            first,
            last,
        ],
        dim=1,
    )
    if config.use_links:
        cues = torch.cat([cues, item_links(src, tgt, source_span, config) if links is None else links], dim=1)
    return spans, source, cands, cues


def labels(spans: Sequence[Bounds], gold: Bounds | None, soft: bool) -> torch.Tensor:
    """Training targets (c,): 2^-d(candidate, gold) (soft) or 1 for gold only; all 0 when gold is None."""
    if gold is None:
        return torch.zeros(len(spans))
    dist = torch.tensor([abs(a - gold[0]) + abs(b - gold[1]) for a, b in spans], dtype=torch.float)
    return torch.pow(2.0, -dist) if soft else (dist == 0).float()


def stacked(rows: Sequence[tuple], device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The head's three inputs (source, candidates, cues) of :func:`item_rows` results, one batch on
    ``device``: the word vectors come from the encoder (or its cache) on the CPU, the head may be on a GPU."""
    source, cands, cues = (torch.cat([r[k] for r in rows]).to(device) for k in (1, 2, 3))
    return source, cands, cues


def score_items(
    model: SpanScorer,
    inputs: Sequence[tuple[torch.Tensor, torch.Tensor, Bounds]],
    links: Sequence[torch.Tensor | None] | None = None,
) -> list[tuple[list[Bounds], torch.Tensor]]:
    """Sigmoid scores of every candidate of each ``(src_words, tgt_words, source_span)``, one forward pass
    (``links``: each item's :func:`item_links`, when they were computed before)."""
    rows = [item_rows(*item, model.config, link) for item, link in zip(inputs, links or [None] * len(inputs))]
    if not any(r[0] for r in rows):
        return [(spans, torch.zeros(0)) for spans, *_ in rows]
    with torch.inference_mode():
        probs = torch.sigmoid(model(*stacked(rows, next(model.parameters()).device))).cpu()
    out, offset = [], 0
    for spans, *_ in rows:
        out.append((spans, probs[offset : offset + len(spans)]))
        offset += len(spans)
    return out


ENCODER_FILE = "encoder.safetensors"


def save_head(model: SpanScorer, config: HeadConfig, folder: Path, encoder: dict[str, torch.Tensor] | None = None) -> None:
    """Write ``head.safetensors`` and ``config.json`` into ``folder``, and the tuned ``encoder`` parameters
    (:meth:`Encoder.tuned_parameters`) as ``encoder.safetensors``; config.json comes last, so a folder
    that has it has its weights."""
    from spanaug_shared.trained import save_model, save_tensors

    if bool(encoder) != bool(config.tuned_layers):
        raise ValueError(f"a head with tuned_layers={config.tuned_layers} is saved {'with' if encoder else 'without'} encoder weights")
    if encoder:
        save_tensors(folder / ENCODER_FILE, encoder)
    save_model(folder, "head.safetensors", model.state_dict(), config.model_dump())


def load_head(folder: Path, device: str = "cpu") -> SpanScorer:
    """The head saved in ``folder`` (by :func:`save_head`), in eval mode."""
    from safetensors.torch import load_file

    config_file, weights = folder / "config.json", folder / "head.safetensors"
    if not (config_file.is_file() and weights.is_file()):
        raise ConfigError(f"{folder} is not a bert-span head (expected config.json and head.safetensors)")
    model = SpanScorer(HeadConfig(**json.loads(config_file.read_text(encoding="utf-8"))))
    if model.config.tuned_layers and not (folder / ENCODER_FILE).is_file():
        raise ConfigError(f"{folder}: the head tuned {model.config.tuned_layers} encoder layers but {ENCODER_FILE} is missing")
    model.load_state_dict(load_file(str(weights)))
    return model.to(device).eval()
