#!/usr/bin/env bash
# On the H100 (device tool, carrying .whl and .whl-jupyter): %%optimize with the built-in optimizer
# on the teaching kernels named as arguments; the log lands in $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl-jupyter/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 benchmarks/optimize_teaching.py --rounds "${ROUNDS:-2}" --candidates "${CANDIDATES:-4}" "$@" 2>&1 | tee "$OUT/optimize_$(date +%H%M%S).log"
