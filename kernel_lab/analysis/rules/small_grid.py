"""small_grid: fewer blocks than SMs, so whole SMs sit idle (ncu's LaunchConfiguration 'Small Grid').

Score: the share of idle SMs, (SMs - blocks) / SMs.
"""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "small_grid"
NEEDS = ((M.GRID, M.SM_COUNT),)
NCU_TITLES = ("Small Grid",)
SEARCH = (-1, 0, "smaller tiles give more programs, enough to fill every SM")


def evaluate(k: Kernel) -> Bottleneck | None:
    grid, sms = k.value(M.GRID), k.value(M.SM_COUNT)
    if grid >= sms:
        return None
    idle = (sms - grid) / sms
    hint = (
        f"The kernel launches only {grid:.0f} block(s) for {sms:.0f} SMs, so {sms - grid:.0f} SMs"
        f" ({idle:.0%} of the GPU) have nothing to do for the whole run. Split the work into more blocks:"
        " smaller BLOCK sizes, one program per smaller chunk, or split a long reduction (split-K) and"
        " combine partial results; aim for several blocks per SM."
    )
    summary = f"Small grid: {grid:.0f} blocks for {sms:.0f} SMs"
    return Bottleneck(KIND, idle, summary, hint, {M.GRID: grid, M.SM_COUNT: sms})
