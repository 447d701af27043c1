#!/usr/bin/env bash
# H200, stop 50, call 1 (issue #40): the course's CUDA lessons 03 and 04 alone (-n 1, the suite's one-GPU-test
# rule), read per batch by the new hidden_work check; the judge's GPU tests (side stream, in-place warm-up and the
# rest) that stop 49's changes touch; then every hostile, sloppy and honest case set against the CPU's verdicts.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout 170 python3 -m pytest -v -rf --tb=long -m gpu -n 1 --timeout 150 -p no:cacheprovider tests/test_course.py \
  -k "03_bank or 04_occ" --durations=0 > $OUT/course_gpu.log 2>&1
echo "course rc=$? at $SECONDS s"
grep -E "PASSED|FAILED|^E |passed|failed|s call|waits_ms|hidden" $OUT/course_gpu.log | cut -c1-300 | tail -30
timeout 200 python3 -m pytest -v -rf --tb=short -m gpu -n 1 --timeout 120 -p no:cacheprovider tests/test_verify.py \
  -k "not each_hostile" --durations=0 > $OUT/verify_gpu.log 2>&1
echo "verify rc=$? at $SECONDS s"
grep -E "PASSED|FAILED|^E |passed|failed" $OUT/verify_gpu.log | cut -c1-250 | tail -30
timeout $((585 - SECONDS)) python3 benchmarks/judge_hostile_gpu.py --device cuda --json $OUT/gpu_verdicts.jsonl \
  --against benchmarks/h200_stop47/cpu_verdicts.jsonl > $OUT/judge_hostile.log 2>&1
echo "judge_hostile rc=$? at $SECONDS s"; cut -c1-100 $OUT/judge_hostile.log | grep -v "^ *$" | tail -40
