"""Record Nsight Compute reports of many cells in one ncu process (run on the GPU; fixtures for the CPU tests).

    python benchmarks/record_cells.py OUT CELL.py [CELL.py ...]

Starts itself under ncu with Kernel Lab's collection (the profiled kernel's: only inside the NVTX range
``kernel_lab_live@profile/``, ``--clock-control none``). There, for each cell: load it from its file, make its
inputs (its first declared shape), run it once to warm up (compile, autotune), then once more inside a range of
its own, recording what that run launched (:mod:`kernel_lab.profiling.launches`). Then each cell's range is cut
out of the one report into ``OUT/<cell>.ncu-rep`` (its own kernels only) beside ``OUT/<cell>.launches.json``
and a copy of the cell. A cell that fails is reported and skipped. One process: the ~10 s of starting Python,
torch and CUDA under ncu is paid once, not per cell.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import traceback
from pathlib import Path

from kernel_lab.cells import kernel_names
from kernel_lab.profiling import launches, live
from kernel_lab.profiling.ncu import kernel_filter, preflight
from kernel_lab.settings import Settings

UNDER = "KERNEL_LAB_RECORDING"
LIBRARY = ("_rms_norm_forward_kernel", "_fg_kernel")  # the kernels tests/cells/models/minilib launches


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # Triton reads each kernel's source from its file
    return module


def inputs_of(module) -> tuple:
    shapes = getattr(module, "SHAPES", None)
    made = module.make_inputs(*shapes[0]) if shapes else module.make_inputs()
    return tuple(made) if isinstance(made, (tuple, list)) else (made,)


def synchronize() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def record(out: Path, cells: list[Path]) -> None:
    """(under ncu) Each cell once inside its own range, recorded."""
    for cell in cells:
        try:
            module = load(cell)
            inputs = inputs_of(module)
            module.run(*inputs)
            synchronize()
            recorder = launches.Recorder()  # after the warm-up: it sees what torch.compile loaded too
            with live._nvtx_range(cell.stem), recorder.recording():
                output = module.run(*inputs)
                synchronize()
            launches.save(recorder.record(inputs, output), out / f"{cell.stem}.launches.json")
            print(f"recorded {cell.stem}: {len(recorder.launches)} Triton launches", flush=True)
        except Exception:  # noqa: BLE001 - one broken cell does not stop the others
            print(f"FAILED {cell.stem}:\n{traceback.format_exc(limit=3)}", flush=True)


def cut(ncu: str, report: Path, out: Path, cells: list[Path]) -> None:
    """Each cell's range of the one report, with the cell's own kernels, as a report of its own."""
    for cell in cells:
        if not (out / f"{cell.stem}.launches.json").exists():
            continue
        names = kernel_names(cell.read_text())
        cmd = [ncu, "-i", str(report), "--nvtx-include", f"{live.DOMAIN}@{live.RANGE}/{cell.stem}/"]
        cmd += ["-k", kernel_filter(names)] if names else []
        done = subprocess.run([*cmd, "-f", "-o", str(out / cell.stem)], capture_output=True, text=True, check=False)
        got = out / f"{cell.stem}.ncu-rep"
        print(f"cut {cell.stem}: {'ok' if got.exists() else done.stderr[-300:]}", flush=True)
        (out / f"{cell.stem}.py").write_text(cell.read_text())


def main(argv: list[str]) -> int:
    out, cells = Path(argv[0]).resolve(), [Path(c).resolve() for c in argv[1:]]
    out.mkdir(parents=True, exist_ok=True)
    if os.environ.get(UNDER):
        record(out, cells)
        return 0
    ncu = preflight(Settings.resolve().ncu_path)
    report = out / "all"
    program = [sys.executable, str(Path(__file__).resolve()), *map(str, [out, *cells])]
    # the cells' own kernels, a library's Triton kernels and torch.compile's (triton_...): not torch's own
    names = sorted({n for cell in cells for n in kernel_names(cell.read_text())} | set(LIBRARY) | {"triton_"})
    command = live.command(ncu, report, program)
    at = command.index("--nvtx")
    command[at:at] = ["-k", f"regex:^({'|'.join(names)})", "--launch-count", "400"]
    subprocess.run(command, env={**os.environ, UNDER: "1"}, check=False)
    cut(ncu, report.with_suffix(".ncu-rep"), out, cells)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
