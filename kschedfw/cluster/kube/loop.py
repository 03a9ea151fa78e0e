"""Drives a :class:`~kschedfw.scheduler.Scheduler` against a :class:`KubeBackend` in real time,
on the calling thread: deliver informer changes, run due timers and queue flushes, schedule
until the queue is empty, then sleep until the next change or timer.

Kept apart so that ``Scheduler.run(until=...)`` can replace it once the core has one.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from kschedfw.cluster.kube.backend import KubeBackend
    from kschedfw.scheduler import Scheduler

__all__ = ["run_until_stopped", "MAX_IDLE_WAIT"]

MAX_IDLE_WAIT = 1.0  # seconds; also bounds how late a periodic queue flush runs


def _run_due(scheduler: "Scheduler", backend: "KubeBackend") -> None:
    backend.run_due_timers()
    scheduler.expire_waiting_pods()
    scheduler.queue.flush_backoff_q_completed()
    scheduler.queue.flush_unschedulable_pods_leftover()


def run_until_stopped(scheduler: "Scheduler", backend: "KubeBackend", stop: threading.Event,
                      on_tick: Callable[[], None] | None = None) -> None:
    """Schedule until ``stop`` is set (set it, then call ``backend.wake()``, to end promptly).
    ``on_tick`` runs on this thread about once a second (publishing metrics)."""
    next_tick = 0.0
    while not stop.is_set():
        if on_tick is not None and backend.clock.now() >= next_tick:
            on_tick()
            next_tick = backend.clock.now() + 1.0
        backend.deliver()
        _run_due(scheduler, backend)
        if stop.is_set():
            break
        if scheduler.schedule_one():
            continue
        now = backend.clock.now()
        wakeups = [t for t in (backend.next_timer(), scheduler.next_waiting_deadline(),
                               scheduler.queue.next_wakeup()) if t is not None]
        wait = min([MAX_IDLE_WAIT, *(t - now for t in wakeups)])
        backend.deliver(timeout=max(wait, 0.001))
