"""What the decoder's ``avoid_hint`` costs: decoding with the hint in the prompt against without, in one process.

The same requests (bench/decoder.py's sentences, one avoided word each, with its inflections)
are decoded with ``avoid_hint=""`` (the baseline) and with the default hint, in turns after a
warm-up round; the best of ``--rounds`` counts for each. Both decoders share one loaded model.
The hint lengthens every prompt, and it may change how long the answers are; the report
gives both, and how many top candidates differ.

    .venv/bin/python bench/avoid_hint.py --model qwen2.5-coder-1.5b-instruct --beam 4 --nbest 4
"""

from __future__ import annotations

import platform
from collections.abc import Callable

import torch
from decoder import SENTENCES
from timing import ab_parser, best_of

from spanaug_core.plugins import create
from spanaug_core.types import Constraints, DecodeRequest
from spanaug_decoders.adapters import ChatAdapter


def main() -> None:
    args = ab_parser(__doc__.splitlines()[0]).parse_args()

    expander = create("expander", "inflect")
    requests = [
        DecodeRequest(text=text, constraints=Constraints(avoid=tuple(expander.expand(avoid))))
        for text, _, avoid in SENTENCES[: args.sentences]
    ]
    options = {"model": args.model, "beam_size": args.beam, "device": args.device, "batch_size": len(requests)}
    off = create("decoder", "vdba", **options, avoid_hint="")
    on = create("decoder", "vdba", **options)
    plain, hinted = off.adapter, on.adapter  # two prompts over one copy of the weights
    if not isinstance(plain, ChatAdapter):
        raise SystemExit(f"{args.model} is not a chat model: the avoid hint is a chat prompt's")
    outputs: dict[str, list] = {}

    def decode(name: str, decoder: object) -> Callable[[], object]:
        return lambda: outputs.__setitem__(name, decoder.decode(requests, args.nbest))  # type: ignore[attr-defined]

    seconds = best_of(args.rounds, {"off": decode("off", off), "on": decode("on", on)})
    prompt_tokens = {
        name: sum(len(adapter.prompt_ids(r.text, r.constraints.avoid)) for r in requests) / len(requests)
        for name, adapter in (("off", plain), ("on", hinted))
    }
    answer_tokens = {
        name: sum(len(plain.tokenizer(c[0].text)["input_ids"]) for c in cands if c) / max(sum(1 for c in cands if c), 1)
        for name, cands in outputs.items()
    }
    differ = sum((a[0].text if a else None) != (b[0].text if b else None) for a, b in zip(outputs["off"], outputs["on"], strict=True))

    print(f"{args.model} on {args.device} ({platform.machine()}, {torch.get_num_threads()} threads): "
          f"{len(requests)} sentences, beam {args.beam}, nbest {args.nbest}")
    print(f"decode, no hint: {seconds['off']:.1f} s; hint: {seconds['on']:.1f} s; hint/no hint = {seconds['on'] / seconds['off']:.2f}x")
    print(f"prompt tokens per sentence: {prompt_tokens['off']:.0f} -> {prompt_tokens['on']:.0f}; "
          f"top candidate tokens: {answer_tokens['off']:.1f} -> {answer_tokens['on']:.1f}; top candidates that differ: {differ} of {len(requests)}")


if __name__ == "__main__":
    main()
