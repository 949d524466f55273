#!/usr/bin/env bash
# Issue 44: the learning curve at 50% and 100% of the pool (about 5% and 10% of the training
# documents' sentences), 5 resampled runs, four conditions. Two processes train at once, one on
# gold and augmented, one on filtered and lexsub (about the same cost each); each resumes on its
# own (rerun to continue). `merge` joins their rows in curve/ and, every cell being done, writes
# only the joint summary, paired tests and plot.
# Run from the folder make-data.sh wrote, with run-fn-pool/ complete; FN is the fndata-1.5 folder.
set -euo pipefail
FN=${1:?the unpacked fndata-1.5 folder}; what=${2:-both}
curve() {  # curve CONDITIONS OUT [--filter SPEC ...]
  local conditions=$1 out=$2; shift 2
  OMP_NUM_THREADS=1 spanaug experiment learning-curve --trainer frame-id --dataset jsonl \
    --train fn-pool.jsonl --dev fn-dev100.jsonl --test fn-test.jsonl --augmented run-fn-pool \
    --conditions "$conditions" --fractions 0.5,1 --seeds 5 --unseen lu "$@" \
    --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=30 --set trainer.batch_size=4 \
    --no-progress --out "$out"
}
filters=(--filter adequacy --filter fluency --filter facts --filter "{name: frame-lexicon, release: $FN}")
case $what in
  both) curve gold,augmented curve-a & a=$!; curve filtered,lexsub curve-b "${filters[@]}" & b=$!
        wait $a; wait $b ;;
  merge) mkdir -p curve && { cat curve-a/results.csv; tail -n +2 curve-b/results.csv; } > curve/results.csv
         curve gold,augmented,filtered,lexsub curve "${filters[@]}" ;;
  *) echo "usage: curve.sh FN [both|merge]" >&2; exit 2 ;;
esac
