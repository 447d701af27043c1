"""One candidate's trial: its process loads its cell, answers the checks on every input set the reference made, and
is recorded beside the reference; what it gets wrong comes back as :class:`Rejected` with a failure kind.

A trial is handed the :class:`~kernel_lab.verify.reference.Reference` (its inputs, results and record) and the memory
the judge lends (:class:`~kernel_lab.verify.handover.Lending`), never the judge: it reads nothing else of it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from kernel_lab.cells import kernel_names, language
from kernel_lab.rewrite.launch import parameter_only
from kernel_lab.verify import checks, handover
from kernel_lab.verify.findings import Finding
from kernel_lab.verify.reference import Expected, Reference, on, survives
from kernel_lab.verify.verdict import Timing, Verdict
from kernel_lab.verify.workers import Stopped, Worker

if TYPE_CHECKING:
    import torch


class Rejected(Exception):
    """The candidate is wrong: the message says how, in words, and ``kind`` as a failure kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors hold the same bytes."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(*(t.contiguous().reshape(-1).view(torch.uint8) for t in (a, b))))


class Trial:
    """One candidate judged against one reference (see the module docstring)."""

    def __init__(
        self,
        reference: Reference,
        candidate: Worker,
        source: str,
        lending: handover.Lending,
        phase: Callable[[str, float], None] = lambda name, started: None,
    ) -> None:
        """Write the cell in the candidate's process's folder and have it start loading (its answer is read by
        :meth:`check`). ``phase(name, started)`` hears each step done."""
        self.reference, self.candidate, self.source, self.lending = reference, candidate, source, lending
        self.phase = phase
        self.triton = language(source) == "triton" and bool(kernel_names(source))  # its launches are watched
        self.options = reference.options
        self.deadline = time.monotonic() + self.options.timeout
        self.warnings: list[Finding] = []
        self.clocks: list[Finding | None] = []  # per timed batch: what the judge's clock does not bear out, or None
        self.errors: tuple[float, float] | None = None
        self.checks = 0
        self.handed: set[int] = set()  # the input sets this candidate has its copies of
        path = candidate.folder / "cell.py"
        path.write_text(source)
        self.unsent: Stopped | None = None
        try:
            candidate.send({"cmd": "load", "path": str(path)}, "while loading the cell")
        except Stopped as stop:
            self.unsent = stop

    def start(self) -> None:
        """The candidate's time counts from now: its loading overlapped the reference's preparation."""
        self.deadline = time.monotonic() + self.options.timeout

    def check(self, record: Any) -> None:
        """Load the cell and check it on every input set, then record its kernels beside the reference's (``record``:
        a call that has the reference record its own, once); Rejected or Stopped, saying why, unless it is right."""
        if self.unsent is not None:
            raise self.unsent
        started = time.perf_counter()
        self.candidate.answered(self.deadline, "while loading the cell", located=True)
        self.phase("candidate: cell loaded", started)
        checked = self.reference.checked()
        for k, expected in enumerate(checked, 1):
            started = time.perf_counter()
            self._check(expected, f"on input set {k} of {len(checked)} ({expected.set.describe()})")
            self.phase("candidate: one input set checked", started)
        record()
        if self.reference.launched is not None:  # else the reference stopped: every verdict says so
            started = time.perf_counter()
            self.warnings += self._whose_work()
            self.phase("candidate: its kernels recorded", started)

    def verdict(self, correct: bool, reason: str, shapes: tuple[Timing, ...] = (), failure: str | None = None) -> Verdict:
        """The verdict, with the findings that follow from the timings (the headline: the largest shape)."""
        headline = shapes[0] if shapes else None
        warnings = list(self.warnings)
        launch_only = parameter_only(self.reference.source, self.source)
        warning, note = checks.slower_shapes(shapes)
        found = [checks.suspicious_speedup(headline, launch_only), warning]
        warnings += [f for f in found if f is not None]
        notes = [*self.reference.notes, *([note] if note else [])]
        max_abs, max_rel = self.errors or (None, None)
        return Verdict(
            correct,
            reason,
            tuple(warnings) if correct else (),
            max_abs,
            max_rel,
            self.checks,
            headline,
            shapes,
            tuple(notes),
            None if correct else failure,
        )

    # correctness ---------------------------------------------------------------------------------------

    def _check(self, expected: Expected, where: str) -> None:
        """Two calls of the candidate on one input set; Rejected, saying what is wrong, unless both are right."""
        from kernel_lab.verify.compare import uses_tf32

        reply, tensors, boxes = self._checked(expected, where)
        self.checks += 1
        first, second, inputs_after = self._unpack(reply, tensors, expected, boxes)
        del boxes  # copied out: back to the lending pool before the comparisons
        tf32 = uses_tf32(self.reference.source)
        for call, outputs, metas, used in (
            ("first call", first, reply["first"], inputs_after[0]),
            ("second call", second, reply["second"], inputs_after[1]),
        ):
            here = f"{where}; {call}"
            self._inputs_kept(used, expected, here)
            if len(outputs) != len(expected.outputs):
                raise Rejected(
                    "wrong_shape",
                    f"the candidate returned {len(outputs)} outputs but the reference {len(expected.outputs)} ({here})",
                )
            got = list(outputs) + [used.get(i, expected.inputs.get(i)) for i in expected.in_place]
            for k, (g, w) in enumerate(zip(got, expected.outputs + expected.in_place_values)):
                self._compare(k, g, w, expected, tf32, here)
            self._layout(metas, expected, here)
        reused = [
            k
            for k, (a, b) in enumerate(zip(reply["first"], reply["second"]))
            if a["storage"] == b["storage"] and a["storage"][1] > a["storage"][0]
        ]
        if reused and not any(expected.metas[k]["aliases_input"] for k in reused):
            raise Rejected(
                "reused_buffer",
                f"the candidate returns the same buffer from every call ({where}): a second call overwrites the first call's"
                " result; allocate each output anew",
            )

    def _inputs_kept(self, used: dict[int, Any], expected: Expected, here: str) -> None:
        for i, after in used.items():
            if i not in expected.in_place and not on(self.reference.scratch, same_bits, after, expected.inputs[i]):
                raise Rejected(
                    "changed_input",
                    f"the candidate changed its input {self._name(i)}, which the reference leaves unchanged ({here}): write"
                    " results to new tensors",
                )

    def _compare(self, k: int, got: Any, want: Any, expected: Expected, tf32: bool, here: str) -> None:
        """One output (or input written in place) against the reference's, and against the float64 truth."""
        from kernel_lab.verify.compare import against_truth, compare, tolerance

        n = len(expected.outputs)
        label = (
            ("output" if n == 1 else f"output {k}")
            if k < n
            else f"input {self._name(expected.in_place[k - n])} (written in place)"
        )
        limits = tolerance(want.dtype, tf32, self.options.rtol, self.options.atol)
        problem, errors = on(self.reference.scratch, compare, got, want, more=limits)
        if errors is not None:
            worst = self.errors or (0.0, 0.0)
            self.errors = (max(errors[0], worst[0]), max(errors[1], worst[1]))
        if problem:
            raise Rejected(problem.kind, f"the candidate's {label} {problem.text} ({here})")
        if expected.truth is not None and k < len(expected.truth) and self.options.rtol is None:
            worse = on(self.reference.scratch, against_truth, got, want, expected.truth[k])
            if worse:
                raise Rejected("lower_precision", f"the candidate's {label} {worse} ({here})")

    def _name(self, i: int) -> str:
        """The name of ``run``'s argument ``i``."""
        params = self.reference.params
        return params[i] if i < len(params) else f"argument {i + 1}"

    @staticmethod
    def _unpack(
        reply: dict[str, Any], tensors: list[Any], expected: Expected, boxes: list[torch.Tensor]
    ) -> tuple[list[Any], list[Any], tuple[dict[int, Any], dict[int, Any]]]:
        """(first outputs, second outputs, inputs each call wrote) from a check's answer: a first output the
        candidate wrote into the buffer lent for it is copied out of it (the candidate can still write there);
        a second output, or input the second call wrote, that was not sent repeats the first's bits; an input
        not listed as written is the set as made."""
        out_of_form = Rejected("protocol", "the candidate's process answered a check out of form (was its harness changed?)")
        try:
            n = len(reply["first"])
            repeated, written = set(reply["repeated"]), [list(call) for call in reply["written"]]
            mailed, rewritten = set(reply.get("mailed", [])), set(reply.get("rewritten", []))
            in_form = len(reply["second"]) == n and repeated <= set(range(n)) and len(written) == 2
            in_form = in_form and mailed <= set(range(min(n, len(boxes))))
            in_form = in_form and all(i in expected.inputs for call in written for i in call)
            in_form = in_form and rewritten <= set(written[0]) & set(written[1])
        except (KeyError, TypeError, ValueError):
            in_form = False
        if not in_form:
            raise out_of_form
        sent = iter(tensors)
        first = [boxes[k].clone() if k in mailed else next(sent, None) for k in range(n)]
        second = [first[k] if k in repeated else next(sent, None) for k in range(n)]
        after_first = {i: next(sent, None) for i in written[0]}
        after = (after_first, {i: after_first[i] if i in rewritten else next(sent, None) for i in written[1]})
        if any(t is None for t in first + second) or any(t is None for call in after for t in call.values()):
            raise Rejected(
                "protocol", "the candidate's process sent fewer tensors than its answer lists (was its harness changed?)"
            )
        return first, second, (after[0], after[1])

    def _checked(self, expected: Expected, where: str) -> tuple[dict[str, Any], list[Any], list[torch.Tensor]]:
        """The candidate's answer on one input set, and the buffers lent for its outputs (on a GPU: one per
        output of the reference that lies there)."""
        scratch = self.reference.scratch
        boxes = []
        if scratch.type == "cuda" and all(m["device"] == "cuda" for m in expected.metas):
            boxes = [self.lending.mailbox(m["shape"], m["dtype"], scratch) for m in expected.metas]
        request: dict[str, Any] = {"cmd": "check", "set_id": expected.set.id}
        if boxes:
            request["into"] = [handover.share(b) for b in boxes]
        reply, tensors = self.ask(request, [expected.set.id], where)
        self.handed.discard(expected.set.id)  # the candidate let go of it: handed again if its kernels are recorded on it
        return reply, tensors, boxes

    def ask(
        self, request: dict[str, Any], sets: list[int], where: str, tensors: list[Any] | None = None
    ) -> tuple[dict[str, Any], list[Any]]:
        """Ask the candidate, handing it its own copy of each of ``sets`` it does not have yet (``tensors``: what the
        request itself carries, first)."""
        handed: dict[int, list[Any]] = {}
        carried: list[Any] = list(tensors or [])
        kept: list[Any] = []  # the copies handed over by CUDA IPC live until the candidate has taken them
        for i in sets:
            if i not in self.handed:
                expected = self.reference.expected[i]
                said, more, copies = handover.pack(expected.handed(), self.reference.scratch, self.lending, expected.set.layout)
                handed[i] = [{**item, "tensor": item["tensor"] + len(carried)} if "tensor" in item else item for item in said]
                carried += more
                kept += copies
        if handed:
            request = {**request, "handed": handed}
        answer = self.candidate.answer(request, self.deadline, where, tensors=carried)
        self.handed |= set(handed)
        del kept
        return answer

    @staticmethod
    def _layout(metas: list[dict[str, Any]], expected: Expected, where: str) -> None:
        """Rejected when an output is a view of an input, or laid out unlike the reference's."""
        for k, (got, want) in enumerate(zip(metas, expected.metas)):
            label = "output" if len(expected.metas) == 1 else f"output {k}"
            if got["aliases_input"] and not want["aliases_input"]:
                raise Rejected(
                    "aliased_output",
                    f"the candidate's {label} shares memory with its input {got['aliases_input'][0] + 1} (a view such as"
                    f" x.t(), not a new tensor) where the reference returns a tensor of its own ({where})",
                )
            if got["device"] != want["device"]:
                raise Rejected(
                    "wrong_layout",
                    f"the candidate's {label} is on {got['device']} but the reference's is on {want['device']} ({where})",
                )
            if got["contiguous"] != want["contiguous"] or (not want["contiguous"] and got["strides"] != want["strides"]):
                raise Rejected(
                    "wrong_layout",
                    f"the candidate's {label} has strides {tuple(got['strides'])} where the reference's has "
                    f"{tuple(want['strides'])} ({where}): return the layout the reference returns",
                )

    # whose work ----------------------------------------------------------------------------------------

    def _whose_work(self) -> list[Finding]:
        """Findings about where the candidate's work happens (its own kernels, or not), against the reference."""
        observed = self.reference.observed
        assert observed is not None and self.reference.launched is not None
        seen, _ = self.ask({"cmd": "observe", "set_id": observed.set.id}, [observed.set.id], "while recording its kernels")
        names = kernel_names(self.source)
        own = re.compile(rf"(?:void )?(?:\w+::)*(?:{'|'.join(map(re.escape, names))})\b") if names else None
        ref = self.reference.launched
        found = [checks.fallback(seen, own), checks.foreign_ops(seen, ref), checks.library_calls(seen, ref, own)]
        if self.triton:
            found.append(checks.knocked_out(self._knocked_out(observed), bool(self.reference.survives)))
        return [f for f in found if f is not None]

    def _knocked_out(self, expected: Expected) -> bool:
        """Whether the candidate's output on ``expected``'s inputs is still right with its own kernels doing nothing."""
        scratch = self.reference.scratch
        boxes = []
        if scratch.type == "cuda" and all(m["device"] == "cuda" for m in expected.metas):
            boxes = [self.lending.mailbox(m["shape"], m["dtype"], scratch) for m in expected.metas]
        request: dict[str, Any] = {"cmd": "knockout", "set_id": expected.set.id}
        if boxes:
            request["into"] = [handover.share(b) for b in boxes]
        reply, tensors = self.ask(request, [expected.set.id], "with its own kernels made to do nothing")
        return survives(reply, tensors, boxes, expected, self.reference)

    def forget(self) -> None:
        """Have the candidate let go of its input sets (its checks are over: it is timed on the judge's); a process
        that does not answer is left for its timing to report."""
        with suppress(Stopped):
            self.ask({"cmd": "forget", "keep": []}, [], "letting go of its input sets")

    # timing --------------------------------------------------------------------------------------------

    def timed(self, reply: dict[str, Any], trusted_ms: float) -> None:
        """Note one batch of timed calls: whether its clock is borne out by the judge's own, what its calls left
        running, and timed calls that launched none of the cell's own kernels."""
        self.clocks.append(checks.untrusted_clock(reply, trusted_ms))
        for found in (checks.left_running(reply), checks.no_own_launches(reply, self.triton)):
            if found is not None and not any(w.kind == found.kind for w in self.warnings):
                self.warnings.append(found)

    def timings_done(self, headline: Timing | None, moved_bytes: int) -> None:
        """The warnings of the whole timing: clocks not borne out in most batches, bytes above the memory roof."""
        for found in (
            checks.clock(self.clocks),
            checks.above_roof(moved_bytes, headline.candidate_ms, self.reference.device_name) if headline else None,
        ):
            if found is not None and found not in self.warnings:
                self.warnings.append(found)

    def fingerprints(self, candidate: torch.Tensor, reference: torch.Tensor, shape: tuple, first: int = 0) -> None:
        """Rejected when the outputs of the timed calls differ from the reference's (compared by fingerprint): the
        reference made the batch's calls from ``first`` on, the candidate all of them."""
        from kernel_lab.verify.compare import tolerance, uses_tf32

        candidate = candidate[first : first + len(reference)]
        if candidate.shape != reference.shape:
            raise Rejected(
                "stale_when_timed",
                f"the candidate's outputs during timing on shape {shape} are not the reference's (another number or shape)",
            )
        sample = next(e for e in self.reference.expected.values() if e.set.shape == shape)
        rtol, atol = max(
            tolerance(t.dtype, uses_tf32(self.reference.source), self.options.rtol, self.options.atol) for t in sample.outputs
        )
        for call, (c_row, r_row) in enumerate(zip(candidate, reference)):
            if not checks.fingerprints_agree(c_row, r_row, rtol, atol):
                raise Rejected(
                    "stale_when_timed",
                    f"the candidate's output of timed call {first + call + 1} on shape {shape} differs from the "
                    "reference's (the timed calls get fresh inputs too): it gives right answers only when checked",
                )
