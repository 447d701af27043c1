#!/usr/bin/env bash
# H200, stop 52, call 2 (issues #40, #37): where liger_cross_entropy's judging spends its time (judge_phases.py
# --whole, cut at PHASES_S), the judge's GPU tests (an in-place write sent once is new), then CELLS raced as in
# benchmarks/h200_stop50/call2.sh until RACE_UNTIL. Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout -s TERM ${PHASES_S:-200} python3 benchmarks/judge_phases.py tests/cells/corpus/liger_cross_entropy.py \
  --whole --rounds 1 --device cuda > $OUT/phases_liger_cross_entropy.log 2>&1
echo "phases rc=$? at $SECONDS s"; tail -30 $OUT/phases_liger_cross_entropy.log | cut -c1-160
timeout ${TESTS_S:-250} python3 -m pytest -m gpu -n 1 -q tests/test_verify.py -k "not each_hostile" \
  > $OUT/gpu_tests.log 2>&1
echo "gpu tests rc=$? at $SECONDS s"; tail -15 $OUT/gpu_tests.log | cut -c1-200
[ -n "$CELLS" ] && . benchmarks/h200_stop50/call2.sh  # sourced: RACE_UNTIL counts from this call's start
