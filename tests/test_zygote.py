"""CPU sandboxes forked from the zygote: each in its own session and folder, ended as told, its exit status read as
from a process started directly; a zygote a candidate kills is replaced, and its orphans end as lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernel_lab.verify import workers, zygote

pytestmark = pytest.mark.slow  # the zygote imports torch


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def candidate() -> workers.Worker:
    return workers.start(workers.SANDBOX, "candidate", "cpu", 60.0)


def test_a_cpu_sandbox_is_forked_into_a_session_and_folder_of_its_own_and_its_end_is_read_as_before():
    first, second = candidate(), candidate()
    assert isinstance(first.proc, zygote.Forked) and isinstance(second.proc, zygote.Forked)
    assert parent_of(first.proc.pid) == parent_of(second.proc.pid) == zygote._current[0].proc.pid
    assert os.getpgid(first.proc.pid) == first.proc.pid and os.getsid(first.proc.pid) == first.proc.pid
    assert Path(f"/proc/{first.proc.pid}/cwd").resolve() == first.folder.resolve()
    assert "--warm" not in first.proc.args and first.proc.poll() is None
    os.dup2(os.open(os.devnull, os.O_WRONLY), first.requests)  # its requests end: the sandbox returns
    assert first.proc.wait(timeout=30) == 0
    os.kill(second.proc.pid, signal.SIGSEGV)
    assert second.proc.wait(timeout=30) == -signal.SIGSEGV
    assert "crashed (signal 11, SIGSEGV) at its start" in second._ended("at its start")
    third = candidate()
    with pytest.raises(subprocess.TimeoutExpired):
        third.proc.wait(timeout=0.2)
    third.close()


def test_a_killed_zygote_is_replaced_and_its_orphans_end_as_lost():
    orphan = candidate()
    old = zygote._current[0]
    os.kill(old.proc.pid, signal.SIGKILL)  # as a candidate could: it is their parent
    old.proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while old.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    fresh = candidate()
    assert isinstance(fresh.proc, zygote.Forked) and zygote._current[0] is not old
    orphan.close()
    assert orphan.proc.wait(timeout=30) == 1 and orphan.proc.lost
    assert "and with it the process it was started from" in orphan._ended("while it loaded")
    fresh.close()


def test_without_the_zygote_a_cpu_sandbox_is_started_directly(monkeypatch):
    monkeypatch.setenv("KERNEL_LAB_ZYGOTE", "0")
    worker = candidate()
    assert isinstance(worker.proc, subprocess.Popen) and parent_of(worker.proc.pid) == os.getpid()
    worker.close()


def test_a_childs_search_path_starts_at_its_folder_with_the_pythonpath_it_was_given(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.path", ["/where/the/zygote/started", "/usr/lib/python3"])
    monkeypatch.chdir(tmp_path)
    zygote._search_path(os.pathsep.join(["/usr/lib/python3", "/given/later", ""]))
    assert sys.path == [str(tmp_path), "/given/later", "/usr/lib/python3"]


def test_where_no_zygote_can_start_a_cpu_sandbox_is_started_directly(monkeypatch):
    def refused(*args, **kwargs):
        raise OSError("no such sockets here")

    monkeypatch.setattr(zygote, "_current", [])
    monkeypatch.setattr(zygote.socket, "socketpair", refused)
    worker = candidate()
    assert isinstance(worker.proc, subprocess.Popen) and parent_of(worker.proc.pid) == os.getpid()
    worker.close()
