"""What a lesson is made of: versions of a kernel (cells with recorded reports) and exercises.

Plain frozen dataclasses; each lesson declares one :class:`Lesson` in
``kernel_lab/course/lessons/<NN_name>/lesson.py`` next to its cells (``<version>.py``) and their
recorded Nsight Compute reports (``<version>.ncu-rep``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Roles of a version of a kernel in a lesson.
ROLES = ("naive", "reference", "attempt", "example", "wrong", "cheat")


@dataclass(frozen=True)
class Work:
    """The least work a problem needs: bytes each input read once and each output written once,
    and floating-point operations. ``bytes`` / DRAM bandwidth and ``flops`` / compute peak are the
    times no version can beat (the roofs)."""

    bytes: float
    flops: float = 0.0
    formula: str = ""  # how it was counted, in words, e.g. "x and y read once, out written once: 3 x 4 B x n"


@dataclass(frozen=True)
class Version:
    """One cell of a lesson: ``name`` is its file stem; ``role`` one of :data:`ROLES`.

    ``naive``: the kernel that shows the problem (the fix exercise's starting point);
    ``reference``: the solution; ``attempt``: a typical wrong or half-right attempt, recorded so a
    check can show what such a version's profile looks like; ``example``: another recorded kernel the
    text uses; ``wrong`` and ``cheat``: never recorded, they prove the checks can fail.
    """

    name: str
    role: str
    title: str  # one line: what this version does
    note: str = ""  # what its recorded profile teaches (attempts: what is still wrong)
    work: Work | None = None  # the least work of its problem, when it is not the lesson's fix problem
    roof: str | None = None  # the roof its position is measured against (default: the fix target's)

    @property
    def recorded(self) -> bool:
        return self.role in ("naive", "reference", "attempt", "example")


@dataclass(frozen=True)
class Target:
    """What a fix must reach on the GPU.

    ``roof``: "DRAM" (least bytes / time against the DRAM roof) or a compute ceiling name as the
    roofline names it ("Tensor BF16/FP16"); ``fraction``: the share of that roof to reach (None: the
    roof is reported, not graded); ``speedup``: at least this much faster than the naive version (the
    judge's medians); ``gone``: bottleneck kinds that must no longer rank among the conductor's top
    two; ``occupancy``: achieved occupancy (%) to reach.
    """

    roof: str = "DRAM"
    fraction: float | None = None
    speedup: float | None = None
    gone: tuple[str, ...] = ()
    occupancy: float | None = None

    def describe(self) -> str:
        parts = []
        if self.fraction is not None:
            parts.append(f">= {self.fraction:.0%} of the {self.roof} roof")
        if self.speedup is not None:
            parts.append(f">= {self.speedup:g}x faster than the naive version")
        if self.occupancy is not None:
            parts.append(f"achieved occupancy >= {self.occupancy:.0f}%")
        if self.gone:
            parts.append("no " + " or ".join(self.gone) + " left in the conductor's ranking")
        return ", ".join(parts) or "correct"


@dataclass(frozen=True)
class Diagnose:
    """A diagnosis exercise: name what limits ``version`` (its recorded report), on which line, and
    with which metric as evidence. ``expect`` is the kind the lesson teaches; the answer is graded
    against the conductor's ranking of the report (a test checks they agree). ``discussion``: what the
    lesson says about the answer, shown only once an answer was graded (or by ``course.solution``)."""

    id: str
    version: str
    expect: str
    question: str
    ask_line: bool = True
    ask_limiter: bool = False
    discussion: str = ""


@dataclass(frozen=True)
class Estimate:
    """A number to work out by hand (e.g. the DRAM bytes a version moves), checked against the value
    ``measure`` names in the recorded report of ``version`` ("dram_bytes" or "duration_us"), within
    ``tolerance`` (relative). ``discussion``: as for :class:`Diagnose`, shown once answered."""

    id: str
    version: str
    measure: str
    question: str
    tolerance: float = 0.15
    unit: str = "bytes"
    discussion: str = ""


@dataclass(frozen=True)
class Fix:
    """A fix exercise: edit the ``starter`` version until it meets ``target``; ``reference`` is the
    solution. The judge uses the starter as the reference for correctness and speed."""

    id: str
    starter: str
    reference: str
    target: Target
    work: Work
    task: str
    graded_by_roof: bool = False  # capstone: the score grows with the share of the roof reached
    plausible_speedup: float = 10.0  # the judge flags more than 10x; a lesson that expects more says so


@dataclass(frozen=True)
class Lesson:
    id: str  # "02_coalescing": folder, notebook and tutorial name
    title: str
    summary: str  # one line, for the README and the progress view
    language: str  # "triton" or "cuda" (the fix exercise's)
    versions: tuple[Version, ...]
    exercises: tuple = field(default=())  # Diagnose | Estimate | Fix

    @property
    def fix(self) -> Fix | None:
        """The lesson's (first) fix exercise."""
        return next((e for e in self.exercises if isinstance(e, Fix)), None)

    @property
    def number(self) -> int:
        return int(self.id.split("_", 1)[0])

    def version(self, name: str) -> Version:
        for v in self.versions:
            if v.name == name:
                return v
        raise KeyError(f"Lesson {self.id} has no version {name!r}; versions: {', '.join(v.name for v in self.versions)}")

    def exercise(self, name: str):
        for e in self.exercises:
            if e.id == name:
                return e
        raise KeyError(f"Lesson {self.id} has no exercise {name!r}; exercises: {', '.join(e.id for e in self.exercises)}")

    def of_role(self, role: str) -> tuple[Version, ...]:
        return tuple(v for v in self.versions if v.role == role)
