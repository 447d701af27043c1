"""From a model to a kernel and back: the workload's kernels by time (:mod:`.table`), a kernel lifted into a
self-contained cell from its recorded launch (:mod:`.pick`, :mod:`.cell`), and the optimized kernel put back where
the library or the compiled model launches it (:mod:`.back`). No torch is imported until a kernel is put back.

``kernel_lab.lift`` is both this package and the API's function: once the package is imported, Python makes the
name ``kernel_lab.lift`` mean the package, so the package can be called too (``kernel_lab.lift(result, "k")``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from kernel_lab.lift.back import put_back
from kernel_lab.lift.cell import Lifted
from kernel_lab.lift.patch import Patch
from kernel_lab.lift.pick import lift
from kernel_lab.lift.table import Workload, workload

__all__ = ["Lifted", "Patch", "Workload", "lift", "put_back", "workload"]


class _Callable(types.ModuleType):
    """This package, callable as :func:`lift`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Lifted:
        return lift(*args, **kwargs)


sys.modules[__name__].__class__ = _Callable
