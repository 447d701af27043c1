"""Time the judge on two candidates of a load_inline cell: how much of it is rebuilding.

    python benchmarks/extension_builds.py [--device cpu|cuda]

The cells in benchmarks/builds/ are a C++ (CPU) extension, so this runs on the development machine;
a CUDA cell behaves the same with nvcc. With one build folder per cell source (kernel_lab/builds.py)
the reference is built once, so the second verification builds only its candidate.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from kernel_lab.verify import verify

HERE = Path(__file__).resolve().parent / "builds"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    os.environ["TORCH_EXTENSIONS_DIR"] = tempfile.mkdtemp(prefix="kl_builds_")  # start with nothing built
    reference = (HERE / "reference.py").read_text()
    for name in ("candidate_1", "candidate_2"):
        start = time.monotonic()
        verdict = verify(reference, (HERE / f"{name}.py").read_text(), seeds=1, device=args.device, timeout=900)
        print(f"{name}: verified in {time.monotonic() - start:.1f} s ({verdict.reason})", flush=True)


if __name__ == "__main__":
    main()
