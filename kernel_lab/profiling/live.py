"""The profiled live kernel: the notebook's own Python process runs under Nsight Compute, and ``%%profile``
profiles a cell in place, with the notebook's variables, tensors and compiled kernels.

    kernel-lab install-kernel          # adds "Python 3 (Kernel Lab, profiled)" to Jupyter's kernels
    python -m kernel_lab.profiling.live -f CONNECTION_FILE     # what that kernel runs

The kernel starts as ``ncu ... --nvtx --nvtx-include "kernel_lab_live@profile/" python -m ipykernel_launcher``:
only kernels launched inside Kernel Lab's NVTX range are profiled (every other cell runs at full speed), and
ncu keeps appending them to one report for the kernel's whole life. ``%%profile`` runs the cell's warm-up
outside the range, then once more inside a range of its own (``profile/cell_N``), and cuts that range out
of the growing report with ``ncu -i REPORT --nvtx-include ... -o PART`` (what NVIDIA's JupyterLab Nsight
extension does). Where there is no GPU or no ncu, the kernel starts without ncu and says why.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kernel_lab import processes
from kernel_lab.cells import CellSource, kernel_names
from kernel_lab.errors import KernelLabError, NcuNotFoundError, NoGpuError, ProfilingError
from kernel_lab.models import Profile
from kernel_lab.profiling import launches, report
from kernel_lab.profiling.base import OnProgress
from kernel_lab.profiling.ncu import kernel_filter, ncu_version, preflight
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS
from kernel_lab.settings import Settings

REPORT_ENV = "KERNEL_LAB_LIVE_REPORT"  # set in the kernel started under ncu: where its report grows
UNAVAILABLE_ENV = "KERNEL_LAB_LIVE_UNAVAILABLE"  # set when the kernel had to start without ncu: why
NCU_ENV = "KERNEL_LAB_LIVE_NCU"
DOMAIN, RANGE = "kernel_lab_live", "profile"
KERNEL_NAME, DISPLAY_NAME = "kernel-lab-profiled", "Python 3 (Kernel Lab, profiled)"
SWITCH = f"switch the notebook's kernel to '{DISPLAY_NAME}' (install it once with `kernel-lab install-kernel`)"
_cells = itertools.count(1)
_recorder: launches.Recorder | None = None  # made at the first profiled cell: it watches Triton's launches


def command(ncu: str, report_base: Path, program: list[str]) -> list[str]:
    """The ncu command a profiled kernel starts with: Kernel Lab's collection, only inside its NVTX range."""
    cmd = [ncu, "--clock-control", "none", "--import-source", "yes", "--nvtx", "--nvtx-include", f"{DOMAIN}@{RANGE}/"]
    for section in DEFAULT_SECTIONS:
        cmd += ["--section", section]
    return [*cmd, "--metrics", ",".join(EXTRA_METRICS), "-f", "-o", str(report_base), *program]


def main(argv: list[str] | None = None) -> int:
    """Start an IPython kernel under ncu (or, where that cannot be, without it and saying why)."""
    args = list(sys.argv[1:] if argv is None else argv)
    program = [sys.executable, "-m", "ipykernel_launcher", *args]
    settings = Settings.resolve()
    env = dict(os.environ)
    try:
        ncu = preflight(settings.ncu_path)
    except (NoGpuError, NcuNotFoundError) as err:
        env[UNAVAILABLE_ENV] = err.message
        os.execvpe(program[0], program, env)
    folder = Path(tempfile.mkdtemp(prefix="kernel_lab_live_"))
    base = folder / "kernel"
    env.update({REPORT_ENV: str(base) + ".ncu-rep", NCU_ENV: ncu})
    os.execvpe(ncu, command(ncu, base, program), env)
    return 0  # not reached


