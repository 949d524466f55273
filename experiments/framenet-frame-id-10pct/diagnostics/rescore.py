"""Issue 44: score a curve's kept frame-id models again with trainer options that only change prediction.

The frame-id trainer's ``lexicon`` option changes no weight update: a model trained without it
is the model a curve with it would train, up to the epoch that early stopping keeps, which
the option chooses by held dev F1 (``curve.sh held`` trains such cells; the kept models here
chose theirs unheld). This script takes a curve's ``OUT/models`` (``--keep-models``),
scores each model on the test set with the curve's trainer options and the given ones, as
``spanaug experiment learning-curve`` would (test precision, recall, F1 and recall on the
targets whose LU the cell's gold never saw), and writes a results.csv of the same columns, the
other columns copied from the curve's row; a rerun scores only the rows not in it yet. (tests/plugins/trainers/test_frame_id.py checks that
the option leaves the weight updates as they were; scored without options, a kept model gives its curve row.)

    python rescore.py CURVE_FOLDER POOL.jsonl TEST.jsonl OUT.csv KEY=VALUE...   e.g. lexicon=framenet
"""

import csv
import json
import sys
from pathlib import Path

import yaml

from spanaug_core.plugins import default_registry
from spanaug_core.types import Example
from spanaug_experiments.commands import unseen_targets
from spanaug_experiments.curve import COLUMNS, subset
from spanaug_shared.vectors import WordVectors


def examples(path: Path) -> list[Example]:
    with path.open(encoding="utf-8") as fh:
        return [Example.model_validate(json.loads(line)) for line in fh]


def curve_trainer(curve: Path, options: dict):
    """The frame-id trainer with a curve's options (its ``experiment.json``) and ``options`` over them."""
    curve_options = json.loads((curve / "experiment.json").read_text(encoding="utf-8"))["trainer_options"]
    trainer = default_registry().create("trainer", "frame-id", **{**curve_options, **options})
    c = trainer.config
    trainer.vectors = WordVectors(c.encoder, c.device, c.max_length, batch_size=1)  # as the curve encodes
    return trainer


def main(curve: Path, pool_file: Path, test_file: Path, out: Path, options: dict) -> None:
    pool, test = examples(pool_file), examples(test_file)
    trainer = curve_trainer(curve, options)
    with (curve / "results.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    done = set()
    if out.exists():  # rerun as the curve's models land: the rows scored already stay
        with out.open(encoding="utf-8", newline="") as fh:
            done = {(r["condition"], r["fraction"], r["seed"]) for r in csv.DictReader(fh)}
    with out.open("a", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        if not done:
            writer.writeheader()
        for row in (r for r in rows if (r["condition"], r["fraction"], r["seed"]) not in done):
            model = curve / "models" / f"{row['condition']}-{row['fraction']}-{row['seed']}"
            scores = trainer.evaluate(model, test)
            seen = {s.attrs.get("lu") for e in subset(pool, float(row["fraction"]), int(row["seed"])) for s in e.spans if s.role == "target"}
            found = trainer.evaluate(model, unseen_targets(test, seen, "lu", ["target"]))
            row.update(test_precision=f"{scores['precision']:.4f}", test_recall=f"{scores['recall']:.4f}", test_f1=f"{scores['f1']:.4f}",
                       unseen_targets=int(found["gold"]), unseen_recall=f"{found['recall']:.4f}")
            writer.writerow(row)
            fh.flush()
            print(f"{model.name}: F1 {row['test_f1']}, unseen-LU recall {row['unseen_recall']}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    given = dict(arg.split("=", 1) for arg in sys.argv[5:])
    main(*(Path(a) for a in sys.argv[1:5]), {k: yaml.safe_load(v) for k, v in given.items()})
