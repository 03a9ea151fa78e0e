"""Binding cycles that wait, on the embedded cluster's simulated clock.

Upstream binds each pod in a goroutine, and a PreBind plugin may block there for minutes (DRA's
wait for binding conditions) while the scheduler goes on with other pods. The embedded cluster
binds at once on the scheduler's thread, which keeps a run reproducible; a binding cycle that
may wait (the scheduler says so, from the cycle's ``BINDING_MAY_WAIT`` mark) runs on a thread of
its own instead, in lock step: exactly one of it and the simulation runs at any moment, and its
``sleep`` is a timer on the simulated clock. So a run stays reproducible from its seed, and
simulated minutes of waiting cost no wall time.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["SteppedBinding", "current_binding"]

_local = threading.local()


def current_binding() -> "SteppedBinding | None":
    """The stepped binding running on this thread (None on the scheduler's thread)."""
    return getattr(_local, "binding", None)


class SteppedBinding:
    """One binding cycle (``work``) on its own thread; ``done(result)`` runs on the scheduler's
    thread once ``work`` returns, after as many ``sleep`` calls as it makes."""

    def __init__(self, call_at: Callable[[float, Callable[[], None]], None], now: Callable[[], float],
                 work: Callable[[], Any], done: Callable[[Any], None]) -> None:
        self._call_at = call_at
        self._now = now
        self._work = work
        self._done = done
        self._to_worker = threading.Semaphore(0)
        self._to_scheduler = threading.Semaphore(0)
        self._finished = False
        self._result: Any = None
        self._error: BaseException | None = None

    def start(self) -> None:
        threading.Thread(target=self._run, name="kschedfw-binding", daemon=True).start()
        self._wait_for_worker()

    def sleep(self, seconds: float) -> None:
        """On the binding's thread: give the turn back until ``seconds`` of simulated time passed."""
        self._call_at(self._now() + seconds, self._resume)
        self._to_scheduler.release()
        self._to_worker.acquire()

    def _run(self) -> None:
        _local.binding = self
        try:
            self._result = self._work()
        except BaseException as exc:  # handed to the scheduler's thread, raised there
            self._error = exc
        self._finished = True
        self._to_scheduler.release()

    def _resume(self) -> None:
        self._to_worker.release()
        self._wait_for_worker()

    def _wait_for_worker(self) -> None:
        self._to_scheduler.acquire()
        if not self._finished:
            return
        if self._error is not None:
            raise self._error
        self._done(self._result)
