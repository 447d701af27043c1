"""Phrases shared by the text and HTML renderers."""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis.cell import headline
from kernel_lab.analysis.fusion import described
from kernel_lab.analysis.roofline import phrase, roofline
from kernel_lab.analysis.source import toolchain
from kernel_lab.models import CellReading, Diagnosis, Kernel, Profile, SourceLine
from kernel_lab.results.tables import occupancy_limiter


def banner(profile: Profile) -> str:
    devices = sorted({k.device for k in profile.kernels})
    where = f" on {', '.join(devices)}" if devices else ""
    if profile.replay:
        said = f"Kernel Lab: REPLAYING the recorded report {profile.origin}{where}"
        if profile.mismatch:
            return f"{said}, and {profile.mismatch} (no GPU was used, the cell was not run)."
        return f"{said} (no GPU was used, the cell was not run)."
    return f"Kernel Lab: profiled{where} with {profile.collector}."


def kernel_line(k: Kernel) -> str:
    parts = [k.name]
    if k.has(M.DURATION):
        parts.append(f"{k.value(M.DURATION) / 1000:.1f} µs")
    if k.has(M.GRID, M.BLOCK):
        parts.append(f"grid {k.value(M.GRID):.0f} × block {k.value(M.BLOCK):.0f}")
    return "  ".join(parts)


def kernel_facts(k: Kernel) -> list[str]:
    facts = []
    if k.has(M.SM_PCT, M.MEM_PCT):
        facts.append(f"SM {k.value(M.SM_PCT):.0f}% · memory {k.value(M.MEM_PCT):.0f}% of peak")
    if k.has(M.DRAM_PCT):
        facts.append(f"DRAM {k.value(M.DRAM_PCT):.0f}%")
    if k.has(M.THEORETICAL_OCC):
        achieved = f"{k.value(M.ACHIEVED_OCC):.0f}% achieved / " if k.has(M.ACHIEVED_OCC) else ""
        limiter = occupancy_limiter(k)
        facts.append(
            f"occupancy {achieved}{k.value(M.THEORETICAL_OCC):.0f}% theoretical" + (f" (limit: {limiter})" if limiter else "")
        )
    if k.has(M.REGISTERS):
        facts.append(f"{k.value(M.REGISTERS):.0f} regs/thread")
    if k.has(M.SHARED_PER_BLOCK):
        facts.append(f"{k.value(M.SHARED_PER_BLOCK) / 1024:.1f} KB smem/block")
    return facts


def roofline_line(k: Kernel) -> str:
    """Where the kernel stands on the roofline, in the words of the chart: 'Roofline: FP32 work, at 37% of the
    DRAM roof (DRAM bytes moved).'"""
    r = roofline(k)
    return f"Roofline: {f'{r.precision} work, ' if r.precision else ''}{r.label()}."


def verdict_lines(d: Diagnosis) -> list[str]:
    """What the diagnosis says as a whole: near its roof (little left), or unsure between two causes."""
    lines = []
    if d.near_roof is not None:
        lines.append(
            f"Near its roof: {phrase(d.near_roof['fraction'], d.near_roof['roof'])}, so little is left to"
            " gain by tuning; the gains left are in doing less work or moving fewer bytes."
        )
    if d.uncertain is not None:
        lines.append(f"Not sure. {d.uncertain}")
    return lines


def source_ref(s: SourceLine) -> str:
    """'cell.py:42 (61%)  the line', saying so where the line is library code inlined into the kernel."""
    name = s.file.rsplit("/", 1)[-1]
    where = ", library code inlined into the kernel" if toolchain(s.file) else ""
    return f"{name}:{s.line} ({s.share:.0%}{where})" + (f"  {s.text}" if s.text else "")


def cell_lines(r: CellReading) -> list[str]:
    """The whole cell in sentences: its headline first, then what its findings do not already say (the tensors its
    launches share, the gaps), and the notes."""
    kinds = {b.kind for b in r.findings}
    shared = [] if "fusion" in kinds else [described(s, r.kernels) + "." for s in r.shared]
    said = "launch_overhead" in kinds or (r.launches == 1 and r.gaps.how == "not measured")  # nothing between kernels
    gaps = [] if said else [r.gaps.said[0].upper() + r.gaps.said[1:] + "."]
    return [headline(r), *shared, *gaps, *(f"Note: {n}" for n in r.notes)]
