"""Helpers for the queue tests: pod builders, PrioritySort, a fake QueueFramework."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import attrs

from kschedfw import testing as kit
from kschedfw.api import Pod
from kschedfw.clock import SimulatedClock
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.queue import PriorityQueue

PROFILE = "default-scheduler"
START = 1_700_000_000.25  # a non-aligned start, as time.Now() is upstream

LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2

NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
PV_ADD = ClusterEvent(EventResource.PersistentVolume, ActionType.Add)
PV_UPDATE = ClusterEvent(EventResource.PersistentVolume, ActionType.Update)
PVC_ADD = ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add)
CSI_NODE_UPDATE = ClusterEvent(EventResource.CSINode, ActionType.Update)


def queue_pod(name: str, namespace: str = "default", *, uid: str | None = None,
              priority: int | None = None, labels: dict | None = None,
              annotations: dict | None = None, nominated: str = "", node: str = "",
              gates: Iterable[str] = (), scheduler: str | None = None,
              requests: dict | None = None, affinity: dict | None = None,
              spread: list | None = None, tolerations: list | None = None) -> Pod:
    """The kit's pod with this suite's uid (``name + namespace``, as ``rename`` keeps it) and the
    queue tests' short keywords (``nominated``, ``node``, ``gates``, ``scheduler``, ``spread``)."""
    return kit.make_pod(name, namespace=namespace, uid=uid or f"{name}{namespace}", priority=priority,
                        labels=labels, annotations=annotations, nominated_node_name=nominated,
                        node_name=node, scheduling_gates=gates,
                        scheduler_name=scheduler or "default-scheduler", requests=requests,
                        affinity=affinity, topology_spread_constraints=spread or (),
                        tolerations=tolerations or ())


def with_annotation(pod: Pod, key: str, value: str) -> Pod:
    return attrs.evolve(pod, annotations={**pod.annotations, key: value})


def with_labels(pod: Pod, labels: dict) -> Pod:
    return attrs.evolve(pod, labels=dict(labels))


def rename(pod: Pod, name: str) -> Pod:
    return attrs.evolve(pod, name=name, uid=name + pod.namespace)


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort.Less."""
    pa, pb = a.pod.effective_priority, b.pod.effective_priority
    return pa > pb or (pa == pb and a.timestamp < b.timestamp)


def priority_key(q: QueuedPodInfo) -> tuple:
    return (-q.pod.effective_priority, q.timestamp)


def queue_hint_return_queue(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.Queue


def queue_hint_return_skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QueueSkip


class AllowlistPlugin:
    """Upstream's test ``preEnqueuePlugin``: passes pods carrying one of the allowed label keys."""

    def __init__(self, allowlists: Iterable[str] = (), name: str = "preEnqueuePlugin") -> None:
        self.allowlists = list(allowlists)
        self.name = name

    def __call__(self, pod: Pod) -> Status | None:
        if any(label in self.allowlists for label in pod.labels):
            return None
        return Status(Code.UnschedulableAndUnresolvable, ("pod name not in allowlists",))


def scheduling_gates(pod: Pod) -> Status | None:
    """The SchedulingGates PreEnqueue plugin."""
    if not pod.scheduling_gates:
        return None
    return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")


def scheduling_gates_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if new is not None and new.uid == pod.uid and not new.scheduling_gates:
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


class FakeFramework:
    """A QueueFramework: PreEnqueue plugins are ``name -> callable(pod)``; hints are
    ``(event, plugin, fn)``. Both can be changed between calls (tests swap allowlists)."""

    def __init__(self, hints: Iterable[tuple[ClusterEvent, str, Callable | None]] = (),
                 pre_enqueue: dict[str, Callable[[Pod], Status | None]] | None = None,
                 profile_name: str = PROFILE) -> None:
        self.profile_name = profile_name
        self.hints = list(hints)
        self.pre_enqueue = dict(pre_enqueue or {})
        self.pre_enqueue_calls = 0

    def run_pre_enqueue_plugins(self, pod: Pod, gating_plugin: str = "") -> Status | None:
        self.pre_enqueue_calls += 1
        names = list(self.pre_enqueue)
        if gating_plugin in self.pre_enqueue:
            names.remove(gating_plugin)
            names.insert(0, gating_plugin)
        for name in names:
            status = self.pre_enqueue[name](pod)
            if status is not None and status.code is not Code.Success:
                status.plugin = name
                return status
        return None

    def queueing_hints(self) -> list:
        return list(self.hints)

    def pre_enqueue_plugin_names(self) -> frozenset[str]:
        return frozenset(self.pre_enqueue)


def hint_map(*entries: tuple[ClusterEvent, list[tuple[str, Callable | None]]]) -> list:
    """Upstream's QueueingHintMap shape -> the flat list a framework returns."""
    return [(event, plugin, fn) for event, hints in entries for plugin, fn in hints]


def new_queue(*, hints: Iterable = (), pre_enqueue: dict | None = None,
              clock: SimulatedClock | None = None, sort_key: bool = False, **kwargs: Any
              ) -> tuple[PriorityQueue, SimulatedClock, FakeFramework]:
    clock = clock or SimulatedClock(START)
    # Upstream's tests call flushUnschedulablePodsLeftover directly, at any time: no 30-s grid.
    kwargs.setdefault("unschedulable_flush_interval", None)
    fw = FakeFramework(hints, pre_enqueue)
    frameworks = kwargs.pop("frameworks", {PROFILE: fw})
    q = PriorityQueue(less=priority_less, frameworks=frameworks, clock=clock,
                      sort_key=priority_key if sort_key else None, **kwargs)
    return q, clock, fw


def lookup_info(pod: Pod, *plugins: str) -> QueuedPodInfo:
    """Upstream ``newQueuedPodInfoForLookup``: a bare entry with these rejector plugins."""
    return QueuedPodInfo(pod=pod, unschedulable_plugins=set(plugins))


def pop_pod(q: PriorityQueue, pod: Pod) -> QueuedPodInfo:
    qpi = q.pop()
    assert qpi is not None, "nothing to pop"
    assert qpi.pod.uid == pod.uid, f"popped {qpi.pod.key}, want {pod.key}"
    return qpi


def names(qpis: Iterable[QueuedPodInfo]) -> list[str]:
    return [q.pod.name for q in qpis]
