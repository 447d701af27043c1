"""Per-GPU limits and peaks, and the occupancy calculator. Pure data and arithmetic.

Reports carry most device facts themselves (``device__attribute_*``); this table fills in what
a report or a trace lacks: peak FLOP/s and bandwidth, and SM limits for the occupancy
calculator. Peaks are datasheet values at boost clock (dense, no sparsity).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    sms: int
    dram_bytes_per_s: float
    fp32_flops: float
    fp64_flops: float
    fp16_tensor_flops: float  # also bf16
    tf32_tensor_flops: float
    fp8_tensor_flops: float | None = None
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536
    shared_per_sm: int = 233472  # bytes usable by blocks
    shared_reserved_per_block: int = 1024
    register_unit: int = 256  # registers are allocated per warp in units of this


#: Known GPUs, matched against the device name in order (first substring match wins).
GPUS: tuple[tuple[str, Gpu], ...] = (
    ("H100 PCIe", Gpu("NVIDIA H100 PCIe", 114, 2.0e12, 51.2e12, 25.6e12, 756e12, 378e12, 1513e12)),
    ("H100", Gpu("NVIDIA H100 SXM5", 132, 3.35e12, 66.9e12, 33.5e12, 989.4e12, 494.7e12, 1978.9e12)),
    ("H200", Gpu("NVIDIA H200", 132, 4.8e12, 66.9e12, 33.5e12, 989.4e12, 494.7e12, 1978.9e12)),
    ("A100", Gpu("NVIDIA A100", 108, 2.039e12, 19.5e12, 9.7e12, 312e12, 156e12, None, shared_per_sm=167936)),
)


def lookup(device_name: str, table: tuple[tuple[str, Gpu], ...] = GPUS) -> Gpu | None:
    """The table entry for a device name such as 'NVIDIA H100 80GB HBM3', or None if unknown."""
    for key, gpu in table:
        if key.lower() in device_name.lower():
            return gpu
    return None


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    limits: dict[str, int]  # limiter name (models.LIMITERS) -> max blocks per SM
    theoretical_pct: float


def occupancy(gpu: Gpu, threads_per_block: int, registers_per_thread: int, shared_per_block: int) -> Occupancy:
    """Theoretical occupancy of a launch, as Nsight Compute's occupancy calculator computes it."""
    warps = math.ceil(threads_per_block / 32)
    regs_per_warp = math.ceil(registers_per_thread * 32 / gpu.register_unit) * gpu.register_unit
    limits = {
        "registers": gpu.registers_per_sm // (regs_per_warp * warps) if regs_per_warp else gpu.max_blocks_per_sm,
        "shared_memory": gpu.shared_per_sm // (shared_per_block + gpu.shared_reserved_per_block),
        "warps": gpu.max_warps_per_sm // warps,
        "block_size": gpu.max_blocks_per_sm,
    }
    blocks = min(limits.values())
    return Occupancy(blocks, limits, 100.0 * blocks * warps / gpu.max_warps_per_sm)
