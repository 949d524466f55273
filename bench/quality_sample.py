"""Draw the seed samples the judged studies of docs/results/ use: per corpus, random examples with one target each.

From JSONL conversions of FrameNet 1.5 full text, UP English EWT dev and CoNLL-2003
eng.train (``spanaug convert ... --to jsonl``), a seeded shuffle picks 40 examples per
corpus: FrameNet sentences of 8-35 tokens with one target whose LU is a noun, verb or
adjective (that target's annotation set kept, the others dropped), EWT sentences of 6-35
tokens with one predicate (likewise), CoNLL sentences of 6 tokens or more with an entity.
The first 20 of each go to ``dev.jsonl``, the next 20 to ``test.jsonl``; ``docs/results/judgments/``
holds the verdicts on what the pipeline made of them, by record id.

    .venv/bin/python bench/quality_sample.py --framenet fn.jsonl --ewt ewt-dev.jsonl --conll ner-train.jsonl --out samples/
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def _one_group(example: Row, wanted: Callable[[Row, Row], bool], rng: random.Random) -> Row | None:
    groups = [sp.get("group") for sp in example["spans"] if sp["role"] == "target" and wanted(example, sp)]
    if not groups:
        return None
    group = rng.choice(groups)
    return {**{k: v for k, v in example.items() if k != "meta"}, "spans": [sp for sp in example["spans"] if sp.get("group") == group]}


def _framenet(example: Row, span: Row) -> bool:
    pos = span.get("attrs", {}).get("lu", "").rsplit(".", 1)[-1]
    return pos in ("v", "n", "a") and 8 <= len(example["tokens"]) <= 35


def _ewt(example: Row, span: Row) -> bool:
    return 6 <= len(example["tokens"]) <= 35


def draw(path: Path, wanted: Callable[[Row, Row], bool] | None, rng: random.Random, count: int = 40) -> list[Row]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng.shuffle(rows)
    chosen: list[Row] = []
    for example in rows:
        if wanted is None:
            picked = {k: v for k, v in example.items() if k != "meta"} if example["spans"] and len(example["tokens"]) >= 6 else None
        else:
            picked = _one_group(example, wanted, rng)
        if picked is not None:
            chosen.append(picked)
        if len(chosen) == count:
            break
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framenet", type=Path, required=True)
    parser.add_argument("--ewt", type=Path, required=True)
    parser.add_argument("--conll", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    splits: dict[str, list[Row]] = {"dev": [], "test": []}
    for path, wanted in ((args.framenet, _framenet), (args.ewt, _ewt), (args.conll, None)):
        chosen = draw(path, wanted, rng)
        splits["dev"] += chosen[:20]
        splits["test"] += chosen[20:]
    args.out.mkdir(parents=True, exist_ok=True)
    for split, rows in splits.items():
        (args.out / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(f"{split}: {len(rows)} examples -> {args.out / f'{split}.jsonl'}")


if __name__ == "__main__":
    main()
