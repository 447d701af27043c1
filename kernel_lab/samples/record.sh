#!/usr/bin/env bash
# Records the Nsight Compute reports of the Kernel Lab samples (provenance of kernel_lab/samples/*.ncu-rep).
#
# Run from the repository root on the GPU machine, with the nvtx wheel in .whl/:
#     bash kernel_lab/samples/record.sh                 # everything
#     EXTRAS=0 bash kernel_lab/samples/record.sh KIND…  # re-record some samples only
# Results go to $OUT (or /tmp/kl_out): reports_*.tar (the .ncu-rep files) and misc.tar.gz (logs/, traces/).
set -u
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
DEADLINE=${DEADLINE:-440}  # seconds: no new ncu run of a sample starts after this
EXTRAS=${EXTRAS:-1}
S=kernel_lab/samples
W=/tmp/kl_rec
DEST=${OUT:-/tmp/kl_out}
rm -rf "$W"; mkdir -p "$W/reports" "$W/logs" "$W/traces" "$DEST"

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
export NVCC_APPEND_FLAGS=-lineinfo TORCH_EXTENSIONS_DIR=$W/torch_extensions TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=2

# kind -> kernel name(s) for -k regex:^(...)
declare -A KERNELS=(
  [memory_bound]=add_kernel [uncoalesced_global]=strided_copy_kernel
  [shared_bank_conflicts]=transpose_naive_smem [transpose_padded]=transpose_padded_smem
  [low_occupancy_registers]=chase_heavy_regs [low_occupancy_shared]=chase_big_smem
  [small_grid]=scale_small_grid_kernel [tail_effect]=uniform_work_kernel
  [register_spills]=stencil_spill_kernel [warp_divergence]=divergent_kernel
  [tensor_cores_unused]=matmul_fma_bf16 [compute_bound]=poly_kernel
  [latency_bound]=pointer_chase [launch_overhead]=tiny_add_kernel [bf16_gemm]=matmul_kernel
)
ORDER="memory_bound shared_bank_conflicts transpose_padded uncoalesced_global low_occupancy_registers
low_occupancy_shared small_grid tail_effect register_spills warp_divergence tensor_cores_unused
compute_bound latency_bound launch_overhead bf16_gemm"
KINDS=${*:-$ORDER}

echo "== versions"
{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  ncu --version
  nvcc --version | tail -2
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], '| torch', torch.__version__, 'cuda', torch.version.cuda, '| triton', triton.__version__)"
} 2>&1 | tee "$W/logs/versions.txt"
ncu --version > "$W/logs/ncu_version.txt" 2>&1

echo "== collection (kernel_lab/profiling/sections.py), checked against ncu --list-sections / --query-metrics"
ncu --list-sections > "$W/logs/list_sections.txt" 2>&1
ncu --query-metrics --chip gh100 > "$W/logs/query_metrics_gh100.txt" 2>&1
python3 - "$W" <<'EOF'
import re, sys
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS
w = sys.argv[1]
listed = open(f"{w}/logs/list_sections.txt").read()
names = set(re.findall(r"^\s*(\S+)", open(f"{w}/logs/query_metrics_gh100.txt").read(), re.M))
secs = [s for s in DEFAULT_SECTIONS if re.search(rf"^\s*{re.escape(s)}\s", listed, re.M)]
mets = [m for m in EXTRA_METRICS if m.split(".")[0] in names]
for s in DEFAULT_SECTIONS:
    print("section", s, "listed" if s in secs else "NOT LISTED")
for m in EXTRA_METRICS:
    print("metric", m, "base listed" if m in mets else "BASE NOT LISTED")
open(f"{w}/sections_all", "w").write(" ".join(f"--section {s}" for s in DEFAULT_SECTIONS))
open(f"{w}/metrics_all", "w").write(",".join(EXTRA_METRICS))
open(f"{w}/sections_ok", "w").write(" ".join(f"--section {s}" for s in secs))
open(f"{w}/metrics_ok", "w").write(",".join(mets))
EOF
SECTIONS=$(cat "$W/sections_all"); METRICS=$(cat "$W/metrics_all")
FILTER=(--nvtx --nvtx-include "kernel_lab@profile/" -c 1)

