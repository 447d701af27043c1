"""Turns on the GPU: a timing runs alone, and background work steps aside for it.

The judge makes the reference's input sets and results in the background (seconds of GPU work on large inputs)
while the screen, in the same session, compiles and times variants. A timing taken while that work runs measures
both. With :class:`Turns`, the background work goes a step at a time (one input set), only while nothing is being
timed, and a timing waits for the step under way, not for all of them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Turns:
    """Who may use the GPU now: timings (any number at once) or one step of background work."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._timings = 0  # timings under way, or waiting for the step under way
        self._stepping = False  # a step of background work under way

    @contextmanager
    def timing(self) -> Iterator[None]:
        """Held while timing: waits for the background step under way, and no other starts until it is let go."""
        self._start_timing()
        try:
            yield
        finally:
            with self._changed:
                self._timings -= 1
                self._changed.notify_all()

    @contextmanager
    def step(self) -> Iterator[None]:
        """Held for one step of background GPU work: waits while anything is timed or waits to be."""
        self._start_step()
        try:
            yield
        finally:
            with self._changed:
                self._stepping = False
                self._changed.notify_all()

    def _start_timing(self) -> None:
        with self._changed:
            self._timings += 1
            self._changed.wait_for(lambda: not self._stepping)

    def _start_step(self) -> None:
        with self._changed:
            self._changed.wait_for(lambda: not self._timings and not self._stepping)
            self._stepping = True
