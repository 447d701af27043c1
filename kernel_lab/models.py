"""Plain data passed between the stages: profiles in, bottlenecks out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kernel_lab import hardware

#: The bottleneck vocabulary shared by the conductor, the CLI's JSON and the tests.
KINDS: tuple[str, ...] = (
    "memory_bound",
    "compute_bound",
    "latency_bound",
    "low_occupancy",
    "uncoalesced_global",
    "shared_bank_conflicts",
    "small_grid",
    "tail_effect",
    "warp_divergence",
    "register_spills",
    "tensor_cores_unused",
    "launch_overhead",
    "atomic_contention",
)
#: Kinds only the cell-level reading reports (:class:`CellReading`): what lies between a cell's kernels.
CELL_KINDS: tuple[str, ...] = ("fusion",)
#: Limiters reported with ``low_occupancy``.
LIMITERS: tuple[str, ...] = ("registers", "shared_memory", "block_size", "warps")


@dataclass(frozen=True)
class RuleResult:
    """One message of an Nsight Compute guided-analysis rule."""

    rule: str
    section: str
    title: str
    message: str
    severity: str  # "OPT", "WRN", "INF" or "ERR", as ncu prints them
    speedup_pct: float | None = None  # ncu's estimated speedup, in % of duration
    speedup_scope: str | None = None  # "global" (whole kernel) or "local" (the rule's metric)


@dataclass(frozen=True)
class SourceLine:
    """A line of the user's source and the share of a counter it accounts for."""

    file: str
    line: int
    share: float  # 0..1 of the counter summed over all lines
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "share": round(self.share, 4), "text": self.text}


@dataclass(frozen=True)
class Kernel:
    """One profiled kernel launch: its metrics, ncu's rule results and per-line counters."""

    index: int
    name: str
    demangled: str
    metrics: Mapping[str, float]
    units: Mapping[str, str] = field(default_factory=dict)
    attributes: Mapping[str, str] = field(default_factory=dict)  # string-valued metrics
    rules: tuple[RuleResult, ...] = ()
    #: counter name -> {(file, line): value}, from Nsight Compute's source counters
    line_counters: Mapping[str, Mapping[tuple[str, int], float]] = field(default_factory=dict)
    source_files: Mapping[str, str] = field(default_factory=dict)
    opcodes: Mapping[str, float] = field(default_factory=dict)  # SASS opcode -> warp instructions
    sections: Mapping[str, str] = field(default_factory=dict)  # metric -> section id showing it
    #: metric -> its values, for metrics Nsight Compute records per instance (per SASS PC, per opcode, per block
    #: size, ...); ``metrics`` holds the one value ncu gives for the whole, which for some is a meaningless sum
    arrays: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    #: op ("hadd", "hmul", "hfma") -> thread instructions Nsight Compute counts as half-precision FLOPs that the SASS
    #: shows do no arithmetic (a zero-register factor or addend: register moves, fp16-to-fp32 conversions); None
    #: where the report has no per-instruction counters (no SourceCounters section)
    not_flops: Mapping[str, float] | None = None

    def get(self, metric: str) -> float | None:
        """The metric's value, or None when it was not collected."""
        return self.metrics.get(metric)

    def value(self, metric: str) -> float:
        """The value of a metric known to be there (a rule's NEEDS); KeyError when it is not."""
        return self.metrics[metric]

    def has(self, *metrics: str) -> bool:
        return all(m in self.metrics for m in metrics)

    @property
    def device(self) -> str:
        return self.attributes.get("device__attribute_display_name", "unknown GPU")

    @cached_property
    def gpu(self) -> hardware.Gpu:
        """The GPU it ran on: the report's device attributes, completed from the hardware tables."""
        return hardware.gpu_of(self.metrics, self.device)


@dataclass(frozen=True)
class TensorRecord:
    """A tensor a profiled run handled: its shape, dtype and strides, and where it lives (its storage's address, its
    byte offset there, the storage's size in bytes)."""

    shape: tuple[int, ...]
    dtype: str  # "float32", as torch names it without "torch."
    strides: tuple[int, ...]
    storage: int
    offset: int
    storage_bytes: int

    @property
    def nbytes(self) -> int:
        """The bytes its elements take."""
        size = 1
        for n in self.shape:
            size *= n
        return size * DTYPE_BYTES.get(self.dtype, 4)


