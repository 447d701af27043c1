#!/usr/bin/env bash
# H200, stop 49, call 1 (issue #40): the course's GPU checks stop 47 left failed (03, 04: the CUDA lessons flagged
# for hidden work) or unrun (07 to 10), then every hostile, sloppy and honest case of the judge's CPU set judged on
# the GPU, set against the CPU's verdicts recorded at stop 47 (after the copy/cast time-share fix). Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout 240 python3 -m pytest -v -rf --tb=short -m gpu -n 3 --timeout 200 -p no:cacheprovider tests/test_course.py \
  -k "03_bank or 04_occ or 07_ or 08_ or 09_ or 10_" --durations=0 > $OUT/course_gpu.log 2>&1
echo "course rc=$? at $SECONDS s"
grep -E "PASSED|FAILED|^E |passed|failed|s call" $OUT/course_gpu.log | sed 's/^tests\///' | cut -c1-220 | tail -40
timeout $((590 - SECONDS)) python3 benchmarks/judge_hostile_gpu.py --device cuda --json $OUT/gpu_verdicts.jsonl \
  --against benchmarks/h200_stop47/cpu_verdicts.jsonl > $OUT/judge_hostile.log 2>&1
echo "judge_hostile rc=$? at $SECONDS s"; cut -c1-100 $OUT/judge_hostile.log | grep -v "^ *$" | tail -60
