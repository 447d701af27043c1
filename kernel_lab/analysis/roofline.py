"""Roofline numbers of a kernel: achieved FLOP/s per precision, bytes/s per memory level, and the
ceilings, from the report's own peak metrics where Nsight Compute records them, else from the
hardware table.

Exact metrics (the same arithmetic Nsight Compute's roofline sections use):

* FLOP/s, FP32: (fadd + fmul + 2 x ffma) of ``smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed``
  x ``smsp__cycles_elapsed.avg.per_second``; FP64 the same with dadd/dmul/dfma; FP16 (non-tensor,
  packed) 2 x hadd + 2 x hmul + 4 x hfma.
* FLOP/s, tensor: ``sm__ops_path_tensor_op_<hgmma|hmma>_src_<type>*.sum`` (ops, an FMA counts 2) / duration.
* Compute peaks: 2 x ``sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained`` (dfma for FP64,
  4 x hfma for FP16, the tensor path's ``.peak_sustained`` for tensor) x ``sm__cycles_elapsed.avg.per_second``.
* Bytes/s: DRAM ``dram__bytes.sum.per_second``; L2 ``derived__lts__lts2xbar_bytes.sum.per_second``
  (else ``lts__t_bytes.sum`` / duration); L1 ``derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second``
  (else ``l1tex__t_bytes.sum`` / duration).
* Bandwidth peaks: DRAM ``dram__bytes.sum.peak_sustained`` x ``dram__cycles_elapsed.avg.per_second``;
  L2 32 x ``lts__lts2xbar_cycles_active.sum.peak_sustained`` x ``lts__cycles_elapsed.avg.per_second``;
  L1 128 x ``l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained`` x ``l1tex__cycles_elapsed.avg.per_second``.

Arithmetic intensity = achieved FLOP/s / achieved bytes/s of a level (= FLOPs / bytes).

The kernel's precision is the one doing the most FLOPs, after setting aside half-precision instructions that
do no arithmetic. Nsight Compute counts every HFMA2/HADD2/HMUL2 as half work, but compilers emit them for other
things: ``HFMA2.MMA R0, -RZ, RZ, 0, 0`` puts a constant in a register (-0 x 0 + 0) and ``HADD2.F32 R1, -RZ,
R2.H0_H0`` converts an fp16 value to fp32. Counted as FLOPs (x4 and x2, packed), they put fp32 kernels on the
FP16 roof: lesson 1's naive add executes 2,097,152 HFMA2 (all the first idiom: the zero a masked load fills)
and 2,097,152 FADD warp instructions, so it had twice as many "FP16" FLOPs as FP32 ones; lesson 5's rank-1
matmul, 2,214,592,512 HADD2 (all conversions of its fp16 tiles) against 2,147,483,648 FFMA; and in
tests/data/suite, sorting networks, histograms and int16 kernels with no floating-point work at all land on
the FP16 roof by their register moves. So:

* With the report's SASS counters (SourceCounters, which Kernel Lab collects), the instructions with a zero
  register among their two first sources (``Kernel.not_flops``) are taken out of the half counts: what is
  left is arithmetic, as in the suite's half2 GEMM (8.6e9 HFMA2 thread instructions, 17 times its FP32 ones)
  and its fp16 Horner polynomial (no FP32 instructions).
* Without them, half instructions count only when they outnumber the FP32 ones :data:`HALF_WORK` times, and
  without FP32 instructions they are taken at their word. That places every recorded report of the package and
  the course as the SASS does, and of tests/data/suite's kernels all but nine with many register moves and few
  or no FP32 instructions (sorting networks, a histogram: tests/test_precision.py checks four of them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernel_lab import hardware
from kernel_lab import metrics as M
from kernel_lab.models import Kernel

SMSP_CLOCK = "smsp__cycles_elapsed.avg.per_second"
SM_CLOCK = "sm__cycles_elapsed.avg.per_second"
_OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
_PEAK_OP = "sm__sass_thread_inst_executed_op_{}_pred_on.sum.peak_sustained"
_TENSOR = "sm__ops_path_tensor_op_{}.sum"

#: precision -> ((weight, op), ...) of scalar instructions counted as FLOPs
SCALAR_FLOPS = {
    "FP64": ((1, "dadd"), (1, "dmul"), (2, "dfma")),
    "FP32": ((1, "fadd"), (1, "fmul"), (2, "ffma")),
    "FP16": ((2, "hadd"), (2, "hmul"), (4, "hfma")),
}
#: precision -> (peak weight, op whose peak_sustained sets the ceiling, hardware-table attribute)
SCALAR_PEAKS = {"FP64": (2, "dfma", "fp64_flops"), "FP32": (2, "ffma", "fp32_flops"), "FP16": (4, "hfma", None)}
#: tensor precision -> (tensor paths counted, path whose peak sets the ceiling, hardware-table attribute)
TENSOR_PATHS = {
    "Tensor BF16/FP16": (
        (
            "hgmma_src_bf16_dst_fp32_sparsity_off",
            "hgmma_src_fp16_sparsity_off",
            "hmma_src_bf16_dst_fp32_sparsity_off",
            "hmma_src_fp16_dst_fp32_sparsity_off",
        ),
        "hgmma_src_bf16_dst_fp32_sparsity_off",
        "fp16_tensor_flops",
    ),
    "Tensor TF32": (
        ("hgmma_src_tf32_dst_fp32_sparsity_off", "hmma_src_tf32_dst_fp32_sparsity_off"),
        "hgmma_src_tf32_dst_fp32_sparsity_off",
        "tf32_tensor_flops",
    ),
}
LEVELS = ("L1", "L2", "DRAM")
#: half-precision (non-tensor) instructions are the kernel's work only at this many times its FP32 ones or more
HALF_WORK = 2.0


@dataclass(frozen=True)
class Ceiling:
    name: str  # "DRAM", "FP32", "Tensor BF16/FP16", ...
    value: float  # B/s for memory levels, FLOP/s for compute
    source: str  # "report" (Nsight Compute's peak metrics) or "hardware table"


@dataclass(frozen=True)
class KernelRoofline:
    """Where one kernel stands: its achieved rates and the ceilings that apply to it."""

    kernel: str
    launch: int
    precision: str | None  # the precision doing most FLOPs, None without floating-point work
    flop_rate: float  # FLOP/s in that precision
    byte_rates: dict[str, float]  # level -> achieved B/s
    compute: dict[str, Ceiling]  # precision -> ceiling
    memory: dict[str, Ceiling]  # level -> ceiling
    notes: tuple[str, ...] = field(default=())
    busy: dict[str, float] = field(default_factory=dict)  # level -> Nsight Compute's throughput of that unit, %

    def intensity(self, level: str = "DRAM") -> float | None:
        """FLOPs per byte moved at ``level``."""
        rate = self.byte_rates.get(level)
        return self.flop_rate / rate if rate else None

    def attainable(self, level: str = "DRAM") -> tuple[float, str] | None:
        """The roof above the point at ``level``: (FLOP/s, which roof bounds it)."""
        ai, mem, comp = self.intensity(level), self.memory.get(level), self.compute.get(self.precision or "")
        if ai is None or mem is None or comp is None:
            return None
        return (ai * mem.value, level) if ai * mem.value < comp.value else (comp.value, comp.name)

    def reached(self, level: str = "DRAM") -> tuple[float, str] | None:
        """(fraction, roof) of the roof that bounds the kernel, or of ``level``'s bandwidth without FLOPs."""
        roof = self.attainable(level)
        if roof is not None and self.flop_rate > 0:
            return self.flop_rate / roof[0], roof[1]
        mem, rate = self.memory.get(level), self.byte_rates.get(level)
        return (rate / mem.value, level) if mem is not None and rate else None

    def label(self, level: str = "DRAM") -> str:
        """'at 86% of the DRAM roof (DRAM bytes moved)', or what can be said without FLOPs or ceilings."""
        reached = self.reached(level)
        if reached is None:
            return "no roofline metrics in this report"
        if self.flop_rate > 0:
            return phrase(*reached)
        return f"no floating-point work; {phrase(*reached)}"


