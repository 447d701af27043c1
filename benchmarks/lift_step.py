"""From a model step to a kernel and back (issue #42), on the GPU: what the model gains, not only the kernel.

    python benchmarks/lift_step.py tests/cells/models/library_step.py tests/cells/models/mlp_block_compiled.py
    python benchmarks/lift_step.py --replay tests/.../library_step.ncu-rep     (no GPU: steps 1 and 2 only)

For each step cell, in one process:

1. the step's module is loaded here (its library imported, its compiled function compiled by one run), then the
   step is profiled in a fresh process under Nsight Compute (``kernel_lab.profile(cell, all_kernels=True)``), and
   the workload's table of kernels by time is printed;
2. its hottest Triton kernel is lifted into a cell (``kernel_lab.lift``) and the cell is judged against the
   original kernel as the library or Inductor launched it (``kernel_lab.verify.verify(lifted.reference, ...)``);
3. the lifted cell is optimized (``kernel_lab.optimize(cell, rounds=2)``, the built-in search: no network);
4. the step is timed here with ``triton.testing.do_bench`` (median, p20-p80), the best version is put back
   (``kernel_lab.put_back``), the step's output is compared with its output before, the step is timed again and
   its kernels' GPU times are read with ``torch.profiler`` before and after; then the patch is undone.

A short table per step is printed at the end. Works with PyTorch 2.11 and Triton 3.6 on an H200, no network.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kernel_lab
from kernel_lab.errors import KernelLabError
from kernel_lab.lifting import Lifted, workload

ROUNDS = 2
TOP = 6  # kernels listed from the profiler, before and after


@dataclass
class Outcome:
    """What one step's run found (None where a step did not get that far)."""

    cell: str
    kernel: str | None = None
    judged: str | None = None  # the lifted cell's verdict against the original, in words
    kernel_ms: tuple[float, float] | None = None  # the optimize result's reference and best medians
    step_ms: tuple[float, float] | None = None  # the step's median before and after putting back
    same_output: str | None = None
    routed: int | None = None
    notes: list[str] = field(default_factory=list)


def load_step(path: Path) -> Any:
    """The step cell as a module of this process (its library imported here, where put_back patches it)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def inputs_of(module: Any) -> tuple:
    shapes = getattr(module, "SHAPES", None)
    made = module.make_inputs(*shapes[0]) if shapes else module.make_inputs()
    return tuple(made) if isinstance(made, (tuple, list)) else (made,)


def median_ms(fn: Any) -> tuple[float, float, float]:
    """``fn``'s median and p20/p80 in ms (triton.testing.do_bench: L2 flushed between calls)."""
    import triton

    found = triton.testing.do_bench(fn, warmup=25, rep=200, quantiles=[0.5, 0.2, 0.8])
    return float(found[0]), float(found[1]), float(found[2])


