#!/usr/bin/env bash
# The tests, as CI runs them (.ci/run): lint, formatting and types, then the whole suite. Arguments go to pytest:
# `bash scripts/test.sh -m "not slow"` is the fast run (no sandbox, notebook kernel or browser).
set -euo pipefail
cd "$(dirname "$0")/.."
ruff check kernel_lab tests benchmarks scripts
ruff format --check kernel_lab tests benchmarks scripts
python3 -m mypy
python3 -m pytest "$@"
