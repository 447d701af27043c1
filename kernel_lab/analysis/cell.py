"""The reading of a whole cell, beside the per-kernel ones: what lies between its kernels, which no kernel's metrics show.

From the launch record (the tensors ``run`` took and returned, every Triton launch and its arguments) and the report:

* the least bytes the cell must move (its inputs read once, its outputs written once) against the DRAM bytes its
  kernels moved;
* the cell's time against that least traffic at the DRAM roof, and against its kernels' FLOPs at their compute roof
  (the cell's point on the roofline: the larger of the two is the time it cannot go under);
* the tensors more than one launch reads or writes (:mod:`~kernel_lab.analysis.flow`) and the ``fusion`` finding
  (:mod:`~kernel_lab.analysis.fusion`);
* the time outside kernels (:mod:`~kernel_lab.analysis.gaps`), a ``launch_overhead`` finding of the cell where it is
  measured or estimated.

Findings are ranked by the share of the cell's time a fix would save, as the conductor ranks a kernel's. The words
are here too: :func:`headline` (the dashboard's first line), :func:`summary_line` (a round of ``%%optimize``) and
:func:`prompt_section` (the LLM's prompt).
"""

from __future__ import annotations

from collections.abc import Sequence

from kernel_lab import metrics as M
from kernel_lab.analysis import flow, fusion
from kernel_lab.analysis import gaps as gaps_of
from kernel_lab.analysis.roofline import roofline
from kernel_lab.analysis.rules._text import nbytes
from kernel_lab.models import Bottleneck, CellReading, Gaps, Kernel, LaunchRecord, Profile

MIN_SCORE = 0.02
UNDER = 0.95  # moved bytes under this share of the least traffic: writes left in L2 (see _notes)
GAP_HINT = (
    " Capture the launches in a CUDA graph and replay it (torch.cuda.CUDAGraph, or torch.compile(mode="
    "'reduce-overhead')), so that no host work runs between them; launch fewer, bigger kernels (a loop of launches as"
    " one launch over a larger grid); or fuse them."
)


def _dram_peak(kernels: Sequence[Kernel]) -> float | None:
    return next((r.memory["DRAM"].value for r in map(roofline, kernels) if "DRAM" in r.memory), None)


def _work(kernels: Sequence[Kernel]) -> tuple[float, float | None]:
    """(FLOPs of the kernels, the time they take at the compute roof of each kernel's precision; None if unknown)."""
    flops, at_roof = 0.0, 0.0
    for k in kernels:
        r = roofline(k)
        seconds = (k.get(M.DURATION) or 0.0) * 1e-9
        ceiling = r.compute.get(r.precision or "")
        if r.precision and seconds:
            flops += r.flop_rate * seconds
            if ceiling is None:
                return flops, None
            at_roof += r.flop_rate * seconds / ceiling.value
    return flops, at_roof * 1e9


def _modes(pairs: list[tuple[LaunchRecord, Kernel | None]], kernels: Sequence[Kernel]) -> list[dict[str, str]]:
    """Each launch's use of its tensors; a launch that was not profiled reads its kernel's source from a profiled
    launch of the same kernel."""
    by_name = {k.name: k for k in kernels}
    return [flow.modes(k or by_name.get(launch.kernel), launch) for launch, k in pairs]


def launch_gaps(gaps: Gaps, launches: int) -> Bottleneck | None:
    """The cell's launch_overhead finding: the time outside kernels, where measured or estimated."""
    if gaps.share is None or launches < 2 or gaps.share < MIN_SCORE:
        return None
    summary = f"Launch gaps: {gaps.share:.0%} of the cell's time is outside kernels ({gaps.how})"
    evidence: dict[str, float | str] = {
        "how": gaps.how,
        "gap_us": round((gaps.gap_ns or 0.0) / 1000, 2),
        "launches": float(launches),
    }
    return Bottleneck("launch_overhead", gaps.share, summary, gaps.said[0].upper() + gaps.said[1:] + "." + GAP_HINT, evidence)


def _moved(kernels: Sequence[Kernel]) -> float | None:
    """The DRAM bytes all the profiled kernels read and wrote, or None when one of them lacks the metrics."""
    each = [fusion.moved(k) for k in kernels]
    return sum(m for m in each if m is not None) if each and None not in each else None


def _notes(
    pairs: list[tuple[LaunchRecord, Kernel | None]], kernels: Sequence[Kernel], least: int, moved: float | None
) -> tuple[str, ...]:
    notes = []
    missing = sum(k is None for _, k in pairs)
    if missing:
        notes.append(
            f"{missing} of the {len(pairs)} launches were not profiled (past the launch count, or filtered out): the bytes"
            " and times count the profiled ones only; profile them all (--launch-count) to compare the whole cell."
        )
    if moved is not None and least and moved < UNDER * least:
        notes.append(
            "The kernels moved fewer DRAM bytes than the inputs and outputs hold: writes still in the L2 cache when a"
            " kernel ends are not yet counted as DRAM traffic (and a small input may come from L2)."
        )
    extra = len(kernels) - (len(pairs) - missing)
    if extra > 0:
        notes.append(
            f"{extra} profiled kernels are not Triton launches of the cell (a library's): their bytes and time count,"
            " their tensors are not known."
        )
    return tuple(notes)