def phrase(fraction: float, roof: str, sep: str = " ") -> str:
    """How every view says where a kernel stands: 'at 37% of the DRAM roof (DRAM bytes moved)', 'at 93% of the
    FP32 roof (FLOPs executed)': the share, which roof, and what was counted (the course counts the problem's
    bytes instead, and says so); ``sep`` goes before the parenthesis."""
    counted = f"{roof} bytes moved" if roof in LEVELS else "FLOPs executed"
    return f"at {fraction:.0%} of the {roof} roof{sep}({counted})"


def _sum(k: Kernel, weighted: tuple[tuple[int, str], ...]) -> float | None:
    names = [_OP.format(op) for _, op in weighted]
    if not k.has(*names, SMSP_CLOCK):
        return None
    return sum(w * k.value(n) for (w, _), n in zip(weighted, names)) * k.value(SMSP_CLOCK)


def _instructions(k: Kernel, precision: str) -> float:
    """Thread instructions of ``precision``'s adds, multiplies and FMAs, per cycle."""
    return sum(k.get(_OP.format(op)) or 0.0 for _, op in SCALAR_FLOPS[precision])


def idioms(k: Kernel) -> float:
    """Thread instructions counted as half-precision FLOPs that are taken as moves and conversions, not work: those
    the SASS shows are (``Kernel.not_flops``), or without SASS counters all of them in a kernel executing more
    than 1 / :data:`HALF_WORK` as many FP32 instructions (see the module docstring)."""
    if k.not_flops is not None:
        return sum(k.not_flops.values())
    half = _instructions(k, "FP16")
    if not half or half >= HALF_WORK * _instructions(k, "FP32"):
        return 0.0
    return half * (k.get(SMSP_CLOCK) or 0.0) * (k.get(M.DURATION) or 0.0) * 1e-9


