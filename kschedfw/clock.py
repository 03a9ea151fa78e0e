"""Clocks: the scheduler core reads time only through one of these, so simulations are exact."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since an arbitrary epoch."""


class SimulatedClock:
    """Time that moves only when the simulation advances it."""

    __slots__ = ("_now",)

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a simulated clock cannot go backwards")
        self._now += seconds

    def set(self, when: float) -> None:
        if when < self._now:
            raise ValueError("a simulated clock cannot go backwards")
        self._now = float(when)


class RealClock:
    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()
