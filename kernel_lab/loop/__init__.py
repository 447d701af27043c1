"""The optimize loop: profile → diagnose → rewrite → verify → keep the best, for a few rounds.

It takes a profiler, a rewriter and a judge, and returns data (:class:`OptimizeRun`: the session with
every version and verdict, why it stopped, what the user must know); the front ends render it.
"""

from __future__ import annotations

from kernel_lab.loop.run import Event, OptimizeRun, optimize

__all__ = ["Event", "OptimizeRun", "optimize"]
