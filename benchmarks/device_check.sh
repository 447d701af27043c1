#!/usr/bin/env bash
# Run on the H100 (device tool, carrying .whl and .whl-jupyter): GPU tests, the profile-latency
# benchmark and live profiles of the roofline references. Everything lands in $OUT.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl-jupyter/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L; ncu --version | tail -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.log"
for k in memory_bound bf16_gemm; do
  python3 -m kernel_lab.cli profile "kernel_lab/samples/kernels/$k.py" -o "$OUT/live_$k.ncu-rep" --json > "$OUT/live_$k.json" 2> "$OUT/live_$k.log"
  tail -3 "$OUT/live_$k.log"
done
python3 benchmarks/profile_latency.py --repeats 3 2>&1 | tee "$OUT/profile_latency.log"
