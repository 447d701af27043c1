"""What asking a model may cost and what it has cost: requests, tokens (the server's ``usage``), seconds, money.

One :class:`Budget` serves a whole run of the loop, shared by every worker (thread-safe). A turn reserves what it is
expected to cost before its request is sent (:meth:`Budget.reserve`: refused, with the reason, when the budget cannot
cover it), and settles what the server reported (:meth:`Budget.settle`). Money is counted only when both prices are
known (dollars per million input and output tokens): otherwise tokens only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kernel_lab.settings import Settings

CHARS_PER_TOKEN = 4  # a prompt's tokens, estimated from its characters until the server reports usage


@dataclass(frozen=True)
class Usage:
    """Tokens of one request, as the server reported them (None: it did not)."""

    prompt: int | None = None
    completion: int | None = None

    @property
    def reported(self) -> bool:
        return self.prompt is not None and self.completion is not None

    def __add__(self, other: Usage) -> Usage:
        if not (self.reported and other.reported):
            return Usage(_plus(self.prompt, other.prompt), _plus(self.completion, other.completion))
        return Usage((self.prompt or 0) + (other.prompt or 0), (self.completion or 0) + (other.completion or 0))


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


@dataclass(frozen=True)
class Limits:
    """The most a run may spend (None: no limit)."""

    requests: int | None = None
    tokens: int | None = None
    cost: float | None = None  # dollars
    seconds: float | None = None

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(settings.llm_requests, settings.llm_tokens, settings.llm_cost, settings.llm_seconds)


@dataclass(frozen=True)
class Spent:
    """What a run spent: requests, tokens, seconds, and dollars when the prices are known."""

    requests: int = 0
    prompt: int = 0
    completion: int = 0
    unreported: int = 0  # requests whose tokens the server did not report (not counted in the tokens)
    seconds: float = 0.0
    cost: float | None = None
    stopped: str = ""  # why the budget refused a turn, if it did

    @property
    def tokens(self) -> int:
        return self.prompt + self.completion

    def text(self) -> str:
        """'14 requests, 52,340 prompt + 9,876 completion tokens, $0.21, 3.2 min'."""
        said = [f"{self.requests} request{'s' * (self.requests != 1)}"]
        if self.requests > self.unreported:
            said.append(f"{self.prompt:,} prompt + {self.completion:,} completion tokens")
        if self.unreported:
            said.append(f"{self.unreported} without token counts from the server")
        said.append(f"${self.cost:.2f}" if self.cost is not None else "cost unknown (set price_in and price_out)")
        said.append(f"{self.seconds:.0f} s" if self.seconds < 120 else f"{self.seconds / 60:.1f} min")
        return ", ".join(said) + (f"; the budget stopped it: {self.stopped}" if self.stopped else "")


class Budget:
    """Limits and what was spent against them; every method is safe to call from the workers' threads."""

    def __init__(
        self,
        limits: Limits = Limits(),
        price_in: float | None = None,
        price_out: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits, self.price_in, self.price_out, self._clock = limits, price_in, price_out, clock
        self._lock = threading.Lock()
        self._started = clock()
        self._used = Usage(0, 0)
        self._requests = self._unreported = 0
        self._held = Usage(0, 0)  # reserved by turns in flight
        self._holding = 0
        self._stopped = ""

    @classmethod
    def of(cls, settings: Settings) -> Budget:
        return cls(Limits.of(settings), settings.price_in, settings.price_out)

    def cost(self, usage: Usage) -> float | None:
        """Dollars for ``usage`` at the prices, or None when a price or a count is unknown."""
        if self.price_in is None or self.price_out is None or not usage.reported:
            return None
        return ((usage.prompt or 0) * self.price_in + (usage.completion or 0) * self.price_out) / 1e6

    def reserve(self, estimate: Usage) -> str | None:
        """Hold one request of about ``estimate`` tokens; why not, in words, when the budget cannot cover it."""
        with self._lock:
            why = self._short(estimate)
            if why is not None:
                self._stopped = self._stopped or why
                return why
            self._holding += 1
            self._held = self._held + estimate
            return None

    def settle(self, estimate: Usage, used: Usage) -> None:
        """Release a reservation of ``estimate`` and count what the server reported for the request."""
        with self._lock:
            self._holding -= 1
            self._held = Usage(
                (self._held.prompt or 0) - (estimate.prompt or 0), (self._held.completion or 0) - (estimate.completion or 0)
            )
            self._requests += 1
            if used.reported:
                self._used = self._used + used
            else:
                self._unreported += 1

    def _short(self, estimate: Usage) -> str | None:
        """What the budget lacks for one more request of ``estimate`` (the lock held)."""
        limits, ahead = self.limits, self._used + self._held + estimate
        if limits.requests is not None and self._requests + self._holding + 1 > limits.requests:
            return f"{limits.requests} request{'s' * (limits.requests != 1)} asked"
        if limits.tokens is not None and (ahead.prompt or 0) + (ahead.completion or 0) > limits.tokens:
            return f"{limits.tokens:,} tokens would be passed"
        if limits.cost is not None:
            cost = self.cost(ahead)
            if cost is None:
                return f"a ${limits.cost:g} limit needs both prices (price_in, price_out)"
            if cost > limits.cost:
                return f"${limits.cost:g} would be passed"
        if limits.seconds is not None and self._clock() - self._started >= limits.seconds:
            return f"{limits.seconds:g} s spent"
        return None

    def spent(self) -> Spent:
        with self._lock:
            used = self._used
            return Spent(
                self._requests,
                used.prompt or 0,
                used.completion or 0,
                self._unreported,
                self._clock() - self._started,
                self.cost(used),
                self._stopped,
            )
