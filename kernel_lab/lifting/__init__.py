"""From a model to a kernel and back: the workload's kernels by time (:mod:`.table`), a kernel lifted into a
self-contained cell from its recorded launch (:mod:`.pick`, :mod:`.cell`), and the optimized kernel put back where
the library or the compiled model launches it (:mod:`.back`). No torch is imported until a kernel is put back.

``kernel_lab.lift`` (the API's function) and ``kernel_lab.put_back`` call into it.
"""

from __future__ import annotations

from kernel_lab.lifting.back import put_back
from kernel_lab.lifting.cell import Lifted
from kernel_lab.lifting.patch import Patch
from kernel_lab.lifting.pick import lift
from kernel_lab.lifting.table import Workload, workload

__all__ = ["Lifted", "Patch", "Workload", "lift", "put_back", "workload"]
