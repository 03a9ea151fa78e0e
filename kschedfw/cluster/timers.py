"""Callbacks due at a time on a backend's clock: victims' grace periods, scenario steps, ...

Both backends keep their timers here; the scheduler's loop asks for the next deadline and runs
what is due, on its own thread.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable


class Timers:
    """A heap of (when, callback); callbacks due at the same time run in the order they were set.
    A ``quiet`` one (a waiting binding's next poll) does not count as something happening."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None], bool]] = []
        self._seq = itertools.count()

    def call_at(self, when: float, callback: Callable[[], None], quiet: bool = False) -> None:
        heapq.heappush(self._heap, (when, next(self._seq), callback, quiet))

    def next_deadline(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def run_due(self, now: float) -> bool:
        """Run every callback due at ``now``; whether any that is not quiet ran."""
        ran = False
        while self._heap and self._heap[0][0] <= now:
            _, _, callback, quiet = heapq.heappop(self._heap)
            callback()
            ran = ran or not quiet
        return ran


class TimerFacet:
    """A backend's timer methods (``call_at``, ``next_timer``, ``run_due_timers``) over its
    ``_timers`` and ``clock``: the same for both backends."""

    _timers: Timers
    clock: Any

    def call_at(self, when: float, callback: Callable[[], None]) -> None:
        self._timers.call_at(when, callback)

    def next_timer(self) -> float | None:
        return self._timers.next_deadline()

    def run_due_timers(self) -> bool:
        return self._timers.run_due(self.clock.now())
