"""Errors a user can act on: each message is one line saying what happened and what to do."""

from __future__ import annotations


class KernelLabError(Exception):
    """Base class; ``str(err)`` is the one-line explanation with the way forward."""

    def __init__(self, message: str, *, fix: str = "") -> None:
        self.message = message
        self.fix = fix
        super().__init__(f"{message} {fix}".strip())

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of Kernel Lab's own stack: the one-line explanation."""
        return [f"{type(self).__name__}: {self}"]


class NoGpuError(KernelLabError):
    """No NVIDIA GPU is visible to this machine."""


class NcuNotFoundError(KernelLabError):
    """The Nsight Compute command line (``ncu``) is not installed or not on PATH."""


class CountersNotPermittedError(KernelLabError):
    """ncu ran but the driver refused access to the performance counters (ERR_NVGPUCTRPERM)."""


class CellError(KernelLabError):
    """The user's cell raised or failed to compile; ``traceback`` is the user's own."""

    def __init__(self, message: str, traceback: str, *, fix: str = "") -> None:
        self.traceback = traceback
        super().__init__(message, fix=fix)

    def _render_traceback_(self) -> list[str]:
        return [*self.traceback.splitlines(), "", *super()._render_traceback_()]


class NoKernelMatchedError(KernelLabError):
    """Nothing matched the kernel filter; ``kernels_seen`` lists what did run."""

    def __init__(self, message: str, kernels_seen: list[str], *, fix: str = "") -> None:
        self.kernels_seen = kernels_seen
        super().__init__(message, fix=fix)


class ProfilingError(KernelLabError):
    """ncu failed for another reason; ``log`` holds its output."""

    def __init__(self, message: str, log: str = "", *, fix: str = "") -> None:
        self.log = log
        super().__init__(message, fix=fix)


class ReportError(KernelLabError):
    """A report file is missing, not an Nsight Compute report, truncated or empty."""


class InvalidCellError(KernelLabError):
    """The cell cannot be run as written: no such file, a syntax error, or (to optimize) no make_inputs/run."""


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a device running out of memory (PyTorch's or a library's words)."""
    names = {type(e).__name__ for e in (exc, exc.__cause__) if e is not None}
    return "OutOfMemoryError" in names or "out of memory" in str(exc).lower()
