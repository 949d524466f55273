"""Issue 44: where frame-id models' test predictions differ, and what the difference is made of.

Each model predicts the test set. Every predicted trigger is sorted by what the gold says of its
span (right span and frame; right span, other frame; overlapping a gold target; no gold target
there) and then, in one table, by where its (frame, words) pair comes from: the gold training
sentences, only the records that the README's FrameNet filters keep (the curve's filtered
condition), or neither; in another, by whether the release lists its words as a lexical unit of
its frame (what ``frame-lexicon`` asks of a record). Each table gives every model's counts and the
last model's difference from the first's. Give it the models of one seed and fraction, kept by
``spanaug experiment learning-curve --keep-models``.

    python false-positives.py TEST.jsonl GOLD_TRAIN.jsonl RUN_FOLDER FNDATA MODEL_A MODEL_B
"""

import json
import sys
from collections import Counter
from pathlib import Path

from spanaug_core.types import Example
from spanaug_experiments.commands import load_additions
from spanaug_framenet.lexicon import FrameUnits, lu_forms
from spanaug_trainers.frame_id import FrameIdTrainer

Pair = tuple[str, str]  # (frame, lower-cased trigger words)


def examples(path: Path) -> list[Example]:
    with path.open(encoding="utf-8") as fh:
        return [Example.model_validate(json.loads(line)) for line in fh]


def pairs(trainer: FrameIdTrainer, data: list[Example]) -> set[Pair]:
    return {(frame, " ".join(e.tokens[s:t]).lower()) for e in data for s, t, frame in trainer.sentence(e).targets}


def kind(start: int, end: int, frame: str, gold: dict[tuple[int, int], str]) -> str:
    if (start, end) in gold:
        return "correct" if gold[(start, end)] == frame else "right span, other frame"
    if any(start < e and s < end for s, e in gold):
        return "overlaps a gold target"
    return "no gold target there"


def table(title: str, names: list[str], counts: list[Counter[tuple[str, str]]]) -> None:
    print(f"\n| prediction | {title} | " + " | ".join(names) + " | difference |")
    print("|---|---|" + "---|" * (len(names) + 1))
    for key in sorted(set().union(*counts)):
        row = [c[key] for c in counts]
        print(f"| {key[0]} | {key[1]} | " + " | ".join(map(str, row)) + f" | {row[-1] - row[0]:+d} |")
    totals = [sum(c.values()) for c in counts]
    print("| all | | " + " | ".join(map(str, totals)) + f" | {totals[-1] - totals[0]:+d} |")


def main(test_file: Path, train_file: Path, run: Path, release: Path, *models: Path) -> None:
    trainer = FrameIdTrainer(FrameIdTrainer.Config())
    train, test = examples(train_file), examples(test_file)
    filters = [{"name": "adequacy"}, {"name": "fluency"}, {"name": "facts"}, {"name": "frame-lexicon", "release": str(release)}]
    additions, _ = load_additions(run, train, filters, ("filtered",), None)
    gold_pairs = pairs(trainer, train)
    record_pairs = pairs(trainer, [r for chosen in additions["filtered"].values() for r in chosen]) - gold_pairs
    units = FrameUnits(release, "counted as not listed")
    by_source, by_lexicon = [], []
    for model in models:
        source: Counter[tuple[str, str]] = Counter()
        listed: Counter[tuple[str, str]] = Counter()
        for example, predicted in zip(test, trainer.predict(model, test)):
            gold = {(s, e): frame for s, e, frame in trainer.sentence(example).targets}
            for s, e, frame in trainer.sentence(predicted).targets:
                words = " ".join(example.tokens[s:e]).lower()
                what = kind(s, e, frame, gold)
                pair = (frame, words)
                source[(what, "gold's" if pair in gold_pairs else "records' only" if pair in record_pairs else "neither's")] += 1
                lu = any(form in units(frame) for form in lu_forms(words))
                listed[(what, "an LU of the frame" if lu else "not an LU of it")] += 1
        by_source.append(source)
        by_lexicon.append(listed)
    names = [m.name for m in models]
    table("its (frame, words) pair is", names, by_source)
    table("its words are", names, by_lexicon)


if __name__ == "__main__":
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    main(*(Path(a) for a in sys.argv[1:]))