def install(user: bool = True, prefix: str | None = None) -> str:
    """Install the profiled kernel's kernelspec; returns where it went."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        raise KernelLabError(
            "Jupyter is not installed here.", fix="pip install jupyterlab (or ipykernel), then try again."
        ) from None
    with tempfile.TemporaryDirectory() as tmp:
        spec = {
            "argv": [sys.executable, "-m", "kernel_lab.profiling.live", "-f", "{connection_file}"],
            "display_name": DISPLAY_NAME,
            "language": "python",
            "metadata": {"kernel_lab": "profiled"},
        }
        (Path(tmp) / "kernel.json").write_text(json.dumps(spec, indent=1))
        return KernelSpecManager().install_kernel_spec(tmp, KERNEL_NAME, user=user, prefix=prefix)


def available() -> bool:
    """Whether this process is a kernel running under ncu (``%%profile`` can profile in place)."""
    return REPORT_ENV in os.environ


@contextlib.contextmanager
def _nvtx_range(name: str) -> Iterator[None]:
    import nvtx

    nvtx.push_range(RANGE, domain=DOMAIN)
    nvtx.push_range(name, domain=DOMAIN)
    try:
        yield
    finally:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        nvtx.pop_range(domain=DOMAIN)
        nvtx.pop_range(domain=DOMAIN)


class LiveProfiler:
    """Profiles a cell in the running kernel, in its namespace (see the module docstring)."""

    name = "ncu, in this kernel"
    profiles_cells = True

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace

    def collect(
        self, cell: CellSource, settings: Settings, on_progress: OnProgress | None = None, output: Path | None = None
    ) -> Profile:
        """Run ``cell`` here (warm-up, then once inside a range of its own) and cut its range from the report."""
        name = f"cell_{next(_cells)}"
        # a real file: Triton reads a kernel's source from it, and ncu imports it for the Source view
        path = Path(tempfile.mkdtemp(prefix="kernel_lab_live_")) / f"{name}.py"
        path.write_text(cell.text)
        code = compile(cell.text, str(path), "exec")
        exec(code, self.namespace)  # noqa: S102 - the user's cell, in the user's namespace: that is the point
        run, make = self.namespace.get("run"), self.namespace.get("make_inputs")
        conventional = callable(run) and callable(make) and "def run" in cell.text
        inputs = make() if conventional and make is not None else ()
        if conventional and run is not None:
            run(*inputs)  # warm-up: compilation and autotuning stay outside the range
        global _recorder
        _recorder = _recorder or launches.Recorder()
        returned = None
        with _nvtx_range(name), _recorder.recording():
            if conventional and run is not None:
                returned = run(*inputs)
            else:
                with contextlib.redirect_stdout(io.StringIO()):  # the cell already printed once
                    exec(code, self.namespace)  # noqa: S102
        part = Path(output) if output else Path(tempfile.mkdtemp(prefix="kernel_lab_")) / f"{name}.ncu-rep"
        launches.save(_recorder.record(inputs, returned), launches.record_path(part))  # read back with the report
        return self._cut(name, cell, settings, part)

    def _cut(self, name: str, cell: CellSource, settings: Settings, part: Path) -> Profile:
        ncu, growing = os.environ.get(NCU_ENV, "ncu"), os.environ[REPORT_ENV]
        cmd = [ncu, "-i", growing, "--nvtx-include", f"{DOMAIN}@{RANGE}/{name}/"]  # (--nvtx is refused with -i)
        names = kernel_names(cell.text)
        if settings.kernel_filter:
            cmd += [
                "-k",
                settings.kernel_filter if settings.kernel_filter.startswith("regex:") else f"regex:{settings.kernel_filter}",
            ]
        elif names:
            cmd += ["-k", kernel_filter(names)]
        done = processes.run([*cmd, "-f", "-o", str(part.with_suffix(""))], env=processes.child_env(), timeout=settings.timeout)
        if done.code is None or not part.exists():
            raise ProfilingError(
                "Nsight Compute wrote no profile for this cell's range" + (" in time." if done.code is None else "."),
                (done.stdout + done.stderr)[-2000:],
                fix="Check the cell launches its kernels (no kernel of the cell ran in the range?), or profile it in a fresh"
                " process: run it in a kernel that is not profiled.",
            )
        return report.load(
            part, collector=f"ncu {ncu_version(ncu) or ''} in this kernel (range {name})".replace("  ", " "), replay=False
        )


def status() -> str:
    """One line: how ``%%profile`` will profile in this process, and how to get the other mode."""
    if available():
        return "Profiled in place in this kernel, which runs under Nsight Compute (the notebook's variables are there)."
    why = os.environ.get(UNAVAILABLE_ENV)
    if why:
        return f"This kernel was started without Nsight Compute ({why}); %%profile runs cells in a fresh process."
    return f"Profiled in a fresh process (the cell must be self-contained). To profile in place with the notebook's variables, {SWITCH}."


if __name__ == "__main__":
    sys.exit(main())
