"""A small thread-safe cache whose entries expire, as k8s.io/apiserver's token and
SubjectAccessReview caches: a scrape every few seconds must not send a review each time."""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, Hashable, TypeVar

__all__ = ["TTLCache"]

V = TypeVar("V")


class TTLCache(Generic[V]):
    """At most ``max_entries`` answers (upstream bounds its caches too: a flood of distinct tokens
    must not grow memory); the oldest goes first when full. ``clock`` is for tests."""

    def __init__(self, max_entries: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: dict[Hashable, tuple[float, V]] = {}
        self._lock = threading.Lock()
        self._max = max_entries
        self._clock = clock

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= self._clock():
                del self._entries[key]
                return None
            return entry[1]

    def set(self, key: Hashable, value: V, ttl: float) -> None:
        """Keep ``value`` for ``ttl`` seconds (0 or less: not at all)."""
        if ttl <= 0:
            return
        with self._lock:
            self._entries.pop(key, None)
            while len(self._entries) >= self._max:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = (self._clock() + ttl, value)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
