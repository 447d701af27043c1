"""tensor_cores_unused: matrix-multiply work in half precision done on the ordinary FP units.

Matrix work means: multiply-adds (FFMA, HFMA2, or FMUL/HMUL2 followed by FADD/HADD2) are a large share of
the instructions and are fed from loads at a matrix-like reuse (between 1/32 and 2 loads per multiply-add,
as in a loop over tiles); a polynomial (no loads) or an elementwise kernel is not. Half precision means the
cell works on fp16/bf16 data (half instructions, or the types in its source): tensor cores take fp16/bf16
inputs; an fp32 result that must stay fp32 cannot go through them (TF32 changes its precision), so fp32
matrix work gets the tiling advice of its other findings instead.

Matrix-like reuse also shows in the arithmetic intensity: at least 10 multiply-add FLOPs per DRAM byte. And a
matrix product finds its operands by counting (loop indices), never by turning computed floats into addresses: float
to integer conversions (F2I) at one per 16 multiply-adds or more mean its loads are sampled (an interpolation, a
lookup), not tiles. Nor does a matrix product take a transcendental (exp, sqrt, a reciprocal: MUFU) every few
multiply-adds: at one per 16 or more, the multiply-adds feed per-element math over a short inner dimension (3-D
distances, switching functions, an exponential per term of a sum), not a sum of products (the suite's attention
without tensor cores takes one per 18; attention's exp comes once per row of 64 or more). Only the
kernel's own source files say what its data is: the toolchain's (Triton's language modules, CUDA's headers) name
every type.

Score: the time the multiply-add work would save at the tensor roof, 1 - (its FLOPs / the tensor peak) /
duration.
"""

from __future__ import annotations

import re

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import READS as ROOFLINE_READS
from kernel_lab.analysis.roofline import roofline
from kernel_lab.analysis.source import toolchain
from kernel_lab.models import Bottleneck, Kernel

KIND = "tensor_cores_unused"
NEEDS = ((M.DURATION, M.OPCODE_MIX),)
READS = (M.SM_PCT, M.PIPE_FMA, M.DRAM_READ, M.DRAM_WRITE, *ROOFLINE_READS)
FMA_OPS = {"FFMA": 2, "HFMA2": 4, "DFMA": 2}  # opcode -> FLOPs per thread
PAIRS = (("FMUL", "FADD", 2), ("HMUL2", "HADD2", 4))  # a multiply then an add: one multiply-add each
LOAD_OPS = ("LDS", "LDG", "LDSM", "LD")
TENSOR_OPS = ("HMMA", "HGMMA", "IMMA", "IGMMA", "DMMA", "QGMMA", "BMMA", "BGMMA")
HALF_OPS = ("HFMA2", "HMUL2", "HADD2", "HFMA2.MMA")
FLOAT_OPS = ("FFMA", "FMUL", "FADD")
HALF_SHARE = 0.25  # of the floating-point arithmetic: fp32 code uses HFMA2 (.MMA) to move registers
HALF_SOURCE = re.compile(r"\b(bfloat16|float16|__half2?|__nv_bfloat162?|bf16|fp16)\b")
MIN_INTENSITY = 10.0  # multiply-add FLOPs per DRAM byte: matrix work reuses what it loads
MIN_SHARE = 0.20
SAMPLED = 1 / 16  # float-to-integer conversions per multiply-add: addresses computed from floats
PER_ELEMENT = 1 / 16  # transcendentals (MUFU) per multiply-add: per-element math, not a sum of products


def _sum(opcodes, names) -> float:
    return sum(v for op, v in opcodes.items() if op in names)


def half_precision(k: Kernel) -> bool:
    """Whether the kernel works on fp16/bf16 data: half types in its source, or half arithmetic making a
    quarter of its floating-point arithmetic. The opcode counts do not tell HFMA2 from the HFMA2.MMA that
    compilers use to move registers in fp32 code (2.7% of a Triton fp32 GELU's instructions), so a share
    of all instructions cannot tell either."""
    half = _sum(k.opcodes, HALF_OPS)
    arithmetic = half + _sum(k.opcodes, FLOAT_OPS)
    return (arithmetic > 0 and half / arithmetic >= HALF_SHARE) or any(
        HALF_SOURCE.search(text) for path, text in k.source_files.items() if not toolchain(path)
    )


def evaluate(k: Kernel) -> Bottleneck | None:
    ops = k.opcodes
    total = sum(ops.values())
    if not total or _sum(ops, TENSOR_OPS) > 0 or not half_precision(k):
        return None
    pairs = [min(ops.get(m, 0), ops.get(a, 0)) for m, a, _ in PAIRS]
    fmas = _sum(ops, FMA_OPS) + sum(pairs)
    flops = 32 * (sum(ops.get(op, 0) * f for op, f in FMA_OPS.items()) + sum(n * f for n, (_, _, f) in zip(pairs, PAIRS)))
    share = (_sum(ops, FMA_OPS) + 2 * sum(pairs)) / total
    loads = _sum(ops, LOAD_OPS)
    dram = (k.get(M.DRAM_READ) or 0) + (k.get(M.DRAM_WRITE) or 0)
    if (
        not fmas
        or share < MIN_SHARE
        or not (1 / 32 <= loads / fmas <= 2)
        or (dram and flops / dram < MIN_INTENSITY)
        or ops.get("F2I", 0) / fmas >= SAMPLED
        or ops.get("MUFU", 0) / fmas >= PER_ELEMENT
    ):
        return None
    ceiling = roofline(k).compute.get("Tensor BF16/FP16")
    peak = ceiling.value if ceiling else 989.4e12
    seconds = k.value(M.DURATION) * 1e-9
    saved = max(0.0, 1 - flops / peak / seconds) if seconds else 0.0
    hint = (
        f"{share:.0%} of the instructions are multiply-adds on half-precision data fed from loaded tiles: this is"
        " matrix-multiply work done on the ordinary FP units. Tensor cores do the same work 8-16x faster. In"
        " Triton, compute the tile product with tl.dot(a, b) on fp16/bf16 tiles instead of a loop of multiply-adds"
        " or tl.sum(a[:, :, None] * b[None, :, :]); in CUDA use WMMA/mma.sync (or CUTLASS / cuBLAS) with"
        " half-precision inputs and fp32 accumulation."
    )
    evidence = {
        "multiply_add_share": round(share, 3),
        "loads_per_multiply_add": round(loads / fmas, 3),
        "matrix_flops": flops,
        "time_at_tensor_roof_us": round(flops / peak * 1e6, 2),
    }
    for m in (M.SM_PCT, M.PIPE_FMA):
        if k.has(m):
            evidence[m] = k.value(m)
    summary = f"Tensor cores unused: {share:.0%} of instructions are multiply-adds on matrix tiles"
    return Bottleneck(KIND, min(saved, 0.95), summary, hint, evidence)
