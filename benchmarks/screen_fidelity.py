"""Does the screen rank launch configurations as ``triton.testing.do_bench`` does? (Run on the GPU.)

    python benchmarks/screen_fidelity.py [NAME ...]

For cells of benchmarks/race/, a spread of configurations of their launch: each one's time in the
screen (:class:`kernel_lab.verify.screen.Screener`, its warm workers) or why it has none, and its time
with ``do_bench`` in this process, side by side.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from kernel_lab.rewrite import search
from kernel_lab.verify.screen import Screener

sys.path.insert(0, str(Path(__file__).resolve().parent))
from autotune_race import HERE, bench, load

SPREAD = {
    "gelu_block16": [{"BLOCK": b, "num_warps": w} for b in (16, 128, 256, 512, 1024, 4096) for w in (4, 8)],
    "layernorm_chunks": [{"BLOCK": b, "num_warps": w} for b in (32, 256, 1024, 2048, 4096) for w in (4, 16)],
}


def compare(name: str) -> None:
    source = (HERE / f"{name}.py").read_text()
    launch = search.launches(source)[0]
    variants = [search.apply(source, launch, c) for c in SPREAD[name]]
    with Screener(source) as screen:
        original, got = screen.screen(variants)
    module = load(source, name)
    inputs = module.make_inputs(*module.SHAPES[0])
    print(f"{name}: original {original.ms} ms in the screen, {bench(lambda: module.run(*inputs)):.3f} ms with do_bench")
    for config, variant, screened in zip(SPREAD[name], variants, got):
        mine = load(variant, f"{name}_variant")
        direct = bench(lambda m=mine: m.run(*inputs))
        shown = f"{screened.ms:.3f} ms" if screened.ms is not None else f"none ({screened.reason[:150]})"
        print(f"  {config}: screen {shown}, do_bench {direct:.3f} ms", flush=True)


def main() -> None:
    for name in sys.argv[1:] or list(SPREAD):
        compare(name)
        torch.cuda.empty_cache() if torch.cuda.is_available() else None


if __name__ == "__main__":
    main()
