"""Issue 44: of the unseen-LU test targets that the records teach, how many does a model learn?

Held to FrameNet's LUs, a cell with records gains only recall on the test targets whose LU
its gold sentences never show (finding 15). Such a target is *taught* when the records the
README's FrameNet filters keep (the curve's filtered condition, built from the cell's own
gold subset) have its (frame, lower-cased words) pair, the gold subset does not. This splits
the unseen-LU targets into taught and not taught, and prints each model's recall on both
(span and frame right), the taught ones also by how many records teach their pair: where
the records' gain comes from, and how much of what they teach the model takes up.

    python taught.py POOL.jsonl TEST.jsonl RUN FNDATA FRACTION SEED MODEL... [KEY=VALUE...]

The models are kept models of that fraction and seed (``--keep-models``); they are scored
with their curve's trainer options (its ``experiment.json`` beside ``models/``) and the
KEY=VALUE ones, e.g. ``lexicon={name: framenet, release: FNDATA}``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import yaml

from rescore import curve_trainer, examples  # this folder's: the curve's trainer, as rescore.py scores with it
from spanaug_core.types import Example
from spanaug_experiments.commands import load_additions
from spanaug_experiments.curve import subset
from spanaug_trainers.frame_id import FrameIdTrainer

Pair = tuple[str, str]  # (frame, lower-cased trigger words)


def targets(trainer: FrameIdTrainer, example: Example) -> list[tuple[int, int, str]]:
    return list(trainer.sentence(example).targets)


def words(example: Example, start: int, end: int) -> str:
    return " ".join(example.tokens[start:end]).lower()


def bucket(n: int) -> str:
    return "taught by 1 record" if n == 1 else "taught by 2-3" if n <= 3 else "taught by 4 or more"


def main(pool_file: Path, test_file: Path, run: Path, release: Path, fraction: float, seed: int,
         models: list[Path], options: dict) -> None:
    pool, test = examples(pool_file), examples(test_file)
    gold = subset(pool, fraction, seed)
    filters = [{"name": "adequacy"}, {"name": "fluency"}, {"name": "facts"}, {"name": "frame-lexicon", "release": str(release)}]
    additions, _ = load_additions(run, gold, filters, ("filtered",), None)
    records = [r for chosen in additions["filtered"].values() for r in chosen]
    trainer = curve_trainer(models[0].parent.parent, options)
    gold_pairs = {(f, words(e, s, t)) for e in gold for s, t, f in targets(trainer, e)}
    taught = Counter((f, words(r, s, t)) for r in records for s, t, f in targets(trainer, r))
    seen_lus = {s.attrs.get("lu") for e in gold for s in e.spans if s.role == "target"}
    group: dict[tuple[int, int, int, str], str] = {}  # unseen-LU test target -> its group
    for i, example in enumerate(test):
        for span in example.spans:
            if span.role != "target" or span.attrs.get("lu") in seen_lus:
                continue
            pair = (span.label, words(example, span.start, span.end))
            n = taught[pair] if pair not in gold_pairs else 0
            group[i, span.start, span.end, span.label] = bucket(n) if n else "not taught"
    sizes = Counter(group.values())
    print(f"fraction {fraction}, seed {seed}: {len(records)} filtered records, {len(set(taught) - gold_pairs)} new pairs; "
          f"{len(group)} unseen-LU test targets, {sum(n for g, n in sizes.items() if g != 'not taught')} taught")
    names = [m.name for m in models]
    found = []
    for model in models:
        hits: Counter[str] = Counter()
        for i, predicted in enumerate(trainer.predict(model, test)):
            for s, t, f in targets(trainer, predicted):
                if (i, s, t, f) in group:
                    hits[group[i, s, t, f]] += 1
        found.append(hits)
    print("\n| unseen-LU targets | n | " + " | ".join(f"{n} recall" for n in names) + " |")
    print("|---|---|" + "---|" * len(names))
    order = ["not taught", "taught by 1 record", "taught by 2-3", "taught by 4 or more"]
    for g in [g for g in order if sizes[g]] + ["all taught", "all"]:
        members = order[1:] if g == "all taught" else order if g == "all" else [g]
        n = sum(sizes[m] for m in members)
        cells = [f"{100 * sum(h[m] for m in members) / n:.1f} ({sum(h[m] for m in members)})" for h in found]
        print(f"| {g} | {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    args = sys.argv[1:]
    options = [a for a in args if "=" in a]
    plain = [a for a in args if "=" not in a]
    if len(plain) < 7:
        sys.exit(__doc__)
    given = {k: yaml.safe_load(v) for k, v in (a.split("=", 1) for a in options)}
    main(Path(plain[0]), Path(plain[1]), Path(plain[2]), Path(plain[3]), float(plain[4]), int(plain[5]),
         [Path(p) for p in plain[6:]], given)
