#!/usr/bin/env bash
# Records the course's Nsight Compute reports (provenance of kernel_lab/course/lessons/*/*.ncu-rep).
# Run from the repository root on the GPU machine, with the nvtx wheel in .whl/:
#     bash kernel_lab/course/record.sh                       # every lesson
#     bash kernel_lab/course/record.sh --only 03_bank_conflicts
# Results go to $OUT (or /tmp/kl_course_out): reports_*.tar (lesson folders of .ncu-rep) and logs.tar.gz.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/nvtx-*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 MAX_JOBS=4
# the same build flags for every step (builds, judge, ncu): load_inline rebuilds when they differ
export NVCC_APPEND_FLAGS=-lineinfo TORCH_CUDA_ARCH_LIST=9.0
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/kl_course/torch_extensions}
python3 -m kernel_lab.course.record "$@"