def _half_rate(k: Kernel, rate: float) -> float:
    """The FP16 FLOP/s ``rate`` Nsight Compute's counts give, less the instructions that do no arithmetic."""
    seconds = (k.get(M.DURATION) or 0.0) * 1e-9
    if k.not_flops is not None and seconds:
        weights = {op: w for w, op in SCALAR_FLOPS["FP16"]}
        left = rate - sum(weights[op] * n for op, n in k.not_flops.items()) / seconds
        return left if left > 1e-6 * rate else 0.0  # all of it moves: what is left is rounding
    return 0.0 if idioms(k) else rate


def _flop_rates(k: Kernel) -> dict[str, float]:
    rates = {p: r for p, ops in SCALAR_FLOPS.items() if (r := _sum(k, ops)) is not None}
    if "FP16" in rates:
        rates["FP16"] = _half_rate(k, rates["FP16"])
    seconds = (k.get(M.DURATION) or 0) * 1e-9
    for precision, (paths, _, _) in TENSOR_PATHS.items():
        counts = [k.value(_TENSOR.format(p)) for p in paths if k.has(_TENSOR.format(p))]
        if counts and seconds:
            rates[precision] = sum(counts) / seconds
    return rates


def _compute_ceilings(k: Kernel, gpu: hardware.Peaks | None) -> dict[str, Ceiling]:
    out: dict[str, Ceiling] = {}
    clock = k.get(SM_CLOCK)
    for precision, (weight, op, attr) in SCALAR_PEAKS.items():
        peak = k.get(_PEAK_OP.format(op))
        if peak and clock:
            out[precision] = Ceiling(precision, weight * peak * clock, "report")
        elif gpu is not None and attr:
            out[precision] = Ceiling(precision, getattr(gpu, attr), "hardware table")
    for precision, (_, peak_path, attr) in TENSOR_PATHS.items():
        peak = k.get(_TENSOR.format(peak_path) + ".peak_sustained")
        if peak and clock:
            out[precision] = Ceiling(precision, peak * clock, "report")
        elif gpu is not None:
            out[precision] = Ceiling(precision, getattr(gpu, attr), "hardware table")
    return out


