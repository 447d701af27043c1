#!/usr/bin/env bash
# %%optimize on teaching cells, side by side, one job at a time, on the H100 (device tool, carrying .whl and
# .before, a checkout of kernel_lab before a change: `git archive BEFORE kernel_lab | tar -x -C .before`):
#     [SIDES="before after after-profile"] [ROUNDS=3] [CANDIDATES=4] [LIMIT=200] bash benchmarks/optimize_ahead.sh CELL...
# before: .before's kernel_lab; after: this tree; a side ending in -profile (before-profile, after-profile): the cell
# profiled first (%%optimize after %%profile). Each run builds CUDA cells from nothing (a fresh TORCH_EXTENSIONS_DIR per run).
# Logs: benchmarks/optimize_ahead_h100/call_N (calls 6-8: before = 489cf37; call 8 hit the call's time limit before
# softmax's after-profile run and cut add_tiny_block's before run in its final, untimed profile; calls 9-10:
# before = 72724c1).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
REPO=$PWD; export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/neutral; cd /tmp/neutral
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%T.%N | cut -c1-12)" "$l"; done; }
for cell in "$@"; do
  for side in ${SIDES:-before after after-profile}; do
    pkg=$REPO; extra=""; [[ $side == before* ]] && pkg=$REPO/.before; [[ $side == *-profile ]] && extra=--after-profile
    echo "=== $cell $side" | tee -a $OUT/summary.log
    TORCH_EXTENSIONS_DIR=/tmp/torch_ext_${cell}_$side PYTHONPATH=/tmp/site:$pkg timeout ${LIMIT:-200} python3 \
      $REPO/benchmarks/optimize_teaching.py --rounds ${ROUNDS:-3} --candidates ${CANDIDATES:-4} $extra $cell 2>&1 \
      | stamp > $OUT/${cell}_$side.log
    grep -A1 "orig ms" $OUT/${cell}_$side.log | tail -1 | tee -a $OUT/summary.log
  done
done
