#!/usr/bin/env bash
# Issue 44: the learning curve at 50% and 100% of the pool (about 5% and 10% of the training
# documents' sentences), 5 resampled runs, four conditions. Each process trains some conditions
# on one core and resumes on its own (rerun it to continue); a cell's result does not depend on
# which process trained it, so conditions may be moved between processes as cores come free.
# The first curve trains without the frame-id trainer's project_source (then its default), the
# second with it (the default since): records with and without their source's labels.
#   curve.sh FN both               two processes: gold+augmented in curve-a, filtered+lexsub in curve-b
#   curve.sh FN run CONDITIONS OUT  one process, e.g. `run lexsub curve-l`
#   curve.sh FN merge              every curve-*/results.csv into curve/, then the joint summary,
#                                  paired tests and plot (trains nothing once every cell is done)
#   curve.sh FN project            the records again with project_source: augmented in
#                                  project-a, filtered in project-f (two processes)
#   curve.sh FN merge-project      curve/'s gold cells (the option does not touch a gold-only cell)
#                                  and project-a/, project-f/ into project-source/, then its summary
#   curve.sh FN steps              gold trained for at least as many optimiser steps as the cells with
#                                  records make in their 30 minimum epochs (trainer.min_steps 6,000 at
#                                  50%, 12,000 at 100%): steps-50 and steps-100 (two processes)
#   curve.sh FN lexsub             lexsub with project_source (the default since): lexsub-p
#   curve.sh FN strict             the filtered condition with frame-lexicon's max_frames 1 (a trigger
#                                  no other frame lists): strict-f, kept in diagnostics/strict-trigger/
#   curve.sh FN merge-steps        those gold cells, project-source/'s cells with records and, once
#                                  trained, lexsub-p's into equal-steps/, with its summary, paired
#                                  tests and plot
#   curve.sh FN it2 CONDITIONS FRACTION
#                                  the two-iteration run's records (run-fn-pool-it2-int8) at one
#                                  fraction, one process, with gold's step floor (6,000 steps at 0.5,
#                                  12,000 at 1) in place of 30 minimum epochs, which twice the records
#                                  would make twice the steps: it2-CONDITIONS-FRACTION
#   curve.sh FN merge-it2          the gold cells at equal steps and the it2-*/ cells into
#                                  two-iterations/, with its summary, paired tests and plot
#   curve.sh FN share SHARE FRACTION
#                                  it2's filtered cells with the paraphrases' spans weighted down to
#                                  SHARE of the loss (trainer.paraphrase_share): share-SHARE-FRACTION,
#                                  kept in diagnostics/paraphrase-share/
#   curve.sh FN keep FRACTION [CONDITION]
#                                  gold and it2's filtered cells again, as in it2 and steps, with their
#                                  models kept: keep-FRACTION/models, or one condition's in
#                                  keep-FRACTION-CONDITION (two processes at 100%)
#   curve.sh FN lexicon            every kept model scored again with the frame-id trainer's lexicon
#                                  (FrameNet's LU lists, at test only: each keeps the epoch it chose unheld; diagnostics/rescore.py) into
#                                  keep-*/lexicon.csv (a rerun scores only new models), joined into
#                                  lexicon/ with its summary, paired tests and plot
#   curve.sh FN held FRACTION [CONDITION]
#                                  gold and it2's filtered cells trained with the lexicon, which then
#                                  holds dev F1 (the epoch kept) as well as test: held-FRACTION, or one
#                                  condition's in held-FRACTION-CONDITION; `merge-held` joins them in held/
#   curve.sh FN repeat TIMES FRACTION
#                                  it2's filtered cells as in held, each gold sentence seen TIMES an epoch
#                                  (trainer.exhaustive_repeat): repeat-TIMES-FRACTION-filtered; `merge-repeat
#                                  TIMES` joins them with held's gold cells in gold-repeat/
#   curve.sh FN it3 TIMES FRACTION the same with the three-iteration run's records (run-fn-pool-it3-int8, the
#                                  two-iteration run taken one iteration further): it3-repeat-TIMES-FRACTION-filtered;
#                                  `merge-it3 TIMES` joins them with held's gold cells in three-iterations/
#   curve.sh FN calibrated FRACTION gold|filtered
#                                  held's gold cells, or repeat 7's filtered ones, with trainer.null_scale=dev
#                                  (NULL's weight against a frame chosen on dev; until 075b141 once the epoch
#                                  was chosen at 1, since then each epoch at its best scale):
#                                  calibrated-FRACTION-CONDITION; `merge-calibrated` joins them in calibrated/
#   curve.sh FN epoch-calibrated FRACTION gold|filtered
#                                  the same at a commit where each epoch is scored at its best scale, early
#                                  stopping and calibrating on all 328 dev sentences (fn-dev.jsonl, not dev100):
#                                  epoch-calibrated-FRACTION-CONDITION; `merge-epoch-calibrated` joins them;
#                                  `epoch-calibrated-dev100` the same on dev100, to tell the two changes apart
#   curve.sh FN gold-model         a gold model of the whole pool as epoch-calibrated's gold cells train it (seed 0):
#                                  gold-1-model, for label-consistency
#   curve.sh FN consistency        epoch-calibrated's filtered cells at 100% with label-consistency after the README's
#                                  filters (a record is kept where gold-1-model, held to the LUs, predicts its trigger and
#                                  frame): consistency-1-filtered. Only at 100%, where the model saw no more gold than the cell
#   curve.sh FN dev-every FRACTION epoch-calibrated's filtered cells with dev scored every gold epoch's steps (34 at 0.5,
#                                  68 at 1: trainer.dev_every), so that their kept model is chosen among as many
#                                  checkpoints a step as gold's (whose cells it leaves as they are): dev-every-FRACTION-filtered;
#                                  `merge-dev-every` joins them with epoch-calibrated's gold cells in dev-every/
#   curve.sh FN floor STEPS FRACTION gold|filtered
#                                  dev-every's cells (gold as epoch-calibrated trains it) with a step floor of STEPS
#                                  (trainer.min_steps) and dev_every: gold: floor-STEPS-FRACTION-CONDITION;
#                                  `merge-floor STEPS` joins them in floor-STEPS/
#   curve.sh FN conditions FRACTION augmented|lexsub
#                                  the issue's other two conditions (every record; the lexical-substitution
#                                  baseline made from them) trained as dev-every's filtered cells are:
#                                  conditions-FRACTION-CONDITION; `merge-conditions` joins them with
#                                  epoch-calibrated's gold cells and dev-every's filtered ones in four-conditions/
#   curve.sh FN finish FRACTION gold|filtered
#                                  a cell as `final` trains it, then trained on from its kept weights (a tenth of lr) on the gold
#                                  sentences alone (trainer.finish_exhaustive), models kept to say which run won:
#                                  finish-FRACTION-CONDITION; `merge-finish` joins them in finish/
#   curve.sh FN more-seeds FRACTION gold|filtered
#                                  four-conditions/'s gold or filtered cells (as `final` trains them) for further seeds, from
#                                  FIRST_SEED (10 unless set) on: more-seeds-FRACTION-CONDITION; a seed's two conditions on one
#                                  machine. `merge-more-seeds` joins them with four-conditions/ (merge-conditions') in more-seeds/
#   curve.sh FN it3-final FRACTION more-seeds' filtered cells with the three-iteration run's records (run-fn-pool-it3-int8),
#                                  seeds FIRST_SEED (0 unless set) on, so that two processes can share the seeds:
#                                  it3-final-fromFIRST_SEED-FRACTION-filtered; `merge-it3-final` joins them with more-seeds/'
#                                  gold cells in it3-final/
#   curve.sh FN repeat-final TIMES FRACTION
#                                  more-seeds' filtered cells with each gold sentence seen TIMES an epoch in place of 7
#                                  (trainer.exhaustive_repeat), seeds FIRST_SEED (0 unless set) on:
#                                  repeat-final-TIMES-fromFIRST_SEED-FRACTION-filtered; `merge-repeat-final TIMES` joins them
#                                  with more-seeds/' gold cells in repeat-final-TIMES/
#   curve.sh FN judged FRACTION    more-seeds' filtered cells with run-fn-pool-it2-judged's records: the two-iteration run less
#                                  the kept records annotators judged wrong on the frame (diagnostics/judged-run.py with
#                                  docs/results/judgments/framenet-pool-10pct-kept.tsv), an oracle filter; seeds FIRST_SEED (0
#                                  unless set) on: judged-fromFIRST_SEED-FRACTION-filtered; `merge-judged` joins them with
#                                  more-seeds/' gold cells in judged/
#   curve.sh FN per-round FRACTION more-seeds' filtered cells with run-fn-pool-it2-pr4's records: the two-iteration run
#                                  decoded again keeping up to four records a round (--per-round 4, finding 32), seeds
#                                  FIRST_SEED (0 unless set) on: per-round-fromFIRST_SEED-FRACTION-filtered; `merge-per-round`
#                                  joins them with more-seeds/' gold cells in per-round/
#   curve.sh FN smaller gold|filtered
#                                  more-seeds' cells at 25% of the pool (about 2.5% of the training documents, the
#                                  paper's smaller shares; a step floor of 3,000), seeds FIRST_SEED (0 unless set) on:
#                                  smaller-fromFIRST_SEED-0.25-CONDITION; `merge-smaller` joins them with more-seeds/ in smaller-share/
#   curve.sh FN encoder ENCODER FRACTION gold|filtered [KEY=VALUE ...]
#                                  more-seeds' cells with another frozen encoder (trainer.encoder, e.g. all-mpnet-base-v2,
#                                  12 layers and 768-d like the paper's BERT-base, in place of the default all-MiniLM-L6-v2)
#                                  and, where given, other trainer settings (dropout=0.5: trainer.dropout), seeds FIRST_SEED
#                                  (0 unless set) on: encoder-LABEL-fromFIRST_SEED-FRACTION-CONDITION, LABEL being ENCODER
#                                  then each KEY-VALUE; `merge-encoder ENCODER [KEY=VALUE ...]` joins them in encoder-LABEL/
#   curve.sh FN calibrate-kept     every kept model scored as `lexicon` does, with NULL calibrated on dev100 first
#                                  (diagnostics/rescore.py null_scale=dev): keep-*/calibrated.csv, joined in kept-calibrated/
# Run from the folder make-data.sh wrote, with run-fn-pool/ complete; FN is the fndata-1.5 folder.
set -euo pipefail
FN=${1:?the unpacked fndata-1.5 folder}; what=${2:-both}
# Gold's step floors: what a cell with one iteration's records makes in its 30 minimum epochs
# (and, for the 25% share of `smaller`, that floor in proportion)
STEPS_25=3000 STEPS_50=6000 STEPS_100=12000
curve() {  # curve CONDITIONS OUT PROJECT_SOURCE [FRACTIONS [--set ...]]; the filters choose the filtered condition's records
  # AUGMENTED names the run whose records the cells add (run-fn-pool, the one-iteration run, unless set);
  # SEEDS the resampled runs per fraction (5 unless set: a rerun with more trains only the new seeds);
  # DEV the dev set, for early stopping and calibration (fn-dev100.jsonl unless set);
  # FIRST_SEED the first of them (0 unless set);
  # CONSISTENCY a gold model folder: the filtered condition also keeps to label-consistency with it
  local conditions=$1 out=$2 project=$3 fractions=${4:-0.5,1} filters=()
  shift $(( $# < 4 ? $# : 4 ))
  [[ ,$conditions, == *,filtered,* ]] && filters=(--filter adequacy --filter fluency --filter facts
    --filter "{name: frame-lexicon, release: $FN${MAX_FRAMES:+, max_frames: $MAX_FRAMES}}"
    ${CONSISTENCY:+--filter "{name: label-consistency, model: $CONSISTENCY, trainer: {lexicon: {name: framenet, release: $FN}}}"})
  OMP_NUM_THREADS=1 spanaug experiment learning-curve --trainer frame-id --dataset jsonl \
    --train fn-pool.jsonl --dev "${DEV:-fn-dev100.jsonl}" --test fn-test.jsonl --augmented "${AUGMENTED:-run-fn-pool}" \
    --conditions "$conditions" --fractions "$fractions" --seeds "${SEEDS:-5}" --first-seed "${FIRST_SEED:-0}" --unseen lu \
    "${filters[@]}" --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=30 --set trainer.batch_size=4 \
    --set trainer.project_source="$project" "$@" --no-progress --out "$out"
}
it2() {  # it2 CONDITIONS FRACTION OUT [--set ...]: the two-iteration run's records (or RUN's) with gold's step floor
  local conditions=$1 fraction=$2 out=$3 floor; shift 3
  case $fraction in 0.25) floor=$STEPS_25 ;; 0.5) floor=$STEPS_50 ;; 1) floor=$STEPS_100 ;;
    *) echo "curve.sh: fraction 0.25, 0.5 or 1, not $fraction" >&2; exit 2 ;; esac
  AUGMENTED=${RUN:-run-fn-pool-it2-int8} curve "$conditions" "$out" true "$fraction" \
    --set trainer.min_epochs=1 --set trainer.min_steps=$floor "$@"
}
retrain() {  # retrain NAME FRACTION [CONDITION] [--set ...]: gold and it2's filtered cells (or one condition's) in NAME-FRACTION[-CONDITION]
  local name=$1 fraction=${2:?fraction: 0.5 or 1} condition=${3:-}; shift $(( $# < 3 ? $# : 3 ))
  it2 "${condition:-gold,filtered}" "$fraction" "$name-$fraction${condition:+-$condition}" "$@"
}
final() {  # final NAME FRACTION CONDITION [--set ...]: a cell as dev-every trains the records (gold as epoch-calibrated does) in NAME-FRACTION-CONDITION
  local repeat=()
  [[ $3 != gold ]] && repeat=(--set trainer.exhaustive_repeat=7)  # each gold sentence 7 times an epoch beside records
  DEV=fn-dev.jsonl retrain "$1" "$2" "$3" --set "trainer.lexicon={name: framenet, release: $FN}" --set trainer.null_scale=dev \
    "${repeat[@]}" --set trainer.dev_every=gold "${@:4}"
}
rescore_kept() {  # rescore_kept CSV OUT TITLE [rescore.py options]: every kept model scored again into keep-*/CSV, joined in OUT/
  local csv=$1 out=$2 title=$3; shift 3
  for kept in keep-*/; do
    OMP_NUM_THREADS=1 python "$(dirname "$0")/diagnostics/rescore.py" "$kept" fn-pool.jsonl fn-test.jsonl "$kept$csv" "$@"
  done
  rm -rf "$out"  # made anew from the parts, which a rerun may have grown
  spanaug experiment summarize keep-*/"$csv" --out "$out" --title "$title"
}
merge_more_seeds_gold() {  # merge_more_seeds_gold OUT PARTS... TITLE: more-seeds/' gold cells and PARTS' cells in OUT/
  local out=$1 title=${*: -1}
  rm -rf "$out"  # made anew from the parts, which a rerun may have grown
  { head -n 1 more-seeds/results.csv; grep '^gold,' more-seeds/results.csv; } > more-seeds-gold.csv
  spanaug experiment summarize more-seeds-gold.csv "${@:2:$#-2}" --out "$out" --title "$title"
}
label() {  # label ENCODER [KEY=VALUE ...]: ENCODER-KEY-VALUE..., a folder name for an encoder and its settings
  local out=$1 kv; shift
  for kv in "$@"; do [[ $kv == ?*=?* ]] || { echo "curve.sh: a trainer setting is KEY=VALUE, not '$kv'" >&2; exit 2; }
    out+="-${kv%%=*}-${kv#*=}"; done
  echo "$out"
}
case $what in
  both) curve gold,augmented curve-a false & a=$!; curve filtered,lexsub curve-b false & b=$!
        wait $a; wait $b ;;
  run) curve "${3:?conditions}" "${4:?output folder}" false ;;
  merge) parts=(curve-*/results.csv); mkdir -p curve
         { head -n 1 "${parts[0]}"; for p in "${parts[@]}"; do tail -n +2 "$p"; done; } > curve/results.csv
         curve gold,augmented,filtered,lexsub curve false ;;
  project) curve augmented project-a true & a=$!; curve filtered project-f true & b=$!
           wait $a; wait $b ;;
  merge-project) mkdir -p project-source
                 { head -n 1 curve/results.csv; grep '^gold,' curve/results.csv; tail -q -n +2 project-a/results.csv project-f/results.csv; } > project-source/results.csv
                 curve gold,augmented,filtered project-source true ;;
  steps) curve gold steps-50 true 0.5 --set trainer.min_steps=$STEPS_50 & a=$!
         curve gold steps-100 true 1 --set trainer.min_steps=$STEPS_100 & b=$!
         wait $a; wait $b ;;
  lexsub) curve lexsub lexsub-p true ;;
  strict) MAX_FRAMES=1 curve filtered strict-f true ;;
  merge-steps) { head -n 1 project-source/results.csv; grep -v '^gold,' project-source/results.csv | tail -n +2
                 if [[ -f lexsub-p/results.csv ]]; then tail -n +2 lexsub-p/results.csv; fi; } > records.csv
               spanaug experiment summarize steps-50/results.csv steps-100/results.csv records.csv --out equal-steps \
                 --title "frame-id, a pool of 272 sentences: gold at equal steps" ;;
  it2) conditions=${3:?conditions}; fraction=${4:?fraction: 0.5 or 1}
       it2 "$conditions" "$fraction" "it2-${conditions//,/-}-$fraction" ;;
  share) share=${3:?share of the loss, e.g. 0.5}; fraction=${4:?fraction: 0.5 or 1}
         it2 filtered "$fraction" "share-$share-$fraction" --set trainer.paraphrase_share="$share" ;;
  merge-it2) spanaug experiment summarize steps-50/results.csv steps-100/results.csv it2-*/results.csv --out two-iterations \
               --title "frame-id, a pool of 272 sentences: two iterations, gold at equal steps" ;;
  keep) retrain keep "${3:-}" "${4:-}" --keep-models ;;
  lexicon) rescore_kept lexicon.csv lexicon "frame-id, a pool of 272 sentences: two iterations, predictions held to FrameNet's LUs" \
             "lexicon={name: framenet, release: $FN}" ;;
  held) retrain held "${3:-}" "${4:-}" --set "trainer.lexicon={name: framenet, release: $FN}" ;;
  repeat|it3) times=${3:?times each gold sentence is seen an epoch, e.g. 7}
          if [[ $what == it3 ]]; then export RUN=run-fn-pool-it3-int8; name=it3-repeat; else name=repeat; fi
          retrain "$name-$times" "${4:-}" filtered --set "trainer.lexicon={name: framenet, release: $FN}" \
            --set trainer.exhaustive_repeat="$times" ;;
  merge-repeat) times=${3:?times, as given to repeat}; rm -rf gold-repeat
                spanaug experiment summarize held-*-gold/results.csv "repeat-$times"-*/results.csv --out gold-repeat \
                  --title "frame-id, a pool of 272 sentences: two iterations, held, each gold sentence $times times an epoch with records" ;;
  merge-it3) times=${3:?times, as given to it3}; rm -rf three-iterations
             spanaug experiment summarize held-*-gold/results.csv "it3-repeat-$times"-*/results.csv --out three-iterations \
               --title "frame-id, a pool of 272 sentences: three iterations, held, each gold sentence $times times an epoch with records" ;;
  calibrated|epoch-calibrated|epoch-calibrated-dev100) fraction=${3:?fraction: 0.5 or 1}; condition=${4:?condition: gold or filtered}; repeat=()
              # gold as held trains it; the records as repeat does, each gold sentence 7 times an epoch
              [[ $condition == filtered ]] && repeat=(--set trainer.exhaustive_repeat=7)
              [[ $what == epoch-calibrated ]] && export DEV=fn-dev.jsonl
              retrain "$what" "$fraction" "$condition" --set "trainer.lexicon={name: framenet, release: $FN}" \
                --set trainer.null_scale=dev "${repeat[@]}" ;;
  gold-model) OMP_NUM_THREADS=1 spanaug train --trainer frame-id --dataset jsonl --train fn-pool.jsonl --dev fn-dev.jsonl \
                --test fn-test.jsonl --out gold-1-model --set trainer.epochs=60 --set trainer.patience=10 --set trainer.min_epochs=1 \
                --set trainer.min_steps=$STEPS_100 --set trainer.batch_size=4 --set "trainer.lexicon={name: framenet, release: $FN}" \
                --set trainer.null_scale=dev --set trainer.seed=0 --no-progress ;;
  consistency) CONSISTENCY=gold-1-model DEV=fn-dev.jsonl retrain consistency 1 filtered \
                 --set "trainer.lexicon={name: framenet, release: $FN}" --set trainer.null_scale=dev --set trainer.exhaustive_repeat=7 ;;
  dev-every) fraction=${3:?fraction: 0.5 or 1}
             case $fraction in 0.5) every=34 ;; 1) every=68 ;; *) echo "curve.sh: fraction 0.5 or 1, not $fraction" >&2; exit 2 ;; esac
             DEV=fn-dev.jsonl retrain dev-every "$fraction" filtered --set "trainer.lexicon={name: framenet, release: $FN}" \
               --set trainer.null_scale=dev --set trainer.exhaustive_repeat=7 --set trainer.dev_every=$every ;;
  merge-dev-every) rm -rf dev-every
                   spanaug experiment summarize epoch-calibrated-[0-9]*-gold/results.csv dev-every-*/results.csv --out dev-every \
                     --title "frame-id, a pool of 272 sentences: as epoch-calibrated, the records' dev scored every gold epoch's steps" ;;
  floor) steps=${3:?steps, e.g. 12000}; fraction=${4:?fraction: 0.5 or 1}; condition=${5:?condition: gold or filtered}
         final "floor-$steps" "$fraction" "$condition" --set trainer.min_steps="$steps" ;;
  merge-floor) steps=${3:?steps, as given to floor}; rm -rf "floor-$steps"
               spanaug experiment summarize "floor-$steps"-*/results.csv --out "floor-$steps" \
                 --title "frame-id, a pool of 272 sentences: as dev-every, every cell at least $steps steps" ;;
  conditions) fraction=${3:?fraction: 0.5 or 1}; condition=${4:?condition: augmented or lexsub}
              case $condition in augmented|lexsub) ;; *) echo "curve.sh: condition augmented or lexsub, not $condition" >&2; exit 2 ;; esac
              final conditions "$fraction" "$condition" ;;
  merge-conditions) rm -rf four-conditions
                    spanaug experiment summarize epoch-calibrated-[0-9]*-gold/results.csv dev-every-*/results.csv conditions-*/results.csv \
                      --out four-conditions --title "frame-id, a pool of 272 sentences: the issue's four conditions" ;;
  finish) fraction=${3:?fraction: 0.5 or 1}; condition=${4:?condition: gold or filtered}
          final finish "$fraction" "$condition" --set trainer.finish_exhaustive=true --keep-models ;;
  merge-finish) rm -rf finish
                spanaug experiment summarize finish-*/results.csv --out finish \
                  --title "frame-id, a pool of 272 sentences: as four-conditions, then trained on gold alone" ;;
  more-seeds) fraction=${3:?fraction: 0.5 or 1}; condition=${4:?condition: gold or filtered}
              FIRST_SEED=${FIRST_SEED:-10} final more-seeds "$fraction" "$condition" ;;
  merge-more-seeds) rm -rf more-seeds
                    spanaug experiment summarize four-conditions/results.csv more-seeds-*/results.csv --out more-seeds \
                      --title "frame-id, a pool of 272 sentences: four-conditions, gold and filtered with more seeds" ;;
  it3-final) RUN=run-fn-pool-it3-int8 final "it3-final-from${FIRST_SEED:-0}" "${3:?fraction: 0.5 or 1}" filtered ;;
  merge-it3-final) merge_more_seeds_gold it3-final it3-final-from*/results.csv \
                     "frame-id, a pool of 272 sentences: as more-seeds, the three-iteration run's filtered records" ;;
  repeat-final) times=${3:?times each gold sentence is seen an epoch, e.g. 14}
                final "repeat-final-$times-from${FIRST_SEED:-0}" "${4:?fraction: 0.5 or 1}" filtered --set trainer.exhaustive_repeat="$times" ;;
  merge-repeat-final) times=${3:?times, as given to repeat-final}
                      merge_more_seeds_gold "repeat-final-$times" "repeat-final-$times"-from*/results.csv \
                        "frame-id, a pool of 272 sentences: as more-seeds, each gold sentence $times times an epoch with the records" ;;
  smaller) condition=${3:?condition: gold or filtered}
           final "smaller-from${FIRST_SEED:-0}" 0.25 "$condition" ;;
  merge-smaller) rm -rf smaller-share
                 spanaug experiment summarize more-seeds/results.csv smaller-from*/results.csv --out smaller-share \
                   --title "frame-id, a pool of 272 sentences: more-seeds and a 25% share, gold and filtered" ;;
  encoder) encoder=${3:?encoder preset or folder, e.g. all-mpnet-base-v2}; settings=("${@:6}")
           name=encoder-$(label "$encoder" "${settings[@]}")  # an assignment, so that set -e stops at a bad setting
           sets=(); for kv in "${settings[@]}"; do sets+=(--set "trainer.$kv"); done
           final "$name-from${FIRST_SEED:-0}" "${4:?fraction: 0.5 or 1}" "${5:?condition: gold or filtered}" \
             --set trainer.encoder="$encoder" "${sets[@]}" ;;
  merge-encoder) encoder=${3:?encoder, as given to encoder}; name=encoder-$(label "$encoder" "${@:4}"); rm -rf "$name"
                 spanaug experiment summarize "$name"-from*/results.csv --out "$name" \
                   --title "frame-id, a pool of 272 sentences: as more-seeds, over $encoder's vectors${4:+ (${*:4})}" ;;
  per-round) RUN=run-fn-pool-it2-pr4 final "per-round-from${FIRST_SEED:-0}" "${3:?fraction: 0.5 or 1}" filtered ;;
  merge-per-round) merge_more_seeds_gold per-round per-round-from*/results.csv \
                     "frame-id, a pool of 272 sentences: as more-seeds, the filtered records of a run keeping up to four a round" ;;
  judged) RUN=run-fn-pool-it2-judged final "judged-from${FIRST_SEED:-0}" "${3:?fraction: 0.5 or 1}" filtered ;;
  merge-judged) merge_more_seeds_gold judged judged-from*/results.csv \
                  "frame-id, a pool of 272 sentences: as more-seeds, the filtered records annotators judged right on the frame" ;;
  calibrate-kept) rescore_kept calibrated.csv kept-calibrated \
                    "frame-id, a pool of 272 sentences: the kept models held to FrameNet's LUs, NULL calibrated on dev" \
                    --dev fn-dev100.jsonl "lexicon={name: framenet, release: $FN}" null_scale=dev ;;
  merge-calibrated) rm -rf calibrated
                    spanaug experiment summarize calibrated-*/results.csv --out calibrated \
                      --title "frame-id, a pool of 272 sentences: two iterations, held, NULL calibrated on dev" ;;
  merge-epoch-calibrated) rm -rf epoch-calibrated
                          spanaug experiment summarize epoch-calibrated-[0-9]*/results.csv --out epoch-calibrated \
                            --title "frame-id, a pool of 272 sentences: two iterations, held, each epoch at its best NULL scale on all of dev" ;;
  merge-held) rm -rf held  # made anew from the parts, which a rerun may have grown
              spanaug experiment summarize held-*/results.csv --out held \
                --title "frame-id, a pool of 272 sentences: two iterations, held to FrameNet's LUs on dev and test" ;;
  *) echo "usage: curve.sh FN [both | run CONDITIONS OUT | merge | project | merge-project | steps | lexsub | strict | merge-steps | it2 CONDITIONS FRACTION | merge-it2 | share SHARE FRACTION | keep FRACTION [CONDITION] | lexicon | held FRACTION [CONDITION] | merge-held | repeat TIMES FRACTION | merge-repeat TIMES | it3 TIMES FRACTION | merge-it3 TIMES | calibrated FRACTION CONDITION | merge-calibrated | epoch-calibrated[-dev100] FRACTION CONDITION | merge-epoch-calibrated | gold-model | consistency | dev-every FRACTION | merge-dev-every | floor STEPS FRACTION CONDITION | merge-floor STEPS | conditions FRACTION CONDITION | merge-conditions | finish FRACTION CONDITION | merge-finish | more-seeds FRACTION CONDITION | merge-more-seeds | it3-final FRACTION | merge-it3-final | repeat-final TIMES FRACTION | merge-repeat-final TIMES | smaller CONDITION | merge-smaller | per-round FRACTION | merge-per-round | judged FRACTION | merge-judged | encoder ENCODER FRACTION CONDITION [KEY=VALUE ...] | merge-encoder ENCODER [KEY=VALUE ...] | calibrate-kept]" >&2; exit 2 ;;
esac
