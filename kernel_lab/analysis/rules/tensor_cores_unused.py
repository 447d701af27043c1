"""tensor_cores_unused: matrix-multiply-shaped FP work runs on the FMA units, not on tensor cores.

Matrix-shaped means: fused multiply-adds (FFMA/HFMA2/DFMA) are a large part of the instructions
and they are fed from loads (between 1/64 and 2 global/shared loads per FMA), as in a loop over
tiles; a pure arithmetic kernel (no loads) or one of separate adds and multiplies is not. Score: the SM time in that work
(SM throughput) times the share a tensor core would save (1 - 1/8).
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "tensor_cores_unused"
NEEDS = ((M.SM_PCT, M.OPCODE_MIX),)
READS = (M.PIPE_FMA, M.PIPE_TENSOR)
FMA_OPS = ("FFMA", "HFMA2", "DFMA")
LOAD_OPS = ("LDS", "LDG", "LDSM", "LD")
TENSOR_OPS = ("HMMA", "HGMMA", "IMMA", "IGMMA", "DMMA", "QGMMA", "BMMA", "BGMMA")
MIN_FMA_SHARE = 0.20


def _sum(opcodes, names) -> float:
    return sum(v for op, v in opcodes.items() if op in names)


def evaluate(k: Kernel) -> Bottleneck | None:
    ops = k.opcodes
    total = sum(ops.values())
    if not total or _sum(ops, TENSOR_OPS) > 0:
        return None
    fma, loads = _sum(ops, FMA_OPS), _sum(ops, LOAD_OPS)
    if not fma or fma / total < MIN_FMA_SHARE or not (1 / 64 <= loads / fma <= 2):
        return None
    sm = k.value(M.SM_PCT)
    hint = (
        f"{fma / total:.0%} of the instructions are scalar floating-point multiply-adds fed from loaded"
        " tiles: this is matrix-multiply work done on the ordinary FMA units. Tensor cores do the same"
        " work 8-16x faster. In Triton, compute the tile product with tl.dot(a, b) on fp16/bf16 (or tf32)"
        " tiles instead of a loop of multiply-adds or tl.sum(a[:, :, None] * b[None, :, :]); in CUDA use"
        " WMMA/mma.sync (or CUTLASS / cuBLAS) with half-precision inputs and fp32 accumulation."
    )
    evidence = {"fma_instruction_share": round(fma / total, 3), "loads_per_fma": round(loads / fma, 3), M.SM_PCT: sm}
    for m in (M.PIPE_FMA, M.PIPE_TENSOR):
        if k.has(m):
            evidence[m] = k.value(m)
    summary = f"Tensor cores unused: {fma / total:.0%} of instructions are scalar FMAs on matrix tiles"
    return Bottleneck(KIND, sm / 100 * (1 - 1 / 8), summary, hint, evidence)
