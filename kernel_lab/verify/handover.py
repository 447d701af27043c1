"""How tensors travel between the judge and one candidate's process, and non-tensor inputs on the wire.

Each candidate gets its own copy of every input set it runs on, made by the judge from the reference's
inputs as made, so no candidate can change what another one reads (there are no shared input files).

* **On a GPU** the judge copies each tensor on the device and lends the copy by CUDA IPC (:func:`share`,
  with PyTorch's own reference counting): the candidate maps it, copies it into memory of its own and lets
  it go (:func:`take`). An input set of hundreds of megabytes crosses in about a millisecond, where writing,
  reading, hashing and loading a file took about a second per set and candidate on the H100.
* **Answers on a GPU** come back the same way, the other way round: for each output the reference gave,
  the judge lends an empty buffer of its own (:meth:`Lending.mailbox`, filled with NaN bytes), the candidate
  copies its output there (:func:`mapped`), and the judge copies it out before comparing. A 128 MB output took
  about 0.4 s through the pipe on the H100 (the copy to the host, the pipe, the copy back), four candidates at
  once about 1 s.
* **On the CPU** the tensors travel in the request itself, through the pipe.

Everything the judge lends is allocated in a memory pool of its own, one tensor per allocation
(:class:`Lending`): CUDA IPC maps the whole allocation a tensor lies in, and PyTorch's caching allocator packs
many tensors into one (small ones into 2 MB segments), so a candidate handed a copy from the shared pool could
reach the judge's expected results beside it. The reference's process lends its results to the judge too (it
runs the user's own cell). A candidate's process never lends anything to the judge: mapping memory that an
untrusted process can free, or describe wrongly, could crash the judge's own CUDA context, so what it writes
goes into the judge's own buffers or through the pipe (:mod:`kernel_lab.verify.protocol`). What is lent is
described in JSON and rebuilt from a fixed list of types; no pickle is read on either side.
"""

from __future__ import annotations

import base64
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

JSON = (type(None), bool, int, float, str)


class Unsendable(Exception):
    """An input that is neither a tensor nor a plain value (number, string, dtype, or a tuple of them)."""


def encode(value: Any) -> Any:
    """A non-tensor input as JSON: plain values as they are, a dtype by name, tuples and lists as lists."""
    import torch

    if isinstance(value, JSON):
        return value
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, (tuple, list)):
        return {"tuple" if isinstance(value, tuple) else "list": [encode(v) for v in value]}
    raise Unsendable(type(value).__name__)


def decode(value: Any) -> Any:
    """The value :func:`encode` wrote."""
    import torch

    if isinstance(value, dict):
        if "dtype" in value:
            dtype = getattr(torch, value["dtype"], None)
            if not isinstance(dtype, torch.dtype):
                raise ValueError(f"not a dtype: {value['dtype']}")
            return dtype
        if "tuple" in value:
            return tuple(decode(v) for v in value["tuple"])
        return [decode(v) for v in value["list"]]
    return value


def share(t: torch.Tensor) -> dict[str, Any]:
    """A CUDA tensor lent by CUDA IPC, as JSON: the sender keeps ``t`` until the receiver has :func:`take`n it."""
    from torch.multiprocessing.reductions import reduce_tensor

    _, args = reduce_tensor(t.detach())
    (_, size, stride, offset, storage_cls, dtype, device, handle, nbytes, start, _, counter, at, event, sync) = args
    return {
        "size": list(size),
        "stride": list(stride),
        "offset": offset,
        "storage": storage_cls.__name__,
        "dtype": str(dtype).removeprefix("torch."),
        "device": device,
        "handle": base64.b64encode(handle).decode(),
        "bytes": nbytes,
        "start": start,
        "counter": base64.b64encode(counter).decode(),
        "at": at,
        "event": base64.b64encode(event).decode() if event else None,
        "sync": bool(sync),
    }


_LENDING = threading.Lock()  # one thread at a time allocates into, or ends, a lending pool (PyTorch requires it)


def empty_cache() -> None:
    """``torch.cuda.empty_cache()``, never while another thread allocates into a lending pool: PyTorch counts
    ``use_mem_pool`` as a capture under way, and emptying the cache then fails its ``captures_underway.empty()``
    assertion, which ends the whole process (Liger's fused linear cross entropy's race, stop 50 on the H200)."""
    import torch

    with _LENDING:
        torch.cuda.empty_cache()


def ipc_collect() -> None:
    """``torch.cuda.ipc_collect()`` (the memory handed over and let go, freed), under the same rule."""
    import torch

    with _LENDING:
        torch.cuda.ipc_collect()


