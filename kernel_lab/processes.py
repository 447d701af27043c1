"""Child processes: the environment they start with, and running one with a timeout.

Profiling and judging run user code in fresh Python processes; both go through here, so a hang
kills the whole process group (the child and anything it started) the same way everywhere.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment, with Kernel Lab importable, unbuffered output and ``extra`` on top."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Finished:
    """How a child process ended: its exit status (None when it ran past its timeout) and its output."""

    code: int | None
    stdout: str
    stderr: str


class Running:
    """A child started in a new process group, its stdout and stderr collected as they arrive (a child may be
    started ahead of its work and waited for later: :meth:`finish`)."""

    def __init__(self, command: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._chunks: dict[str, list[str]] = {"out": [], "err": []}
        self._on_output: Callable[[str], None] | None = None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, "out"), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, "err"), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _pump(self, stream: IO[bytes], key: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while data := stream.read1(4096):  # type: ignore[attr-defined]
            text = decoder.decode(data)
            with self._lock:
                self._chunks[key].append(text)
                if self._on_output is not None:
                    self._on_output(text)

    def finish(self, timeout: float | None = None, on_output: Callable[[str], None] | None = None) -> Finished:
        """Wait for the child to end; ``on_output`` hears what it printed so far, then the rest as it comes.
        Past ``timeout`` seconds the whole group is killed and ``code`` is None."""
        with self._lock:
            self._on_output = on_output
            if on_output is not None:
                for text in (*self._chunks["out"], *self._chunks["err"]):
                    on_output(text)
        code: int | None
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            self.kill()
            for t in self._threads:
                t.join()
        return Finished(code, "".join(self._chunks["out"]), "".join(self._chunks["err"]))

    def kill(self, wait: bool = True) -> None:
        """Kill the child's whole group and reap it (``wait=False``: in the background)."""
        kill_group(self.proc.pid)
        if wait:
            self.proc.wait()
        else:
            threading.Thread(target=self.proc.wait, daemon=True).start()


def run(
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    on_output: Callable[[str], None] | None = None,
) -> Finished:
    """Run ``command`` in a new process group; ``on_output`` gets its stdout and stderr text as it arrives.

    Past ``timeout`` seconds the whole group is killed and ``code`` is None.
    """
    return Running(command, env=env).finish(timeout, on_output)


def kill_group(pid: int) -> None:
    """Kill the process group led by ``pid`` (a child and everything it started), if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def signal_name(number: int) -> str:
    """'signal 11, SIGSEGV' for a child that died of a signal."""
    try:
        return f"signal {number}, {signal.Signals(number).name}"
    except ValueError:
        return f"signal {number}"
