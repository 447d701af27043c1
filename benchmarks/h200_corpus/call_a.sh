#!/usr/bin/env bash
# H200, call A (issue #37 and the fixtures of #41/#42): the judge's, the screen's and the poison's GPU tests; then
# every corpus, whole-cell and model-step cell recorded in one ncu process (reports and launch records to $OUT).
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; ncu --version | tail -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
git log --oneline -1 2>/dev/null
: timeout 230 python3 -m pytest -q -rf --tb=short -m gpu tests/test_poison.py tests/test_verify.py tests/test_screen.py -p no:cacheprovider > $OUT/gpu_tests.log 2>&1
: tail
CELLS=$(ls tests/cells/corpus/*.py tests/cells/whole/*.py tests/cells/whole_held_out/*.py tests/cells/models/*.py | grep -v check.py)
timeout 420 python3 benchmarks/record_cells.py /tmp/rec $CELLS > $OUT/record.log 2>&1
grep -E "^(recorded|FAILED|cut)" $OUT/record.log | cut -c1-120
rm -f /tmp/rec/all.ncu-rep
tar -C /tmp/rec -cJf $OUT/records.tar.xz .
ls -la $OUT
