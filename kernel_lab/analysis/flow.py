"""Which tensors a cell's launches share, from the launch record: by where they live (storage and byte range), and
whether each launch reads or writes them (``tl.load`` / ``tl.store`` targets in the kernel's source).

A tensor read by several launches is re-read; one written by a launch and read by a later one is an intermediate.
Either way, one fused kernel would move it fewer times: the bytes beyond what the cell needs (an input read once, an
output written once, an intermediate not at all) are what fusion keeps on chip.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kernel_lab.analysis import kernel_code, lanes
from kernel_lab.models import CellRecord, Kernel, LaunchRecord, SharedTensor, TensorRecord

READ, WRITE, BOTH, UNKNOWN = "read", "write", "read and write", "read or write"


def span(t: TensorRecord) -> tuple[int, int, int]:
    """(storage, first byte, byte after the last) of the elements a tensor view covers."""
    size = t.nbytes // max(1, _count(t.shape))
    last = sum((n - 1) * abs(s) for n, s in zip(t.shape, t.strides)) if _count(t.shape) else -1
    return t.storage, t.offset, t.offset + (last + 1) * size


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def least_bytes(record: CellRecord) -> int:
    """The bytes a cell must move at least: each input read once, each output written once (views of one range once)."""
    total = 0
    for tensors in (record.inputs, record.outputs):
        seen: list[tuple[int, int, int]] = []
        for t in tensors:
            s = span(t)
            if not any(_overlap(s, o) for o in seen):
                total += t.nbytes
                seen.append(s)
    return total


def pairs(record: CellRecord, kernels: Sequence[Kernel]) -> list[tuple[LaunchRecord, Kernel | None]]:
    """Each launch of the record with the profiled kernel that ran it, in order (None for a launch that was not
    profiled: past the launch count, or filtered out); profiled kernels no launch names (a library's) are left out."""
    out: list[tuple[LaunchRecord, Kernel | None]] = []
    j = 0
    for launch in record.launches:
        k = next((i for i in range(j, len(kernels)) if kernels[i].name == launch.kernel), None)
        out.append((launch, kernels[k] if k is not None else None))
        if k is not None:
            j = k + 1
    return out


def modes(kernel: Kernel | None, launch: LaunchRecord) -> dict[str, str]:
    """Tensor argument -> how the launch's kernel uses it (READ, WRITE, BOTH), from its source; UNKNOWN for every
    tensor argument when the source is not at hand."""
    tensors = launch.tensors()
    code = kernel_code.find(kernel, launch) if kernel is not None else None
    if code is None:
        return dict.fromkeys(tensors, UNKNOWN)
    reads: set[str] = set()
    writes: set[str] = set()
    for access in lanes.accesses(code.fn, tensors, kernel_code.numbers(launch)):
        if access.reads:
            reads |= access.pointer.pointers
        if access.writes:
            writes |= access.pointer.pointers
    return {
        name: BOTH if name in reads and name in writes else READ if name in reads else WRITE if name in writes else UNKNOWN
        for name in tensors
    }


@dataclass
class _Group:
    """One tensor as the launches touch it: its byte range and each launch's use of it."""

    span: tuple[int, int, int]
    name: str  # the arguments it was passed as, "x_ptr/out_ptr"
    record: TensorRecord
    uses: dict[int, str]  # launch position -> mode


def _combined(a: str, b: str) -> str:
    if a == b:
        return a
    if UNKNOWN in (a, b):
        return b if a == UNKNOWN else a
    return BOTH


def _groups(launches: Sequence[tuple[LaunchRecord, dict[str, str]]]) -> list[_Group]:
    groups: list[_Group] = []
    for i, (launch, used) in enumerate(launches):
        for name, t in launch.tensors().items():
            s = span(t)
            group = next((g for g in groups if _overlap(g.span, s)), None)
            if group is None:
                groups.append(_Group(s, name, t, {i: used.get(name, UNKNOWN)}))
                continue
            group.span = (s[0], min(group.span[1], s[1]), max(group.span[2], s[2]))
            if name not in group.name.split("/"):
                group.name += "/" + name
            if t.nbytes > group.record.nbytes:
                group.record = t
            group.uses[i] = _combined(group.uses[i], used.get(name, UNKNOWN)) if i in group.uses else used.get(name, UNKNOWN)
    return groups


def _role(g: _Group, record: CellRecord) -> str:
    """The tensor's part in the cell: "input", "output", "input and output", "intermediate" (a launch writes it
    first) or "made by other code"."""
    given = any(_overlap(g.span, span(t)) for t in record.inputs)
    returned = any(_overlap(g.span, span(t)) for t in record.outputs)
    if given or returned:
        return {(True, True): "input and output", (True, False): "input", (False, True): "output"}[(given, returned)]
    return "intermediate" if _moves(g)[0][1] == WRITE else "made by other code"


UNSEEN = (
    "read before any launch here writes it, and not an input: the code that makes it (a torch operation of the cell)"
    " is not in the record, nor whether it writes it again between the launches, so no saving is claimed"
)


def _moves(g: _Group) -> list[tuple[int, str]]:
    return [(i, kind) for i, mode in sorted(g.uses.items()) for kind in ((READ, WRITE) if mode == BOTH else (mode,))]


def _unseen(g: _Group, role: str) -> bool:
    """Whether a tensor that some launch writes got its first value from code the record does not show."""
    moves = _moves(g)
    return "input" not in role and moves[0][1] != WRITE and any(kind != READ for _, kind in moves)


def _saved(g: _Group, role: str) -> dict[int, int]:
    """Launch position -> bytes of this tensor it moves that one fused kernel would not: every access but the first
    read of what the launches did not make and the output's last write (nothing where :func:`_unseen`)."""
    if _unseen(g, role):
        return {}
    n, moves = g.record.nbytes, _moves(g)
    keep: set[int | None] = set()
    if moves[0][1] != WRITE:  # an input, or a tensor other code made that the launches only read
        keep.add(0)
    if "output" in role:
        keep.add(next((k for k in range(len(moves) - 1, -1, -1) if moves[k][1] in (WRITE, UNKNOWN)), None))
    saved: dict[int, int] = {}
    for k, (i, _) in enumerate(moves):
        if k not in keep:
            saved[i] = saved.get(i, 0) + n
    return saved


def shared(record: CellRecord, launches: Iterable[tuple[LaunchRecord, dict[str, str]]]) -> tuple[SharedTensor, ...]:
    """The tensors more than one launch touches, biggest saving first, with what one fused kernel would save."""
    listed = list(launches)
    out = []
    for g in _groups(listed):
        if len(g.uses) < 2:
            continue
        role = _role(g, record)
        saved = _saved(g, role)
        out.append(
            SharedTensor(
                name=g.name,
                shape=g.record.shape,
                dtype=g.record.dtype,
                nbytes=g.record.nbytes,
                role=role,
                uses=tuple(sorted(g.uses.items())),
                saved_bytes=sum(saved.values()),
                saved_by_launch=tuple(sorted(saved.items())),
                note=UNSEEN if _unseen(g, role) else "",
            )
        )
    return tuple(sorted(out, key=lambda s: -s.saved_bytes))
