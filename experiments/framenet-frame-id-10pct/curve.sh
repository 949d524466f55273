#!/usr/bin/env bash
# Issue 44: the learning curve at 50% and 100% of the pool (about 5% and 10% of the training
# documents' sentences), 5 resampled runs, four conditions. One process per fraction, so the two
# cores train two models at once; each folder resumes on its own (rerun to continue), and `merge`
# joins them into curve/ (every cell already done: only summary, paired test and plot are written).
# Run from the folder make-data.sh wrote, with run-fn-pool/ complete; FN is the fndata-1.5 folder.
set -euo pipefail
FN=${1:?the unpacked fndata-1.5 folder}; what=${2:-both}
curve() {  # curve FRACTIONS OUT
  OMP_NUM_THREADS=1 spanaug experiment learning-curve --trainer frame-id --dataset jsonl \
    --train fn-pool.jsonl --dev fn-dev100.jsonl --test fn-test.jsonl --augmented run-fn-pool \
    --conditions gold,augmented,filtered,lexsub --fractions "$1" --seeds 5 --unseen lu \
    --filter adequacy --filter fluency --filter facts --filter "{name: frame-lexicon, release: $FN}" \
    --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=30 --set trainer.batch_size=4 \
    --no-progress --out "$2"
}
case $what in
  both) curve 0.5 curve-5pct & curve 1 curve-10pct & wait ;;
  merge) mkdir -p curve && { cat curve-5pct/results.csv; tail -n +2 curve-10pct/results.csv; } > curve/results.csv
         curve 0.5,1 curve ;;
  *) echo "usage: curve.sh FN [both|merge]" >&2; exit 2 ;;
esac
