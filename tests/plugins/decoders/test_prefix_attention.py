"""Shared-prefix attention against attention over the prefix copied into every row."""

from __future__ import annotations

import pytest
import torch

from spanaug_decoders.prefix_attention import SharedPrefix, attend


def reference(query, keys, values, prefix, mask, shared, scaling):
    """Attention row by row, the prefix's keys copied in front of the row's own where it shares it."""
    rows, heads, q, dim = query.shape
    group = heads // keys.shape[1]
    out = torch.zeros(rows, q, heads, dim)
    for r in range(rows):
        k, v, seen = keys[r], values[r], mask[r].clone()
        causal = torch.ones(q, k.shape[1], dtype=torch.bool).tril(k.shape[1] - q)
        visible = seen[None, :] & causal
        if shared[r]:
            k, v = torch.cat([prefix[0][0], k], 1), torch.cat([prefix[1][0], v], 1)
            visible = torch.cat([torch.ones(q, prefix[0].shape[2], dtype=torch.bool), visible], 1)
        for h in range(heads):
            scores = query[r, h] @ k[h // group].T * scaling
            scores = scores.masked_fill(~visible, torch.finfo(scores.dtype).min)
            out[r, :, h] = torch.softmax(scores, -1) @ v[h // group]
    return out


@pytest.mark.parametrize("q", [1, 4])
def test_attention_to_a_shared_prefix_is_attention_to_a_copy_of_it(q):
    torch.manual_seed(0)
    rows, heads, kv_heads, dim, p, t = 3, 4, 2, 8, 5, 6
    query = torch.randn(rows, heads, q, dim)
    keys, values = torch.randn(rows, kv_heads, t, dim), torch.randn(rows, kv_heads, t, dim)
    prefix = (torch.randn(1, kv_heads, p, dim), torch.randn(1, kv_heads, p, dim))
    mask = torch.ones(rows, t, dtype=torch.bool)
    mask[1, :2] = False  # a row padded on the left, as a shorter prompt is
    shared = torch.tensor([True, False, True])  # the middle row was encoded whole
    got = attend(query, keys, values, SharedPrefix([prefix], mask, shared), 0, 0.3)
    assert got.shape == (rows, q, heads, dim)
    assert torch.allclose(got, reference(query, keys, values, prefix, mask, shared, 0.3), atol=1e-5)


def test_a_query_that_sees_nothing_comes_out_finite():
    # A padding position of a row encoded whole: its keys and values stay in the cache, masked,
    # and a NaN there would turn every other row's weighted sum into NaN.
    query, keys = torch.randn(1, 2, 2, 4), torch.randn(1, 1, 2, 4)
    prefix = (torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4))
    got = attend(query, keys, keys, SharedPrefix([prefix], torch.tensor([[False, True]]), torch.tensor([False])), 0, 0.5)
    assert torch.isfinite(got).all()
