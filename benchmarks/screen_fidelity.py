"""Does the screen rank launch configurations as ``triton.testing.do_bench`` does? (Run on the GPU.)

    python benchmarks/screen_fidelity.py [NAME ...]

For cells of benchmarks/race/ (and the teaching softmax), a spread of configurations of their launch: each
one's time in the screen (:class:`kernel_lab.verify.screen.Screener`, its warm workers) or why it has none, and
its time with ``do_bench`` in this process, side by side; then how well the screen ranks them (Spearman's rank
correlation with do_bench), how far the screen's fastest is from do_bench's fastest, and the screen's time over
do_bench's (median over the configurations).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

from kernel_lab.rewrite.launch import apply, launches
from kernel_lab.verify.screen import Screener

sys.path.insert(0, str(Path(__file__).resolve().parent))
from autotune_race import HERE, TEACHING, bench, load

SPREAD = {
    "gelu_block16": [{"BLOCK": b, "num_warps": w} for b in (16, 128, 256, 512, 1024, 4096) for w in (4, 8)],
    "layernorm_chunks": [{"BLOCK": b, "num_warps": w} for b in (32, 256, 1024, 2048, 4096) for w in (4, 16)],
    "rowsum_tiny": [{"BLOCK": b, "num_warps": w} for b in (64, 256, 512, 1024, 2048) for w in (1, 2, 4, 8)],
    "softmax_poor_block": [{"BLOCK": b, "num_warps": w} for b in (32, 256, 1024, 4096) for w in (4, 8, 16)],
}


def _ranks(xs: list[float]) -> list[int]:
    order = sorted(range(len(xs)), key=xs.__getitem__)
    return [order.index(i) for i in range(len(xs))]


def summary(pairs: list[tuple[float, float]]) -> str:
    """Rank correlation, the screen's pick against do_bench's best, and the screen's time over do_bench's."""
    screened, direct = [a for a, _ in pairs], [b for _, b in pairs]
    rho = statistics.correlation(_ranks(screened), _ranks(direct))
    picked = direct[screened.index(min(screened))]
    ratio = statistics.median(a / b for a, b in pairs)
    return (
        f"  {len(pairs)} configurations: rank correlation {rho:.2f}; the screen's fastest runs {picked:.4f} ms by "
        f"do_bench, {100 * (picked / min(direct) - 1):.1f}% behind do_bench's fastest ({min(direct):.4f} ms); "
        f"screen / do_bench {ratio:.2f} (median)"
    )


def compare(name: str) -> None:
    source = next(p for p in (HERE / f"{name}.py", TEACHING / f"{name}.py") if p.exists()).read_text()
    launch = launches(source)[0]
    variants = [apply(source, launch, c) for c in SPREAD[name]]
    with Screener(source) as screen:
        original, got = screen.screen(variants)
    module = load(source, name)
    inputs = module.make_inputs(*module.SHAPES[0]) if hasattr(module, "SHAPES") else module.make_inputs()
    first = bench(lambda: module.run(*inputs))
    print(f"{name}: original {original.ms} ms in the screen, {first:.4f} ms with do_bench")
    pairs = [(original.ms, first)] if original.ms is not None else []
    for config, variant, screened in zip(SPREAD[name], variants, got):
        mine = load(variant, f"{name}_variant")
        direct = bench(lambda m=mine: m.run(*inputs))
        shown = f"{screened.ms:.4f} ms" if screened.ms is not None else f"none ({screened.reason[:150]})"
        print(f"  {config}: screen {shown}, do_bench {direct:.4f} ms", flush=True)
        if screened.ms is not None:
            pairs.append((screened.ms, direct))
    print(summary(pairs), flush=True)


def main() -> None:
    for name in sys.argv[1:] or list(SPREAD):
        compare(name)
        torch.cuda.empty_cache() if torch.cuda.is_available() else None


if __name__ == "__main__":
    main()
