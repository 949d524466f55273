#!/usr/bin/env bash
# The GPU checks of docs/benchmarks.md, in one call on a lent GPU machine.
#
# That machine has Python 3.12 with torch, transformers and the usual scientific stack, and
# no network. It lacks pydantic and lemminflect, the models, and this repository's history,
# so they travel in .gpu/ (ignored by git; `bash bench/gpu.sh --prepare` fills it here):
#   .gpu/whl/                  wheels for Python 3.12 (pydantic, pydantic-core, lemminflect...)
#   .gpu/qwen-tokenizer.tar.xz Qwen2.5's tokenizer (the model itself is 1.1 GB: random weights
#                              of its architecture stand in for it, which is what a step costs)
#   .gpu/base/                 the search modules of the baseline revision (bench/step.py --export)
#   .gpu/input.jsonl           the sentences of the pipeline stage (INPUT=FILE when preparing)
# Figures are written to $OUT (or ./gpu-out) as JSON, text and a log.
#
#   INPUT=train.jsonl bash bench/gpu.sh --prepare [REV]   # here: fill .gpu/ (REV: the baseline)
#   bash bench/gpu.sh [step] [throughput] [thin] [pipeline]   # there (carry .gpu); all by default
# step: bench/step.py, a search step beside its forward, against the baseline's search code;
# throughput: the same decoding requests through continuous batching (THROUGHPUT="80 160 320"
# sentences in flight); thin: the CPU proxy's thin model on the GPU; pipeline: bench/pipeline.py,
# whole `spanaug run`s of the input's sentences with the same random-weight model, every output
# cut at 32 tokens (BATCHES="20 80").
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}

if [ "${1:-}" = "--prepare" ]; then
  rev=${2:-HEAD~}
  rm -rf .gpu && mkdir -p .gpu/whl
  for p in pydantic==2.14.4 pydantic-core==2.50.5 annotated-types typing-inspection lemminflect; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .gpu/whl "$p"
  done
  tok=$(.venv/bin/python -c "from spanaug_shared.models import model_path; print(model_path('qwen2.5-coder-1.5b-instruct'))")
  .venv/bin/python -c "
import sys
from pathlib import Path
from transformers import AutoTokenizer
gguf = Path(sys.argv[1])
AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained('.gpu/qwen-tokenizer')
" "$tok"
  tar -cJf .gpu/qwen-tokenizer.tar.xz -C .gpu qwen-tokenizer && rm -r .gpu/qwen-tokenizer
  .venv/bin/python bench/step.py --baseline "$rev" --export .gpu/base
  git rev-parse "$rev" > .gpu/base/REVISION
  git describe --always --dirty > .gpu/HEAD
  if [ -n "${INPUT:-}" ]; then head -120 "$INPUT" > .gpu/input.jsonl; fi
  du -sh .gpu
  exit 0
fi

export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/whl/*.whl
# The project's packages by their import names (pyproject's package-dir), without installing it.
mkdir -p /tmp/spanaug-path
for d in spanaug_core spanaug_shared; do ln -sfn "$PWD/$d" /tmp/spanaug-path/$d; done
for d in plugins/*/; do n=$(basename "$d"); ln -sfn "$PWD/$d" "/tmp/spanaug-path/spanaug_$n"; done
export PYTHONPATH=/tmp/site:/tmp/spanaug-path
tar -xJf .gpu/qwen-tokenizer.tar.xz -C /tmp
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
echo "baseline: $(cat .gpu/base/REVISION 2>/dev/null || echo '?')   working tree: $(cat .gpu/HEAD 2>/dev/null || echo '?')"

step() { python3 bench/step.py --device cuda --tokenizer /tmp/qwen-tokenizer --baseline .gpu/base "$@"; }
stages=" ${*:-step throughput thin pipeline} "
if [[ $stages == *" step "* ]]; then
  # One step beside its forward, Qwen2.5-1.5B's whole architecture in bfloat16 (random weights).
  step --full --sentences 80 --steps 24 --rounds 3 --json "$OUT/step-full-80.json"
fi
if [[ $stages == *" throughput "* ]]; then
  # Realistic lengths (30 tokens a paraphrase), six times the batch in requests.
  for b in ${THROUGHPUT:-80 160 320}; do
    step --full --sentences "$b" --steps 30 --rounds 1 --requests $((6 * b)) --batch "$b" --json "$OUT/throughput-$b.json"
  done
fi
if [[ $stages == *" thin "* ]]; then
  # The CPU proxy's thin model on the GPU: the bookkeeping alone.
  step --sentences 80 --steps 24 --rounds 3 --json "$OUT/step-thin-80.json"
fi
if [[ $stages == *" pipeline "* ]]; then
  # The project's entry points without installing it: a dist-info folder that names them.
  info=/tmp/site/spanaug-0.1.0.dist-info
  mkdir -p $info
  printf 'Metadata-Version: 2.1\nName: spanaug\nVersion: 0.1.0\n' > $info/METADATA
  python3 -c "
import tomllib
points = tomllib.load(open('pyproject.toml', 'rb'))['project']['entry-points']['spanaug']
print('[spanaug]')
print('\n'.join(f'{name} = {target}' for name, target in points.items()))
" > $info/entry_points.txt
  # Qwen2.5-1.5B's architecture with random weights, as a local model folder.
  python3 -c "
import argparse, sys
sys.path.insert(0, 'bench')
import step
tokenizer = step.load_tokenizer('/tmp/qwen-tokenizer')
model = step.build_model(argparse.Namespace(full=True, device='cuda', dtype='bfloat16'), len(tokenizer))
model.generation_config.eos_token_id = tokenizer.eos_token_id
model.save_pretrained('/tmp/qwen-random')
tokenizer.save_pretrained('/tmp/qwen-random')
"
  for batch in ${BATCHES:-20 80}; do
    python3 bench/pipeline.py --model /tmp/qwen-random --input .gpu/input.jsonl --iterations 1 --batch $batch \
      --aligner fast-align --device cuda --dtype bfloat16 --set decoder.max_length=32 | tee "$OUT/pipeline-$batch.txt"
  done
fi
