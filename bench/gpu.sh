#!/usr/bin/env bash
# The GPU checks of docs/benchmarks.md, in one call on a lent GPU machine (bench/README: device).
#
# That machine has Python 3.12 with torch, transformers and the usual scientific stack, and
# no network. It lacks pydantic and lemminflect, the models, and this repository's history,
# so they travel in .gpu/ (ignored by git; `bash bench/gpu.sh --prepare` fills it here):
#   .gpu/whl/                  wheels for Python 3.12 (pydantic, pydantic-core, lemminflect...)
#   .gpu/qwen-tokenizer.tar.xz Qwen2.5's tokenizer (the model itself is 1.1 GB: random weights
#                              of its architecture stand in for it, which is what a step costs)
#   .gpu/base/                 the search modules of the baseline revision (bench/step.py --export)
# Figures are written to $OUT (or ./gpu-out) as JSON and a log.
#
#   bash bench/gpu.sh --prepare [REV]   # here: fill .gpu/ (REV: the baseline, default HEAD~)
#   bash bench/gpu.sh                   # there (device run, carry .gpu)
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
  .venv/bin/python - "$tok" <<'EOF'
import sys
from transformers import AutoTokenizer
from pathlib import Path
gguf = Path(sys.argv[1])
AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(".gpu/qwen-tokenizer")
EOF
  tar -cJf .gpu/qwen-tokenizer.tar.xz -C .gpu qwen-tokenizer && rm -r .gpu/qwen-tokenizer
  .venv/bin/python bench/step.py --baseline "$rev" --export .gpu/base
  git rev-parse "$rev" > .gpu/base/REVISION
  git describe --always --dirty > .gpu/HEAD
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
# 1. One step beside its forward, Qwen2.5-1.5B's whole architecture in bfloat16 (random weights).
step --full --sentences 80 --steps 24 --rounds 3 --json "$OUT/step-full-80.json"
# 2. Throughput at realistic lengths (30 tokens a paraphrase), growing the batch.
step --full --sentences 80 --steps 30 --rounds 1 --requests 640 --batch 80 --json "$OUT/throughput-80.json"
step --full --sentences 160 --steps 30 --rounds 1 --requests 1280 --batch 160 --json "$OUT/throughput-160.json"
step --full --sentences 320 --steps 30 --rounds 1 --requests 1920 --batch 320 --json "$OUT/throughput-320.json"
# 3. The CPU proxy's thin model on the GPU: bookkeeping alone.
step --sentences 80 --steps 24 --rounds 3 --json "$OUT/step-thin-80.json"
