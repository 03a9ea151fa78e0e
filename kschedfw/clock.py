"""Clocks: the scheduler core reads time only through one of these, so simulations are exact.

Every clock answers the :class:`kschedfw.fwk.interface.Clock` protocol: ``now()`` in
seconds for queues and timers, and ``now_datetime()``, the wall-clock instant of ``now()``, for
comparing with object timestamps. This is the one place that maps one to the other.
"""

from __future__ import annotations

import datetime as _dt
import time


#: The wall-clock instant of simulated time 0: every embedded-cluster run starts here, so object
#: timestamps (creationTimestamp, startTime) and metrics windows are reproducible.
SIMULATION_EPOCH = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)


class SimulatedClock:
    """Time that moves only when the simulation advances it; ``now()`` counts from ``epoch``."""

    __slots__ = ("_now", "epoch")

    def __init__(self, start: float = 0.0, epoch: _dt.datetime = SIMULATION_EPOCH) -> None:
        self._now = float(start)
        self.epoch = epoch

    def now(self) -> float:
        return self._now

    def now_datetime(self) -> _dt.datetime:
        return self.epoch + _dt.timedelta(seconds=self._now)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a simulated clock cannot go backwards")
        self._now += seconds

    def set(self, when: float) -> None:
        if when < self._now:
            raise ValueError("a simulated clock cannot go backwards")
        self._now = float(when)


class WallClock:
    """Real time: ``now()`` is monotonic (timers never jump with the system clock) and
    ``now_datetime()`` is the UTC wall clock read at the same moment. The clock of a Handle built
    without a backend, and of a backend that talks to a real API server."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    def now_datetime(self) -> _dt.datetime:
        return _dt.datetime.now(_dt.timezone.utc)
