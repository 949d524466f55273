"""Shared-prefix attention: every row of a chat batch attends one copy of the prompt's prefix.

A chat prompt starts with the same tokens whatever the sentence (system message, few-shot
turns, template): a hundred or more of a typical prompt's few hundred. Copied into every
row's KV cache, that prefix is most of the cache: it is held, read by every step's
attention, and copied by every beam reorder, once per row. Here the cache holds only what
follows the prefix, and attention takes the prefix's keys and values [1, kv heads, P, dim]
beside it: the scores against the prefix are one matrix product per key-value head over
all rows' queries, the softmax runs over both parts together, and the output is the sum
of the two weighted value products. This is cascade attention (as FlashInfer calls it),
written with plain matrix products so that it runs on any device.

transformers calls an attention function by the name in the model's config. ``install``
registers a wrapper around the model's own function: given the ``SharedPrefix`` keyword
(passed through the model's forward), it attends as above; without it, it calls the model's
own function, so other users of the same weights see no change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import torch

KEYWORD = "spanaug_prefix"
_NAME = "spanaug-prefix+"


class SharedPrefix(NamedTuple):
    """What the wrapper needs besides the model's own arguments.

    ``layers``: per layer, the prefix's (keys, values) [1, kv heads, P, dim].
    ``mask``: bool [rows, T], the cache columns (keys and values the model passes) each row may see.
    ``shared``: bool [rows], whether the row's prompt starts with the prefix (its own columns
    then hold only the rest; a row encoded whole sees no shared prefix).
    """

    layers: Sequence[tuple[torch.Tensor, torch.Tensor]]
    mask: torch.Tensor
    shared: torch.Tensor


class Probe(NamedTuple):
    """Passed instead of a ``SharedPrefix`` over a cache that holds the first ``length``
    columns itself: the model's own function attends as usual, and each layer appends to
    ``differences`` how far ``attend`` over those columns as a shared prefix is from it
    (largest absolute difference over largest absolute output)."""

    length: int
    differences: list[float]


def install(model: Any) -> bool:
    """Make ``model`` call the wrapper around its own attention function (idempotent); False
    where its function is not a registered one (``eager`` is each model's own code) or the
    model does not let it be set."""
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, AttentionInterface

    own = model.config._attn_implementation
    if own.startswith(_NAME):
        return True
    if own not in ALL_ATTENTION_FUNCTIONS:
        return False
    name = _NAME + own
    if name not in ALL_ATTENTION_FUNCTIONS:
        AttentionInterface.register(name, _wrapper(ALL_ATTENTION_FUNCTIONS[own]))
        # The model's own masks, so that calls without the keyword get what they always got.
        if own in ALL_MASK_ATTENTION_FUNCTIONS:
            ALL_MASK_ATTENTION_FUNCTIONS.register(name, ALL_MASK_ATTENTION_FUNCTIONS[own])
    try:
        model.set_attn_implementation(name)
    except ValueError:
        return False
    return bool(model.config._attn_implementation == name)


def _wrapper(own: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(own)
    def attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any, *args: Any, **kwargs: Any) -> Any:
        prefix = kwargs.pop(KEYWORD, None)
        scaling = kwargs.get("scaling")
        scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
        if isinstance(prefix, SharedPrefix):
            return attend(query, key, value, prefix, module.layer_idx, scaling), None
        out = own(module, query, key, value, attention_mask, *args, **kwargs)
        if isinstance(prefix, Probe):
            _compare(out[0], query, key, value, prefix, scaling)
        return out

    return attention


def _compare(expected: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, probe: Probe, scaling: float) -> None:
    import torch

    n, p = len(query), probe.length
    seen = torch.ones(n, key.shape[2] - p, dtype=torch.bool, device=query.device)
    shared = SharedPrefix([(key[:1, :, :p], value[:1, :, :p])], seen, seen[:, 0])
    got = attend(query, key[:, :, p:], value[:, :, p:], shared, 0, scaling)
    probe.differences.append(float((got.float() - expected.float()).abs().max() / expected.float().abs().max()))


def attend(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, prefix: SharedPrefix, layer: int, scaling: float) -> torch.Tensor:
    """Attention output [rows, q, heads, dim] of ``query`` [rows, heads, q, dim] over the
    shared prefix of ``layer`` and each row's own ``key``/``value`` [rows, kv heads, T, dim]
    (the last q columns are the queries' own tokens: causal among them)."""
    import torch

    rows, heads, q, dim = query.shape
    kv_heads, t = key.shape[1], key.shape[2]
    group = heads // kv_heads  # query head h reads key-value head h // group
    prefix_keys, prefix_values = (x[0] for x in prefix.layers[layer])
    p = prefix_keys.shape[1]
    grouped = query.reshape(rows, kv_heads, group * q, dim)
    # Every row's queries against the one copy of the prefix: [kv heads, rows * group * q, P].
    flat = grouped.transpose(0, 1).reshape(kv_heads, rows * group * q, dim)
    on_prefix = torch.matmul(flat, prefix_keys.transpose(1, 2)).view(kv_heads, rows, group * q, p).transpose(0, 1)
    on_own = torch.matmul(grouped, key.transpose(2, 3))
    scores = torch.cat([on_prefix, on_own], dim=-1).float().mul_(scaling).view(rows, kv_heads, group, q, p + t)
    causal = torch.ones(q, t, dtype=torch.bool, device=query.device).tril(t - q)
    visible = torch.cat([prefix.shared[:, None, None].expand(rows, q, p), prefix.mask[:, None, :] & causal], dim=-1)
    # The dtype's least value, not -inf: a row that sees nothing (a padding position of a row
    # encoded whole) must come out finite, or its cache columns would poison the others' sums.
    scores.masked_fill_(~visible[:, None, None], torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).to(value.dtype).view(rows, kv_heads, group * q, p + t)
    out = torch.matmul(weights[..., p:], value)
    on_prefix_weights = weights[..., :p].transpose(0, 1).reshape(kv_heads, rows * group * q, p)
    out += torch.matmul(on_prefix_weights, prefix_values).view(kv_heads, rows, group * q, dim).transpose(0, 1)
    return out.view(rows, heads, q, dim).transpose(1, 2).contiguous()
