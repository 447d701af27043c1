#!/usr/bin/env bash
# H200, stop 47, call 1 (issue #40): every hostile, sloppy and honest case of the judge's CPU set judged on the CPU
# and on the GPU side by side; then the course's GPU checks (each lesson's reference, wrong, cheating and slow
# answers graded on the GPU). Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout 270 python3 benchmarks/judge_hostile_gpu.py --json $OUT/judge_hostile.jsonl > $OUT/judge_hostile.log 2>&1
echo "judge_hostile rc=$?"; grep -E "cases judged|differ|gpu (flag|wrong|pass)" $OUT/judge_hostile.log | tail -90 | cut -c1-110
timeout 290 python3 -m pytest -v -rf --tb=short -m gpu -n 2 tests/test_course.py -p no:cacheprovider \
  --durations=0 > $OUT/course_gpu.log 2>&1
echo "course rc=$?"; grep -E "PASSED|FAILED|^E |passed|failed|s call" $OUT/course_gpu.log | sed 's/^tests\///' | cut -c1-150 | tail -40
