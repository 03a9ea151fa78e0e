"""Real time for the scheduler: ``now()`` is monotonic (queues, backoff, timers) and
``now_datetime()`` the wall-clock instant of it (for object timestamps)."""

from __future__ import annotations

import datetime as _dt
import time


class WallClock:
    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    def now_datetime(self) -> _dt.datetime:
        return _dt.datetime.now(_dt.timezone.utc)


def rfc3339(when: _dt.datetime) -> str:
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(when: _dt.datetime) -> str:
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
