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
With ``null_scale=dev`` each model's scale is first chosen on ``--dev`` (the trainer's
``calibrate``, as training with the option would choose it) and printed.

    python rescore.py CURVE_FOLDER POOL.jsonl TEST.jsonl OUT.csv [--dev DEV.jsonl] KEY=VALUE...   e.g. lexicon=framenet
"""

import argparse
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
from spanaug_trainers.frame_id import FrameIdTrainer


def examples(path: Path) -> list[Example]:
    with path.open(encoding="utf-8") as fh:
        return [Example.model_validate(json.loads(line)) for line in fh]


def curve_trainer(curve: Path, options: dict) -> FrameIdTrainer:
    """The frame-id trainer with a curve's options (its ``experiment.json``) and ``options`` over them."""
    curve_options = json.loads((curve / "experiment.json").read_text(encoding="utf-8"))["trainer_options"]
    trainer = default_registry().create("trainer", "frame-id", **{**curve_options, **options})
    c = trainer.config
    trainer.vectors = WordVectors(c.encoder, c.device, c.max_length, batch_size=1)  # as the curve encodes
    return trainer


def main(curve: Path, pool_file: Path, test_file: Path, out: Path, options: dict, dev_file: Path | None = None) -> None:
    pool, test = examples(pool_file), examples(test_file)
    trainer = curve_trainer(curve, options)
    calibrated = options.get("null_scale") == "dev"
    if calibrated and dev_file is None:
        sys.exit("rescore.py: null_scale=dev chooses each model's scale on dev: give --dev DEV.jsonl")
    dev = examples(dev_file) if calibrated else []
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
            if not model.is_dir():  # kept models are not committed: a copy of the folder may lack some
                print(f"{model.name}: no model folder, not scored", flush=True)
                continue
            if calibrated:
                scale, by_scale = trainer.calibrate(model, dev)
                trainer.config = trainer.config.model_copy(update={"null_scale": scale})
                print(f"{model.name}: null_scale {scale:.3g}, dev F1 {by_scale[scale]:.4f} (at 1: {by_scale[1.0]:.4f})", flush=True)
            scores = trainer.evaluate(model, test)
            seen = {s.attrs.get("lu") for e in subset(pool, float(row["fraction"]), int(row["seed"])) for s in e.spans if s.role == "target"}
            found = trainer.evaluate(model, unseen_targets(test, seen, "lu", ["target"]))
            row.update(test_precision=f"{scores['precision']:.4f}", test_recall=f"{scores['recall']:.4f}", test_f1=f"{scores['f1']:.4f}",
                       unseen_targets=int(found["gold"]), unseen_recall=f"{found['recall']:.4f}")
            writer.writerow(row)
            fh.flush()
            print(f"{model.name}: F1 {row['test_f1']}, unseen-LU recall {row['unseen_recall']}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("curve", "pool", "test", "out"):
        parser.add_argument(name, type=Path)
    parser.add_argument("--dev", type=Path, help="dev examples, to choose null_scale=dev on")
    parser.add_argument("options", nargs="*", metavar="KEY=VALUE", help="trainer options (YAML values)")
    args = parser.parse_intermixed_args()  # the options may follow --dev
    given = {k: yaml.safe_load(v) for k, v in (a.split("=", 1) for a in args.options)}
    main(args.curve, args.pool, args.test, args.out, given, args.dev)
