#!/usr/bin/env bash
# Run on the H100 (device tool, carrying .whl and .whl-jupyter): GPU tests, the profile-latency
# benchmark and live profiles of the roofline references. Everything lands in $OUT.
set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl-jupyter/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCH_EXTENSIONS_DIR=/tmp/torch_ext
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L; ncu --version | tail -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.log"
python3 benchmarks/profile_latency.py --repeats 3 2>&1 | tee "$OUT/profile_latency.log"
for k in memory_bound bf16_gemm; do
  python3 -m kernel_lab.cli profile "kernel_lab/samples/kernels/$k.py" -o "$OUT/live_$k.ncu-rep" --json > "$OUT/live_$k.json" 2> "$OUT/live_$k.log"
  tail -3 "$OUT/live_$k.log"
done
# replay passes each targeted section costs on its own (vector add), to see where passes go
SECTIONS=$(python3 -c "from kernel_lab.profiling.sections import DEFAULT_SECTIONS as S; print(' '.join(S))")
METRICS=$(python3 -c "from kernel_lab.profiling.sections import EXTRA_METRICS as M; print(','.join(M))")
for s in $SECTIONS "--metrics $METRICS"; do
  case "$s" in --metrics*) arg="$s";; *) arg="--section $s";; esac
  passes=$(ncu --clock-control none --nvtx --nvtx-include kernel_lab@profile/ -k regex:add_kernel -c 1 $arg -f -o /tmp/probe \
           python3 -m kernel_lab.profiling.runner kernel_lab/samples/kernels/memory_bound.py 2>&1 | grep -o "[0-9]* passes")
  echo "passes ${s:0:40}: $passes" | tee -a "$OUT/section_passes.txt"
done
