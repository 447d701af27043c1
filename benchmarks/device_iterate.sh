#!/usr/bin/env bash
# Run on the H100 (device tool, carrying .whl, .whl_live and .before, a copy of kernel_lab before the change
# measured: `git archive BEFORE kernel_lab | tar -x -C .before`): how fast a user iterates (#13, #15).
# Logs in $OUT: benchmarks/live_latency_h100.log, judge_cost_h100_gelu.log, race_h100_gelu_b.log come from it.
#  1. %%profile in the profiled kernel, in place, against a fresh process and a naive ncu command;
#  2. the judge before/after on a 2^26-element GELU (outputs of 256 MB), side by side;
#  3. the built-in optimizer against triton.autotune on that GELU.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_live/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext PATH=/tmp/site/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
timeout 250 python3 benchmarks/live_latency.py --repeats 3 > "$OUT/live_latency.log" 2>&1
sed 's/BLOCK=16)/BLOCK=1024)/; s/x.numel(), 16)/x.numel(), 1024)/' benchmarks/race/gelu_block16.py > /tmp/gelu_1024.py
timeout 330 python3 benchmarks/judge_cost.py --before .before --device cuda --repeats 1 --phases \
  --reference benchmarks/race/gelu_block16.py --candidate /tmp/gelu_1024.py > "$OUT/judge_cost.log" 2>&1
timeout 230 python3 benchmarks/autotune_race.py --rounds 2 --candidates 1 gelu_block16 > "$OUT/race_gelu.log" 2>&1
