"""client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter``): ``qps`` tokens a second,
at most ``burst`` saved up; a request waits for a token."""

from __future__ import annotations

import threading
import time
from typing import Callable


class TokenBucket:
    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if qps <= 0:  # client-go: a non-positive QPS means no limit
            self._unlimited = True
        else:
            self._unlimited = False
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token; the seconds to wait before using it (0 when one was saved up)."""
        if self._unlimited:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            self._sleep(delay)