def kernel_times(fn: Any, calls: int = 10) -> dict[str, float]:
    """GPU microseconds per step of each kernel ``fn`` launches (torch.profiler over ``calls`` steps)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    out: dict[str, float] = {}
    for event in prof.key_averages():
        total = getattr(event, "device_time_total", None) or getattr(event, "cuda_time_total", 0.0)
        if total:
            out[event.key] = total / calls
    return dict(sorted(out.items(), key=lambda kv: -kv[1])[:TOP])


def lift_hottest(result: Any, out: Outcome) -> Lifted:
    table = workload(result)
    print(table, flush=True)
    lifted = kernel_lab.lift(result)
    out.kernel = lifted.kernel
    print(f"\nlifted {lifted.kernel} ({lifted.origin}; sizes {'vary' if lifted.vary else 'fixed'})", flush=True)
    return lifted


def judge(lifted: Lifted, out: Outcome) -> None:
    from kernel_lab.verify import verify

    verdict = verify(lifted.reference, lifted.cell, time=False, timeout=600)
    out.judged = "correct" if verdict.correct else f"not correct: {verdict.reason}"
    print(f"judged against the original: {out.judged}", flush=True)


def optimize(lifted: Lifted, out: Outcome, folder: Path) -> str | None:
    cell = lifted.save(folder)
    result = kernel_lab.optimize(cell, rounds=ROUNDS, rewriter="search", root=str(folder / "sessions"))
    best = result.best
    print(f"optimize: {result.stopped}; best {best.label} ({best.origin}), speedup {best.speedup}", flush=True)
    if best.reference_ms and best.time_ms:
        out.kernel_ms = (best.reference_ms, best.time_ms)
    if best.number == 0:
        out.notes.append("no faster version: nothing to put back")
        return None
    return best.source


def put_back_and_time(module: Any, lifted: Lifted, best: str, out: Outcome) -> None:
    import torch

    inputs = inputs_of(module)

    def step() -> Any:
        return module.run(*inputs)

    before = step()
    torch.cuda.synchronize()
    time_before, kernels_before = median_ms(step), kernel_times(step)
    with kernel_lab.put_back(lifted, best) as patch:
        print("\n".join(patch.log), flush=True)
        after = step()
        torch.cuda.synchronize()
        time_after, kernels_after = median_ms(step), kernel_times(step)
        out.routed = patch.routed
    diff = max((a.float() - b.float()).abs().max().item() for a, b in zip(_tensors(before), _tensors(after)))
    out.same_output = "identical" if diff == 0 else f"max |difference| {diff:.3g}"
    out.step_ms = (time_before[0], time_after[0])
    print(f"step: {_ms(time_before)} before, {_ms(time_after)} after; output {out.same_output}", flush=True)
    print_kernels(kernels_before, kernels_after)


def _tensors(value: Any) -> list[Any]:
    return [value] if hasattr(value, "float") else [v for v in value if hasattr(v, "float")]


def _ms(found: tuple[float, float, float]) -> str:
    return f"{found[0]:.3f} ms (p20-p80 {found[1]:.3f}-{found[2]:.3f})"


def print_kernels(before: dict[str, float], after: dict[str, float]) -> None:
    print("kernels per step (torch.profiler, µs): before | after")
    for name in dict.fromkeys([*before, *after]):
        b, a = before.get(name), after.get(name)
        print(f"  {name[:60]:<60} {_us(b):>9} | {_us(a):>9}")


def _us(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def table(outcomes: list[Outcome]) -> str:
    """The summary: one row per step."""
    rows = [("step", "kernel lifted", "judged", "kernel ms (orig → best)", "step ms (before → after)", "output", "routed")]
    for o in outcomes:
        kernel = f"{o.kernel_ms[0]:.4f} → {o.kernel_ms[1]:.4f}" if o.kernel_ms else "–"
        step = f"{o.step_ms[0]:.3f} → {o.step_ms[1]:.3f}" if o.step_ms else "–"
        routed = "–" if o.routed is None else str(o.routed)
        rows.append((o.cell, o.kernel or "–", o.judged or "–", kernel, step, o.same_output or "–", routed))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    notes = [f"{o.cell}: {n}" for o in outcomes for n in o.notes]
    return "\n".join([*lines, *notes])


def run_step(path: Path, folder: Path) -> Outcome:
    out = Outcome(path.stem)
    module = load_step(path)
    inputs = inputs_of(module)
    module.run(*inputs)  # the library imported and the compiled function compiled here, before profiling
    result = kernel_lab.profile(path, all_kernels=True, output=folder / f"{path.stem}.ncu-rep")
    lifted = lift_hottest(result, out)
    judge(lifted, out)
    best = optimize(lifted, out, folder)
    if best is not None:
        put_back_and_time(module, lifted, best, out)
    return out


def replay(report: Path) -> Outcome:
    """Steps 1 and 2 from a recorded report, without a GPU: the table and the lifted cell, nothing run."""
    out = Outcome(report.stem)
    lifted = lift_hottest(kernel_lab.diagnose(report), out)
    print(lifted.cell.split('"""')[1].strip(), flush=True)
    out.notes.append("replay: nothing was run (the judge, optimize and the step's timing need a GPU)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/lift_step.py")
    parser.add_argument("cells", nargs="*", type=Path, help="model-step cells (make_inputs, run)")
    parser.add_argument("--replay", type=Path, action="append", default=[], help="a recorded report (no GPU)")
    parser.add_argument("--out", type=Path, default=None, help="where reports, lifted cells and sessions go")
    args = parser.parse_args(argv)
    folder = args.out or Path.cwd() / f"lift_step_{time.strftime('%Y%m%d_%H%M%S')}"
    folder.mkdir(parents=True, exist_ok=True)
    outcomes = [replay(r) for r in args.replay]
    for cell in args.cells:
        try:
            outcomes.append(run_step(cell.resolve(), folder))
        except KernelLabError as err:
            outcomes.append(Outcome(cell.stem, notes=[f"stopped: {err}"]))
    print("\n" + table(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
