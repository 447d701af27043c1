"""What Kernel Lab knows about GPUs: per-SM limits by architecture, peaks by exact model, and the
occupancy calculator. Pure data and arithmetic.

A report carries most device facts itself (``device__attribute_*``: compute capability, SM count,
registers and shared memory per SM, ...); :func:`gpu_of` reads them and fills what is missing from
the architecture table, keyed by compute capability. Peaks (FLOP/s, DRAM bandwidth) depend on the
exact model and its clocks, so they are keyed by the model's exact name (datasheet values at boost
clock, dense, no sparsity); the roofline prefers the report's own peak metrics anyway.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

Attributes = Mapping[str, float]


@dataclass(frozen=True)
class Architecture:
    """Per-SM limits of a compute capability, as the occupancy calculator uses them."""

    name: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    shared_per_sm: int  # bytes usable by blocks
    shared_reserved_per_block: int  # bytes the system reserves per block
    register_unit: int = 256  # registers are allocated per warp in units of this


@dataclass(frozen=True)
class Peaks:
    """Datasheet peaks of one GPU model."""

    dram_bytes_per_s: float
    fp32_flops: float
    fp64_flops: float
    fp16_tensor_flops: float  # also bf16
    tf32_tensor_flops: float
    fp8_tensor_flops: float | None = None


@dataclass(frozen=True)
class Gpu:
    """One GPU as a report (or trace) describes it, completed from the tables."""

    name: str
    compute_capability: tuple[int, int] | None
    sms: int | None
    arch: Architecture | None
    peaks: Peaks | None


#: Per-SM limits by compute capability (CUDA C Programming Guide, "Compute Capabilities").
ARCHITECTURES: dict[tuple[int, int], Architecture] = {
    (8, 0): Architecture("Ampere (GA100)", 64, 32, 65536, 167936, 1024),
    (8, 6): Architecture("Ampere (GA10x)", 48, 16, 65536, 101376, 1024),
    (8, 9): Architecture("Ada", 48, 24, 65536, 101376, 1024),
    (9, 0): Architecture("Hopper", 64, 32, 65536, 233472, 1024),
}
#: Compute capability and peaks by the model's exact name (``device__attribute_display_name``,
#: ``torch.cuda.get_device_name``).
MODELS: dict[str, tuple[tuple[int, int], Peaks]] = {
    "NVIDIA H100 80GB HBM3": ((9, 0), Peaks(3.35e12, 66.9e12, 33.5e12, 989.4e12, 494.7e12, 1978.9e12)),  # SXM5
    "NVIDIA H100 PCIe": ((9, 0), Peaks(2.0e12, 51.2e12, 25.6e12, 756e12, 378e12, 1513e12)),
    "NVIDIA H100 NVL": ((9, 0), Peaks(3.9e12, 60.0e12, 30.0e12, 835e12, 417.5e12, 1670e12)),
    "NVIDIA H200": ((9, 0), Peaks(4.8e12, 66.9e12, 33.5e12, 989.4e12, 494.7e12, 1978.9e12)),
    "NVIDIA A100-SXM4-80GB": ((8, 0), Peaks(2.039e12, 19.5e12, 9.7e12, 312e12, 156e12)),
    "NVIDIA A100-SXM4-40GB": ((8, 0), Peaks(1.555e12, 19.5e12, 9.7e12, 312e12, 156e12)),
    "NVIDIA A100 80GB PCIe": ((8, 0), Peaks(1.935e12, 19.5e12, 9.7e12, 312e12, 156e12)),
    "NVIDIA A100-PCIE-40GB": ((8, 0), Peaks(1.555e12, 19.5e12, 9.7e12, 312e12, 156e12)),
}

_ATTR = "device__attribute_"


def model(name: str) -> tuple[tuple[int, int], Peaks] | None:
    """(compute capability, datasheet peaks) of the model called exactly ``name`` (case and spacing aside)."""
    key = " ".join(name.split()).lower()
    return next((entry for known, entry in MODELS.items() if known.lower() == key), None)


def gpu(
    name: str,
    compute_capability: tuple[int, int] | None = None,
    sms: int | None = None,
    limits: Mapping[str, int] | None = None,
    architectures: Mapping[tuple[int, int], Architecture] = ARCHITECTURES,
) -> Gpu:
    """A :class:`Gpu` from what is known about it; ``limits`` overrides the architecture's per-SM limits."""
    known = model(name)
    cc = compute_capability or (known[0] if known else None)
    arch = architectures.get(cc) if cc else None
    if arch is not None and limits:
        arch = replace(arch, **{k: int(v) for k, v in limits.items() if v})  # type: ignore[arg-type]
    return Gpu(name, cc, sms, arch, known[1] if known else None)


def gpu_of(metrics: Attributes, name: str) -> Gpu:
    """The GPU a report's kernel ran on, from its ``device__attribute_*`` metrics and the tables."""

    def attr(key: str) -> int | None:
        value = metrics.get(_ATTR + key)
        return int(value) if value is not None else None

    major, minor = attr("compute_capability_major"), attr("compute_capability_minor")
    limits = {
        "max_warps_per_sm": attr("max_warps_per_multiprocessor"),
        "max_blocks_per_sm": attr("max_blocks_per_multiprocessor"),
        "registers_per_sm": attr("max_registers_per_multiprocessor"),
        "shared_per_sm": attr("max_shared_memory_per_multiprocessor"),
        "shared_reserved_per_block": attr("reserved_shared_memory_per_block"),
    }
    cc = (major, minor) if major is not None and minor is not None else None
    return gpu(name, cc, attr("multiprocessor_count"), {k: v for k, v in limits.items() if v is not None})


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    limits: dict[str, int]  # limiter name (models.LIMITERS) -> max blocks per SM
    theoretical_pct: float


def occupancy(arch: Architecture, threads_per_block: int, registers_per_thread: int, shared_per_block: int) -> Occupancy:
    """Theoretical occupancy of a launch, as Nsight Compute's occupancy calculator computes it."""
    warps = math.ceil(threads_per_block / 32)
    regs_per_warp = math.ceil(registers_per_thread * 32 / arch.register_unit) * arch.register_unit
    limits = {
        "registers": arch.registers_per_sm // (regs_per_warp * warps) if regs_per_warp else arch.max_blocks_per_sm,
        "shared_memory": arch.shared_per_sm // (shared_per_block + arch.shared_reserved_per_block),
        "warps": arch.max_warps_per_sm // warps,
        "block_size": arch.max_blocks_per_sm,
    }
    blocks = min(limits.values())
    return Occupancy(blocks, limits, 100.0 * blocks * warps / arch.max_warps_per_sm)
