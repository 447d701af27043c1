"""How long a CUDA version takes to build when only its kernels changed (issue #13): a cell, then the versions
Kernel Lab's CUDA transformations make of it that leave its torch code alone (padded shared tiles,
``__launch_bounds__``), each built in a fresh process as a candidate's is, one after the other, from one fresh
build root (whose first build also precompiles torch/extension.h).

    python benchmarks/fastbuild_reuse.py CELL [CELL ...]      # on the GPU machine

Prints one line per build (as benchmarks/fastbuild_check.py does: its build time, and whether it matches the cell's
reference), with what the version changes.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from fastbuild_check import build

from kernel_lab import fastbuild
from kernel_lab.rewrite import cuda


def versions(source: str) -> list[tuple[str, str]]:
    """(what it changes, the cell) for the cell and each transformation that leaves its torch half as it is."""
    made = [("the cell as written", source)]
    padded = cuda.pad_shared_tiles(source)
    if padded:
        made.append(("shared tiles padded", padded))
    made += [(f"launch bounds: {why[:60]}", text) for text, why in cuda.launch_bounds(source)[:2]]
    host = fastbuild.split(_cuda_source(source))
    return [
        (what, text)
        for what, text in made
        if host is not None and (h := fastbuild.split(_cuda_source(text))) is not None and h.host == host.host
    ]


def _cuda_source(cell: str) -> str:
    """The cell's CUDA source: the raw string its load_inline compiles (the first r\"\"\" ... \"\"\" block)."""
    start = cell.index('r"""') + 4
    return cell[start : cell.index('"""', start)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cells", nargs="+")
    args = parser.parse_args()
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": tempfile.mkdtemp(prefix="kl_fastbuild_")}
    folder = Path(tempfile.mkdtemp(prefix="kl_versions_"))
    for cell in map(Path, args.cells):
        for n, (what, text) in enumerate(versions(cell.read_text())):
            path = folder / f"{cell.stem}_{n}.py"
            path.write_text(text)
            print(json.dumps({"version": what, **build(path, env)}), flush=True)


if __name__ == "__main__":
    main()
