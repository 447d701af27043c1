#!/usr/bin/env bash
# H200, stop 47, call 2 (issue #40): every hostile, sloppy and honest case of the judge's CPU set judged on the GPU,
# a line per case as each group is done, set against the CPU's verdicts (cpu_verdicts.jsonl, recorded on the 2-core
# machine); then the two course checks that failed in call 1, with their tracebacks. Logs to $OUT.
mkdir -p /tmp/site && tar -C /tmp/site -xJf .site_xz/site312.tar.xz || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
timeout 330 python3 benchmarks/judge_hostile_gpu.py --device cuda --json $OUT/gpu_verdicts.jsonl \
  --against benchmarks/h200_stop47/cpu_verdicts.jsonl > $OUT/judge_hostile.log 2>&1
echo "judge_hostile rc=$?"; cut -c1-100 $OUT/judge_hostile.log | grep -v "^ *$" | tail -80
timeout 170 python3 -m pytest -v -rf --tb=short -m gpu -n 2 --timeout 160 -p no:cacheprovider tests/test_course.py \
  -k "03_bank or 04_occ" > $OUT/course_gpu.log 2>&1
echo "course rc=$?"; grep -E "^E |passed|failed|Error|assert" $OUT/course_gpu.log | cut -c1-300 | tail -30