def _memory(k: Kernel, gpu: hardware.Peaks | None) -> tuple[dict[str, float], dict[str, Ceiling]]:
    seconds = (k.get(M.DURATION) or 0) * 1e-9
    rates: dict[str, float] = {}
    roofs: dict[str, Ceiling] = {}
    if k.has(M.DRAM_BW):
        rates["DRAM"] = k.value(M.DRAM_BW)
    if k.has(M.DRAM_PEAK_PER_CYCLE, M.DRAM_CLOCK):
        roofs["DRAM"] = Ceiling("DRAM", k.value(M.DRAM_PEAK_PER_CYCLE) * k.value(M.DRAM_CLOCK), "report")
    elif gpu is not None:
        roofs["DRAM"] = Ceiling("DRAM", gpu.dram_bytes_per_s, "hardware table")
    for level, derived, total, width, active, clock in (
        (
            "L2",
            "derived__lts__lts2xbar_bytes.sum",
            "lts__t_bytes.sum",
            32,
            "lts__lts2xbar_cycles_active.sum.peak_sustained",
            "lts__cycles_elapsed.avg.per_second",
        ),
        (
            "L1",
            "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum",
            "l1tex__t_bytes.sum",
            128,
            "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained",
            "l1tex__cycles_elapsed.avg.per_second",
        ),
    ):
        if k.has(derived + ".per_second"):
            rates[level] = k.value(derived + ".per_second")
        elif k.has(total) and seconds:
            rates[level] = k.value(total) / seconds
        if k.has(active, clock):
            roofs[level] = Ceiling(level, width * k.value(active) * k.value(clock), "report")
    return rates, roofs


def roofline(kernel: Kernel) -> KernelRoofline:
    """The roofline position of one kernel (see the module docstring for the metrics)."""
    gpu = kernel.gpu.peaks
    flops = _flop_rates(kernel)
    compute = _compute_ceilings(kernel, gpu)
    byte_rates, memory = _memory(kernel, gpu)
    notes = []
    if gpu is None and not compute:
        notes.append(f"{kernel.device} is not in the hardware table and the report has no peak metrics: no compute roof.")
    if not byte_rates:
        notes.append("The report has no memory-throughput metrics (collect SpeedOfLight_RooflineChart).")
    if moves := idioms(kernel):
        how = "the SASS shows" if kernel.not_flops is not None else "beside the FP32 ones, taken as"
        notes.append(
            f"{moves:,.0f} half-precision instructions not counted as FLOPs: {how} register moves and fp16-to-fp32 conversions."
        )
    precision = max(flops, key=lambda p: flops[p]) if flops and max(flops.values()) > 0 else None
    return KernelRoofline(
        kernel=kernel.name,
        launch=kernel.index,
        precision=precision,
        flop_rate=flops.get(precision, 0.0) if precision else 0.0,
        byte_rates=byte_rates,
        compute=compute,
        memory=memory,
        notes=tuple(notes),
        busy={level: v for level, metric in BUSY.items() if (v := kernel.get(metric)) is not None},
    )


#: Nsight Compute's throughput of each memory unit: the busiest of its sub-units and counters (for L2,
#: tag lookups count as much as bytes), so it can be far above the bytes moved against the peak bandwidth
BUSY = {"DRAM": M.DRAM_PCT, "L2": M.L2_PCT, "L1": M.L1_PCT}

#: what :func:`roofline` reads, for a rule that uses it to declare (its READS)
READS = (
    *BUSY.values(),
    _OP.format("*"),
    _PEAK_OP.format("*"),
    _TENSOR.format("*"),
    _TENSOR.format("*") + ".peak_sustained",
    SMSP_CLOCK,
    SM_CLOCK,
    M.DURATION,
    M.DRAM_BW,
    M.DRAM_PEAK_PER_CYCLE,
    M.DRAM_CLOCK,
    "derived__lts__lts2xbar_bytes.sum.per_second",
    "lts__t_bytes.sum",
    "lts__lts2xbar_cycles_active.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",
    "l1tex__t_bytes.sum",
    "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained",
    "l1tex__cycles_elapsed.avg.per_second",
)
NEAR = 0.8  # at this fraction of the binding roof or more, a kernel is near its roof
#: the DRAM throughput (% of ncu's peak / 100) the best streaming kernels reach: 91.0% on the H100, 3.05 TB/s
#: (tests/data/suite: deinterleave_stride2, sum_2pass); no kernel moves its bytes faster than that
DRAM_REACHED = 0.91


def compute_roof(kernel: Kernel) -> tuple[float, str] | None:
    """(fraction reached, name) of the compute ceiling when it, not DRAM bandwidth, bounds the kernel."""
    r = roofline(kernel)
    roof = r.attainable("DRAM")
    if roof is None or not r.flop_rate or roof[1] == "DRAM":
        return None
    return r.flop_rate / roof[0], roof[1]
