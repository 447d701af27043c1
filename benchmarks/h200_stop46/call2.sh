#!/usr/bin/env bash
# H200, stop 46, call 2 (issues #40, #39): the judge's and the other GPU tests, one at a time; then the LLM agent's
# own overhead per turn (stand-in server on 127.0.0.1, no model). Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; python3 -c "import torch, triton, openai, ncu_report, jupytext; print(torch.__version__, triton.__version__, openai.__version__)"
timeout 340 python3 -m pytest -v -rf --tb=short -m gpu --continue-on-collection-errors tests/test_verify.py \
  tests/test_poison.py tests/test_screen.py tests/test_gpu.py tests/test_course.py -p no:cacheprovider > $OUT/gpu_tests.log 2>&1
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed" $OUT/gpu_tests.log | sed 's/^tests\///' | cut -c1-120 | tail -30
timeout 190 python3 benchmarks/llm_turn_overhead.py > $OUT/llm_turn_overhead.log 2>&1
echo "llm_turn_overhead rc=$?"; tail -12 $OUT/llm_turn_overhead.log | cut -c1-160