#: bytes per element of the dtypes a record may hold
DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1, "int64": 8,
    "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16,
}  # fmt: skip


@dataclass(frozen=True)
class LaunchRecord:
    """One Triton launch of a profiled run: the kernel, where it is defined, its grid (None when it could not be
    evaluated) and its arguments by name, as they ran (tensors as records; block sizes and options as numbers)."""

    kernel: str
    file: str
    line: int
    grid: tuple[int, ...] | None
    args: tuple[tuple[str, Any], ...]
    origin: str = "triton"  # "triton" (a @triton.jit launch) or "inductor" (a kernel torch.compile wrote)

    def tensors(self) -> dict[str, TensorRecord]:
        return {name: v for name, v in self.args if isinstance(v, TensorRecord)}


@dataclass(frozen=True)
class CellRecord:
    """What one profiled ``run`` took, returned and launched (the Triton launches, in order)."""

    inputs: tuple[TensorRecord, ...] = ()
    outputs: tuple[TensorRecord, ...] = ()
    launches: tuple[LaunchRecord, ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellRecord:
        def tensor(t: Mapping[str, Any]) -> TensorRecord:
            return TensorRecord(tuple(t["shape"]), t["dtype"], tuple(t["strides"]), t["storage"], t["offset"], t["storage_bytes"])

        def value(v: Any) -> Any:
            return tensor(v) if isinstance(v, Mapping) and "storage" in v else v

        launches = tuple(
            LaunchRecord(
                x["kernel"], x["file"], x["line"], tuple(x["grid"]) if x["grid"] is not None else None,
                tuple((name, value(v)) for name, v in x["args"]), x.get("origin", "triton"),
            )
            for x in data["launches"]
        )  # fmt: skip
        return cls(tuple(map(tensor, data["inputs"])), tuple(map(tensor, data["outputs"])), launches)


@dataclass(frozen=True)
class Profile:
    """The kernels of one profiling run or report, and where they came from."""

    kernels: tuple[Kernel, ...]
    origin: str  # report path, or a description of the run
    collector: str  # what collected it, e.g. "ncu 2025.3.1 (command line)"
    replay: bool = False  # True when read from a recorded report instead of run now
    mismatch: str = ""  # replayed over a cell whose kernels it does not hold: what differs, in words
    notes: tuple[str, ...] = ()  # what is missing or degraded, in words
    record: CellRecord | None = None  # what the profiled run took, returned and launched, when it was recorded


@dataclass(frozen=True)
class Bottleneck:
    """A ranked finding of the conductor, with its evidence and a hint for a learner."""

    kind: str
    score: float  # estimated share of the launch's time this accounts for (0..1)
    summary: str  # one line with the key numbers
    hint: str  # what is happening, why it costs time, what to change
    evidence: Mapping[str, float | str] = field(default_factory=dict)
    source_lines: tuple[SourceLine, ...] = ()
    limiter: str | None = None  # for low_occupancy: one of LIMITERS
    ncu_rules: tuple[RuleResult, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (see the README): kind, score, evidence, hint, source_lines."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "score": round(self.score, 4),
            "summary": self.summary,
            "evidence": dict(self.evidence),
            "hint": self.hint,
            "source_lines": [s.to_dict() for s in self.source_lines],
        }
        if self.limiter is not None:
            out["limiter"] = self.limiter
        if self.ncu_rules:
            out["ncu_rules"] = [{"rule": r.rule, "title": r.title, "speedup_pct": r.speedup_pct} for r in self.ncu_rules]
        return out


@dataclass(frozen=True)
class Diagnosis:
    """The conductor's verdict on one kernel: bottlenecks best-first, and what it could not check."""

    kernel: Kernel
    bottlenecks: tuple[Bottleneck, ...]
    not_evaluated: Mapping[str, str] = field(default_factory=dict)  # kind -> why
    near_roof: Mapping[str, Any] | None = None  # {"roof": "DRAM", "fraction": 0.91} when little is left
    uncertain: str | None = None  # when the first two readings explain about the same time: what to measure next

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kernel": self.kernel.name,
            "bottlenecks": [b.to_dict() for b in self.bottlenecks],
            "not_evaluated": dict(self.not_evaluated),
        }
        if self.near_roof is not None:
            out["near_roof"] = dict(self.near_roof)
        if self.uncertain is not None:
            out["uncertain"] = self.uncertain
        return out


