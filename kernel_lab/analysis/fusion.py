"""fusion, a cell-level finding: tensors that several launches move through DRAM, which one fused kernel keeps on chip.

The bytes come from :mod:`kernel_lab.analysis.flow` (an input re-read, an intermediate written and read back, an output
read and written again); each launch's share of them is checked against the DRAM bytes it was measured to move.

Score: the share of the cell's time fusing would save. Per launch, the time its DRAM traffic takes (its duration,
times its DRAM throughput against the rate kernels reach, at most all of it) times the share of its DRAM bytes fusion
removes; plus, where the cell's gaps are measured or estimated, the gaps between the launches it merges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kernel_lab import metrics as M
from kernel_lab.analysis.roofline import DRAM_REACHED
from kernel_lab.analysis.rules._text import nbytes
from kernel_lab.models import Bottleneck, Gaps, Kernel, LaunchRecord, SharedTensor

KIND = "fusion"
MIN_SCORE = 0.02
SHOWN = 3  # tensors named in the hint


def moved(k: Kernel) -> float | None:
    """A kernel's DRAM bytes, read and written (None when not collected)."""
    return k.value(M.DRAM_READ) + k.value(M.DRAM_WRITE) if k.has(M.DRAM_READ, M.DRAM_WRITE) else None


def saved_ns(k: Kernel, saved_bytes: float) -> float:
    """The time a kernel would save moving ``saved_bytes`` fewer DRAM bytes."""
    total = moved(k)
    if not total or not k.has(M.DURATION):
        return 0.0
    dram_time = min(1.0, (k.get(M.DRAM_PCT) or 0.0) / 100 / DRAM_REACHED)
    return k.value(M.DURATION) * dram_time * min(1.0, saved_bytes / total)


def named(launches: Sequence[int], kernels: Sequence[str]) -> str:
    """'row_max_kernel and normalize_kernel', 'the 64 launches of add_kernel' (``kernels``: the kernel of each launch)."""
    names = Counter(kernels[i] for i in sorted(launches))
    parts = [f"the {n} launches of {name}" if n > 1 else name for name, n in names.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def launches_of(s: SharedTensor, kernels: Sequence[str], uses: tuple[str, ...]) -> str:
    """The launches that use ``s`` so, named (see :func:`named`)."""
    return named([i for i, use in s.uses if use in uses], kernels)


def described(s: SharedTensor, kernels: Sequence[str]) -> str:
    """'x_ptr (8192×4096 float32, 134.2 MB, the input) is read by row_max_kernel and normalize_kernel'."""
    shape = "×".join(map(str, s.shape))
    what = {"intermediate": "an intermediate", "input and output": "an input and the output"}.get(
        s.role, s.role if s.role.startswith("made") else f"the {s.role}"
    )
    verbs = []
    for uses, verb in (
        (("write",), "written by"),
        (("read",), "read by"),
        (("read and write",), "read and written by"),
        (("read or write",), "read or written by"),
    ):
        if any(use in uses for _, use in s.uses):
            verbs.append(f"{verb} {launches_of(s, kernels, uses)}")
    said = f"{s.name} ({shape} {s.dtype}, {nbytes(s.nbytes)}, {what}) is " + ", and ".join(verbs)
    return f"{said}; it is {s.note}" if s.note else said


def briefly(s: SharedTensor) -> str:
    """'read by 3 launches', 'written and read back', 'read and written by 64 launches'."""
    n = len(s.uses)
    if s.role == "intermediate":
        return "written and read back"
    if all(use == "read" for _, use in s.uses):
        return f"read by {n} launches"
    return f"read and written by {n} launches"


def finding(
    shared: Sequence[SharedTensor],
    pairs: Sequence[tuple[LaunchRecord, Kernel | None]],
    gaps: Gaps,
    time_ns: float,
    excess: float | None = None,
) -> Bottleneck | None:
    """The fusion finding of a cell, or None when fusing would save less than :data:`MIN_SCORE` of its time.
    ``excess``: the DRAM bytes the kernels were measured to move beyond the cell's least traffic, where known; the
    saving claimed is at most that (launches that write disjoint parts of one output look alike in the record)."""
    saving = [s for s in shared if s.saved_bytes > 0]
    if not saving or time_ns <= 0:
        return None
    total = sum(s.saved_bytes for s in saving)
    scale = min(1.0, max(0.0, excess) / total) if excess is not None else 1.0
    per_launch: Counter[int] = Counter()
    for s in saving:
        per_launch.update({i: round(n * scale) for i, n in s.saved_by_launch})
    total = round(total * scale)
    bytes_ns = sum(saved_ns(k, per_launch[i]) for i, (_, k) in enumerate(pairs) if k is not None and per_launch[i])
    merged = {i for s in saving for i, _ in s.uses}
    gap_ns = (gaps.gap_ns or 0.0) * (len(merged) - 1) / (len(pairs) - 1) if len(pairs) > 1 else 0.0
    score = min((bytes_ns + gap_ns) / time_ns, 1.0)
    if score < MIN_SCORE or not total:
        return None
    names = [launch.kernel for launch, _ in pairs]
    kernels = named(sorted(merged), names)
    said = "; ".join(described(s, names) for s in saving[:SHOWN])
    more = f" (and {len(saving) - SHOWN} more tensor{'s' if len(saving) > SHOWN + 1 else ''})" if len(saving) > SHOWN else ""
    gap_words = f" and about {gap_ns / 1000:,.1f} µs of gaps between the launches it merges" if gap_ns else ""
    hint = (
        f"Several launches move the same tensors through DRAM: {said}{more}. Fuse {kernels} into one kernel that loads"
        " each input once, keeps what passes between them in registers (or shared memory) and writes each output once:"
        f" it would move {nbytes(total)} less, about {bytes_ns / 1000:,.1f} µs of DRAM time{gap_words}, {score:.0%} of"
        " the cell's time."
    )
    others = f" (and {len(saving) - 1} more tensor{'s' if len(saving) > 2 else ''})" if len(saving) > 1 else ""
    summary = f"Fusion: {saving[0].name} {briefly(saving[0])}{others}: {nbytes(total)} a fused kernel would not move"
    evidence: dict[str, float | str] = {
        "saved_bytes": float(total),
        "saved_dram_us": round(bytes_ns / 1000, 2),
        "launches_merged": float(len(merged)),
    }
    if gap_ns:
        evidence["saved_gap_us"] = round(gap_ns / 1000, 2)
    return Bottleneck(KIND, score, summary, hint, evidence)
