"""Decoder benchmark: the four speed ratios of issue 3, measured in one process per model.

(1) VDBA with positive constraints, batch 20 vs batch 1 (sentences/s; Hu et al. report
~5x on a GPU); (2) vectorized over the batch vs one sentence at a time (``vectorize=False``,
the DBA-style baseline); (3) constrained vs unconstrained at equal beam and batch;
(4) ours vs ``hf-beam`` (transformers beam search + bad_words_ids) on avoid-only
constraints: time ratio and top-1 agreement. Every run also reports constraint
satisfaction (every returned candidate must satisfy its constraints: 100%).

    .venv/bin/python bench/decoder.py --model smollm2-135m-instruct --beam 4 --max-length 24 --nbest 3 --write
    .venv/bin/python bench/decoder.py --model qwen2.5-coder-1.5b-instruct --beam 4 --max-length 24 --nbest 3 --write

Figures go to stdout and, with ``--write``, replace this model's section of docs/results/bench-decoder.md.
"""

from __future__ import annotations

import argparse
import platform
import re
import time
from pathlib import Path
from typing import Any

import torch

from spanaug_core.plugins import create
from spanaug_core.protocols import ConstrainedDecoder
from spanaug_core.text import contains_phrase
from spanaug_core.types import Candidate, Constraints, DecodeRequest

# (sentence, word to include: one a paraphrase may plausibly keep, word to avoid)
SENTENCES = [
    ("The committee will corroborate the account.", "committee", "corroborate"),
    ("She quickly finished her homework before dinner.", "homework", "finished"),
    ("The old bridge was closed for repairs last week.", "bridge", "closed"),
    ("Our team won the championship after a long season.", "championship", "won"),
    ("The scientist presented her findings at the conference.", "conference", "presented"),
    ("He borrowed a book from the public library.", "library", "borrowed"),
    ("The company announced record profits this quarter.", "profits", "announced"),
    ("Heavy rain flooded the streets of the city.", "streets", "flooded"),
    ("The teacher explained the lesson very clearly.", "lesson", "explained"),
    ("They postponed the meeting until next Monday.", "meeting", "postponed"),
    ("The chef prepared a delicious meal for the guests.", "guests", "prepared"),
    ("The police arrested the suspect near the station.", "suspect", "arrested"),
    ("My neighbor repaired the fence over the weekend.", "fence", "repaired"),
    ("The museum displays paintings from the last century.", "paintings", "displays"),
    ("Students must submit their essays by Friday.", "essays", "submit"),
    ("The pilot landed the plane safely despite the storm.", "plane", "landed"),
    ("The government increased taxes on imported goods.", "taxes", "increased"),
    ("The doctor advised him to rest for a few days.", "doctor", "advised"),
    ("Volunteers cleaned the beach on Saturday morning.", "beach", "cleaned"),
    ("The author signed copies of her new novel.", "novel", "signed"),
]


def requests(kind: str, n: int) -> list[DecodeRequest]:
    """The first ``n`` sentences with one include word, one avoid word (and its capitalised form), or none."""
    rows = SENTENCES[:n]
    if kind == "include":
        return [DecodeRequest(text=s, constraints=Constraints(include=(inc,))) for s, inc, _ in rows]
    if kind == "avoid":
        return [DecodeRequest(text=s, constraints=Constraints(avoid=(av, av.capitalize()))) for s, _, av in rows]
    return [DecodeRequest(text=s) for s, _, _ in rows]


def satisfied(reqs: list[DecodeRequest], results: list[list[Candidate]]) -> tuple[float, float]:
    """(share of candidates satisfying their constraints, share of inputs with a candidate)."""
    cands = [(r, c) for r, cs in zip(reqs, results) for c in cs]
    ok = sum(
        all(contains_phrase(c.text, p) for p in r.constraints.include)
        and not any(contains_phrase(c.text, p) for p in r.constraints.avoid)
        for r, c in cands
    )
    return ok / max(len(cands), 1), sum(bool(cs) for cs in results) / len(results)


