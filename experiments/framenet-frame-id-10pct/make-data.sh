#!/usr/bin/env bash
# Issue 44: the 10% pool, dev and test files, from the FrameNet 1.5 release (Das & Smith split).
# Usage: make-data.sh FNDATA_1_5_DIR OUT_DIR   (deterministic: the same files byte for byte)
set -euo pipefail
FN=${1:?the unpacked fndata-1.5 folder}; OUT=${2:?output folder}
mkdir -p "$OUT" && cd "$OUT"
spanaug convert --dataset framenet --input "$FN" --set split=train --set source=fulltext --to jsonl --output fn-train.jsonl
spanaug convert --dataset jsonl --input fn-train.jsonl --to jsonl --sample 272 --seed 44 --rest fn-train-rest.jsonl --output fn-pool.jsonl
spanaug convert --dataset framenet --input "$FN" --set split=dev --to jsonl --output fn-dev.jsonl
spanaug convert --dataset jsonl --input fn-dev.jsonl --to jsonl --sample 100 --seed 1 --output fn-dev100.jsonl
spanaug convert --dataset framenet --input "$FN" --set split=test --to jsonl --output fn-test.jsonl
