#!/usr/bin/env bash
# H200, stop 46, call 4 (issue #40): the judge's cost before #40 (.before: kernel_lab of 9405f32) and now, on the GPU.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
timeout 215 python3 benchmarks/judge_cost.py --before .before --device cuda --repeats 1 2>&1 | tee $OUT/judge_cost.log | tail -8
