"""Reports recorded on an H100 from small kernels that each plant one bottleneck.

Each sample has a cell (``kernels/<name>.py``, following the ``make_inputs``/``run`` convention)
and its Nsight Compute report (``<name>.ncu-rep``); README.md says how they were recorded.
They make the replay mode work anywhere: ``%%profile --replay {kernel_lab.samples.report("memory_bound")}``.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def names() -> list[str]:
    """Names of the samples that have a recorded report."""
    return sorted(p.stem for p in HERE.glob("*.ncu-rep"))


def report(name: str) -> Path:
    """Path of the recorded report of sample ``name``."""
    path = HERE / f"{name}.ncu-rep"
    if not path.exists():
        raise FileNotFoundError(f"No sample named {name!r}; samples: {', '.join(names())}")
    return path


def cell(name: str) -> Path:
    """Path of the cell (kernel source) of sample ``name``."""
    return HERE / "kernels" / f"{name}.py"
