"""The inputs of each timed call, made by the judge (the parent): an input set of the declared shape, varied afresh
for every call with numbers only the parent knows.

Each floating-point input becomes ``(x + shift) * scale + noise``: a shift and a scale drawn per call, and noise of a
quarter of the input's own spread, drawn per element and per call. No affine map of earlier inputs gives it, so a
process cannot fit the variation from the inputs it saw and answer from a cache; other inputs (integers, indices) are
handed over as made, and the reference makes its own calls on the very same inputs.
"""

from __future__ import annotations

from typing import Any

import torch

NOISE = 0.25  # of the input's standard deviation


def varied(base: tuple, generator: torch.Generator) -> tuple:
    """``base``'s arguments for one timed call (tensors on ``base``'s devices); ``generator``: the parent's, on the CPU."""
    shift, scale = (torch.rand(2, generator=generator) + torch.tensor([-0.5, 0.5])).tolist()
    seed = int(torch.randint(0, 2**31, (1,), generator=generator))
    return tuple(_one(v, shift, scale, seed + k) for k, v in enumerate(base))


def _one(value: Any, shift: float, scale: float, seed: int) -> Any:
    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or not value.numel():
        return value
    g = torch.Generator(device=value.device).manual_seed(seed)
    spread = float(value.float().std()) if value.numel() > 1 else 1.0
    noise = torch.randn(value.shape, generator=g, device=value.device, dtype=torch.float32) * (NOISE * spread)
    return ((value.float() + shift) * scale + noise).to(value.dtype)
