#!/usr/bin/env bash
# H200, stop 46, call 1 (issues #40, #42): the judge's and the other GPU tests, one at a time; then the model steps
# lifted, optimized and put back (benchmarks/lift_step.py). Logs to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_ncu/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; ncu --version | tail -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout 320 python3 -m pytest -v -rf --tb=short -m gpu --continue-on-collection-errors tests/test_verify.py tests/test_poison.py tests/test_screen.py tests/test_gpu.py tests/test_course.py -p no:cacheprovider > $OUT/gpu_tests.log 2>&1
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed" $OUT/gpu_tests.log | cut -c1-150 | tail -20
timeout 230 python3 benchmarks/lift_step.py tests/cells/models/library_step.py tests/cells/models/mlp_block_compiled.py > $OUT/lift_step.log 2>&1
echo "lift_step rc=$?"; tail -30 $OUT/lift_step.log | cut -c1-160
