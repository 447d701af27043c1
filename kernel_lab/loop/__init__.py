"""The optimize loop: profile → diagnose → rewrite → verify → keep the best, for a few rounds.

It takes its parts (:class:`Parts`: a profiler, a rewriter, a judge, a screen) and returns data
(:class:`OptimizeRun`: the session with every version and verdict, why it stopped as a typed :class:`Stop`, what the
user must know); the front ends render it. Its steps are :mod:`kernel_lab.loop.steps`.
"""

from __future__ import annotations

from kernel_lab.loop.run import OptimizeRun, optimize
from kernel_lab.loop.steps import Event, Parts, Stop

__all__ = ["Event", "OptimizeRun", "Parts", "Stop", "optimize"]
