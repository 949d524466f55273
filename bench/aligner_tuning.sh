#!/usr/bin/env bash
# The study of docs/results/aligners-human-tuned.md (issue 47): bert-span heads trained on
# MultiMWA's human alignments, with a frozen or a partly tuned MiniLM, against the shipped
# head and simalign, on MultiMWA dev and on a held-out genre.
#
#   bash bench/aligner_tuning.sh [WORK_DIR] [STEP...]   # default data-cache/aligners, all steps
#   DEVICE=cuda bash bench/aligner_tuning.sh ...        # training on a GPU
#
# Steps: data base frozen mixed tuned calibrate heldout long speed summary. Every step resumes: a head
# or a metrics file that exists is not made again. Choices are made on MultiMWA dev only;
# early stopping and each head's threshold use a seeded tenth of the training sentence
# pairs (split by pair, so no pair is on both sides). The held-out runs train the chosen
# recipe on one genre (MTRef or Wiki: their train files) and score it on the other genre's
# train file, which no choice looked at. CHOSEN (the train options of the chosen recipe)
# defaults to the shipped head's (6 tuned layers); `calibrate` places each chosen head's
# threshold by the rate of None on its stopping tenth (NAME-n). Each training writes its
# wall time and the load beside its head (NAME.time). Long jobs on a shared machine: prefix
# with `nice -n 10`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S="$ROOT/.venv/bin/spanaug"
PY="$ROOT/.venv/bin/python"
SHARED="$ROOT/../shared/data"
W=${1:-$ROOT/data-cache/aligners}
shift || true
STEPS=${*:-data base frozen mixed tuned calibrate heldout long speed summary}
DEVICE=${DEVICE:-cpu}
CHOSEN=${CHOSEN:---tune-layers 6 --epochs 4 --patience 1}
mkdir -p "$W/src" "$W/m" && cd "$W"
[ -e src/multimwa ] || tar -xJf "$SHARED/multimwa_train_dev.tar.xz" -C src --no-same-owner
D=src/multimwa

want() { [[ " $STEPS " == *" $1 "* ]]; }
# split FILE FIT STOP: a seeded tenth of FILE's sentence pairs (the id before "/") -> STOP, the rest -> FIT
split() {
  "$PY" - "$@" <<'EOF'
import json, random, sys
src, fit, stop = sys.argv[1:4]
lines = open(src, encoding="utf-8").read().splitlines()
pairs = sorted({json.loads(line)["id"].split("/")[0] for line in lines})
random.Random(0).shuffle(pairs)
held = set(pairs[: round(len(pairs) * 0.1)])
with open(fit, "w", encoding="utf-8") as f, open(stop, "w", encoding="utf-8") as g:
    for line in lines:
        (g if json.loads(line)["id"].split("/")[0] in held else f).write(line + "\n")
EOF
}
# train NAME ARGS...: a head in NAME/, its wall time and load in NAME.time
train() {
  local name=$1; shift
  [ -e "$name/config.json" ] && return
  local start=$(date +%s)
  $S train aligner --out "$name" --cache-dir cache --device "$DEVICE" "$@"
  echo "$name: $(( $(date +%s) - start )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)" > "$name.time"
}
# calibrate NAME STOP: a copy of head NAME, NAME-n, with its threshold placed by the rate of None on STOP
calibrate() {
  [ -e "$1-n/calibrated" ] && return
  rm -rf "$1-n" && cp -r "$1" "$1-n"
  $S train aligner-threshold "$1-n" --dev "$2" --set device="$DEVICE" && touch "$1-n/calibrated"
}
# score NAME GOLD ALIGNER ARGS...: metrics (with pairs/s) in m/NAME.json
score() {
  local name=$1 gold=$2 aligner=$3; shift 3
  [ -e "m/$name.json" ] || $S eval align --aligner "$aligner" --gold "$gold" --metrics "m/$name.json" "$@"
}

if want data && [ ! -e gen6-train.jsonl ]; then  # all again (--overwrite) until the last file exists
  $S convert word-alignments --format multimwa $D/MTRef/mtref-dev.tsv $D/Wiki/wiki-dev.tsv --max-per-pair 4 --output mwa-dev.jsonl --overwrite
  $S convert word-alignments --format multimwa $D/MTRef/mtref-dev.tsv $D/Wiki/wiki-dev.tsv --min-len 4 --max-len 15 --max-per-pair 1 --output mwa-dev-long.jsonl --overwrite
  $S convert word-alignments --format multimwa $D/MTRef/mtref-train.tsv --max-per-pair 4 --output mtref-train.jsonl --overwrite
  $S convert word-alignments --format multimwa $D/Wiki/wiki-train.tsv --max-per-pair 4 --output wiki-train.jsonl --overwrite
  cat mtref-train.jsonl wiki-train.jsonl > mwa-train.jsonl
  for part in mwa mtref wiki; do split $part-train.jsonl $part-fit.jsonl $part-stop.jsonl; done
  # the shipped head's generated data (docs/aligners.md, "The shipped head"): Botchan from the sentencepiece sdist
  "$PY" -m pip download -q --no-deps --no-binary :all: sentencepiece==0.2.3 -d src
  tar -xzf src/sentencepiece-0.2.3.tar.gz -C src sentencepiece-0.2.3/test/botchan.txt
  $S make-align-data --input src/sentencepiece-0.2.3/test/botchan.txt --output gen6-train.jsonl --max-sentences 2000 --per-sentence 6 --overwrite
