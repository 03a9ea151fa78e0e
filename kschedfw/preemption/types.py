"""Preemption data: the bounded candidate list of a dry run, and the victims' order and times.

``Victims`` and ``Candidate`` are the framework's (:mod:`kschedfw.fwk.victims`): the
extenders exchange them too."""

from __future__ import annotations

import datetime as _dt
import functools
from typing import TYPE_CHECKING, Callable

from kschedfw.fwk.victims import Candidate, Victims

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import Handle

_UNIX_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


class CandidateList:
    """A list with a fixed capacity: candidates beyond it are dropped, as upstream's dry run does."""

    __slots__ = ("_capacity", "_items")

    def __init__(self, capacity: int) -> None:
        self._capacity = max(int(capacity), 0)
        self._items: list[Candidate] = []

    def add(self, candidate: Candidate) -> None:
        if len(self._items) < self._capacity:
            self._items.append(candidate)

    def size(self) -> int:
        return len(self._items)

    def get(self) -> list[Candidate]:
        return list(self._items)


# --------------------------------------------------------------------------- time helpers

def now_datetime(handle: "Handle | None") -> _dt.datetime:
    """The current time as an aware datetime: the handle's clock, or the wall clock when there
    is no handle (upstream's ``time.Now()``)."""
    if handle is None:
        return _dt.datetime.now(_dt.timezone.utc)
    return handle.clock.now_datetime()


def get_pod_start_time(pod: "Pod", now: _dt.datetime) -> _dt.datetime:
    """``status.startTime``, or ``now`` for pods that have not started yet (upstream GetPodStartTime)."""
    start = pod.start_time
    if start is None:
        return now
    if start.tzinfo is None:
        start = start.replace(tzinfo=_dt.timezone.utc)
    return start


def get_earliest_pod_start_time(victims: Victims, now: _dt.datetime) -> _dt.datetime | None:
    """Earliest start time among the victims that share the highest priority."""
    pods = victims.pods
    if not pods:
        return None
    if len(pods) == 1:  # the usual case (one candidate per node, a hundred nodes per preemptor)
        return get_pod_start_time(pods[0], now)
    earliest = get_pod_start_time(pods[0], now)
    max_priority = pods[0].effective_priority
    for pod in pods:
        priority = pod.effective_priority
        if priority == max_priority:
            start = get_pod_start_time(pod, now)
            if start < earliest:
                earliest = start
        elif priority > max_priority:
            max_priority = priority
            earliest = get_pod_start_time(pod, now)
    return earliest


def unix_nano(when: _dt.datetime) -> int:
    """Nanoseconds since the Unix epoch, in integer arithmetic."""
    delta = when - _UNIX_EPOCH
    return ((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000


def more_important_pod(pod1: "Pod", pod2: "Pod", now: _dt.datetime) -> bool:
    """Higher priority first; on equal priority the pod that started earlier is more important."""
    p1, p2 = pod1.effective_priority, pod2.effective_priority
    if p1 != p2:
        return p1 > p2
    return get_pod_start_time(pod1, now) < get_pod_start_time(pod2, now)


def sort_by_importance(pods: list["Pod"], more_important: Callable[["Pod", "Pod"], bool]) -> list["Pod"]:
    """Pods sorted most important first with a ``less``-style predicate (stable)."""
    def compare(a: "Pod", b: "Pod") -> int:
        if more_important(a, b):
            return -1
        if more_important(b, a):
            return 1
        return 0

    return sorted(pods, key=functools.cmp_to_key(compare))


def pod_terminating_by_preemption(pod: "Pod") -> bool:
    """Terminating because the scheduler preempted it: deletionTimestamp set and the first
    DisruptionTarget condition is True with reason PreemptionByScheduler."""
    if pod.deletion_timestamp is None:
        return False
    for condition in pod.conditions:
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER
    return False
