#!/usr/bin/env bash
# The learning curves of docs/experiments.md, end to end: cut the pools, augment them with
# the pipeline, train and score every (condition, fraction, seed). The CPU figures of
# docs/results/learning-curve-*.md come from these commands (most of the time is decoding).
#
#   bash bench/learning_curves.sh [WORK_DIR]    # default data-cache/lc; ../shared/data must exist
#
# Every step resumes: a rerun skips finished runs and finished models.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S="$ROOT/.venv/bin/spanaug"
SHARED="$ROOT/../shared/data"
W=${1:-$ROOT/data-cache/lc}
mkdir -p "$W/src" && cd "$W"

for archive in conll2003 up_english_ewt framenet15; do
  [ -e "src/$archive" ] || tar -xJf "$SHARED/$archive.tar.xz" -C src --no-same-owner
done
CONLL=src/conll2003
EWT=src/up_english_ewt/UP_English-EWT
FN=src/framenet15/fndata-1.5

# --- pools (seeded samples), dev and test -------------------------------------------------
[ -e ner-pool.jsonl ] || {
  $S convert --dataset conll-ner --input $CONLL/eng.train --to jsonl --output ner-pool.jsonl --sample 250 --seed 1
  $S convert --dataset conll-ner --input $CONLL/eng.testa --to jsonl --output ner-dev.jsonl --sample 500 --seed 1
  $S convert --dataset conll-ner --input $CONLL/eng.testb --to jsonl --output ner-test.jsonl; }
[ -e srl-pool.jsonl ] || {   # UP EWT has no train split: the pool and dev come from its dev file
  $S convert --dataset conll-srl --input $EWT/en_ewt-up-dev.conllu --to jsonl --output srl-pool.jsonl --sample 80 --seed 1 --rest srl-rest.jsonl
  $S convert --dataset jsonl --input srl-rest.jsonl --to jsonl --output srl-dev.jsonl --sample 400 --seed 1
  $S convert --dataset conll-srl --input $EWT/en_ewt-up-test.conllu --to jsonl --output srl-test.jsonl; }
[ -e fn-pool.jsonl ] || {  # Das & Smith (2011) split of FrameNet 1.5 full text
  $S convert --dataset framenet --input $FN --set source=fulltext --set split=train --to jsonl --output fn-pool.jsonl --sample 50 --seed 1 --rest fn-train-rest.jsonl
  $S convert --dataset framenet --input $FN --set source=fulltext --set split=dev --to jsonl --output fn-dev.jsonl
  $S convert --dataset framenet --input $FN --set source=fulltext --set split=test --to jsonl --output fn-test.jsonl; }

# --- augmentation: one iteration, beam 4, top 4 (Qwen2.5-Coder-1.5B-Instruct, shipped bert-span head) ---
# The run commits its output every commit_every_s (30 s), so Ctrl-C keeps what is finished and --resume goes on.
augment() {
  $S run --dataset jsonl --input "$1" --decoder vdba --model qwen2.5-coder-1.5b-instruct --aligner bert-span \
    --iterations 1 --beam 4 --top-m 4 --output "$2" --resume "${@:3}"
}
# The figures in docs/results/: NER on all 250 pool sentences; SRL on the pool's first 13
# sentences and FrameNet on its first 40 (what 2 cores decoded in the session's time).
augment ner-pool.jsonl run-ner --set decoder.recovery=true   # the recovery score, for the filtered curve
augment srl-pool.jsonl run-srl --limit 13
augment fn-pool.jsonl run-fn --limit 40
# NER at the embedded defaults' scale: a whole-sentence job decodes once, so ten rounds at beam 10 cost
# about what one did; every round must reword the sentence anew (novelty's previous_ceiling).
$S run --dataset jsonl --input ner-pool.jsonl --decoder vdba --model qwen2.5-coder-1.5b-instruct --aligner bert-span \
  --iterations 10 --beam 10 --top-m 20 --set 'rerank={alignment: 1, adequacy: 1, paraphrase_fluency: 1}' \
  --set 'filters=[adequacy, fluency, facts, {name: novelty, ceiling: 1, previous_ceiling: 0.9}]' --output run-ner-rounds --resume