echo "== build the CUDA cells in parallel (load_inline at import), t=$(elapsed)s"
for k in $KINDS; do
  if grep -q load_inline "$S/kernels/$k.py"; then
    python3 -c "import runpy, sys; runpy.run_path(sys.argv[1])" "$S/kernels/$k.py" > "$W/logs/build_$k.log" 2>&1 &
  fi
done
wait
echo "built, t=$(elapsed)s"

echo "== correctness (run vs reference) and CUDA-event timing of run(), t=$(elapsed)s"
cat > /tmp/kl_check.py <<'EOF'
import runpy, sys, torch
for path in sys.argv[1:]:
    kind = path.rsplit("/", 1)[-1][:-3]
    try:
        ns = runpy.run_path(path)
        inputs = ns["make_inputs"]()
        out = ns["run"](*inputs)
        torch.cuda.synchronize()
        ref = ns["reference"](*inputs)
        if out.is_floating_point():
            o, r = out.double(), ref.double()
            err = ((o - r).norm() / r.norm()).item()
            tol = 1e-2 if out.dtype in (torch.bfloat16, torch.float16) else 1e-5
            ok = bool(torch.isfinite(o).all()) and out.shape == ref.shape and err <= tol
            what = f"rel_err={err:.2e} tol={tol:g} max_abs={(o - r).abs().max().item():.2e}"
        else:
            ok = torch.equal(out, ref)
            what = f"exact={ok}"
        times = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); ns["run"](*inputs); b.record(); torch.cuda.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
        extra = ""
        if kind == "tail_effect":  # cost of the partial wave: 264 blocks (1.00 wave) vs 330 (1.25 waves)
            def t(x):
                ns["module"].uniform_work(x, ns["ITERS"]); torch.cuda.synchronize()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record(); ns["module"].uniform_work(x, ns["ITERS"]); b.record(); torch.cuda.synchronize()
                return a.elapsed_time(b) * 1e3
            x = inputs[0]
            extra = f" | 1.00 wave {t(x[:264 * 1024]):.0f} us, 1.25 waves {t(x):.0f} us"
        print(f"CHECK {kind:24s} {'OK  ' if ok else 'FAIL'} {what} | run() median {sorted(times)[2]:.1f} us{extra}", flush=True)
        del ns, inputs, out, ref
    except Exception as e:
        print(f"CHECK {kind:24s} ERROR {type(e).__name__}: {str(e)[:400]}", flush=True)
    torch.cuda.empty_cache()
EOF
python3 /tmp/kl_check.py $(for k in $KINDS; do echo "$S/kernels/$k.py"; done) 2>&1 | tee "$W/logs/check.txt"
echo "checked, t=$(elapsed)s"

run_ncu() {  # kind names log report -- extra args for ncu before the program
  local kind=$1 names=$2 log=$3 rep=$4; shift 4
  timeout 100 ncu --clock-control none --import-source yes "${FILTER[@]}" -k "regex:^($names)" \
      $SECTIONS --metrics "$METRICS" -f -o "$rep" "$@" \
      python3 -m kernel_lab.profiling.runner "$S/kernels/$kind.py" > "$log" 2>&1
}

extras() {
  echo "== extra logs, t=$(elapsed)s"
  timeout 120 ncu --clock-control none --import-source yes "${FILTER[@]}" -k regex:no_such_kernel $SECTIONS \
      --metrics "$METRICS" -f -o "$W/no_kernel" python3 -m kernel_lab.profiling.runner "$S/kernels/memory_bound.py" \
      > "$W/logs/no_kernel_matched.log" 2>&1
  echo "no_kernel_matched rc=$?" | tee -a "$W/logs/summary.txt"
  cat > /tmp/kl_cell_error.py <<'EOF'
import torch


def make_inputs():
    torch.manual_seed(0)
    return torch.randn(1024, 512, device="cuda"), torch.randn(1024, 512, device="cuda")


def run(a, b):
    return a @ b  # (1024x512) @ (1024x512): shapes do not match
EOF
  timeout 120 ncu --clock-control none --import-source yes "${FILTER[@]}" $SECTIONS --metrics "$METRICS" \
      -f -o "$W/cell_error" python3 -m kernel_lab.profiling.runner /tmp/kl_cell_error.py > "$W/logs/cell_error.log" 2>&1
  echo "cell_error rc=$?" | tee -a "$W/logs/summary.txt"
  for k in memory_bound small_grid low_occupancy_registers; do
    timeout 60 python3 -m kernel_lab.profiling.runner "$S/kernels/$k.py" --trace "$W/traces/$k.json" > "$W/logs/trace_$k.log" 2>&1
    echo "trace $k rc=$? size=$(stat -c %s "$W/traces/$k.json" 2>/dev/null)" | tee -a "$W/logs/summary.txt"
    [ -f "$W/traces/$k.json" ] && [ "$(stat -c %s "$W/traces/$k.json")" -gt 300000 ] && gzip -9 "$W/traces/$k.json"
  done
}