class Lending:
    """The memory a judge lends to candidates: a pool of PyTorch's caching allocator that holds nothing
    else and never puts two tensors in one allocation (``no_split``), so what CUDA IPC maps when a tensor is
    lent holds that tensor alone. Freed tensors' memory is kept for the next ones; :meth:`close` gives it back."""

    def __init__(self) -> None:
        self._pool: Any = None

    def _made(self, make: Callable[[], torch.Tensor]) -> torch.Tensor:
        import torch

        with _LENDING:
            if self._pool is None:
                try:
                    self._pool = torch.cuda.MemPool(no_split=True)
                except TypeError:  # a PyTorch without no_split: lent tensors share allocations only with each other
                    self._pool = torch.cuda.MemPool()
            with torch.cuda.use_mem_pool(self._pool):
                return make()

    def copy(self, t: torch.Tensor, device: torch.device) -> torch.Tensor:
        """A copy of ``t`` on ``device``, to lend."""
        return self._made(functools.partial(t.to, device, copy=True))

    def mailbox(self, shape: list[int], dtype: str, device: torch.device) -> torch.Tensor:
        """An empty buffer to lend a candidate for one of its outputs, every byte 0xFF (NaN in floating
        point): a buffer left unwritten holds nothing that could pass for a result."""
        import torch

        kind = decode({"dtype": dtype.removeprefix("torch.")})

        def make() -> torch.Tensor:
            t = torch.empty([int(n) for n in shape], dtype=kind, device=device)
            if t.numel():
                t.view(-1).view(torch.uint8).fill_(0xFF)
            return t

        return self._made(make)

    def close(self) -> None:
        """Give the pool's memory back (every tensor lent from it must be freed by now)."""
        with _LENDING:
            self._pool = None


def take(lent: dict[str, Any]) -> torch.Tensor:
    """A copy, in this process's own memory, of a tensor another process lent with :func:`share` (which
    is let go at once); the CPU holds the copy when the GPU has no room."""
    import torch

    shared = mapped(lent)
    try:
        return shared.clone()
    except torch.OutOfMemoryError:
        return shared.cpu()
    finally:
        del shared


def mapped(lent: dict[str, Any]) -> torch.Tensor:
    """The tensor :func:`share` described, in the lender's memory (a candidate writes its outputs so into the
    buffers the judge lends)."""
    import torch
    from torch.multiprocessing.reductions import rebuild_cuda_tensor

    storages = {"TypedStorage": torch.storage.TypedStorage, "UntypedStorage": torch.UntypedStorage}
    dtype = getattr(torch, lent["dtype"])
    if not isinstance(dtype, torch.dtype) or lent["storage"] not in storages:
        raise ValueError("not a tensor lent by share()")
    event = base64.b64decode(lent["event"]) if lent["event"] else None
    return rebuild_cuda_tensor(
        torch.Tensor,
        torch.Size(int(n) for n in lent["size"]),
        tuple(int(n) for n in lent["stride"]),
        int(lent["offset"]),
        storages[lent["storage"]],
        dtype,
        int(lent["device"]),
        base64.b64decode(lent["handle"]),
        int(lent["bytes"]),
        int(lent["start"]),
        False,
        base64.b64decode(lent["counter"]),
        int(lent["at"]),
        event,
        bool(lent["sync"]),
    )


def pack(
    inputs: list[tuple[str, Any]], device: torch.device, lending: Lending, layout: str = ""
) -> tuple[list[Any], list[torch.Tensor], list[torch.Tensor]]:
    """(what the request says, tensors that travel in it, copies the judge must keep until the answer comes).

    ``inputs``: ("tensor", t) or ("value", json) per argument of ``run``; ``device``: where the candidate runs;
    ``layout``: how the candidate lays each tensor out on arrival (:mod:`kernel_lab.verify.layouts`).
    """
    said: list[Any] = []
    carried: list[torch.Tensor] = []
    kept: list[torch.Tensor] = []
    for kind, v in inputs:
        if kind == "value":
            said.append({"value": v})
        elif device.type == "cuda":
            copy = lending.copy(v, device)
            kept.append(copy)
            said.append({"lent": share(copy), "layout": layout})
        else:
            said.append({"tensor": len(carried), "layout": layout})
            carried.append(v)
    return said, carried, kept


def unpack(said: list[Any], carried: list[torch.Tensor], device: torch.device, laid: Callable[..., Any]) -> tuple:
    """(candidate) The input set a request handed over, in memory of this process's own, each tensor ``laid`` out
    as the request says (:func:`kernel_lab.verify.layouts.laid`, bound by the caller before any cell loads)."""

    def arrived(item: dict[str, Any]) -> Any:
        if "value" in item:
            return decode(item["value"])
        t = take(item["lent"]) if "lent" in item else carried[item["tensor"]].to(device)
        return laid(t, item.get("layout", ""))

    return tuple(arrived(item) for item in said)
