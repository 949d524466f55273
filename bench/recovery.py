"""What the decoder's ``recovery`` score costs: decoding with it on against off, in one process.

The same requests (bench/decoder.py's sentences, one avoided word each) are decoded with
``recovery=false`` (the baseline) and ``recovery=true``, in turns after a warm-up round,
and the best of ``--rounds`` counts for each. It also times the forced scoring alone,
batched (``Adapter.forced_logprobs``) against one pair per forward pass, on the candidates
the decoder returned. Both outputs must hold the same candidates: recovery is a score, not
a change to the search.

    .venv/bin/python bench/recovery.py --model qwen2.5-coder-1.5b-instruct --beam 4 --nbest 4
"""

from __future__ import annotations

import platform
from collections.abc import Callable

import torch
from decoder import SENTENCES
from timing import ab_parser, best_of

from spanaug_core.plugins import create
from spanaug_core.types import Constraints, DecodeRequest


def main() -> None:
    args = ab_parser(__doc__.splitlines()[0]).parse_args()

    requests = [DecodeRequest(text=text, constraints=Constraints(avoid=(avoid,))) for text, _, avoid in SENTENCES[: args.sentences]]
    options = {"model": args.model, "beam_size": args.beam, "device": args.device, "batch_size": len(requests)}
    off = create("decoder", "vdba", **options)
    on = create("decoder", "vdba", **options, recovery=True)
    adapter = off.adapter  # loaded once: decoders with the same model options share it
    outputs: dict[str, list] = {}

    def decode(name: str, decoder: object) -> Callable[[], object]:
        return lambda: outputs.__setitem__(name, decoder.decode(requests, args.nbest))  # type: ignore[attr-defined]

    seconds = best_of(args.rounds, {"off": decode("off", off), "on": decode("on", on)})
    same = [[c.text for c in cands] for cands in outputs["off"]] == [[c.text for c in cands] for cands in outputs["on"]]
    pairs = [(c.text, r.text) for r, cands in zip(requests, outputs["on"], strict=True) for c in cands]
    scoring = best_of(args.rounds, {"one": lambda: [adapter.forced_logprob(t, o) for t, o in pairs], "batched": lambda: adapter.forced_logprobs(pairs)})

    print(f"{args.model} on {args.device} ({platform.machine()}, {torch.get_num_threads()} threads): "
          f"{len(requests)} sentences, beam {args.beam}, nbest {args.nbest}, {len(pairs)} candidates")
    print(f"decode, recovery off: {seconds['off']:.1f} s; on: {seconds['on']:.1f} s; on/off = {seconds['on'] / seconds['off']:.2f}x; same candidates: {same}")
    print(f"forced scoring of the {len(pairs)} candidates: one per pass {scoring['one']:.1f} s, batched {scoring['batched']:.1f} s "
          f"({scoring['one'] / scoring['batched']:.2f}x faster batched)")


if __name__ == "__main__":
    main()
