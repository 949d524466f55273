"""A baseline revision's search code against the working tree's on a real model: same outputs? how fast?

``bench/step.py`` times a step over random weights, which rarely end a hypothesis; this
decodes real requests (the sentences of ``bench/decoder.py``, each with ten avoid phrases
and one include phrase, as ``bench/step.py`` builds them) with a real model through
``VDBADecoder``, once with each code's ``ChatAdapter`` over the same loaded weights, in
turns, and reports each code's best time and how many requests kept their top candidate
and their whole n-best list (with the largest score difference where the text is the same).

    OMP_NUM_THREADS=2 .venv/bin/python bench/outputs.py --baseline bbbdd18 --quantize int8 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from step import requests, search_code

from spanaug_decoders.decoders import VDBADecoder
from spanaug_shared.weights import load_weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--quantize", default="none", choices=["none", "int8"])
    parser.add_argument("--baseline", required=True, help="git revision (or --export folder of bench/step.py) whose search code to compare")
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--nbest", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write the figures and every output to this file")
    args = parser.parse_args()

    model, tokenizer = load_weights(args.model, "auto", "cpu", None, args.quantize)
    reqs = requests(args.sentences, 10)
    seconds: dict[str, float] = {}
    texts: dict[str, list[list[str]]] = {}
    scores: dict[str, list[list[float]]] = {}
    config = VDBADecoder.Config(beam_size=args.beam, batch_size=args.sentences, max_length=args.max_length)
    decoders = {}
    for name, code in (("old", search_code(args.baseline)), ("new", search_code(None))):
        a = code["adapters"]
        adapter = a.ChatAdapter(model, tokenizer, [tokenizer.eos_token_id], a.DEFAULT_SYSTEM, a.DEFAULT_PROMPT, a.FEW_SHOT, a.DEFAULT_AVOID_HINT)
        # One adapter per code for every round: its prefix cache (and check) is paid once, as in a run.
        decoders[name] = VDBADecoder(config, adapter=adapter)
    for _ in range(args.rounds):
        for name, decoder in decoders.items():
            t0 = time.perf_counter()
            got = decoder.decode(reqs, nbest=args.nbest)
            seconds[name] = min(seconds.get(name, float("inf")), time.perf_counter() - t0)
            texts[name], scores[name] = [[c.text for c in cs] for cs in got], [[c.score for c in cs] for cs in got]
    old, new = texts["old"], texts["new"]
    same_scores = [
        abs(x - y) for so, sn, to, tn in zip(scores["old"], scores["new"], old, new) for x, y, u, v in zip(so, sn, to, tn) if u == v
    ]
    summary = {
        "model": args.model,
        "quantize": args.quantize,
        "requests": len(reqs),
        "seconds_old": seconds["old"],
        "seconds_new": seconds["new"],
        "speedup": seconds["old"] / seconds["new"],
        "same_top1": sum(o[:1] == n[:1] for o, n in zip(old, new)),
        "same_nbest": sum(o == n for o, n in zip(old, new)),
        "max_score_difference_same_text": max(same_scores, default=None),
    }
    print(json.dumps(summary, indent=1))
    for request, o, n in zip(reqs, old, new):
        if o[:1] != n[:1]:
            print(f"{request.text}\n  old: {o[:1]}\n  new: {n[:1]}")
    if args.json:
        Path(args.json).write_text(json.dumps({**summary, "texts": texts, "scores": scores}, indent=1))


if __name__ == "__main__":
    main()
