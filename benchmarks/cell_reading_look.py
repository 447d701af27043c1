"""The cell-level reading and the source patterns on the held-out whole-cell family (tests/cells/whole_held_out,
labels in its LABELS.md, written before any cell-level rule), from the reports recorded on the H200.

    python benchmarks/cell_reading_look.py [FOLDER]    # FOLDER: the unpacked tests/data/h200/records.tar.xz

Prints one markdown row per cell: what the labels expect, what the reading says, right or wrong.
"""

from __future__ import annotations

import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import kernel_lab  # noqa: E402

#: cell -> (expected fusion: the tensor argument named first, or None; expected pattern: (kind, line text) or None),
#: transcribed from tests/cells/whole_held_out/LABELS.md
LABELS = {
    "cross_entropy_two_pass": ("logits", None),
    "residual_rmsnorm_two": ("h", None),
    "elementwise_four_chain": ("intermediates", None),
    "rope_single": (None, None),
    "scores_broadcast_sum": (None, ("tensor_cores_unused", "tl.sum")),
    "count_atomic_one": (None, ("atomic_contention", "tl.atomic_add")),
    "column_gather": (None, ("uncoalesced_global", "tl.load")),
}


def look(folder: Path, name: str) -> dict:
    result = kernel_lab.diagnose(folder / f"{name}.ncu-rep")
    r = result.cell
    fusion = next((b for b in r.findings if b.kind == "fusion"), None) if r else None
    tops = [(d.kernel.name, d.bottlenecks[0]) for d in result.diagnoses if d.bottlenecks]
    pattern = next(((k, b) for k, b in tops if "pattern" in b.evidence), None)
    return {"reading": r, "fusion": fusion, "tops": tops, "pattern": pattern}


def verdict(name: str, seen: dict) -> tuple[bool, bool]:
    """(fusion right, pattern right) against the label."""
    want_fusion, want_pattern = LABELS[name]
    r, fusion = seen["reading"], seen["fusion"]
    if want_fusion is None:
        fusion_ok = fusion is None
    elif want_fusion == "intermediates":
        fusion_ok = fusion is not None and sum(1 for s in r.shared if s.role == "intermediate" and s.saved_bytes) == 3
    else:  # the labelled tensor (an argument named for it, with or without _ptr) is among those fusion saves on
        names = {n.removesuffix("_ptr") for s in r.shared if s.saved_bytes for n in s.name.split("/")}
        fusion_ok = fusion is not None and want_fusion in names
    pattern = seen["pattern"]
    if want_pattern is None:
        pattern_ok = pattern is None
    else:
        pattern_ok = (
            pattern is not None
            and seen["tops"][0][1] is pattern[1]
            and pattern[1].kind == want_pattern[0]
            and want_pattern[1] in pattern[1].source_lines[0].text
        )
    return fusion_ok, pattern_ok


def row(name: str, seen: dict) -> str:
    r = seen["reading"]
    fusion_ok, pattern_ok = verdict(name, seen)
    cell = (
        f"{seen['fusion'].summary} ({seen['fusion'].score:.0%})" if seen["fusion"] else "no fusion finding"
    ) + f"; {r.launches} launch(es), {f'{r.ratio:.2f}×' if r.ratio else '?'} the least bytes"
    if len(r.findings) > (1 if seen["fusion"] else 0):
        cell += "; also " + ", ".join(f"{b.kind} {b.score:.0%}" for b in r.findings if b.kind != "fusion")
    top = "; ".join(f"{k}: {b.kind} {b.score:.2f}" for k, b in seen["tops"])
    pattern = seen["pattern"]
    said = f"{pattern[1].kind} at line {pattern[1].source_lines[0].line}" if pattern else "none"
    mark = {True: "right", False: "**wrong**"}
    return f"| {name} | {cell} | {mark[fusion_ok]} | {said} | {mark[pattern_ok]} | {top} |"


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else None
    if folder is None:
        folder = Path(tempfile.mkdtemp())
        with tarfile.open(ROOT / "tests" / "data" / "h200" / "records.tar.xz") as archive:
            archive.extractall(folder, filter="data")
    print("| cell | cell-level reading | fusion vs label | pattern found | pattern vs label | per-kernel top-1 |")
    print("|---|---|---|---|---|---|")
    right = [0, 0]
    for name in LABELS:
        seen = look(folder, name)
        print(row(name, seen))
        right = [a + b for a, b in zip(right, verdict(name, seen))]
    print(f"\nfusion right on {right[0]} of {len(LABELS)}, patterns right on {right[1]} of {len(LABELS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
