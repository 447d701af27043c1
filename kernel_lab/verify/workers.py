"""The processes the judge and the screen talk to, and those started ahead, before anyone asks for them.

A :class:`Worker` is one sandbox process (:mod:`kernel_lab.verify.sandbox`, or the screen's
:mod:`kernel_lab.verify.screen_worker`) spoken to through private pipes. Starting one costs seconds (Python, torch and
Triton load: ~4 s on the H100, against ~2.4 s to load a cell in one already started), so the notebook starts the
processes the next ``%%optimize`` takes ahead (:func:`ahead`, after ``%%profile`` and ``%%optimize``): the screen's,
the reference's and a round's candidates'. Those processes have loaded nothing of any cell and hold no CUDA context
until they are given one; each is used once (a candidate's process never sees another cell), and one never given a
cell goes back for the next (:func:`keep`). On the CPU they are forked from a process that has loaded torch and
Triton already (:mod:`kernel_lab.verify.zygote`), in milliseconds.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kernel_lab.processes import child_env, kill_group, signal_name
from kernel_lab.verify import protocol, zygote

SANDBOX = "kernel_lab.verify.sandbox"
SCREEN = "kernel_lab.verify.screen_worker"


class Stopped(Exception):
    """A process ran past the deadline, died, broke the protocol, or its cell failed; the message says which, in
    words, and ``kind`` as a failure kind (:data:`kernel_lab.verify.findings.FAILURES`)."""

    def __init__(self, message: str, kind: str = "crash") -> None:
        super().__init__(message)
        self.kind = kind


class Worker:
    """A sandbox process (a reference, a candidate, or the screen's ``module``), spoken to through private pipes."""

    def __init__(
        self, who: str, device: str | None, folder: Path, timeout: float, module: str = SANDBOX, warm: bool = False
    ) -> None:
        """``warm``: a sandbox loads what recording its kernels needs (the profiler) before it waits for a cell."""
        self.who, self.device, self.module, self.timeout = who, device, module, timeout
        self.folder = folder  # its own: its working directory, its log, the cell it is given
        requests_r, self.requests = protocol.pipe()
        self.replies, replies_w = protocol.pipe()
        self.log = folder / "log.txt"
        env = child_env(MALLOC_MMAP_THRESHOLD_=str(32 << 20), MALLOC_TRIM_THRESHOLD_=str(1 << 40))
        if device == "cpu":
            env.update(CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
        # a sandbox's command line (and folder, and environment) is the same whichever side it serves
        argv = [*(["screen"] if module == SCREEN else []), *(["--device", device] if device else [])]
        argv += ["--warm"] if warm and module == SANDBOX else []
        with self.log.open("w") as log:
            forked = None
            if device == "cpu":  # forked from the zygote: torch and Triton loaded already
                forked = zygote.spawn(module, argv, env, folder, [log.fileno(), requests_r, replies_w])
            self.proc: subprocess.Popen | zygote.Forked = forked or subprocess.Popen(
                [sys.executable, "-m", module, *argv, "--requests", str(requests_r), "--replies", str(replies_w)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=folder,
                start_new_session=True,
                pass_fds=(requests_r, replies_w),
            )
        os.close(requests_r)
        os.close(replies_w)
        self._closed = weakref.finalize(self, Worker._kill, self.proc, self.requests, self.replies)

    @staticmethod
    def _kill(proc: subprocess.Popen | zygote.Forked, *fds: int) -> None:
        kill_group(proc.pid)
        for fd in fds:
            os.close(fd)

    def close(self) -> None:
        """Kill the process (its whole group) without waiting for it to be gone: see :meth:`wait`."""
        self._closed()

    def wait(self) -> None:
        """Wait until the closed process is gone (a process with a CUDA context takes a while to die: close
        many, then wait for each)."""
        self.proc.wait()

    def send(self, request: dict[str, Any], where: str, tensors: list[Any] | None = None) -> None:
        """Send one request (its answer is read with :meth:`more`); Stopped when the process is gone."""
        try:
            protocol.send(self.requests, request, tensors)
        except (protocol.ProtocolError, OSError):
            raise Stopped(self._ended(where)) from None

    def ask(self, request: dict[str, Any], deadline: float, where: str) -> tuple[dict[str, Any], list[Any]]:
        """Send one request and read the answer; Stopped (in words, with ``where``) when it does not come."""
        self.send(request, where)
        return self.more(deadline, where)

    def more(self, deadline: float, where: str) -> tuple[dict[str, Any], list[Any]]:
        """The next message of an answer in several parts."""
        try:
            return protocol.receive(self.replies, deadline=deadline)
        except protocol.Timeout:
            self.close()
            budget = f"its {self.timeout:g} s" + (" for all of its judging (verify_timeout)" if self.who == "candidate" else "")
            raise Stopped(f"the {self.who} timed out {where}: it ran out of {budget}", "timeout") from None
        except (protocol.ProtocolError, OSError):
            raise Stopped(self._ended(where)) from None

    def answer(
        self, request: dict[str, Any], deadline: float, where: str, *, located: bool = False, tensors: list[Any] | None = None
    ) -> tuple[dict[str, Any], list[Any]]:
        """:meth:`ask`, and an error the cell reported becomes Stopped too (``located``: its message says where)."""
        self.send(request, where, tensors)
        return self.answered(deadline, where, located=located)

    def answered(self, deadline: float, where: str, *, located: bool = False) -> tuple[dict[str, Any], list[Any]]:
        """The answer to a request sent earlier, as :meth:`answer` gives it."""
        header, tensors = self.more(deadline, where)
        if "error" in header:
            raise Stopped(
                f"the {self.who} {header['error']}" + ("" if located else f" {where}"), header.get("kind", "runtime_error")
            )
        return header, tensors

    def _ended(self, where: str) -> str:
        try:
            status = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.close()
            return f"the {self.who} broke off talking to the judge {where}"  # a crash, as far as a verdict goes
        lines = [s.strip() for s in self.log.read_text(errors="replace").splitlines() if s.strip()]
        last = f": {lines[-1][:300]}" if lines else ""
        if isinstance(self.proc, zygote.Forked) and self.proc.lost:
            return f"the {self.who} ended its process {where}, and with it the process it was started from{last}"
        if status < 0:
            return f"the {self.who} crashed ({signal_name(-status)}) {where}"
        return f"the {self.who} ended its process (exit status {status}) {where}{last}"


def ended(processes: Iterable[Worker], *, wait: bool = True) -> None:
    """Close each process, then wait until all are gone (they die in parallel) and remove their folders (a cell, a
    log); ``wait=False``: they are waited for in the background (a judge done with its processes need not watch them
    die: seconds with CUDA contexts)."""
    processes = list(processes)
    for process in processes:
        process.close()
    if wait:
        for process in processes:
            process.wait()
            shutil.rmtree(process.folder, ignore_errors=True)
    elif processes:
        threading.Thread(target=ended, args=(processes,), daemon=True).start()


# started ahead -----------------------------------------------------------------------------------------

_ready: dict[tuple[str, str, str | None], list[Worker]] = {}  # (module, who, device) -> started, unused
_lock = threading.Lock()
_numbers = itertools.count(1)
_folder: list[Path] = []  # where every process of this module's own starts (one folder each)


def start(module: str, who: str, device: str | None, timeout: float, warm: bool = False) -> Worker:
    """A new process, in a folder of its own under this Python process's folder of workers (``warm``: see
    :class:`Worker`)."""
    with _lock:
        if not _folder:
            _folder.append(Path(tempfile.mkdtemp(prefix="cells_")))
            atexit.register(shutil.rmtree, _folder[0], True)
        folder = _folder[0] / f"w{next(_numbers)}"
    folder.mkdir()
    return Worker(who, device, folder, timeout, module, warm)


def take(module: str, who: str, device: str | None, timeout: float, warm: bool = False) -> Worker:
    """A process started ahead for ``(module, who, device)`` if one is still alive, else a new one (``warm``: see
    :class:`Worker`)."""
    with _lock:
        ready = _ready.get((module, who, device), [])
        while ready:
            worker = ready.pop()
            if worker.proc.poll() is None:
                worker.timeout = timeout
                return worker
            worker.close()
    return start(module, who, device, timeout, warm)


def keep(workers: Iterable[Worker]) -> None:
    """Keep processes from :func:`start` or :func:`take` that were never given anything (a screen's spare workers)
    for the next who needs them."""
    with _lock:
        for worker in workers:
            _ready.setdefault((worker.module, worker.who, worker.device), []).append(worker)


def ahead(wanted: dict[tuple[str, str], int], device: str | None) -> None:
    """Start processes until ``wanted[(module, who)]`` of each are ready for ``device`` (they load meanwhile, the
    profiler too: nobody waits for them yet)."""
    for (module, who), count in wanted.items():
        with _lock:
            missing = count - sum(w.proc.poll() is None for w in _ready.get((module, who, device), []))
        keep([start(module, who, device, 0.0, warm=True) for _ in range(missing)])


def ready() -> int:
    """How many processes are started ahead and alive."""
    with _lock:
        return sum(w.proc.poll() is None for workers in _ready.values() for w in workers)


def clear() -> None:
    """End every process started ahead."""
    with _lock:
        workers = [w for group in _ready.values() for w in group]
        _ready.clear()
    ended(workers, wait=False)
