#!/usr/bin/env bash
# Issue 44: augment the pool (resumable: rerun to continue). The README's FrameNet command on a
# JSONL pool, which must name the lexicon the framenet dataset would suggest; no filters (they are
# conditions of the curve). Run from the folder make-data.sh wrote; FN is the fndata-1.5 folder.
#   augment.sh FN                                          # run-fn-pool: one iteration (spanaug at ce56807)
#   ITERATIONS=2 OUTPUT=run-fn-pool-it2 augment.sh FN     # two iterations, a new run (its commit: README.md)
#   augment.sh FN --set decoder.quantize=int8             # more options go to spanaug run as given
set -euo pipefail
FN=${1:?the unpacked fndata-1.5 folder}; shift
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
spanaug run --dataset jsonl --input fn-pool.jsonl --decoder vdba \
  --model qwen2.5-coder-1.5b-instruct --aligner bert-span --lexicon framenet --set lexicon.release="$FN" \
  --iterations "${ITERATIONS:-1}" --beam 4 --top-m 4 --no-progress --output "${OUTPUT:-run-fn-pool}" --resume "$@"
