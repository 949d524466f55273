"""How far a real model's next-token log-probabilities move under changes that should not matter.

One prompt (the decoder's default instruction and few-shot turns, a sentence of
``bench/decoder.py`` with its ten avoid phrases) is scored after its shared prefix in
several ways, and each is compared with the plain one (the prefix's cache copied into the
row, the sentence alone in its batch) on the plain one's top 20 tokens: largest absolute
difference in nats, and the KL divergence from the plain distribution.

- ``prefix keys x (1 + eps)``: the prefix's keys scaled by a relative 1e-6 or 1e-4;
- ``beside another sentence``: in one batch with a longer sentence (left padding);
- ``n copies``: in a batch of n copies of itself;
- ``shared prefix``: attention to one shared copy of the prefix (``prefix_attention``).

With ``--quantize int8`` PyTorch's dynamic quantization scales each linear layer's input
by the whole batch's largest value, which is what these comparisons expose.

    OMP_NUM_THREADS=2 .venv/bin/python bench/int8_noise.py --quantize int8
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch
from step import requests
from transformers import DynamicCache

from spanaug_decoders import prefix_attention
from spanaug_decoders.adapters import DEFAULT_AVOID_HINT, FEW_SHOT, ChatAdapter, load
from spanaug_decoders.prefix_attention import SharedPrefix

OTHER = "Our team won the championship after a long season, and the whole town celebrated for three days."


def copied(adapter: ChatAdapter, prompts: list[list[int]], scale: float = 1.0, shared: bool = False) -> torch.Tensor:
    """Log-probabilities [V] of the first row's next token: ``prompts`` in one batch, what
    follows the prefix left-padded as the decoder pads it, the prefix copied into each row's
    cache (keys times ``scale``) or, with ``shared``, attended as one shared copy."""
    ids, mask, p = adapter.encode_prompts(prompts)
    if not p:
        raise SystemExit("the prompts do not start with the adapter's prefix")
    n = len(prompts)
    kwargs: dict[str, Any] = {}
    if shared:
        kwargs[prefix_attention.KEYWORD] = SharedPrefix(adapter.prefix_cache(), mask.bool(), torch.ones(n, dtype=torch.bool))
        full_mask = mask
    else:
        layers = [((k * scale).expand(n, -1, -1, -1).clone(), v.expand(n, -1, -1, -1).clone()) for k, v in adapter.prefix_cache()]
        kwargs[adapter.cache_name] = DynamicCache(ddp_cache_data=layers)
        full_mask = torch.cat([torch.ones(n, p, dtype=torch.long), mask], 1)
    positions = (mask.cumsum(-1) - 1).clamp(min=0) + p
    with torch.inference_mode():
        logits = adapter.model(input_ids=ids, attention_mask=full_mask, position_ids=positions, logits_to_keep=1, **kwargs).logits
    return torch.log_softmax(logits[0, -1].float(), -1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--quantize", default="none", choices=["none", "int8"])
    args = parser.parse_args()

    adapter = load(args.model, quantize=args.quantize, examples=FEW_SHOT, avoid_hint=DEFAULT_AVOID_HINT)
    if not adapter.shares_prefix:
        raise SystemExit(f"{args.model}: the adapter does not share its prefix")
    request = requests(1, 10)[0]
    rest = adapter.prompt_ids(request.text, request.constraints.avoid)
    other = adapter.prompt_ids(OTHER, request.constraints.avoid)
    plain = copied(adapter, [rest])
    top = plain.topk(20).indices
    ways = {
        "prefix keys x (1 + 1e-6)": copied(adapter, [rest], 1 + 1e-6),
        "prefix keys x (1 + 1e-4)": copied(adapter, [rest], 1 + 1e-4),
        "beside another sentence": copied(adapter, [rest, other]),
        "2 copies": copied(adapter, [rest] * 2),
        "8 copies": copied(adapter, [rest] * 8),
        "shared prefix": copied(adapter, [rest], shared=True),
    }
    out = {"model": args.model, "quantize": args.quantize, "prompt": request.text}
    for name, got in ways.items():
        out[name] = {
            "top20_max_nats": float((got[top] - plain[top]).abs().max()),
            "kl": float((plain.exp() * (plain - got)).sum()),
            "same_top1": int(got.argmax()) == int(plain.argmax()),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
