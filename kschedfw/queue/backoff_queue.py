"""backoffQ: pods waiting out their backoff before they may be retried (upstream
``backoff_queue.go``).

Two heaps ordered by backoff expiry: one for pods rejected by plugins, one for pods whose last
attempt ended in an error (no rejector plugins). With ``pop_from_backoff_q`` (upstream gate
``SchedulerPopFromBackoffQ``, beta and on by default since v1.33) expiries are aligned to
1-second windows, pods in the same window are ordered by the QueueSort ``less``, and the
scheduler may pop the head of the plugin-rejection heap when activeQ is empty.

Backoff: ``count`` is the consecutive-error count if non-zero, else the unschedulable count;
``count == 0`` means no backoff. Duration = ``initial * 2**(count-1)``, capped at ``max``.
Expiry = ``align(timestamp + duration)``. A pod is still backing off while
``expiry >= align(now)``, so with alignment it leaves at the first whole second after its
expiry window.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable, Iterable

from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.queue._heap import KeyedHeap, LessFunc, key_entry_factory, less_entry_factory

ORDERING_WINDOW = 1.0
"""Seconds per backoff ordering window (upstream ``backoffQOrderingWindowDuration``)."""

_NO_BACKOFF = -math.inf
_EPS = 1e-9  # float slack so that e.g. 2.9999999999 counts as the window starting at 3


def has_rejectors(qpi: QueuedPodInfo) -> bool:
    return bool(qpi.unschedulable_plugins) or bool(qpi.pending_plugins)


class BackoffQueue:
    __slots__ = ("_now", "initial", "max", "pop_from_backoff_q", "_pod_q", "_error_q")

    def __init__(self, now: Callable[[], float], initial: float, max_: float, less: LessFunc,
                 *, sort_key: Callable[[QueuedPodInfo], Any] | None = None,
                 pop_from_backoff_q: bool = True) -> None:
        self._now = now
        self.initial = float(initial)
        self.max = float(max_)
        self.pop_from_backoff_q = pop_from_backoff_q
        expiry = self._sort_expiry
        if pop_from_backoff_q:
            # Same window: order as activeQ would (priority first with PrioritySort).
            make = (key_entry_factory(expiry, sort_key) if sort_key is not None
                    else less_entry_factory(less, expiry))
        else:
            make = key_entry_factory(expiry)
        self._pod_q = KeyedHeap(make)
        self._error_q = KeyedHeap(key_entry_factory(expiry))

    # -- backoff arithmetic
    def align(self, t: float) -> float:
        """Truncate to the ordering window (identity when windows are off)."""
        if not self.pop_from_backoff_q:
            return t
        return math.floor(t / ORDERING_WINDOW + _EPS) * ORDERING_WINDOW

    def calculate_backoff_duration(self, count: int) -> float:
        """``initial * 2**(count-1)`` capped at ``max``, computed in integer nanoseconds as
        upstream does (same overflow-safe comparison ``initial > max >> shift``)."""
        if count <= 0:
            return 0.0
        shift = count - 1
        initial_ns, max_ns = round(self.initial * 1e9), round(self.max * 1e9)
        if initial_ns > max_ns >> shift:
            return self.max
        return (initial_ns << shift) / 1e9

    def backoff_time(self, qpi: QueuedPodInfo) -> float | None:
        """When the pod completes backoff (cached in ``qpi.backoff_expiration``);
        ``None`` when it has no backoff at all."""
        if self.max == 0:
            return None
        count = qpi.consecutive_errors_count if qpi.consecutive_errors_count > 0 \
            else qpi.unschedulable_count
        if count == 0:
            return None
        if qpi.backoff_expiration is None:
            qpi.backoff_expiration = self.align(qpi.timestamp + self.calculate_backoff_duration(count))
        return qpi.backoff_expiration

    def _sort_expiry(self, qpi: QueuedPodInfo) -> float:
        t = self.backoff_time(qpi)
        return _NO_BACKOFF if t is None else t

    def is_pod_backing_off(self, qpi: QueuedPodInfo) -> bool:
        t = self.backoff_time(qpi)
        return t is not None and t >= self.align(self._now())

    def completes_at(self, qpi: QueuedPodInfo) -> float:
        """The earliest time at which ``is_pod_backing_off`` turns false."""
        t = self.backoff_time(qpi)
        if t is None:
            return -math.inf
        if self.pop_from_backoff_q:
            return t + ORDERING_WINDOW
        return math.nextafter(t, math.inf)

    # -- contents
    def add(self, qpi: QueuedPodInfo) -> None:
        """Into the error heap if the pod has no rejector plugins, else the plugin heap."""
        key = qpi.pod.key
        if has_rejectors(qpi):
            self._error_q.delete(key)
            self._pod_q.add_or_update(qpi)
        else:
            self._pod_q.delete(key)
            self._error_q.add_or_update(qpi)

    def update(self, new_pod: Any, old_key: str) -> QueuedPodInfo | None:
        for heap in (self._pod_q, self._error_q):
            qpi = heap.get(old_key)
            if qpi is not None:
                qpi.pod = new_pod
                heap.add_or_update(qpi)
                return qpi
        return None

    def delete(self, key: str) -> bool:
        return self._pod_q.delete(key) is not None or self._error_q.delete(key) is not None

    def get(self, key: str) -> QueuedPodInfo | None:
        qpi = self._pod_q.get(key)
        return qpi if qpi is not None else self._error_q.get(key)

    def has(self, key: str) -> bool:
        return key in self._pod_q or key in self._error_q

    def __len__(self) -> int:
        return len(self._pod_q) + len(self._error_q)

    def len_backoff(self) -> int:
        """Pods in the plugin-rejection heap (the one ``pop_backoff`` takes from)."""
        return len(self._pod_q)

    def values(self) -> Iterable[QueuedPodInfo]:
        yield from self._pod_q.values()
        yield from self._error_q.values()

    def list(self) -> builtins.list[QueuedPodInfo]:
        return self._pod_q.ordered() + self._error_q.ordered()

    def peek_backoff(self) -> QueuedPodInfo | None:
        """The head of the plugin-rejection heap, left there (what :meth:`pop_backoff` would pop)."""
        return self._pod_q.peek()

    def pop_backoff(self) -> QueuedPodInfo | None:
        """Pop the head of the plugin-rejection heap even if it is still backing off
        (used by Pop when activeQ is empty). The error heap is never popped early."""
        return self._pod_q.pop()

    def pop_all_backoff_completed(self) -> builtins.list[QueuedPodInfo]:
        out: builtins.list[QueuedPodInfo] = []
        for heap in (self._pod_q, self._error_q):
            while True:
                qpi = heap.peek()
                if qpi is None or self.is_pod_backing_off(qpi):
                    break
                heap.pop()
                out.append(qpi)
        return out

    def next_completion(self) -> float | None:
        """The earliest time a flush would move a pod out of this queue (``None`` if empty)."""
        best: float | None = None
        for heap in (self._pod_q, self._error_q):
            qpi = heap.peek()
            if qpi is not None:
                t = self.completes_at(qpi)
                if best is None or t < best:
                    best = t
        return best
