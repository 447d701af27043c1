"""Time report parse + diagnosis + rendering on the CPU (no GPU needed).

    python benchmarks/parse_diagnose.py [REPORT.ncu-rep ...]

Default: the 4 MB full-set sample report from ../shared (4 kernels, --set full) and every
report in kernel_lab/samples. Prints, per report: "cold", parse + diagnosis in a fresh Python
process (imports of ncu_report included); "warm", the median of 5 more in-process parses +
diagnoses; "html", the median time to render the notebook view (summary, hints, roofline, source).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from kernel_lab import api, samples

SHARED_FULL = Path(__file__).resolve().parents[2] / "shared" / "ncu-samples" / "h100_add_strided_transpose_full.ncu-rep"


def time_once(path: Path) -> float:
    start = time.perf_counter()
    api.diagnose(path)
    return time.perf_counter() - start


def render_once(path: Path) -> float:
    result = api.diagnose(path)
    start = time.perf_counter()
    result._repr_html_()
    return time.perf_counter() - start


COLD = (
    "import sys, time; t = time.perf_counter(); from kernel_lab import api; "
    "api.diagnose(sys.argv[1]); print(time.perf_counter() - t)"
)


def cold_once(path: Path) -> float:
    out = subprocess.run([sys.executable, "-c", COLD, str(path)], capture_output=True, text=True, check=True).stdout
    return float(out)


def main(paths: list[Path]) -> None:
    print(f"{'report':45s} {'MB':>6s} {'kernels':>7s} {'cold s':>7s} {'warm s':>7s} {'html s':>7s}")
    for path in paths:
        cold = cold_once(path)
        time_once(path)
        warm = statistics.median(time_once(path) for _ in range(5))
        html = statistics.median(render_once(path) for _ in range(3))
        kernels = len(api.diagnose(path).diagnoses)
        print(f"{path.name:45s} {path.stat().st_size / 1e6:6.2f} {kernels:7d} {cold:7.3f} {warm:7.3f} {html:7.3f}")


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:]]
    main(args or [p for p in [SHARED_FULL] if p.exists()] + [samples.report(n) for n in samples.names()])