# the same with the README's NER line as it is now (kept-text in the run; keep_copies places copies first)
$S run --dataset jsonl --input ner-pool.jsonl --decoder vdba --model qwen2.5-coder-1.5b-instruct --aligner bert-span \
  --iterations 10 --beam 10 --top-m 20 --set 'rerank={alignment: 1, adequacy: 1, paraphrase_fluency: 1}' \
  --set 'filters=[adequacy, fluency, facts, kept-text, {name: novelty, ceiling: 1, previous_ceiling: 0.9}]' --output run-ner-rounds-copies --resume
head -13 srl-pool.jsonl > srl-pool13.jsonl
head -40 fn-pool.jsonl > fn-pool40.jsonl
[ -e ner-dev200.jsonl ] || head -200 ner-dev.jsonl > ner-dev200.jsonl
[ -e fn-dev100.jsonl ] || $S convert --dataset jsonl --input fn-dev.jsonl --to jsonl --output fn-dev100.jsonl --sample 100 --seed 1

# --- learning curves (one torch thread per process: several processes share 2 cores) ----------
export OMP_NUM_THREADS=1
TRAIN="--set trainer.epochs=40 --set trainer.patience=6 --set trainer.min_epochs=20 --set trainer.batch_size=8"
curve() { $S experiment learning-curve --dataset jsonl --no-progress "$@"; }
curve --trainer ner --train ner-pool.jsonl --dev ner-dev200.jsonl --test ner-test.jsonl --augmented run-ner \
  --conditions gold,augmented --fractions 0.1,0.5,1 --seeds 3 $TRAIN --out curve-ner
curve --trainer ner --train ner-pool.jsonl --dev ner-dev200.jsonl --test ner-test.jsonl --augmented run-ner \
  --conditions filtered --filter adequacy --filter fluency --filter facts --fractions 0.1,0.5,1 --seeds 3 $TRAIN --out curve-ner-readme
curve --trainer ner --train ner-pool.jsonl --dev ner-dev200.jsonl --test ner-test.jsonl --augmented run-ner \
  --conditions filtered --filter recovery --fractions 0.1,0.5,1 --seeds 3 $TRAIN --out curve-ner-recovery
curve --trainer ner --train ner-pool.jsonl --dev ner-dev200.jsonl --test ner-test.jsonl --augmented run-ner-rounds \
  --conditions augmented --fractions 0.1,0.5,1 --seeds 3 $TRAIN --out curve-ner-rounds
curve --trainer ner --train ner-pool.jsonl --dev ner-dev200.jsonl --test ner-test.jsonl --augmented run-ner-rounds \
  --conditions filtered --filter kept-text --fractions 0.1,0.5,1 --seeds 3 $TRAIN --out curve-ner-rounds-kept-text
curve --trainer ner --train ner-pool.jsonl --dev ner-dev200.jsonl --test ner-test.jsonl --augmented run-ner-rounds-copies \
  --conditions augmented --fractions 0.1,0.5,1 --seeds 3 $TRAIN --out curve-ner-rounds-copies
curve --trainer srl --train srl-pool13.jsonl --dev srl-dev.jsonl --test srl-test.jsonl --augmented run-srl \
  --conditions gold,augmented,lexsub --fractions 0.5,1 --seeds 3 $TRAIN --out curve-srl
curve --trainer srl --train srl-pool13.jsonl --dev srl-dev.jsonl --test srl-test.jsonl --augmented run-srl \
  --conditions gold,augmented --fractions 1 --seeds 3 \
  --set trainer.epochs=80 --set trainer.patience=10 --set trainer.min_epochs=60 --set trainer.batch_size=8 --out curve-srl-long
curve --trainer frame-id --train fn-pool40.jsonl --dev fn-dev100.jsonl --test fn-test.jsonl --augmented run-fn \
  --conditions gold,augmented,lexsub --fractions 0.5,1 --seeds 2 \
  --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=30 --set trainer.batch_size=4 --out curve-fn
curve --trainer frame-id --train fn-pool40.jsonl --dev fn-dev100.jsonl --test fn-test.jsonl --augmented run-fn \
  --conditions filtered --filter adequacy --filter fluency --filter facts --fractions 0.5,1 --seeds 2 \
  --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=30 --set trainer.batch_size=4 --out curve-fn-readme
