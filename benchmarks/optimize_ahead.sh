#!/usr/bin/env bash
# Run on the H100 (device tool, carrying .whl and .before, a checkout of kernel_lab before the change:
# `git archive BEFORE kernel_lab | tar -x -C .before`), e.g. `bash benchmarks/optimize_ahead.sh add_tiny_block softmax_one_warp`.
# Logs: benchmarks/optimize_ahead_h100/call_N (call 6 had no after-profile side; call 8 hit the call's time limit
# before softmax's after-profile run and cut add_tiny_block's before run in its final, untimed profile).
# side by side, one job at a time: before (.before: kernel_lab at 489cf37) and after (this tree), and after
# with the cell profiled first (%%optimize after %%profile)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
REPO=$PWD; export PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext PATH=/tmp/site/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/neutral; cd /tmp/neutral
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%T.%N | cut -c1-12)" "$l"; done; }
for cell in "$@"; do
  for side in before after after-profile; do
    pkg=$REPO; extra=""; [ $side = before ] && pkg=$REPO/.before; [ $side = after-profile ] && extra=--after-profile
    echo "=== $cell $side" | tee -a $OUT/summary.log
    PYTHONPATH=/tmp/site:$pkg timeout 200 python3 $REPO/benchmarks/optimize_teaching.py --rounds 3 --candidates 4 $extra $cell 2>&1 | stamp > $OUT/${cell}_$side.log
    grep -A1 "orig ms" $OUT/${cell}_$side.log | tail -1 | tee -a $OUT/summary.log
  done
done