def timed(decoder: ConstrainedDecoder, reqs: list[DecodeRequest], nbest: int) -> tuple[float, list[list[Candidate]]]:
    start = time.perf_counter()
    results = decoder.decode(reqs, nbest)
    return time.perf_counter() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--beam", type=int, default=10)
    parser.add_argument("--max-length", type=int, default=40)
    parser.add_argument("--nbest", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=len(SENTENCES), help="how many sentences (the batch size)")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--write", action="store_true", help="update docs/results/bench-decoder.md")
    args = parser.parse_args()

    opts = dict(model=args.model, beam_size=args.beam, max_length=args.max_length, dtype=args.dtype, device=args.device)
    n = args.sentences
    adapter = create("decoder", "vdba", **opts).adapter  # load once; every configuration below shares it
    runs: dict[str, tuple[float, list, dict]] = {}

    # The decoders here share one loaded adapter and report their stats: attributes of the
    # HF decoders' private base, not of the ConstrainedDecoder protocol.
    def make(name: str = "vdba", **o: object) -> Any:
        """A decoder with these options over the adapter loaded above."""
        decoder = create("decoder", name, **{**opts, "batch_size": n, **o})
        decoder._adapter = adapter
        return decoder

    def run(label: str, decoder: Any, kind: str) -> None:
        reqs = requests(kind, n)
        seconds, results = timed(decoder, reqs, args.nbest)
        runs[label] = (seconds, results, dict(decoder.stats))
        sat, found = satisfied(reqs, results)
        print(f"{label:32s} {seconds:8.1f} s  {n / seconds:6.2f} sent/s  satisfied {sat:.0%}  with output {found:.0%}  "
              f"word-level check caught {decoder.stats['caught']}/{decoder.stats['hypotheses']}", flush=True)

    # Untimed first: a GPU's first decode at a new batch shape pays for kernel selection and
    # memory growth (seen on an H100, docs/results/bench-decoder.md).
    for kind in ("include", "none"):
        make().decode(requests(kind, n), args.nbest)
    run(f"include, batch {n}", make(), "include")
    run("include, batch 1", make(batch_size=1), "include")
    run("include, one at a time (DBA)", make(vectorize=False), "include")
    run(f"unconstrained, batch {n}", make(), "none")
    run(f"avoid, vdba batch {n}", make(), "avoid")
    run("avoid, hf-beam", make("hf-beam"), "avoid")

    t = {k: v[0] for k, v in runs.items()}
    top = lambda k: [cs[0].text if cs else None for cs in runs[k][1]]  # noqa: E731
    agree = sum(a == b for a, b in zip(top(f"avoid, vdba batch {n}"), top("avoid, hf-beam"))) / n
    ratios = [
        (f"(1) batch {n} vs batch 1, include (throughput)", t["include, batch 1"] / t[f"include, batch {n}"]),
        ("(2) vectorized vs one sentence at a time (throughput)", t["include, one at a time (DBA)"] / t[f"include, batch {n}"]),
        ("(3) constrained vs unconstrained (time)", t[f"include, batch {n}"] / t[f"unconstrained, batch {n}"]),
        ("(4) vdba vs hf-beam, avoid only (time)", t[f"avoid, vdba batch {n}"] / t["avoid, hf-beam"]),
    ]
    for label, value in ratios:
        print(f"{label:55s} {value:6.2f}x")
    print(f"(4) top-1 agreement vdba vs hf-beam: {agree:.0%}")
    if args.device.startswith("cuda"):
        print(f"GPU memory held at most: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    if args.write:
        write_section(args, n, runs, ratios, agree)


def write_section(args: argparse.Namespace, n: int, runs: dict, ratios: list, agree: float) -> None:
    path = Path(__file__).resolve().parents[1] / "docs" / "results" / "bench-decoder.md"
    text = path.read_text() if path.exists() else "# Decoder (`bench/decoder.py`)\n"
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    key = args.model if args.device == "cpu" else f"{args.model} {args.device}"  # a GPU section beside the CPU one
    lines = [
        f"<!-- bench/decoder.py {key} -->",
        f"## Decoder: `{args.model}` on {device}",
        "",
        f"`bench/decoder.py --model {args.model} --sentences {n} --beam {args.beam} --max-length {args.max_length} "
        f"--nbest {args.nbest} --dtype {args.dtype} --device {args.device}`: {n} sentences, beam {args.beam}, n-best {args.nbest}, "
        "one include or one avoid word each.",
        "",
        "| run | seconds | sentences/s | constraints satisfied | inputs with output | word-level check caught |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, (seconds, results, stats) in runs.items():
        kind = "include" if label.startswith("include") else "avoid" if label.startswith("avoid") else "none"
        sat, found = satisfied(requests(kind, n), results)
        lines.append(
            f"| {label} | {seconds:.1f} | {n / seconds:.2f} | {sat:.0%} | {found:.0%} | {stats['caught']} of {stats['hypotheses']} |"
        )
    lines += ["", "| ratio | value |", "|---|---:|"]
    lines += [f"| {label} | {value:.2f}x |" for label, value in ratios]
    lines += [f"| (4) top-1 agreement vdba vs hf-beam | {agree:.0%} |", f"<!-- end {key} -->", ""]
    section = "\n".join(lines)
    pattern = re.compile(rf"<!-- bench/decoder.py {re.escape(key)} -->.*?<!-- end {re.escape(key)} -->\n", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


if __name__ == "__main__":
    main()