echo "== ncu per sample (extra logs right after memory_bound), t=$(elapsed)s"
for k in $KINDS; do
  if [ "$(elapsed)" -gt "$DEADLINE" ]; then echo "SKIP $k (deadline)"; continue; fi
  t1=$(date +%s)
  run_ncu "$k" "${KERNELS[$k]}" "$W/logs/$k.log" "$W/reports/$k"; rc=$?
  if [ "$k" = memory_bound ] && grep -q "==ERROR==" "$W/logs/$k.log"; then
    echo "memory_bound: ncu reported an error with the full collection; retrying with the listed sections/metrics only"
    cp "$W/logs/$k.log" "$W/logs/collection_error.log"
    python3 - "$W" <<'PY'
import sys
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS
w = sys.argv[1]
err = "\n".join(l for l in open(f"{w}/logs/collection_error.log") if "==ERROR==" in l)
secs = [s for s in open(f"{w}/sections_ok").read().split() if s != "--section" and s not in err]
mets = [m for m in open(f"{w}/metrics_ok").read().split(",") if m and m not in err]
print("dropped sections:", [s for s in DEFAULT_SECTIONS if s not in secs])
print("dropped metrics:", [m for m in EXTRA_METRICS if m not in mets])
open(f"{w}/sections_ok", "w").write(" ".join(f"--section {s}" for s in secs))
open(f"{w}/metrics_ok", "w").write(",".join(mets))
PY
    SECTIONS=$(cat "$W/sections_ok"); METRICS=$(cat "$W/metrics_ok")
    run_ncu "$k" "${KERNELS[$k]}" "$W/logs/$k.log" "$W/reports/$k"; rc=$?
  fi
  if [ "$k" = memory_bound ] && [ ! -f "$W/reports/$k.ncu-rep" ]; then
    echo "memory_bound: no report with the NVTX filter; falling back to -s 1 -c 1 (skip the warm-up launch)"
    cp "$W/logs/$k.log" "$W/logs/nvtx_filter_failed.log"
    FILTER=(-s 1 -c 1)
    run_ncu "$k" "${KERNELS[$k]}" "$W/logs/$k.log" "$W/reports/$k"; rc=$?
  fi
  size=$(stat -c %s "$W/reports/$k.ncu-rep" 2>/dev/null || echo none)
  echo "NCU $k rc=$rc wall=$(( $(date +%s) - t1 ))s size=$size | $(grep -E '==PROF== Profiling' "$W/logs/$k.log" | tail -1 | tr -d '\r' | sed 's/.*: 0%/0%/')" \
    | tee -a "$W/logs/summary.txt"
  if [ "$k" = memory_bound ] && [ "$EXTRAS" = 1 ]; then extras; EXTRAS=done; fi
done
if [ "$EXTRAS" = 1 ]; then extras; fi
echo "ncu filter used: ${FILTER[*]}" | tee -a "$W/logs/summary.txt"

echo "== pack, t=$(elapsed)s"
cd "$W/reports" && ls -la
tar cf "$DEST/reports_a.tar" $(ls *.ncu-rep 2>/dev/null | head -8) 2>/dev/null
tar cf "$DEST/reports_b.tar" $(ls *.ncu-rep 2>/dev/null | tail -n +9) 2>/dev/null
cd "$W" && tar czf "$DEST/misc.tar.gz" logs traces
ls -la "$DEST"
cat "$W/logs/summary.txt"
echo "done, t=$(elapsed)s"
