"""Every candidate of a run's rounds with all its scores, and rerank weights fitted to judgments of them.

``dump`` runs ``spanaug run`` (any settings, ``--set`` as on the command line) and writes,
for each round of each job, every candidate of its n-best list: the text, whether the
pipeline could keep it (target aligned, kept spans found), and the scores a record would
carry (alignment, adequacy, paraphrase_fluency...). ``fit`` reads that file and a file of
judgments (``{"key": ..., "ok": true|false}`` per judged candidate) and, for a grid of
rerank weights, counts how many rounds would keep an acceptable candidate: the weights the
pipeline's default comes from (docs/results/rerank.md).

    .venv/bin/python bench/candidates.py dump --input dev.jsonl --out dev-candidates.jsonl -- --iterations 1 --beam 4 --top-m 4
    .venv/bin/python bench/candidates.py fit dev-candidates.jsonl dev-judgments.jsonl

A dump made with ``--set decoder.recovery=true`` adds ``paraphrase_recovery`` to the grid.
``sense`` asks the ``sense`` filter's question about every judged candidate with an aligned
span and prints how well its score and the stored ones separate acceptable candidates
(ROC AUC) and what each ``min_score`` would keep: how the filter's default was chosen.

    .venv/bin/python bench/candidates.py sense dev-candidates.jsonl dev-judgments.jsonl --model qwen2.5-coder-1.5b-instruct
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from spanaug_core import choices, pipeline
from spanaug_core.cli import main as spanaug


def dump(input_path: Path, out: Path, run_args: list[str]) -> None:
    rows: list[dict[str, Any]] = []
    original = pipeline.ranked_choices

    def recording(attempt: Any, settings: Any) -> Any:
        job = attempt.job
        for rank, cand in enumerate(attempt.nbest):
            found = attempt.target[rank] if job.span is not None else None
            span = found.span if found is not None else None
            viable = choices.keepable(attempt, rank, settings)
            scored = attempt.scored[rank] if attempt.scored else {}
            scores = choices.candidate_scores(cand, found.score if found is not None else 1.0, rank, scored)
            source = attempt.run.example
            rows.append({
                "key": f"{source.id}/s{job.target}/it{attempt.run.iteration}/r{rank}",
                "round": f"{source.id}/s{job.target}/it{attempt.run.iteration}",
                "source": source.text,
                "target": " ".join(job.tokens[job.span[0] : job.span[1]]) if job.span else None,
                "label": source.spans[job.target].label if job.target is not None else None,
                "text": cand.text,
                "aligned": " ".join(cand.tokens[span[0] : span[1]]) if span else None,
                "viable": viable is not None,
                # Each kept span as it reads in the source and where it landed, so that
                # keep=align (the aligner places them) can be judged on them too.
                "kept": [[sp.text(job.tokens), moved.text(cand.tokens)] for (_, sp), (_, moved) in zip(job.kept, viable[2])] if viable else [],
                "scores": scores,
            })
        return original(attempt, settings)

    pipeline.ranked_choices = recording  # the name the pipeline calls it by
    with tempfile.TemporaryDirectory() as folder:
        code = spanaug(["run", "--dataset", "jsonl", "--input", str(input_path), "--output", str(Path(folder) / "run"), *run_args])
        if code:
            raise SystemExit(code)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} candidates of {len({r['round'] for r in rows})} rounds to {out}")


def _read(candidates: Path, judgments: Path) -> tuple[list[dict[str, Any]], dict[str, bool]]:
    rows = [json.loads(line) for line in candidates.read_text(encoding="utf-8").splitlines() if line.strip()]
    ok = {}
    for line in judgments.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            ok[item["key"]] = bool(item["ok"])
    return rows, ok


def fit(candidates: Path, judgments: Path) -> None:
    rows, ok = _read(candidates, judgments)
    rounds: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["viable"]:
            rounds.setdefault(row["round"], []).append(row)
    judged = {name: cands for name, cands in rounds.items() if all(c["key"] in ok for c in cands)}
    print(f"{len(judged)} rounds with every viable candidate judged ({sum(len(c) for c in judged.values())} candidates, "
          f"{sum(ok[c['key']] for cs in judged.values() for c in cs)} acceptable)")
    best_possible = sum(any(ok[c["key"]] for c in cs) for cs in judged.values())
    grid = {"alignment": (0.0, 1.0), "adequacy": (0.0, 0.5, 1.0, 2.0, 4.0), "paraphrase_fluency": (0.0, 0.25, 0.5, 1.0, 2.0)}
    if all("paraphrase_recovery" in c["scores"] for cands in judged.values() for c in cands):  # a dump with decoder.recovery=true
        grid["paraphrase_recovery"] = (0.0, 0.5, 1.0, 2.0)
    results = []
    for values in itertools.product(*grid.values()):
        weights = {k: v for k, v in zip(grid, values) if v}
        if not weights:
            continue
        kept = 0
        for cands in judged.values():
            # As the pipeline: the largest weighted sum, ties to the decoder's order (rank).
            best = max(cands, key=lambda c: (sum(w * c["scores"][k] for k, w in weights.items()), -c["scores"]["rank"]))
            kept += ok[best["key"]]
        results.append((kept, weights))
    results.sort(key=lambda r: (-r[0], len(r[1])))
    print(f"acceptable choices possible: {best_possible} of {len(judged)}")
    for kept, weights in results[:12]:
        print(f"{kept:3d} of {len(judged)}  {weights}")
    baseline = next(k for k, w in results if w == {"alignment": 1.0})
    print(f"{baseline:3d} of {len(judged)}  alignment alone (the paper's rule)")
    readme = next(k for k, w in results if w == {"alignment": 1.0, "adequacy": 1.0, "paraphrase_fluency": 1.0})
    print(f"{readme:3d} of {len(judged)}  alignment + adequacy + paraphrase_fluency, equal weights (the README's)")


def sense(candidates: Path, judgments: Path, model: str) -> None:
    from spanaug_filters.adequacy import roc_auc
    from spanaug_filters.sense import SenseFilter

    rows, ok = _read(candidates, judgments)
    asker = SenseFilter(SenseFilter.Config(model=model))
    judged = [r for r in rows if r["key"] in ok and r["aligned"]]
    for row in judged:
        row["scores"]["sense"] = asker.ask(row["source"], row["text"], row["target"], row["aligned"])
    good = sum(ok[r["key"]] for r in judged)
    print(f"{len(judged)} judged candidates with an aligned span, {good} acceptable")
    for name in ("sense", "adequacy", "paraphrase_recovery", "paraphrase", "alignment"):
        if all(name in r["scores"] for r in judged):
            print(f"  ROC AUC {name}: {roc_auc([r['scores'][name] for r in judged], [ok[r['key']] for r in judged]):.3f}")
    for floor in (0.0, 0.5, 1.0, 1.5, 2.0):
        kept = [r for r in judged if r["scores"]["sense"] >= floor]
        hits = sum(ok[r["key"]] for r in kept)
        print(f"  min_score {floor}: keeps {len(kept)}, {hits} acceptable ({hits / max(len(kept), 1):.0%} precision, {hits / good:.0%} recall)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--input", type=Path, required=True)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("run_args", nargs=argparse.REMAINDER, help="after --: options of spanaug run")
    f = sub.add_parser("fit")
    f.add_argument("candidates", type=Path)
    f.add_argument("judgments", type=Path)
    s = sub.add_parser("sense")
    s.add_argument("candidates", type=Path)
    s.add_argument("judgments", type=Path)
    s.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="the model to ask (the dump's paraphrase model)")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.input, args.out, [a for a in args.run_args if a != "--"])
    elif args.command == "fit":
        fit(args.candidates, args.judgments)
    else:
        sense(args.candidates, args.judgments, args.model)


if __name__ == "__main__":
    sys.exit(main())
