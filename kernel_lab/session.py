"""Every version of a cell, on disk: source, diagnosis, verdict, timings, explanation.

Layout (``.kernel_lab/`` beside the notebook by default)::

    .kernel_lab/<session>/v000/cell.py       the original
    .kernel_lab/<session>/v000/version.json  origin, parent, explanation, verdict, top bottleneck
    .kernel_lab/<session>/v000/profile.ncu-rep   when it was profiled
    .kernel_lab/<session>/v001/...
    .kernel_lab/<session>/actions.jsonl      what the user did: apply, reject, undo (append-only)

Nothing is ever overwritten; the best verified version is derived from the files, so a session
can be reopened (``Session.open``) after a restart.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernel_lab.errors import KernelLabError


@dataclass
class Version:
    """One version of the cell."""

    number: int
    source: str
    origin: str  # "original", "search", "llm:<model>", "user"
    parent: int | None = None
    explanation: str = ""
    answers: str = ""  # bottleneck kind it addresses
    correct: bool | None = None  # None: not verified (the original is the reference)
    reason: str = ""
    failure: str | None = None  # why it is not correct, as a kind (kernel_lab.verify.findings.FAILURES)
    warnings: list[str] = field(default_factory=list)  # what blocks it until the user confirms it
    warning_kinds: list[str] = field(default_factory=list)  # their kinds (kernel_lab.verify.findings.WARNINGS)
    notes: list[str] = field(default_factory=list)  # what the judge could not check, or skipped
    time_ms: float | None = None  # median, when timed
    spread_ms: float | None = None  # interquartile range
    reference_ms: float | None = None  # the original's median, timed interleaved with this version
    speedup: float | None = None  # reference_ms / time_ms: both from that one run
    significant: bool | None = None
    screen_ms: float | None = None  # a launch-parameter variant's time in the screen (see Session.best)
    interpreted: bool = False  # timed by Triton's CPU interpreter (no GPU): its times are not a GPU's
    top_bottleneck: str | None = None
    worker: int | None = None  # the LLM agent's worker that made it, and at which of its turns
    turn: int | None = None
    created: float = field(default_factory=time.time)

    @property
    def label(self) -> str:
        return f"v{self.number:03d}"


ORIGINAL_DRIFT = 0.05  # the original's times across runs are worth a note when this far apart
TIMING_NOTE = (
    "Each version was timed interleaved with the original in one run: its speedup is original_ms / time_ms "
    "of that run; iqr_ms is the spread of its timings."
)


def _speed(version: Version) -> float:
    return version.speedup or 0.0


def speed(version: Version, short: bool = False) -> str:
    """A version's speedup in words, qualified where Triton's CPU interpreter timed it: "2.10x", "2.10x on the
    CPU", "2.10x (Triton's CPU interpreter, not a GPU speedup)"."""
    if not version.speedup:
        return "not timed"
    if not version.interpreted:
        return f"{version.speedup:.2f}x"
    return f"{version.speedup:.2f}x " + ("on the CPU" if short else "(Triton's CPU interpreter, not a GPU speedup)")


def _tied(a: Version, b: Version) -> bool:
    """Whether the judge's timings cannot tell ``a`` from ``b``: their speedups differ by less than half their
    timings' interquartile ranges (relative to their medians) together."""
    if not (a.speedup and b.speedup and a.time_ms and b.time_ms and a.spread_ms is not None and b.spread_ms is not None):
        return False
    return abs(math.log(a.speedup / b.speedup)) < (a.spread_ms / a.time_ms + b.spread_ms / b.time_ms) / 2


def _blocked(version: Version, confirmed: set[int]) -> bool:
    """Whether the judge's warnings hold ``version`` back, given the versions the user ``confirmed``."""
    return bool(version.warnings) and version.number not in confirmed


class Session:
    """A folder of versions; append-only."""

    ACTIONS = ("apply", "reject", "confirm")  # what a user can do to a version (and undo)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.versions: list[Version] = []

    @classmethod
    def create(cls, root: str | Path, name: str, original: str) -> Session:
        """A new session under ``root`` whose version 0 is ``original``."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = Path(root) / f"{stamp}-{name}"
        suffix = 1
        while path.exists():
            suffix += 1
            path = Path(root) / f"{stamp}-{name}-{suffix}"
        path.mkdir(parents=True)
        session = cls(path)
        session.add(original, origin="original")
        return session

    @classmethod
    def open(cls, path: str | Path) -> Session:
        """Reopen a session folder."""
        session = cls(Path(path))
        for folder in sorted(session.path.glob("v[0-9][0-9][0-9]")):
            data = json.loads((folder / "version.json").read_text())
            session.versions.append(Version(source=(folder / "cell.py").read_text(), **data))
        if not session.versions:
            raise KernelLabError(
                f"{path} holds no Kernel Lab versions.", fix="Pass the folder of a session (.kernel_lab/<session>)."
            )
        return session

    def folder(self, version: Version) -> Path:
        return self.path / version.label

    def add(self, source: str, **meta: Any) -> Version:
        """Store a new version and return it."""
        version = Version(number=len(self.versions), source=source, **meta)
        folder = self.folder(version)
        folder.mkdir()
        (folder / "cell.py").write_text(source)
        self.versions.append(version)
        self.save(version)
        return version

    def save(self, version: Version) -> None:
        """Write a version's metadata (its source never changes)."""
        data = {k: v for k, v in asdict(version).items() if k not in ("number", "source")}
        (self.folder(version) / "version.json").write_text(json.dumps({"number": version.number, **data}, indent=2))

    @property
    def original(self) -> Version:
        return self.versions[0]

    def best(self) -> Version:
        """The fastest correct version with a significant speedup, not rejected and not flagged by the judge
        (unless the user confirmed it), else the original. Among the versions the judge's timings cannot tell from
        the fastest (:func:`_tied`), when all were screened (launch-parameter variants of one cell, timed on one input
        on the device's clock with caches flushed, many calls in one process): the one the screen timed fastest; on
        Triton's CPU interpreter, which cannot time launch parameters: the first one found."""
        return self._best()[0]

    def why_best(self) -> str | None:
        """Why the best version is not the one with the largest speedup (the screen broke a tie), in words."""
        best, fastest = self._best()
        if best is fastest:
            return None
        if best.interpreted:
            return (
                f"{best.label} is the best version: the judge's timings cannot tell it from {fastest.label} "
                f"({best.speedup:.2f}x against {fastest.speedup:.2f}x on the CPU, within their spread), and Triton's "
                "CPU interpreter cannot time launch parameters: the version found first is kept."
            )
        return (
            f"{best.label} is the best version: the judge's timings cannot tell it from {fastest.label} "
            f"({best.speedup:.2f}x against {fastest.speedup:.2f}x, within their spread), and the screen timed it "
            f"faster ({best.screen_ms:.3f} ms against {fastest.screen_ms:.3f} ms, the device's clock, caches flushed)."
        )

    def _best(self) -> tuple[Version, Version]:
        """(the best version, the one with the largest speedup)."""
        free, _ = self._contenders()
        fastest = max(free, key=_speed, default=self.original)
        tied = [v for v in free if v is fastest or _tied(v, fastest)]
        if len(tied) > 1 and fastest.interpreted:  # no choice on what the interpreter cannot time (num_warps, ...)
            return min(tied, key=lambda v: v.number), fastest
        if len(tied) > 1 and all(v.screen_ms is not None for v in tied):
            return min(tied, key=lambda v: v.screen_ms or 0.0), fastest
        return fastest, fastest

    def _contenders(self) -> tuple[list[Version], list[Version]]:
        """The correct versions with a significant speedup that the user has not rejected: (those free to be chosen,
        those the judge's warnings hold back, see :meth:`blocked`), the user's actions read once."""
        rejected, confirmed = self.rejected, self.confirmed
        free: list[Version] = []
        held: list[Version] = []
        for v in self.versions:
            if v.correct and v.significant and v.speedup and v.speedup > 1 and v.number not in rejected:
                (held if _blocked(v, confirmed) else free).append(v)
        return free, held

    def actions(self) -> list[dict[str, Any]]:
        """The user's apply/reject actions still in effect, oldest first (undone ones are gone)."""
        log = self.path / "actions.jsonl"
        stack: list[dict[str, Any]] = []
        for line in log.read_text().splitlines() if log.exists() else ():
            entry = json.loads(line)
            if entry["action"] == "undo":
                if stack:
                    stack.pop()
            else:
                stack.append(entry)
        return stack

    def act(self, action: str, number: int, **details: Any) -> None:
        """Record that the user applied (put into a cell) or rejected version ``number``."""
        if action not in self.ACTIONS:
            raise KernelLabError(f"Unknown action {action!r}.", fix=f"Use one of {', '.join(self.ACTIONS)}.")
        self.restore(number)  # checks that it exists
        if action == "reject" and number == 0:
            raise KernelLabError("The original (v000) cannot be rejected.", fix="Reject a candidate version instead.")
        self._log({"action": action, "version": number, **details})

    def undo(self) -> dict[str, Any] | None:
        """Take back the last apply or reject still in effect; returns it, or None if there was none."""
        actions = self.actions()
        if actions:
            self._log({"action": "undo"})
        return actions[-1] if actions else None

    def _log(self, entry: dict[str, Any]) -> None:
        with open(self.path / "actions.jsonl", "a") as log:
            log.write(json.dumps({**entry, "time": time.time()}) + "\n")

    @property
    def rejected(self) -> set[int]:
        return {a["version"] for a in self.actions() if a["action"] == "reject"}

    @property
    def confirmed(self) -> set[int]:
        """Flagged versions the user looked at and allowed."""
        return {a["version"] for a in self.actions() if a["action"] == "confirm"}

    def blocked(self, version: Version) -> bool:
        """Whether the judge's warnings keep this version from being chosen or applied."""
        return _blocked(version, self.confirmed)

    def waiting(self) -> Version | None:
        """The fastest right version that the judge's warnings hold back although it beats the best: it waits for
        the user's second look (and confirmation), if there is one."""
        free, held = self._contenders()
        best = max((_speed(v) for v in free), default=1.0)
        return max((v for v in held if _speed(v) > best), key=_speed, default=None)

    def restore(self, number: int) -> str:
        """The source of version ``number`` (nothing is deleted)."""
        if not 0 <= number < len(self.versions):
            raise KernelLabError(f"No version {number} in this session.", fix=f"Versions are 0 to {len(self.versions) - 1}.")
        return self.versions[number].source

    def table(self):
        """The versions as a DataFrame: time, speedup, correctness, top bottleneck, origin.

        Each candidate's time and speedup come from one run that timed it interleaved with the original
        (``original_ms``), so a row is consistent with itself even where runs differ (``TIMING_NOTE``)."""
        import pandas as pd

        rejected, confirmed = self.rejected, self.confirmed

        def state(v: Version) -> str:
            word = {True: "yes", False: "no", None: "reference"}[v.correct]
            if v.number in rejected:
                return word + " (rejected)"
            if v.correct and v.warnings:
                return word + (" (confirmed by you)" if v.number in confirmed else " (blocked: see the warning)")
            return word

        def note(v: Version) -> str:
            if v is self.original:
                return self._original_times() or v.explanation
            return v.reason if v.correct is False else "; ".join(v.warnings) or v.explanation

        return pd.DataFrame(
            [
                {
                    "version": v.label,
                    "origin": v.origin,
                    "time_ms": v.time_ms,
                    "iqr_ms": v.spread_ms,
                    "original_ms": v.reference_ms,
                    "speedup": v.speedup,
                    "correct": state(v),
                    "top_bottleneck": v.top_bottleneck,
                    "note": note(v),
                }
                for v in self.versions
            ]
        )

    def _original_times(self) -> str:
        """How the original's time varied across the runs that timed it beside each version, if it did."""
        times = [v.reference_ms for v in self.versions[1:] if v.reference_ms is not None]
        low, high = min(times, default=0.0), max(times, default=0.0)
        if len(times) < 2 or high < (1 + ORIGINAL_DRIFT) * low:
            return ""
        return f"timed beside each version: {low:.3g}–{high:.3g} ms ({high / low - 1:.0%} apart); this row is the first run"
