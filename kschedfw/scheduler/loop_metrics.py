"""What the scheduler's loop reports metrics to, and the metrics that keep nothing.

The scheduler holds :data:`NULL_METRICS` unless it is given a
:class:`~kschedfw.metrics.SchedulerMetrics`: chosen once, so no step of the loop asks whether
metrics are on. This module imports no metrics library: the embedded simulation never loads one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kschedfw.fwk.types import QueuedPodInfo

__all__ = ["LoopMetrics", "NullMetrics", "NULL_METRICS"]


class _Series(Protocol):
    def observe(self, amount: float) -> None: ...


class _Labelled(Protocol):
    def labels(self, *labelvalues: Any, **labelkwargs: Any) -> Any: ...


class LoopMetrics(Protocol):
    """What the scheduler's loop reports to: :class:`~kschedfw.metrics.SchedulerMetrics`, or
    :data:`NULL_METRICS`."""

    @property
    def enabled(self) -> bool: ...

    @property
    def algorithm_duration(self) -> _Series: ...

    @property
    def event_handling_duration(self) -> _Labelled: ...

    @property
    def permit_wait_duration(self) -> _Labelled: ...

    @property
    def goroutines(self) -> _Labelled: ...

    def cycle_started(self, uid: str) -> bool: ...

    def attempt(self, uid: str, result: str, profile: str) -> None: ...

    def now(self) -> float: ...

    def pod_scheduled(self, qpi: "QueuedPodInfo", now: float) -> None: ...

    def queueing_hint_ran(self, plugin: str, event: str, hint: str, seconds: float) -> None: ...

    def pod_group_algorithm_ran(self, seconds: float) -> None: ...

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None: ...


class _NullSeries:
    """A histogram, gauge or labelled family that keeps nothing."""

    def labels(self, *labelvalues: Any, **labelkwargs: Any) -> "_NullSeries":
        return self

    def observe(self, amount: float) -> None:
        pass

    def inc(self, amount: float = 1) -> None:
        pass

    def dec(self, amount: float = 1) -> None:
        pass


class NullMetrics:
    """Metrics off (the embedded simulation's default): every report is dropped."""

    enabled = False
    algorithm_duration = event_handling_duration = permit_wait_duration = goroutines = _NullSeries()

    def cycle_started(self, uid: str) -> bool:
        return False

    def attempt(self, uid: str, result: str, profile: str) -> None:
        pass

    def now(self) -> float:
        return 0.0

    def pod_scheduled(self, qpi: "QueuedPodInfo", now: float) -> None:
        pass

    def queueing_hint_ran(self, plugin: str, event: str, hint: str, seconds: float) -> None:
        pass

    def pod_group_algorithm_ran(self, seconds: float) -> None:
        pass

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        pass


NULL_METRICS = NullMetrics()
