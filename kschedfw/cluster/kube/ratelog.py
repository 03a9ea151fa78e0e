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

    def warning(self, kind: str, message: str, *args: Any) -> bool:
        """Log ``message % args`` unless a warning of ``kind`` was logged within the interval;
        True when it was logged."""
        now = self.clock()
        with self._lock:
            last = self._last.get(kind)
            if last is not None and now - last < self.interval:
                self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
                return False
            self._last[kind] = now
            left_out = self._suppressed.pop(kind, 0)
        if left_out:
            message += f" ({left_out} more like it in the last {self.interval:.0f}s)"
        self.logger.warning(message, *args)
        return True