def read(profile: Profile) -> CellReading | None:
    """The cell-level reading of a profile, or None without a launch record."""
    record = profile.record
    if record is None or not record.launches:
        return None
    kernels = profile.kernels
    pairs = flow.pairs(record, kernels)
    shared = flow.shared(record, zip((launch for launch, _ in pairs), _modes(pairs, kernels)))
    gaps = gaps_of.gaps(profile.origin, [k.value(M.DURATION) for _, k in pairs if k is not None and k.has(M.DURATION)])
    kernel_ns = sum(k.get(M.DURATION) or 0.0 for k in kernels)
    least, moved, peak = flow.least_bytes(record), _moved(kernels), _dram_peak(kernels)
    complete = moved is not None and all(k is not None for _, k in pairs) and len(kernels) == len(pairs)
    excess = moved - least if complete and moved is not None else None  # what fusion can save at most
    found = [fusion.finding(shared, pairs, gaps, kernel_ns + (gaps.gap_ns or 0.0), excess), launch_gaps(gaps, len(pairs))]
    flops, compute_ns = _work(kernels)
    return CellReading(
        kernels=tuple(launch.kernel for launch, _ in pairs),
        profiled=sum(k is not None for _, k in pairs),
        least_bytes=least,
        moved_bytes=moved,
        kernel_ns=kernel_ns,
        least_ns=least / peak * 1e9 if peak else None,
        flops=flops,
        compute_ns=compute_ns,
        shared=shared,
        gaps=gaps,
        findings=tuple(sorted((b for b in found if b is not None), key=lambda b: -b.score)),
        notes=_notes(pairs, kernels, least, moved),
    )


# --- words ----------------------------------------------------------------------------------------------------------


def _us(ns: float) -> str:
    return f"{ns / 1000:,.1f} µs"


def traffic(r: CellReading) -> str:
    """'3 launches moved 517.2 MB from DRAM, 1.9× the 268.4 MB its inputs and outputs need'."""
    launches = f"{r.launches} launch{'es' if r.launches > 1 else ''}"
    if r.moved_bytes is None:
        return f"{launches}; its inputs and outputs need {nbytes(r.least_bytes)} of DRAM traffic (the kernels' bytes were not collected)"
    if r.ratio is None:
        return f"{launches} ({r.profiled} profiled) moved {nbytes(r.moved_bytes)}; its inputs and outputs need {nbytes(r.least_bytes)}"
    return f"{launches} moved {nbytes(r.moved_bytes)} from DRAM, {r.ratio:.1f}× the {nbytes(r.least_bytes)} its inputs and outputs need"


def timing(r: CellReading) -> str:
    """'131.0 µs in kernels, 2.3× the 55.8 µs that least traffic takes at the DRAM roof'."""
    said = f"{_us(r.kernel_ns)} in kernels"
    bound = max(r.least_ns or 0.0, r.compute_ns or 0.0)
    if bound and r.profiled == r.launches:
        which = (
            "that least traffic takes at the DRAM roof"
            if (r.least_ns or 0) >= (r.compute_ns or 0)
            else "its FLOPs take at their compute roof"
        )
        said += f", {r.kernel_ns / bound:,.1f}× the {_us(bound)} {which}"
    return said


def headline(r: CellReading) -> str:
    """The first line of a result: the cell's traffic and time, and its best cell-level finding."""
    said = f"Whole cell: {traffic(r)}; {timing(r)}."
    if r.findings:
        top = r.findings[0]
        share = "" if "cell's time" in top.summary else f" (about {top.score:.0%} of the cell's time)"
        said += f" {top.summary}{share}."
    return said


def summary_line(r: CellReading) -> str:
    """One line for a round of ``%%optimize``: the cell's traffic against its least, and its best cell-level finding."""
    ratio = f"{r.ratio:.1f}× its least traffic" if r.ratio is not None else f"least traffic {nbytes(r.least_bytes)}"
    top = f"; {r.findings[0].kind} {r.findings[0].score:.0%}" if r.findings else ""
    return f"cell: {r.launches} launch{'es' if r.launches > 1 else ''}, {ratio}, {_us(r.kernel_ns)} in kernels{top}"


def prompt_section(r: CellReading) -> str:
    """The cell-level reading as a markdown section of the LLM's prompt."""
    lines = ["## The whole cell", "", f"- Traffic: {traffic(r)}.", f"- Time: {timing(r)}."]
    if r.flops:
        lines.append(
            f"- Work: {r.flops / 1e9:,.2f} GFLOP" + (f", {_us(r.compute_ns)} at the compute roof." if r.compute_ns else ".")
        )
    if r.shared:
        lines.append("- Tensors several launches use (one fused kernel would not move the saved bytes):")
        lines += [f"  - {fusion_words(s)}" for s in r.shared]
    lines.append(f"- {r.gaps.said[0].upper() + r.gaps.said[1:]}.")
    if r.findings:
        lines += ["", "Cell-level findings (score: the share of the cell's time a fix would save):"]
        lines += [f"{i}. `{b.kind}` ({b.score:.0%}): {b.summary}. {b.hint}" for i, b in enumerate(r.findings, 1)]
    lines += [f"- Note: {n}" for n in r.notes]
    return "\n".join(lines)


def fusion_words(s) -> str:
    """One shared tensor in a line: name, size, role, uses by launch, bytes saved."""
    uses = ", ".join(f"launch {i} {use}" for i, use in s.uses[:6]) + (f", … ({len(s.uses)} launches)" if len(s.uses) > 6 else "")
    return f"{s.name} ({nbytes(s.nbytes)}, {s.role}): {uses}; saved {nbytes(s.saved_bytes)}"