fi

if want base; then
  score dev-shipped mwa-dev.jsonl bert-span
  score dev-simalign mwa-dev.jsonl simalign
fi
if want frozen; then  # human alignments alone, frozen encoder (the shipped recipe otherwise)
  train head-frozen --data mwa-fit.jsonl --dev mwa-stop.jsonl
  score dev-frozen mwa-dev.jsonl bert-span --set head=head-frozen
fi
if want mixed; then  # human alignments and the shipped head's generated items
  [ -e mwa-gen-fit.jsonl ] || cat mwa-fit.jsonl gen6-train.jsonl > mwa-gen-fit.jsonl
  train head-mixed --data mwa-gen-fit.jsonl --dev mwa-stop.jsonl
  score dev-mixed mwa-dev.jsonl bert-span --set head=head-mixed
fi
if want tuned; then  # the encoder's top 2 layers, then all 6, with the head (float16: 7 and 21 MB)
  train head-t2 --data mwa-fit.jsonl --dev mwa-stop.jsonl --tune-layers 2 --epochs 4 --patience 1
  score dev-t2 mwa-dev.jsonl bert-span --set head=head-t2
  # head-t2 was still improving at its 4th epoch
  train head-t2e8 --data mwa-fit.jsonl --dev mwa-stop.jsonl --tune-layers 2 --epochs 8 --patience 2
  score dev-t2e8 mwa-dev.jsonl bert-span --set head=head-t2e8
  train head-t6 --data mwa-fit.jsonl --dev mwa-stop.jsonl --tune-layers 6 --epochs 4 --patience 1
  score dev-t6 mwa-dev.jsonl bert-span --set head=head-t6
  # 8 epochs, patience 2: it stops after 6 with the same best epoch, so the same head as head-t6
  train head-t6e8 --data mwa-fit.jsonl --dev mwa-stop.jsonl --tune-layers 6 --epochs 8 --patience 2
fi
if want calibrate; then  # None by its rate on the stopping tenth, not the threshold of best exact F1
  for name in head-t2e8 head-t6; do
    calibrate $name mwa-stop.jsonl
    score dev-${name#head-}-n mwa-dev.jsonl bert-span --set head=$name-n
  done
fi
if want heldout; then  # one genre trains, the other's train file tests
  for pair in "mtref wiki" "wiki mtref"; do
    set -- $pair
    # shellcheck disable=SC2086
    train head-$1-only --data $1-fit.jsonl --dev $1-stop.jsonl $CHOSEN
    calibrate head-$1-only $1-stop.jsonl
    score held-$2-by-$1-only $2-train.jsonl bert-span --set head=head-$1-only-n
    score held-$2-shipped $2-train.jsonl bert-span
    score held-$2-simalign $2-train.jsonl simalign
  done
fi
if want long; then  # spans of 4-15 words: simalign (the default hand-over) against the head itself
  HEAD=${HEAD:-head-t6-n}
  score long-simalign mwa-dev-long.jsonl simalign --set threshold=0.3
  score long-$HEAD mwa-dev-long.jsonl bert-span --set head=$HEAD
  score long-$HEAD-itself mwa-dev-long.jsonl bert-span --set head=$HEAD --set simalign_over=100
fi
if want speed; then
  HEAD=${HEAD:-head-t6-n}
  "$PY" "$ROOT/bench/aligners.py" --gold mwa-dev.jsonl --aligner bert-span --aligner bert-span:head=$HEAD --aligner simalign | tee m/speed.txt
fi
if want summary; then
  "$PY" - <<'EOF'
import json, pathlib
for path in sorted(pathlib.Path("m").glob("*.json")):
    s = json.loads(path.read_text())["scores"]
    row = [s["all"]["exact_f1"], s.get("paraphrased", {}).get("exact_f1", 0), s.get("identical", {}).get("exact_f1", 0),
           s["all"]["soft_f1"], s["all"]["exact_p"], s["all"]["exact_r"], s["all"]["none_p"], s["all"]["none_r"]]
    print(f"{path.stem:28s} " + " ".join(f"{100 * v:5.1f}" for v in row))
print("columns: exact F1 all / paraphrased / identical, soft F1 all, exact P, exact R, None P, None R")
EOF
fi
