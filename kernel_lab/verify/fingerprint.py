"""Fingerprints of a timed call's outputs, made by the judge (the parent) from outputs a side handed back, at
positions and with weights drawn from a secret that never leaves the parent: no process that ran a cell learns which
elements are checked."""

from __future__ import annotations

import torch

#: elements of each output fingerprinted per timed call, at positions drawn from the secret: a result wrong on a share
#: p of its elements escapes one call with probability (1 - p) ** SAMPLED (p = 1e-5: 3e-5), and a call cannot be sped
#: up by getting a few dozen elements of millions wrong
SAMPLED = 1 << 20
PER_OUTPUT = 6  # four projections, max |value|, count


class Prints:
    """Positions and weights for one secret (one timed batch: its calls share them), made once per output size."""

    def __init__(self, secret: int) -> None:
        self.secret = secret
        self._made: dict[tuple[int, str, int], tuple[torch.Tensor | None, torch.Tensor]] = {}

    def _weights(self, n: int, device: torch.device, index: int) -> tuple[torch.Tensor | None, torch.Tensor]:
        key = (n, str(device), index)
        if key not in self._made:
            g = torch.Generator(device=device).manual_seed(self.secret + 7919 * index)
            positions = torch.randint(0, n, (SAMPLED,), generator=g, device=device) if n > SAMPLED else None
            signs = torch.randint(0, 2, (4, min(n, SAMPLED)), generator=g, device=device, dtype=torch.int8)
            self._made[key] = (positions, signs.to(torch.float64) * 2 - 1)
        return self._made[key]

    def of(self, outputs: list[torch.Tensor]) -> torch.Tensor:
        """Per output: four random +-1 projections of up to SAMPLED of its elements, their max |value| and their count.

        Two outputs' projections differ by about the L2 norm of their difference on those elements, so the judge can
        tell a result within tolerance from a wrong or stale one without the whole tensor (a 64M-element output's
        fingerprint takes 0.45 ms on the H100)."""
        rows: list[torch.Tensor] = []
        for index, t in enumerate(outputs):
            flat = (torch.view_as_real(t) if t.is_complex() else t).detach().flatten()
            positions, signs = self._weights(flat.numel(), flat.device, index)
            v = (flat if positions is None else flat[positions]).to(torch.float64).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
            top = v.abs().max().reshape(1) if v.numel() else torch.zeros(1, dtype=torch.float64, device=v.device)
            count = torch.tensor([float(v.numel())], dtype=torch.float64)
            rows.append(torch.cat([torch.cat([signs @ v, top]).cpu(), count]))
        return torch.cat(rows) if rows else torch.zeros(0, dtype=torch.float64)
