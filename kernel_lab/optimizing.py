"""The %%optimize loop: profile → diagnose → rewrite → verify → keep the best, for a few rounds.

Every version lands in a :class:`~kernel_lab.session.Session` on disk; candidates run only in the
judge's subprocess, never in the caller's process.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel_lab.errors import KernelLabError
from kernel_lab.frontend import Cell, Reply, mimebundle, set_cell
from kernel_lab.models import Diagnosis
from kernel_lab.rewrite.base import Attempt, Rewriter, RewriteContext
from kernel_lab.rewrite.search import NEEDS_CODE_CHANGE
from kernel_lab.session import Session, Version

NO_CELL = (
    "Kernel Lab does not know which notebook cell this result came from (the front end sent no cell id),"
    " so it cannot change that cell: use `.apply(N)` to insert version N below."
)
MIN_GAIN = 0.05  # stop when no bottleneck is estimated to hold more than this share of the time
Events = Callable[[str], None]


def make_rewriter(
    kind: str | Rewriter,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    say: Events | None = None,
) -> Rewriter:
    """'search' (built-in), 'llm' (OpenAI-compatible server, its streaming reported to ``say``), or a Rewriter."""
    if not isinstance(kind, str):
        return kind
    if kind == "search":
        from kernel_lab.rewrite.search import SearchRewriter

        return SearchRewriter()
    if kind == "llm":
        from kernel_lab.rewrite.llm import LLMRewriter

        return LLMRewriter(model=model, base_url=base_url, api_key=api_key, on_token=_streaming(say) if say else None)
    raise KernelLabError(f"Unknown rewriter {kind!r}.", fix="Use 'search' (built-in, no LLM) or 'llm'.")


def _streaming(say: Events, every: int = 100) -> Callable[[str], None]:
    """Report the model's streamed answer every ``every`` chunks."""
    count = 0

    def on_token(_token: str) -> None:
        nonlocal count
        count += 1
        if count % every == 0:
            say(f"receiving the model's answer: {count} chunks so far")

    return on_token


def _outcome(v: Version) -> str:
    if v.correct is False:
        return f"wrong or failed: {v.reason}"
    if v.speedup is None:
        return "correct, not timed"
    noise = "" if v.significant else " (within noise)"
    return f"correct, {v.speedup:.2f}x vs the original{noise}"


def _record(session: Session, version: Version, verdict) -> None:
    version.correct, version.reason, version.warnings = verdict.correct, verdict.reason, list(verdict.warnings)
    if verdict.timing is not None:
        t = verdict.timing
        version.time_ms, version.spread_ms = t.candidate_ms, t.candidate_spread
        version.speedup, version.significant = t.speedup, t.significant
        if session.original.time_ms is None:
            session.original.time_ms, session.original.spread_ms = t.reference_ms, t.reference_spread
            session.save(session.original)
    session.save(version)


