"""tail_effect: the last partial wave of blocks leaves most SMs idle.

Score: SAVES x the idle share of SM time, (ceil(W) - W) / ceil(W) for W waves, if blocks were of
equal length (they are not, so a fix wins back less: SAVES is calibrated below). (ncu's own estimate, 1 / (1 + floor(W)), is the worst case; this one is closer for
nearly full last waves.)
"""

from __future__ import annotations

import math

from kernel_lab import metrics as M
from kernel_lab.models import Bottleneck, Kernel

KIND = "tail_effect"
NEEDS = ((M.WAVES, M.GRID, M.SM_COUNT),)
NCU_TITLES = ("Tail Effect",)
SEARCH = (-1, 0, "smaller tiles make the last partial wave shorter")
MIN_IDLE = 0.10
#: the share of the idle SM time a fix wins back, calibrated on measured fixes (the suite's GEMM without a
#: tail: 13% for 25% idle; the sample's 1.00 vs 1.25 waves: 12% per block for 37.5%): blocks of a wave do
#: not end together, so the last wave is never as empty as the count says
SAVES = 0.75


def evaluate(k: Kernel) -> Bottleneck | None:
    waves = k.value(M.WAVES)
    if waves <= 1 or waves == math.floor(waves):
        return None
    idle = (math.ceil(waves) - waves) / math.ceil(waves)
    if idle < MIN_IDLE:
        return None
    per_wave = k.value(M.GRID) / waves
    hint = (
        f"The grid runs in {waves:.2f} waves: {math.floor(waves)} full wave(s) of {per_wave:.0f} blocks,"
        f" then a last wave only {waves - math.floor(waves):.0%} full, during which most SMs wait. About"
        f" {idle:.0%} of SM time is lost. Make the number of blocks a multiple of {per_wave:.0f} (the"
        " blocks that run at once), use more, smaller blocks so the remainder matters less, or write a"
        " persistent kernel that loops over work items with one wave of blocks."
    )
    summary = f"Tail effect: {waves:.2f} waves, last wave {waves - math.floor(waves):.0%} full"
    evidence = {M.WAVES: waves, M.GRID: k.value(M.GRID), M.SM_COUNT: k.value(M.SM_COUNT)}
    return Bottleneck(KIND, SAVES * idle, summary, hint, evidence)
