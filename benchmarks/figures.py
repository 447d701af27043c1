"""Render the README's roofline figures from the H100 sample reports (needs `pip install "kaleido>=1"`, which
draws with a Chromium: `BROWSER_PATH=/usr/bin/chromium` where it is not found).

python benchmarks/figures.py [OUT_DIR]   # default docs/
"""

from __future__ import annotations

import sys
from pathlib import Path

from kernel_lab import api, samples
from kernel_lab.display.compare import chart
from kernel_lab.display.roofline import figure


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    results = [api.diagnose(samples.report(n)) for n in ("memory_bound", "bf16_gemm", "compute_bound", "tensor_cores_unused")]
    rooflines = [r.rooflines[0] for r in results]
    top = {(d.kernel.name, d.kernel.index): d.bottlenecks[0].kind for r in results for d in r.diagnoses}
    figure(rooflines, top=top, title="H100: sample kernels on the roofline").write_image(
        out / "roofline_h100.png", width=1000, height=560
    )
    comparison = api.compare(samples.report("tensor_cores_unused"), samples.report("bf16_gemm"))
    title = "FMA matmul (2048³, CUDA) → tl.dot matmul (4096³, Triton) on an H100"
    chart(comparison).update_layout(title=title).write_image(out / "before_after_h100.png", width=1000, height=560)
    for r in rooflines:
        print(f"{r.kernel}: {r.precision}, {r.flop_rate / 1e12:.3g} TFLOP/s, {r.intensity():.3g} FLOP/B (DRAM), {r.label()}")
    before, after = (roofline_of(d) for d in (comparison.before, comparison.after))
    print(
        f"throughput {before / 1e12:.3g} -> {after / 1e12:.3g} TFLOP/s ({after / before:.0f}x; different sizes, so no duration speedup); written to {out}"
    )


def roofline_of(diagnosis) -> float:
    from kernel_lab.analysis.roofline import roofline

    return roofline(diagnosis.kernel).flop_rate


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs")