@dataclass
class OptimizeResult:
    """The session and what to show: versions, the best version's diff, warnings.

    The user's choices (apply, reject, undo) are recorded in the session. The cell is changed only
    through the front end (:mod:`kernel_lab.frontend`), which refuses when the user edited it since.
    """

    session: Session
    stopped: str  # why the loop ended
    notes: tuple[str, ...] = ()  # what the user must know about how it ran (replay, CPU)
    cell: Cell | None = None  # the notebook cell that ran %%optimize, when known

    @property
    def best(self) -> Version:
        return self.session.best()

    def version(self, number: int | None = None) -> Version:
        """Version ``number`` (default: the best)."""
        if number is None:
            return self.best
        self.session.restore(number)  # raises with the valid range
        return self.session.versions[number]

    def apply(self, version: int | None = None) -> str:
        """Put a version (default: the best) into a new cell below; the optimized cell stays as it is.

        Outside IPython, just returns the source. To change the optimized cell itself, use
        :meth:`replace_cell` (the panel's Apply button).
        """
        chosen = self.version(version)
        self.session.act("apply", chosen.number, cell="inserted")
        try:
            from IPython import get_ipython
        except ImportError:
            return chosen.source
        shell = get_ipython()
        if shell is not None:
            shell.set_next_input(chosen.source, replace=False)
        return chosen.source

    def reject(self, version: int) -> None:
        """Never pick this version as the best (undo takes it back)."""
        self.session.act("reject", version)

    def in_cell(self) -> Version:
        """The version the optimized cell holds now."""
        numbers = [a["version"] for a in self.session.actions() if a.get("cell") == "replaced"]
        return self.session.versions[numbers[-1]] if numbers else self.session.original

    def _text(self, version: Version) -> str:
        return self.cell.text if version is self.session.original else self.cell.with_body(version.source)

    def replace_cell(self, version: int | None = None, on_done: Reply = lambda reply: None) -> None:
        """Put a version (default: the best) into the optimized cell, keeping its magic line.

        Asks the JupyterLab extension; ``on_done`` gets its answer. The cell is left alone if the
        user edited it since; the text it had is kept (the original is v000, later ones are versions).
        """
        chosen = self.version(version)
        if self.cell is None or self.cell.id is None:
            on_done({"ok": False, "error": NO_CELL})
            return

        def done(reply: dict) -> None:
            if reply.get("ok"):
                self.session.act("apply", chosen.number, cell="replaced")
            on_done(reply)

        set_cell(self.cell.id, self._text(chosen), self._text(self.in_cell()), done)

    def undo(self, on_done: Reply = lambda reply: None) -> None:
        """Take back the last apply or reject; an apply that replaced the cell's text puts the old text back."""
        actions = self.session.actions()
        if not actions:
            on_done({"ok": False, "error": "Nothing to undo."})
            return
        last = actions[-1]
        if last.get("cell") == "replaced" and (self.cell is None or self.cell.id is None):
            on_done({"ok": False, "error": NO_CELL})
            return
        if last.get("cell") != "replaced":
            self.session.undo()
            on_done({"ok": True, "undone": last})
            return
        now = self._text(self.in_cell())
        earlier = [a["version"] for a in actions[:-1] if a.get("cell") == "replaced"]
        previous = self._text(self.session.versions[earlier[-1]] if earlier else self.session.original)

        def done(reply: dict) -> None:
            if reply.get("ok"):
                self.session.undo()
            on_done({**reply, "undone": last})

        set_cell(self.cell.id, previous, now, done)

    def __str__(self) -> str:
        from kernel_lab.display.versions import text

        return text(self)

    def _repr_html_(self) -> str:
        from kernel_lab.display.versions import html

        return html(self)

    def panel(self):
        """The interactive view (ipywidgets): pick a version, see its diff, apply, reject, undo."""
        from kernel_lab.widgets.versions import panel

        return panel(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Text, static HTML, and in a Jupyter kernel the interactive panel on top of them."""
        return mimebundle(str(self), self._repr_html_(), self.panel)


def optimize(
    source: str,
    *,
    name: str = "cell",
    rounds: int = 3,
    rewriter: str | Rewriter = "search",
    candidates: int = 4,
    root: str | Path = ".kernel_lab",
    replay: str | Path | None = None,
    time_budget: float | None = None,
    seeds: int = 3,
    rtol: float | None = None,
    atol: float | None = None,
    verify_timeout: float = 300.0,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    on_event: Events | None = None,
) -> OptimizeResult:
    """Take the cell's kernel to a faster verified version (see the module docstring)."""
    from kernel_lab import api
    from kernel_lab.verify import verify

    say = on_event or (lambda message: None)
    started = time.monotonic()
    notes: list[str] = []
    device = None
    if replay is not None:
        from kernel_lab.errors import NoGpuError
        from kernel_lab.profiling.ncu import require_gpu

        notes.append(f"Replay mode: the diagnosis comes from the recorded report {replay}, not from profiling this cell.")
        try:
            require_gpu()
        except NoGpuError:
            device = "cpu"
            notes.append("No GPU: candidates were checked with Triton's CPU interpreter; their times are CPU times, not GPU times.")
        for note in notes:
            say(note)
    engine = make_rewriter(rewriter, model=model, base_url=base_url, api_key=api_key, say=say)
    session = Session.create(root, name, source)
    current = session.original
    history: list[Attempt] = []
    diagnosed: Version | None = None  # the last version profiled
    stopped = f"ran {rounds} round(s)"
    for round_ in range(1, rounds + 1):
        if time_budget is not None and time.monotonic() - started > time_budget:
            stopped = f"time budget of {time_budget:.0f} s spent"
            break
        if replay is not None and round_ > 1:
            stopped = "replay mode: one round only (no GPU to profile the new version)"
            break
        if replay is not None:
            say(f"round {round_}: REPLAYING the recorded report {replay} instead of profiling (no GPU used)")
            result = api.diagnose(replay)
        else:
            say(f"round {round_}: profiling {current.label}")
            result = api.profile(current.source, output=session.folder(current) / "profile.ncu-rep")
        diagnoses: list[Diagnosis] = [d for d in result.diagnoses if d.bottlenecks]
        bottlenecks = [b for d in diagnoses for b in d.bottlenecks]
        bottlenecks.sort(key=lambda b: -b.score)
        current.top_bottleneck = bottlenecks[0].kind if bottlenecks else None
        session.save(current)
        diagnosed = current
        if not bottlenecks or bottlenecks[0].score < MIN_GAIN:
            stopped = f"no bottleneck holds more than {MIN_GAIN:.0%} of the time in {current.label}"
            break
        say(f"round {round_}: top bottleneck {bottlenecks[0].kind} ({bottlenecks[0].score:.2f}); rewriting with {engine.name}")
        context = RewriteContext(
            source=current.source,
            bottlenecks=[b.to_dict() for b in bottlenecks[:5]],
            device=result.profile.kernels[0].device if result.profile.kernels else "unknown GPU",
            history=tuple(history),
        )
        proposals = engine.propose(context, n=candidates)
        if not proposals:
            stopped = f"{engine.name} had nothing more to propose for {bottlenecks[0].kind}"
            break
        made = []
        for i, candidate in enumerate(proposals, 1):
            version = session.add(candidate.source, origin=candidate.origin, parent=current.number, explanation=candidate.explanation, answers=candidate.answers)
            say(f"round {round_}: verifying {version.label} ({i}/{len(proposals)}): {candidate.explanation}")
            verdict = verify(session.original.source, candidate.source, seeds=seeds, rtol=rtol, atol=atol, timeout=verify_timeout, device=device)
            _record(session, version, verdict)
            say(f"round {round_}: {version.label} {_outcome(version)}")
            history.append(Attempt(candidate.explanation, _outcome(version)))
            made.append(version)
        best = session.best()
        if best is current or best.number not in {v.number for v in made}:
            stopped = f"round {round_} found nothing faster than {current.label}"
            break
        current = best
    if diagnosed is not None and engine.name == "search" and diagnosed.top_bottleneck in NEEDS_CODE_CHANGE:
        notes.append(
            f"The top bottleneck of {diagnosed.label}, {diagnosed.top_bottleneck}, needs a change to what the code does"
            " (its hint says which); the built-in optimizer only changes launch parameters and a few known CUDA"
            " patterns. Make the change yourself, or try --rewriter llm."
        )
    best = session.best()
    report = session.folder(best) / "profile.ncu-rep"
    if replay is None and best is not session.original and not report.exists():
        say(f"profiling the best version {best.label} for the before/after view")
        api.profile(best.source, output=report)
    return OptimizeResult(session, stopped, tuple(notes))
