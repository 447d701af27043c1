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
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    lock = threading.Lock()
    chunks: dict[str, list[str]] = {"out": [], "err": []}

    def pump(stream: IO[bytes], key: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while data := stream.read1(4096):  # type: ignore[attr-defined]
            text = decoder.decode(data)
            chunks[key].append(text)
            if on_output is not None:
                with lock:
                    on_output(text)

    assert proc.stdout is not None and proc.stderr is not None
    threads = [threading.Thread(target=pump, args=(proc.stdout, "out")), threading.Thread(target=pump, args=(proc.stderr, "err"))]
    for t in threads:
        t.start()
    code: int | None
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        kill_group(proc.pid)
        proc.wait()
        for t in threads:
            t.join()
    return Finished(code, "".join(chunks["out"]), "".join(chunks["err"]))


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
