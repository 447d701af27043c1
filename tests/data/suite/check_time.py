"""Correctness check and CUDA-event timing of suite cells (run on the GPU by record.sh).

    python3 tests/data/suite/check_time.py OUT.json CELL.py [CELL.py ...]

For each cell: run(*make_inputs()) against reference(*inputs) (relative L2 error, dtype-aware
tolerance, or exact equality for integer outputs), then the median time of run() over >= 20
CUDA-event-timed calls after 3 warm-up calls, with the L2 flushed between calls by writing a
256 MB buffer. CUDA cells are built in the same folder the profiling runner uses
(kernel_lab.builds.use_folder_for, when that function exists; split as kernel_lab.fastbuild builds it, as the
runner does since #13), so nothing is built twice.
Prints one line per cell and writes {name: {...}} to OUT.json.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

REPS = 25          # timed calls per cell (at least 20, fewer only if a cell is very slow)
MIN_REPS = 20
TOL = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float64: 1e-9}


def compare(out: torch.Tensor, ref: torch.Tensor, tol: float | None = None) -> tuple[bool, str]:
    """(ok, description): relative L2 error for floating outputs, exact equality otherwise."""
    if out.shape != ref.shape:
        return False, f"shape {tuple(out.shape)} != reference {tuple(ref.shape)}"
    if out.dtype != ref.dtype:
        return False, f"dtype {out.dtype} != reference {ref.dtype}"
    if out.is_floating_point():
        o, r = out.double(), ref.double()
        finite = bool(torch.isfinite(o).all())
        err = ((o - r).norm() / r.norm().clamp_min(1e-30)).item()
        t = tol if tol is not None else TOL.get(out.dtype, 1e-5)
        return finite and err <= t, f"rel_err={err:.2e} tol={t:g} max_abs={(o - r).abs().max().item():.2e}"
    bad = int((out != ref).sum().item())
    return bad == 0, f"exact={bad == 0} mismatches={bad}/{out.numel()}"


def load_cell(path: Path) -> dict:
    source = path.read_text()
    try:
        from kernel_lab.builds import use_folder_for  # the runner's build folder: reuse its build
        if use_folder_for(source):
            from kernel_lab import fastbuild  # the runner's split build (since #13): the very build profiled

            fastbuild.install()
    except Exception:  # noqa: BLE001 - older/newer package: load_inline builds where it likes
        pass
    ns: dict = {"__name__": "__main__", "__file__": str(path.resolve())}
    exec(compile(source, str(path.resolve()), "exec"), ns)  # noqa: S102 - our own cells
    return ns


def time_run(ns: dict, inputs: tuple, flush: torch.Tensor) -> list[float]:
    run = ns["run"]
    for _ in range(3):
        run(*inputs)
    torch.cuda.synchronize()
    times: list[float] = []
    t_start = time.time()
    while len(times) < REPS:
        flush.zero_()  # evict the inputs from L2
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run(*inputs)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3)  # us
        if len(times) >= MIN_REPS and time.time() - t_start > 8.0:
            break
    return times


def main() -> int:
    out_json = Path(sys.argv[1])
    results = json.loads(out_json.read_text()) if out_json.exists() else {}
    flush = torch.empty(64 * 2**20, dtype=torch.int32, device="cuda")  # 256 MB
    for arg in sys.argv[2:]:
        path = Path(arg)
        name = path.stem
        t0 = time.time()
        rec: dict = {"name": name}
        try:
            ns = load_cell(path)
            inputs = ns["make_inputs"]()
            out = ns["run"](*inputs)
            torch.cuda.synchronize()
            ref = ns["reference"](*inputs)
            torch.cuda.synchronize()
            ok, what = compare(out, ref, ns.get("TOLERANCE"))
            rec.update(ok=ok, check=what)
            del out, ref
            times = sorted(time_run(ns, inputs, flush))
            rec.update(median_us=times[len(times) // 2], min_us=times[0], max_us=times[-1], reps=len(times))
            line = (f"CHECK {name:36s} {'OK  ' if ok else 'FAIL'} {what} | run() median {rec['median_us']:.1f} us "
                    f"(min {rec['min_us']:.1f}, max {rec['max_us']:.1f}, n={len(times)})")
            del ns, inputs
        except Exception as e:  # noqa: BLE001 - report and go on with the next cell
            rec.update(ok=False, error=f"{type(e).__name__}: {str(e)[:500]}")
            line = f"CHECK {name:36s} ERROR {rec['error']}"
        rec["wall_s"] = round(time.time() - t0, 1)
        results[name] = rec
        print(line + f" [{rec['wall_s']}s]", flush=True)
        torch.cuda.empty_cache()
        out_json.write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
