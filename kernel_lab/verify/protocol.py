"""Messages between the judge (the trusted parent) and the processes that run cells.

A message is a JSON header and, optionally, a list of tensors. On the wire: 8 bytes of header length,
the header, 8 bytes of blob length, the blob (``torch.save`` of the CPU tensors, or nothing). The parent
reads blobs with ``torch.load(weights_only=True)``, which builds tensors and plain containers only: a
process that ran candidate code can send wrong numbers, never code.

The pipes are private file descriptors, not stdout, so what a cell prints cannot be taken for a message.
"""

from __future__ import annotations

import io
import json
import os
import select
import struct
import time
from typing import Any

_LENGTH = struct.Struct("<Q")
MAX_HEADER = 16 << 20  # bytes: a header is metadata, never data
INPUTS_CHANGED = "found its input file changed by another process"  # a candidate's harness says so


class ProtocolError(Exception):
    """The other side closed the pipe or sent something that is not a message."""


class Timeout(ProtocolError):
    """The other side did not answer in time."""


def _read_exactly(fd: int, n: int, deadline: float | None = None) -> bytes:
    chunks, left = [], n
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise Timeout("no answer in time")
        chunk = os.read(fd, min(left, 1 << 24))
        if not chunk:
            raise ProtocolError("the pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send(fd: int, header: dict[str, Any], tensors: list[Any] | None = None) -> None:
    """Write one message: ``header`` (JSON-able) and ``tensors`` (moved to the CPU)."""
    blob = b""
    if tensors:
        import torch

        buffer = io.BytesIO()
        torch.save([t.detach().cpu() for t in tensors], buffer)
        blob = buffer.getvalue()
    head = json.dumps(header, allow_nan=True).encode()
    _write_all(fd, _LENGTH.pack(len(head)) + head + _LENGTH.pack(len(blob)))
    if blob:
        _write_all(fd, blob)


def receive(fd: int, *, tensors: bool = True, deadline: float | None = None) -> tuple[dict[str, Any], list[Any]]:
    """Read one message: (header, tensors). Tensors are loaded with ``weights_only=True``.

    ``deadline`` (a ``time.monotonic()`` value): raise :class:`Timeout` when the message is not all there by then.
    """
    (size,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size, deadline))
    if size > MAX_HEADER:
        raise ProtocolError(f"a header of {size} bytes")
    try:
        header = json.loads(_read_exactly(fd, size, deadline))
    except ValueError as exc:
        raise ProtocolError(f"a header that is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ProtocolError("a header that is not an object")
    (blob_size,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size, deadline))
    found: list[Any] = []
    if blob_size:
        blob = _read_exactly(fd, blob_size, deadline)
        if tensors:
            import torch

            try:
                found = torch.load(io.BytesIO(blob), weights_only=True)
            except Exception as exc:  # noqa: BLE001 - anything that is not plain tensors is refused
                raise ProtocolError(f"tensors that could not be read safely ({type(exc).__name__})") from None
            if not isinstance(found, list) or not all(isinstance(t, torch.Tensor) for t in found):
                raise ProtocolError("a blob that is not a list of tensors")
    return header, found
