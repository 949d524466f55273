#!/usr/bin/env bash
# Issue 44: the learning curve at 50% and 100% of the pool (about 5% and 10% of the training
# documents' sentences), 5 resampled runs, four conditions. Each process trains some conditions
# on one core and resumes on its own (rerun it to continue); a cell's result does not depend on
# which process trained it, so conditions may be moved between processes as cores come free.
#   curve.sh FN both               two processes: gold+augmented in curve-a, filtered+lexsub in curve-b
#   curve.sh FN run CONDITIONS OUT  one process, e.g. `run lexsub curve-l`
#   curve.sh FN merge              every curve-*/results.csv into curve/, then the joint summary,
#                                  paired tests and plot (trains nothing once every cell is done)
# Run from the folder make-data.sh wrote, with run-fn-pool/ complete; FN is the fndata-1.5 folder.
set -euo pipefail
FN=${1:?the unpacked fndata-1.5 folder}; what=${2:-both}
curve() {  # curve CONDITIONS OUT; the filters choose the filtered condition's records
  local filters=()
  [[ ,$1, == *,filtered,* ]] && filters=(--filter adequacy --filter fluency --filter facts --filter "{name: frame-lexicon, release: $FN}")
  OMP_NUM_THREADS=1 spanaug experiment learning-curve --trainer frame-id --dataset jsonl \
    --train fn-pool.jsonl --dev fn-dev100.jsonl --test fn-test.jsonl --augmented run-fn-pool \
    --conditions "$1" --fractions 0.5,1 --seeds 5 --unseen lu \
    "${filters[@]}" --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=30 --set trainer.batch_size=4 \
    --no-progress --out "$2"
}
case $what in
  both) curve gold,augmented curve-a & a=$!; curve filtered,lexsub curve-b & b=$!
        wait $a; wait $b ;;
  run) curve "${3:?conditions}" "${4:?output folder}" ;;
  merge) parts=(curve-*/results.csv); mkdir -p curve
         { head -n 1 "${parts[0]}"; for p in "${parts[@]}"; do tail -n +2 "$p"; done; } > curve/results.csv
         curve gold,augmented,filtered,lexsub curve ;;
  *) echo "usage: curve.sh FN [both | run CONDITIONS OUT | merge]" >&2; exit 2 ;;
esac