@dataclass(frozen=True)
class SharedTensor:
    """A tensor more than one launch of a cell reads or writes, and what one fused kernel would save on it."""

    name: str  # the kernel arguments it was passed as, "x_ptr", "x_ptr/out_ptr"
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    role: str  # "input", "output", "input and output", "intermediate" (a launch writes it first), "made by other code"
    uses: tuple[tuple[int, str], ...]  # (launch, "read" | "write" | "read and write" | "read or write")
    saved_bytes: int  # bytes moved beyond an input's one read and an output's one write
    saved_by_launch: tuple[tuple[int, int], ...] = ()  # (launch, bytes of it that launch would no longer move)
    note: str = ""  # why no saving is claimed, where none is

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name, "shape": list(self.shape), "dtype": self.dtype, "bytes": self.nbytes, "role": self.role,
            "uses": [{"launch": i, "use": u} for i, u in self.uses], "saved_bytes": self.saved_bytes,
        }  # fmt: skip
        return out | ({"note": self.note} if self.note else {})


@dataclass(frozen=True)
class Gaps:
    """The cell's time outside its kernels: measured from a timeline, estimated from its launches, or not known."""

    how: str  # "measured" (a torch.profiler trace), "estimated" (launches shorter than a launch's cost), "not measured"
    share: float | None  # of the cell's time, 0..1
    gap_ns: float | None
    wall_ns: float | None  # the range's wall time, where measured
    said: str  # one sentence: what was found, or what is missing and how to get it

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"how": self.how, "said": self.said}
        for key in ("share", "gap_ns", "wall_ns"):
            if (value := getattr(self, key)) is not None:
                out[key] = round(value, 4) if key == "share" else round(value)
        return out


@dataclass(frozen=True)
class CellReading:
    """The conductor's reading of a whole cell: the least traffic it must move against what its kernels moved, its
    time against that traffic at the DRAM roof, the tensors its launches share, the time between its kernels, and
    cell-level findings ranked by the share of the cell's time a fix would save."""

    kernels: tuple[str, ...]  # the kernel of each Triton launch the record holds, in order
    profiled: int  # launches with a profiled kernel
    least_bytes: int  # the inputs read once and the outputs written once
    moved_bytes: float | None  # DRAM bytes read and written by the profiled kernels; None when not collected
    kernel_ns: float  # the profiled kernels' durations, summed
    least_ns: float | None  # the least bytes at the DRAM roof
    flops: float  # floating-point work of the kernels (their roofline precision's)
    compute_ns: float | None  # that work at the compute roof of its precision
    shared: tuple[SharedTensor, ...]
    gaps: Gaps
    findings: tuple[Bottleneck, ...]  # cell-level findings, best first (score: share of the cell's time)
    notes: tuple[str, ...] = ()

    @property
    def launches(self) -> int:
        return len(self.kernels)

    @property
    def ratio(self) -> float | None:
        """Bytes moved per byte the cell needs, where both are known and every launch was profiled."""
        complete = self.profiled == self.launches
        return self.moved_bytes / self.least_bytes if complete and self.moved_bytes and self.least_bytes else None

    @property
    def time_ns(self) -> float:
        """The cell's time: its kernels, and the gaps between them where measured or estimated."""
        return self.kernel_ns + (self.gaps.gap_ns or 0.0)

    def to_dict(self) -> dict[str, Any]:
        """The ``"cell"`` object of the JSON (see the README)."""
        out: dict[str, Any] = {
            "launches": self.launches,
            "kernels": list(dict.fromkeys(self.kernels)),
            "profiled": self.profiled,
            "least_bytes": self.least_bytes,
            "moved_bytes": self.moved_bytes,
            "ratio": round(self.ratio, 3) if self.ratio is not None else None,
            "kernel_ns": round(self.kernel_ns),
            "least_ns": round(self.least_ns) if self.least_ns is not None else None,
            "flops": self.flops,
            "compute_ns": round(self.compute_ns) if self.compute_ns is not None else None,
            "shared": [s.to_dict() for s in self.shared],
            "gaps": self.gaps.to_dict(),
            "findings": [b.to_dict() for b in self.findings],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out
