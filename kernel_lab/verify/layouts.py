"""Non-contiguous views of the same values, for the input sets laid out other than contiguously
(:data:`kernel_lab.verify.inputs.LAYOUT_WORDS`): a kernel that ignores its inputs' strides reads the gaps.

The gaps of every buffer made here hold 0xFF bytes (NaN in floating point, -1 in integers), so what a kernel
reads there cannot pass for an input. Each side lays its copies out itself (tensors travel contiguous):
the reference when it makes a set, a candidate when a set is handed to it.
"""

from __future__ import annotations

import torch


def _buffer(like: torch.Tensor, size: tuple[int, ...], stride: tuple[int, ...]) -> torch.Tensor:
    """A view of ``size`` and ``stride`` over a fresh buffer of 0xFF bytes, holding ``like``'s values."""
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = torch.empty(span, dtype=like.dtype, device=like.device)
    if span:
        base.view(torch.uint8).fill_(0xFF)
    view = base.as_strided(size, stride)
    view.copy_(like)
    return view


def applies(t: torch.Tensor, layout: str) -> bool:
    """Whether ``layout`` lays ``t`` out otherwise (not a scalar, an empty tensor, or one dimension for "transposed")."""
    return bool(layout) and t.dim() > 0 and t.numel() > 0 and not (layout == "transposed" and t.dim() < 2)


def _strides(size: tuple[int, ...]) -> list[int]:
    """A contiguous tensor's strides."""
    return list(torch.empty(size, device="meta").stride())


def laid(t: torch.Tensor, layout: str) -> torch.Tensor:
    """``t``'s values as ``layout`` lays them out ("strided": every other element of a twice-as-wide last
    dimension; "transposed": column-major); ``t`` itself where the layout does not apply."""
    if not applies(t, layout):
        return t
    size = tuple(t.shape)
    if layout == "strided":
        stride = _strides((*size[:-1], 2 * size[-1]))
        stride[-1] = 2
    elif layout == "transposed":
        stride = _strides(size[::-1])[::-1]
    else:
        raise ValueError(f"unknown layout: {layout}")
    return _buffer(t, size, tuple(stride))


def copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of ``t`` laid out as ``t`` is (``clone`` makes a strided view with gaps contiguous)."""
    if t.is_contiguous() or t.dim() == 0 or 0 in t.stride() or t.numel() == 0:
        return t.clone()
    return _buffer(t, tuple(t.shape), tuple(t.stride()))
