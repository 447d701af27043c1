"""CPU sandboxes forked from a process that has loaded torch and Triton already (a zygote).

A judge on the CPU starts a process for the reference and one for each candidate, and most of each start is its
imports (torch and Triton: about 1.4 s on an idle core, twice that on busy ones). The zygote is started once per
Python process that judges, with a CPU sandbox's environment; it imports what a sandbox imports and then only forks:
one child per request, which starts its own session (its own process group, as ``start_new_session`` gives),
takes the environment and folder it is given, writes to its own log, and runs the sandbox or the screen's worker as
``python -m`` would (as ``__main__``: a cell that rebinds the module's names by its import name changes a copy that
does not run, as before). The zygote never loads a cell; as the children's parent it reports how each ended, so a
crash reads as it did from a process started directly. A child that kills the zygote loses its siblings their exit statuses
(they still end as told); the next request starts a new zygote. The first request waits for the zygote's imports
(a process started directly spends that time after it is handed back; every later request is answered in
milliseconds).

On a GPU, processes start as before (:class:`kernel_lab.verify.workers.Worker`): forking there is untried.
``KERNEL_LAB_ZYGOTE=0`` starts every CPU process directly too.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, NoReturn

PRELOAD = ("kernel_lab.verify.sandbox", "kernel_lab.verify.screen_worker")
MESSAGE = 1 << 20


class Forked:
    """A child of the zygote, spoken to as a :class:`subprocess.Popen`: ``pid``, ``args`` (the command it stands for),
    ``poll()``, ``wait(timeout)`` and ``returncode`` (negative: the signal that ended it). ``lost``: it ended with no
    status known (the zygote was gone)."""

    def __init__(self, pid: int, zygote: Zygote, args: list[str]) -> None:
        self.pid, self.args, self.lost = pid, args, False
        self.returncode: int | None = None
        self._zygote = zygote

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self._zygote.changed:
            if not self._zygote.changed.wait_for(lambda: self.returncode is not None, timeout):
                raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0)
        assert self.returncode is not None
        return self.returncode


class Zygote:
    """The parent's side: a socket pair to the zygote, and a thread that reads what it answers."""

    def __init__(self, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-m", __name__, str(theirs.fileno())]
        self.proc = subprocess.Popen(
            command,
            env=env,
            start_new_session=True,
            pass_fds=(theirs.fileno(),),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        theirs.close()
        self.sock = ours
        self.children: dict[int, Forked] = {}
        self._early: dict[int, int] = {}  # statuses of children that ended before they were handed out
        self.changed = threading.Condition()
        self.alive = True
        self._asking = threading.Lock()
        self._pids: list[int] = []
        threading.Thread(target=self._read, daemon=True, name="kernel-lab-zygote").start()

    def spawn(self, module: str, argv: list[str], env: dict[str, str], cwd: Path, fds: list[int]) -> Forked:
        """A child running ``python -m module *argv`` (and the pipes' numbers) in ``cwd``; ``fds``: its log, then the two
        pipes (``--requests``, ``--replies``). OSError when the zygote is gone."""
        request = json.dumps({"module": module, "argv": argv, "env": env, "cwd": str(cwd)}).encode()
        with self._asking, self.changed:
            if not self.alive:
                raise OSError("the zygote has ended")
            socket.send_fds(self.sock, [request], fds)
            self.changed.wait_for(lambda: self._pids or not self.alive)
            if not self._pids:
                raise OSError("the zygote ended while it forked")
            child = Forked(self._pids.pop(), self, [sys.executable, "-m", module, *argv])
            child.returncode = self._early.pop(child.pid, None)
            if child.returncode is None:
                self.children[child.pid] = child
            return child

    def _read(self) -> None:
        while message := _receive(self.sock):
            with self.changed:
                if "pid" in message:
                    self._pids.append(message["pid"])
                elif (child := self.children.pop(message["ended"], None)) is not None:
                    child.returncode = message["status"]
                else:
                    self._early[message["ended"]] = message["status"]
                self.changed.notify_all()
        with self.changed:
            self.alive = False
            self.changed.notify_all()
        for child in list(self.children.values()):
            threading.Thread(target=_watch_orphan, args=(child, self.changed), daemon=True).start()


def _receive(sock: socket.socket) -> dict[str, Any] | None:
    try:
        data = sock.recv(MESSAGE)
    except OSError:
        return None
    return json.loads(data) if data else None


def _watch_orphan(child: Forked, changed: threading.Condition) -> None:
    """A child whose zygote is gone: ended once its pid is (its status is lost)."""
    while True:
        try:
            os.kill(child.pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        time.sleep(0.1)
    with changed:
        child.returncode, child.lost = 1, True
        changed.notify_all()


_lock = threading.Lock()
_current: list[Zygote] = []


def spawn(module: str, argv: list[str], env: dict[str, str], cwd: Path, fds: list[int]) -> Forked | None:
    """A CPU sandbox forked from this process's zygote (started on first use, again if it ended); None when forking
    is not to be used (``KERNEL_LAB_ZYGOTE=0``) or fails, so that the caller starts the process itself."""
    if os.environ.get("KERNEL_LAB_ZYGOTE") == "0" or not hasattr(socket, "send_fds"):
        return None
    for _ in range(2):
        try:
            with _lock:
                if not _current or not _current[0].alive:
                    _current[:] = [Zygote(env)]  # OSError where the system has no such sockets (not Linux)
                zygote = _current[0]
            return zygote.spawn(module, argv, env, cwd, fds)
        except OSError:
            continue
    return None


# --- the zygote's side ----------------------------------------------------------------------------------------


def serve(fd: int) -> None:
    """Import what sandboxes import, then fork a child per request and report each child's end, until the parent
    closes its end."""
    for name in PRELOAD:
        importlib.import_module(name)
    sock = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sock:
                data, fds, _, _ = socket.recv_fds(sock, MESSAGE, 3)
                if not data:
                    return
                sys.stdout.flush()
                sys.stderr.flush()
                started_r, started_w = os.pipe()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    os.close(started_r)
                    _become(json.loads(data), fds, started_w, [fd, wake_r, wake_w])
                for passed in (*fds, started_w):
                    os.close(passed)
                os.read(started_r, 1)  # its session made (or it is gone): a kill of its group reaches it
                os.close(started_r)
                sock.send(json.dumps({"pid": pid}).encode())
            else:
                os.read(wake_r, 4096)
        _reap(sock)


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock.send(json.dumps({"ended": pid, "status": os.waitstatus_to_exitcode(status)}).encode())


def _become(request: dict[str, Any], fds: list[int], started: int, zygotes: list[int]) -> NoReturn:
    """In the forked child: a session (then a byte on ``started``), environment, folder and log of its own, then the
    module run as ``python -m`` runs it."""
    code = 1
    try:
        os.setsid()
        os.write(started, b"1")
        os.close(started)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in zygotes:
            os.close(fd)
        log, requests, replies = fds
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _search_path(request["env"].get("PYTHONPATH", ""))
        sys.argv = ["-m", *request["argv"], "--requests", str(requests), "--replies", str(replies)]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)  # as ``python -m`` runs it
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - a child must never return into the zygote's loop
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code or 0)


def _search_path(pythonpath: str) -> None:
    """``sys.path`` as ``python -m`` in this folder with this ``PYTHONPATH`` starts it: the folder first, then the
    entries the zygote did not start with."""
    sys.path[0] = os.getcwd()
    for entry in reversed([p for p in pythonpath.split(os.pathsep) if p and p not in sys.path]):
        sys.path.insert(1, entry)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
