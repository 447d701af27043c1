"""Notebook clients in the tests poll their kernel's sockets a second at a time.

Under load, an nbclient run sometimes read a cell's reply only when the cell's whole timeout ran out: 300 s
(`test_dashboard_is_built_in_a_real_kernel`, 302 s; the profiled live kernel's test, 307 s) and 600 s (a lesson
notebook, 611 s), every cell a few seconds long by the kernel's own clock. The reply had been waiting: an asyncio
zmq poll missed its wake-up, and the poll's timeout found the message. Polled in slices of a second, such a miss
costs a second. jupyter_client's own ``get_msg`` polls once for the whole timeout; this one has the same contract.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

SLICE_S = 1.0


async def _get_msg(self: Any, timeout: float | None = None) -> dict[str, Any]:
    """A message once one is ready, looking every second; Empty when ``timeout`` passed without one."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = SLICE_S if deadline is None else min(SLICE_S, max(0.0, deadline - time.monotonic()))
        if await self.socket.poll(int(left * 1000)):
            return await self._recv()
        if deadline is not None and time.monotonic() >= deadline:
            raise Empty


def install() -> None:
    """Make jupyter_client's asyncio channels (nbclient's) poll in slices, in this process (where it is installed:
    the GPU machine has no Jupyter)."""
    try:
        from jupyter_client.channels import AsyncZMQSocketChannel
    except ImportError:
        return

    AsyncZMQSocketChannel.get_msg = _get_msg  # type: ignore[method-assign,assignment]
