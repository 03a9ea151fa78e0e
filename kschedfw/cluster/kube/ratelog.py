"""Warnings that repeat while the API server is down or refuses us, said once per interval.

During an outage every write fails the same way: one line per failure would bury the one that
matters. The first warning of a kind is logged at once; the same kind again within ``interval``
seconds is counted, and the next one logged says how many were left out.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

__all__ = ["RateLimitedLog"]

INTERVAL = 30.0  # seconds between two warnings of the same kind


class RateLimitedLog:
    def __init__(self, logger: logging.Logger, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def due(self, kind: str) -> bool:
        """True when nothing of ``kind`` was logged within the interval (it counts as logged
        now); else False, and one more is counted as left out."""
        return self._take(kind) is not None

    def warning(self, kind: str, message: str, *args: Any) -> bool:
        """Log ``message % args`` unless a warning of ``kind`` was logged within the interval;
        True when it was logged."""
        left_out = self._take(kind)
        if left_out is None:
            return False
        if left_out:
            message += f" ({left_out} more like it in the last {self.interval:.0f}s)"
        self.logger.warning(message, *args)
        return True

    def _take(self, kind: str) -> int | None:
        """How many of ``kind`` were left out since the last one logged, or None when this
        one is to be left out too."""
        now = self.clock()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.interval:
                self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
                return None
            self._last[kind] = now
            if len(self._last) > 256:  # forget kinds not seen for a while
                self._last = {k: at for k, at in self._last.items() if now - at < self.interval}
            return self._suppressed.pop(kind, 0)
