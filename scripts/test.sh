#!/usr/bin/env bash
# The tests, as CI runs them (.ci/run): lint, formatting and types, then the whole suite. Arguments go to pytest:
# `bash scripts/test.sh -m "not slow"` is the fast run (no sandbox, notebook kernel or browser).
# Two pytest workers, a test file each at a time (most tests wait on the processes they start); one where a GPU is
# (the GPU tests time kernels: two at once would time each other). KERNEL_LAB_TEST_WORKERS says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check kernel_lab tests benchmarks scripts
ruff format --check kernel_lab tests benchmarks scripts
python3 -m mypy
workers=${KERNEL_LAB_TEST_WORKERS:-$(command -v nvidia-smi >/dev/null && echo 0 || echo 2)}
# the 15 slowest tests listed at the end, to see what a slow run spent its time on
python3 -m pytest -n "$workers" --dist loadfile --durations=15 "$@"
