"""The scheduling queue (upstream ``backend/queue/scheduling_queue.go``, v1.36 behaviour).

Three sub-queues and a nominator:

- **activeQ**: pods ready to be tried, a heap ordered by the profile's QueueSort ``less``
  (first-in first-out among equals). ``pop`` takes the head and marks the pod *in flight*
  until ``done``.
- **backoffQ**: pods waiting out their backoff (see :mod:`kschedfw.queue.backoff_queue`).
  When activeQ is empty, ``pop`` takes the head of its plugin-rejection heap early
  (``SchedulerPopFromBackoffQ``, on by default in v1.36).
- **unschedulable pool**: pods rejected by plugins, waiting for a cluster event that a
  queueing hint says may help (or for the 5-minute leftover flush), and *gated* pods
  (rejected by a PreEnqueue plugin, never tried).
- **nominator**: pods nominated to nodes by preemption.

With ``once`` (a kschedfw extension, not upstream: ``kschedfw simulate --once``) a pod whose
attempt failed is set aside instead of requeued: no event, flush, update or activation moves
it back, and it stays listed as unschedulable until it is deleted.

The queue is single-threaded, never blocks and reads time only through the injected clock.
Upstream's two timers are methods the caller runs: :meth:`PriorityQueue.flush_backoff_q_completed`
(every whole second) and :meth:`PriorityQueue.flush_unschedulable_pods_leftover` (every 30 s);
:meth:`PriorityQueue.next_wakeup` says when the next one would move a pod.

Queueing hints come from each profile's :class:`QueueFramework`: a list of
``(registered event, plugin name, hint fn or None)``. A plugin that does not implement
EventsToRegister must still be listed, registered for every event (upstream unrolls the
wildcard: pass :data:`UNROLLED_WILDCARD_EVENTS`, or ``WILDCARD_EVENT``), otherwise pods it
rejects are only retried by the leftover flush. Only plugins recorded on the pod as
unschedulable or pending rejectors are asked; a hint that raises counts as Queue.
"""

from __future__ import annotations

import collections
import inspect
import logging
import math
import time
from enum import IntEnum
from typing import Any, Callable, Iterable, Mapping, Protocol

from kschedfw.api import Pod
from kschedfw.fwk.events import (BACKOFF_COMPLETE, FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT,
                                 ActionType, ClusterEvent, EventResource, QueueingHint,
                                 pod_scheduling_properties_change)
from kschedfw.fwk.interface import Clock
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.queue._heap import key_entry_factory, less_entry_factory
from kschedfw.queue.active_queue import ActiveQueue, pod_uid
from kschedfw.queue.backoff_queue import BackoffQueue, has_rejectors
from kschedfw.queue.nominator import Nominator, PodLister
from kschedfw.queue.unschedulable_pods import POD_TOPOLOGY_SPREAD, UnschedulablePods

log = logging.getLogger(__name__)

__all__ = [
    "PriorityQueue", "QueueFramework", "QueueingStrategy", "match_cluster_events",
    "match_any_cluster_event", "is_wildcard_event",
    "UNROLLED_WILDCARD_EVENTS", "ACTIVE_Q", "BACKOFF_Q", "UNSCHEDULABLE_Q", "GATED",
    "EVENT_ASSIGNED_POD_ADD", "EVENT_ASSIGNED_POD_UPDATE", "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_ADD", "EVENT_UNSCHEDULED_POD_UPDATE", "EVENT_UNSCHEDULED_POD_DELETE",
    "SCHEDULE_ATTEMPT_FAILURE", "POP_FROM_BACKOFF_Q",
    "DEFAULT_POD_INITIAL_BACKOFF", "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION", "UNSCHEDULABLE_FLUSH_INTERVAL",
]

# Queue names, as the scheduler_pending_pods / scheduler_queue_incoming_pods_total labels.
ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_Q = "unschedulable"
GATED = "gated"

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0

# Event labels that are not cluster events.
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"

EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.AssignedPod, ActionType.Update)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UnschedulablePod, ActionType.Add)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UnschedulablePod, ActionType.Update)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UnschedulablePod, ActionType.Delete)
_POD_SCALE_DOWN = ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown)

UNROLLED_WILDCARD_EVENTS: tuple[ClusterEvent, ...] = tuple(
    ClusterEvent(r, ActionType.All) for r in (
        EventResource.Pod, EventResource.Node, EventResource.PersistentVolume,
        EventResource.PersistentVolumeClaim, EventResource.CSINode, EventResource.CSIDriver,
        EventResource.CSIStorageCapacity, EventResource.StorageClass, EventResource.ResourceClaim,
        EventResource.DeviceClass))
"""What upstream registers for a plugin that does not implement EventsToRegister."""


class QueueFramework(Protocol):
    """What the queue needs from one profile's framework runtime.

    ``run_pre_enqueue_plugins`` returns the first non-success status with ``.plugin`` set (or
    None/Success). It may accept a keyword ``gating_plugin``: the plugin that gated the pod
    last time, which upstream runs first; without it the configured order is used.
    ``queueing_hints`` lists ``(registered event, plugin, hint)``; ``hint(pod, old, new)``
    returns a QueueingHint, ``None`` means always Queue. It is read once, at queue creation.
    """

    profile_name: str

    def run_pre_enqueue_plugins(self, pod: Any) -> Status | None: ...

    def queueing_hints(self) -> list[tuple[ClusterEvent, str, Callable[..., Any] | None]]: ...

    def pre_enqueue_plugin_names(self) -> frozenset[str]: ...


class QueueingStrategy(IntEnum):
    """Where an event sends a pod from the pool (upstream ``queueingStrategy``)."""

    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


# --------------------------------------------------------------------------- event matching

def is_wildcard_event(event: ClusterEvent) -> bool:
    """Resource ``*`` and every action (upstream ``ClusterEventIsWildCard``)."""
    return event.is_wildcard()


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Does a registration cover an incoming event (upstream ``MatchClusterEvents``)?"""
    return registered.matches(incoming)


def match_any_cluster_event(incoming: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    return any(match_cluster_events(r, incoming) for r in registered)


# --------------------------------------------------------------------------- per profile

_Hint = tuple[str, Callable[..., Any] | None]


class _Profile:
    """One framework's registrations, compiled for fast lookups."""

    __slots__ = ("name", "framework", "hints", "plugin_events", "pre_enqueue", "_takes_gating",
                 "_matching")

    def __init__(self, name: str, framework: QueueFramework) -> None:
        self.name = name
        self.framework = framework
        self.hints: dict[ClusterEvent, list[_Hint]] = {}
        self.plugin_events: dict[str, list[ClusterEvent]] = {}
        for event, plugin, fn in framework.queueing_hints():
            self.hints.setdefault(event, []).append((plugin, fn))
            self.plugin_events.setdefault(plugin, []).append(event)
        self.pre_enqueue = frozenset(framework.pre_enqueue_plugin_names())
        try:
            params = inspect.signature(framework.run_pre_enqueue_plugins).parameters
            self._takes_gating = "gating_plugin" in params or any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        except (TypeError, ValueError):
            self._takes_gating = False
        self._matching: dict[ClusterEvent, list[_Hint]] = {}

    def matching_hints(self, event: ClusterEvent) -> list[_Hint]:
        """Hints whose registration matches ``event``, in registration order."""
        found = self._matching.get(event)
        if found is None:
            found = [h for registered, hints in self.hints.items()
                     if match_cluster_events(registered, event) for h in hints]
            self._matching[event] = found
        return found

    def interested_in(self, event: ClusterEvent) -> bool:
        return any(match_cluster_events(registered, event) for registered in self.hints)

    def run_pre_enqueue(self, pod: Any, gating_plugin: str) -> Status | None:
        if gating_plugin and self._takes_gating:
            return self.framework.run_pre_enqueue_plugins(pod, gating_plugin=gating_plugin)  # type: ignore[call-arg]
        return self.framework.run_pre_enqueue_plugins(pod)


# --------------------------------------------------------------------------- the queue

class PriorityQueue:
    """The scheduling queue of every profile (see the module docstring)."""

    def __init__(self, *, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
                 frameworks: Mapping[str, QueueFramework], clock: Clock,
                 pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 pod_max_in_unschedulable_pods_duration: float =
                 DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 sort_key: Callable[[QueuedPodInfo], Any] | None = None,
                 pop_from_backoff_q: bool = True,
                 pod_lister: PodLister | None = None,
                 namespace_labels: Callable[[str], Mapping[str, str] | None] | None = None,
                 unschedulable_flush_interval: float | None = UNSCHEDULABLE_FLUSH_INTERVAL,
                 pod_signers: Mapping[str, Callable[[Any], Any]] | None = None,
                 once: bool = False, nominator: Nominator | None = None,
                 pod_groups_retry_by_backoff: bool = False) -> None:
        """
        ``less``: the QueueSort function (one for all profiles, as upstream requires).
        ``frameworks``: schedulerName -> that profile's :class:`QueueFramework`.
        ``clock``: anything with ``now() -> float`` seconds.
        ``sort_key``: optional ``qpi -> key`` ordering exactly like ``less`` (smaller first);
        when given, heap comparisons run in C (e.g. PrioritySort: ``(-priority, timestamp)``).
        ``pop_from_backoff_q``: upstream gate SchedulerPopFromBackoffQ (default on in v1.36).
        ``pod_lister``: ``"ns/name" -> current pod or None``, for the nominator's liveness check.
        ``namespace_labels``: ``namespace -> labels``, for pod-affinity namespace selectors when
        deciding which pods an assigned-pod event can help.
        ``unschedulable_flush_interval``: the period of upstream's leftover flush timer, whose
        ticks fall every that many seconds from the queue's creation. The flush acts as the
        latest tick not after now would have, so calling it more often changes nothing; with
        None it acts at ``now`` (like calling upstream's flushUnschedulablePodsLeftover directly).
        ``pod_signers``: schedulerName -> ``pod -> signature`` (gate OpportunisticBatching; None
        when off): a queued pod is signed when it enters the queue and when it is updated there.
        ``once``: every pod gets one attempt; a failed one is set aside, never requeued (see the
        module docstring).
        ``nominator``: one built before this queue (the scheduler gives it to the profiles'
        Handles first), which this queue then resolves nominated pods for; else a new one
        checking pods with ``pod_lister``.
        ``pod_groups_retry_by_backoff`` (gate GenericWorkload): a pod of a pod group that failed
        goes to backoffQ whatever its rejectors' hints say (see :meth:`_pop_backoff`).
        """
        self._clock = clock
        self._less = less
        self._profiles = {name: _Profile(name, fw) for name, fw in frameworks.items()}
        self._pod_signers = pod_signers
        self.pod_max_in_unschedulable_pods_duration = float(pod_max_in_unschedulable_pods_duration)
        self.pop_from_backoff_q = pop_from_backoff_q
        self.pod_groups_retry_by_backoff = pod_groups_retry_by_backoff
        #: cluster events delivered so far, and, per pod of a pod group put back after a failed
        #: attempt, how many had been delivered then
        self._events_seen = 0
        self._failed_after_event: dict[str, int] = {}
        self._namespace_labels = namespace_labels
        self._flush_origin = clock.now()
        self._flush_interval = (float(unschedulable_flush_interval)
                                if unschedulable_flush_interval else None)
        make = key_entry_factory(sort_key) if sort_key is not None else less_entry_factory(less)
        self._active_q = ActiveQueue(make)
        self._backoff_q = BackoffQueue(clock.now, pod_initial_backoff, pod_max_backoff, less,
                                       sort_key=sort_key, pop_from_backoff_q=pop_from_backoff_q)
        self._unschedulable = UnschedulablePods()
        self.once = once
        #: ``once``: key -> the entry of a pod whose one attempt failed
        self._set_aside: dict[str, QueuedPodInfo] = {}
        #: uid -> the pod object of the queued (not in-flight) QueuedPodInfo with that uid,
        #: noted whenever a QueuedPodInfo enters a sub-queue or its pod is replaced there; an
        #: entry may outlive its pod's stay. The nominator skips resolving a stored pod that
        #: is the object noted here: the queue can hold no other version of it.
        self._held_pods: dict[str, Any] = {}
        self.nominator = nominator if nominator is not None else Nominator(pod_lister)
        self.nominator.held_by(self._resolve_nominated, self._held_pods)
        self.incoming_pods: collections.Counter[tuple[str, str]] = collections.Counter()
        """``(queue, event label) -> count`` (upstream scheduler_queue_incoming_pods_total)."""
        self._interest: dict[ClusterEvent, bool] = {}
        #: ``(plugin, event label, hint result, seconds)`` for every queueing hint run, when set
        #: (upstream scheduler_queueing_hint_execution_duration_seconds)
        self.observe_hint: Callable[[str, str, str, float], None] | None = None
        #: told each pod's strategy for each event (the queueing-hint audit)
        self.hint_decided: Callable[[QueuedPodInfo, ClusterEvent, Any, Any, QueueingStrategy], None] | None = None

    # ------------------------------------------------------------------ read-only views
    @property
    def scheduling_cycle(self) -> int:
        """Incremented by every pop."""
        return self._active_q.scheduling_cycle

    @property
    def active_q(self) -> ActiveQueue:
        return self._active_q

    @property
    def backoff_q(self) -> BackoffQueue:
        return self._backoff_q

    @property
    def unschedulable_pods(self) -> UnschedulablePods:
        return self._unschedulable

    def pending_pods(self) -> dict[str, int]:
        """Counts per upstream ``scheduler_pending_pods`` label."""
        gated = self._unschedulable.gated_count
        return {ACTIVE_Q: len(self._active_q), BACKOFF_Q: len(self._backoff_q),
                UNSCHEDULABLE_Q: len(self._unschedulable) - gated + len(self._set_aside), GATED: gated}

    def get_pod(self, key: str) -> QueuedPodInfo | None:
        """The queued entry for ``namespace/name`` (in flight pods are not queued)."""
        return (self._backoff_q.get(key) or self._unschedulable.get(key)
                or self._active_q.get(key) or self._set_aside.get(key))

    def list_pending(self) -> list[tuple[str, QueuedPodInfo]]:
        """``(queue, entry)`` for every queued pod: activeQ and backoffQ in pop order, then the
        pool (``"gated"`` for gated pods)."""
        out = [(ACTIVE_Q, q) for q in self._active_q.list()]
        out += [(BACKOFF_Q, q) for q in self._backoff_q.list()]
        out += [(GATED if q.gating_plugin else UNSCHEDULABLE_Q, q)
                for q in self._unschedulable.values()]
        out += [(UNSCHEDULABLE_Q, q) for q in self._set_aside.values()]
        return out

    def in_flight_pods(self) -> list[Any]:
        return self._active_q.in_flight_pods()

    def unschedulable_reasons(self) -> dict[tuple[str, str], int]:
        """``(plugin, profile) -> number of queued pods that plugin rejected`` (upstream
        ``scheduler_unschedulable_pods``; in-flight pods are not counted)."""
        counts: collections.Counter[tuple[str, str]] = collections.Counter()
        for qpi in self._all_queued():
            for plugin in qpi.unschedulable_plugins | qpi.pending_plugins:
                counts[(plugin, qpi.pod.scheduler_name)] += 1
        return dict(counts)

    def _all_queued(self) -> Iterable[QueuedPodInfo]:
        yield from self._active_q.values()
        yield from self._backoff_q.values()
        yield from self._unschedulable.values()
        yield from self._set_aside.values()

    # ------------------------------------------------------------------ helpers
    def new_queued_pod_info(self, pod: Any, *plugins: str) -> QueuedPodInfo:
        return QueuedPodInfo(pod=pod, timestamp=self._clock.now(),
                             unschedulable_plugins=set(plugins), pod_signature=self.sign_pod(pod))

    def sign_pod(self, pod: Any) -> Any:
        """The pod's signature for opportunistic batching (upstream signPod); None when the
        gate is off or the profile cannot sign it."""
        if self._pod_signers is None:
            return None
        signer = self._pod_signers.get(pod.scheduler_name)
        return signer(pod) if signer is not None else None

    def _profile(self, pod: Any) -> _Profile | None:
        return self._profiles.get(pod.scheduler_name)

    def _note_held(self, qpi: QueuedPodInfo) -> None:
        """``qpi`` entered a sub-queue, or its pod was replaced there (see ``_held_pods``)."""
        pod = qpi.pod
        uid = pod.uid or pod.key
        if self._held_pods.get(uid) is not pod:
            self._held_pods[uid] = pod
            self.nominator.held_changed(uid)

    def _forget_held(self, pod: Any) -> None:
        uid = pod.uid or pod.key
        if self._held_pods.pop(uid, None) is not None:
            self.nominator.held_changed(uid)

    def _resolve_nominated(self, pod: Any) -> Any:
        key = pod.key
        qpi = (self._active_q.get(key) or self._unschedulable.get(key)
               or self._backoff_q.get(key))
        if qpi is not None and pod_uid(qpi.pod) == pod_uid(pod):
            return qpi.pod
        return pod

    def _gating_events(self, qpi: QueuedPodInfo) -> list[ClusterEvent]:
        profile = self._profile(qpi.pod)
        if profile is None:
            return []
        return profile.plugin_events.get(qpi.gating_plugin, [])

    def _run_pre_enqueue_plugins(self, qpi: QueuedPodInfo) -> None:
        """Set ``gating_plugin`` (and add it to the rejectors) when a PreEnqueue plugin rejects."""
        profile = self._profile(qpi.pod)
        if profile is None or not profile.pre_enqueue:
            qpi.gating_plugin, qpi.gating_message, qpi.gated = "", "", False
            return
        status = profile.run_pre_enqueue(qpi.pod, qpi.gating_plugin)
        if status is None or status.code is Code.Success:
            qpi.gating_plugin, qpi.gating_message, qpi.gated = "", "", False
            return
        plugin = status.plugin or "PreEnqueue"
        qpi.unschedulable_plugins.add(plugin)
        qpi.gating_plugin, qpi.gating_message, qpi.gated = plugin, status.message(), True
        if status.code is Code.Error:
            log.error("unexpected error running PreEnqueue plugin %s on pod %s: %s",
                      plugin, qpi.pod.key, status.message())
        else:
            log.debug("pod %s gated by PreEnqueue plugin %s: %s", qpi.pod.key, plugin, status)

    def _add_to_pool(self, qpi: QueuedPodInfo, event: str) -> None:
        qpi.gated = bool(qpi.gating_plugin)
        self._note_held(qpi)
        if self._unschedulable.add_or_update(qpi):
            self.incoming_pods[(UNSCHEDULABLE_Q, event)] += 1

    def _move_to_active_q(self, qpi: QueuedPodInfo, event: str, moves_from_backoff_q: bool) -> bool:
        """Run PreEnqueue (unless the pod comes straight from backoffQ, where it already ran)
        and put the pod in activeQ, or in the pool as gated."""
        if not (self.pop_from_backoff_q and moves_from_backoff_q):
            self._run_pre_enqueue_plugins(qpi)
        key = qpi.pod.key
        if qpi.gating_plugin:
            if self._active_q.has(key) or self._backoff_q.has(key):
                return False
            self._add_to_pool(qpi, event)
            return False
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock.now()
        self._unschedulable.delete(key)
        self._backoff_q.delete(key)
        self._note_held(qpi)
        self._active_q.add(qpi)
        self.incoming_pods[(ACTIVE_Q, event)] += 1
        if event == _UNSCHEDULED_ADD_LABEL or event == _UNSCHEDULED_UPDATE_LABEL:
            self.nominator.add_nominated_pod(qpi.pod, None)
        return True

    def _move_to_backoff_q(self, qpi: QueuedPodInfo, event: str) -> bool:
        """Put the pod in backoffQ; with pop-from-backoffQ, PreEnqueue runs first and a gated
        pod goes to the pool instead."""
        if self.pop_from_backoff_q:
            self._run_pre_enqueue_plugins(qpi)
            if qpi.gating_plugin:
                self._add_to_pool(qpi, event)
                return False
        self._unschedulable.delete(qpi.pod.key)
        self._note_held(qpi)
        self._backoff_q.add(qpi)
        self.incoming_pods[(BACKOFF_Q, event)] += 1
        return True

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, event: str) -> str:
        """Send the pod where ``strategy`` says; returns the queue it ended in."""
        if strategy is QueueingStrategy.QUEUE_SKIP:
            self._add_to_pool(qpi, event)
            return UNSCHEDULABLE_Q
        if strategy is QueueingStrategy.QUEUE_AFTER_BACKOFF and self._backoff_q.is_pod_backing_off(qpi):
            return BACKOFF_Q if self._move_to_backoff_q(qpi, event) else UNSCHEDULABLE_Q
        # queueImmediately, or queueAfterBackoff with the backoff already over.
        return ACTIVE_Q if self._move_to_active_q(qpi, event, False) else UNSCHEDULABLE_Q

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        if is_wildcard_event(event):
            return True
        found = self._interest.get(event)
        if found is None:
            found = any(p.interested_in(event) for p in self._profiles.values())
            self._interest[event] = found
            if not found:
                log.debug("no enabled plugin is interested in event %s", event.label)
        return found

    def is_pod_worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent,
                               old_obj: Any, new_obj: Any) -> QueueingStrategy:
        """Ask the hints of the pod's rejector plugins about ``event`` (upstream
        ``isPodWorthRequeuing``)."""
        strategy = self._worth_requeuing(qpi, event, old_obj, new_obj)
        if self.hint_decided is not None:
            self.hint_decided(qpi, event, old_obj, new_obj, strategy)
        return strategy

    def _worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old_obj: Any,
                         new_obj: Any) -> QueueingStrategy:
        unsched, pending = qpi.unschedulable_plugins, qpi.pending_plugins
        if not unsched and not pending:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        if is_wildcard_event(event):
            # A wildcard event naming a pod (ForceActivate) is for that pod only.
            if new_obj is not None and (not isinstance(new_obj, Pod) or new_obj.uid != qpi.pod.uid):
                return QueueingStrategy.QUEUE_SKIP
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        profile = self._profile(qpi.pod)
        if profile is None:
            log.error("no queueing hints are registered for profile %r (pod %s)",
                      qpi.pod.scheduler_name, qpi.pod.key)
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_SKIP
        pod = qpi.pod
        observe = self.observe_hint
        for plugin, fn in profile.matching_hints(event):
            if plugin not in unsched and plugin not in pending:
                continue
            started = time.perf_counter() if observe is not None else 0.0
            failed = False
            if fn is None:
                hint = QueueingHint.Queue
            else:
                try:
                    hint = fn(pod, old_obj, new_obj)
                except Exception:
                    # Treat as Queue so that the pod cannot get stuck in the pool.
                    log.error("QueueingHintFn of plugin %s returned an error for event %s, "
                              "pod %s", plugin, event.label, pod.key, exc_info=True)
                    hint = QueueingHint.Queue
                    failed = True
            if observe is not None:
                observe(plugin, event.label, "Error" if failed else
                        "QueueSkip" if hint == QueueingHint.QueueSkip else "Queue", time.perf_counter() - started)
            if hint == QueueingHint.QueueSkip:
                continue
            if plugin in pending:
                return QueueingStrategy.QUEUE_IMMEDIATELY
            if not pending:
                return QueueingStrategy.QUEUE_AFTER_BACKOFF
            # A pending plugin may still say Queue, which would mean queueImmediately.
            strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
        return strategy

    def _move_pods(self, qpis: Iterable[QueuedPodInfo], event: ClusterEvent,
                   old_obj: Any, new_obj: Any) -> None:
        self._events_seen += 1
        if not self._is_event_of_interest(event):
            return
        label = event.label
        pool = self._unschedulable
        for qpi in qpis:
            if qpi.gating_plugin and not match_any_cluster_event(event, self._gating_events(qpi)):
                continue  # the plugin that gates this pod cares nothing for this event
            strategy = self.is_pod_worth_requeuing(qpi, event, old_obj, new_obj)
            if strategy is QueueingStrategy.QUEUE_SKIP:
                continue
            pool.delete(qpi.pod.key)
            self._requeue(qpi, strategy, label)
        # Pods in flight replay this event when they come back (add_unschedulable_if_not_present).
        self._active_q.add_event_if_any_in_flight(old_obj, new_obj, event)

    def _cross_topology_pods(self, pod: Any) -> list[QueuedPodInfo]:
        """Pool pods an assigned pod can help: rejected by PodTopologySpread in the same
        namespace, or with a required pod-affinity term matching the pod."""
        ns_labels: Mapping[str, str] | None = None
        out = []
        for qpi in self._unschedulable.cross_topology_candidates():
            if POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins and pod.namespace == qpi.pod.namespace:
                out.append(qpi)
                continue
            affinity = qpi.pod.affinity
            if affinity is None or affinity.pod_affinity is None:
                continue
            for term in affinity.pod_affinity.required:
                if term.namespaces or term.namespace_selector is not None:
                    in_ns = pod.namespace in term.namespaces
                else:
                    in_ns = pod.namespace == qpi.pod.namespace
                if not in_ns and term.namespace_selector is not None:
                    if ns_labels is None:
                        ns_labels = (self._namespace_labels(pod.namespace)
                                     if self._namespace_labels is not None else None) or {}
                    in_ns = term.namespace_selector.matches(ns_labels)
                if in_ns and term.label_selector is not None and term.label_selector.matches(pod.labels):
                    out.append(qpi)
                    break
        return out

    # ------------------------------------------------------------------ pod lifecycle
    def add(self, pod: Any) -> bool:
        """A new unscheduled pod: PreEnqueue, then activeQ (or the pool, gated).
        Returns False, doing nothing, when no profile has the pod's schedulerName."""
        if self._profile(pod) is None:
            return False
        self._move_to_active_q(self.new_queued_pod_info(pod), _UNSCHEDULED_ADD_LABEL, False)
        return True

    def update(self, old_pod: Any, new_pod: Any) -> None:
        """An unscheduled pod changed.

        In flight: the update's events are recorded for when it comes back. In activeQ or
        backoffQ: updated in place. In the pool: the update's own events
        (:func:`~kschedfw.fwk.events.pod_scheduling_properties_change`) go through the hints, so e.g. a pod whose
        scheduling gates were removed leaves the pool. Anywhere else: added to activeQ.
        """
        if self._profile(new_pod) is None:
            return
        events = (pod_scheduling_properties_change(new_pod, old_pod) if old_pod is not None
                  else [EVENT_UNSCHEDULED_POD_UPDATE])
        if self._active_q.add_events_if_pod_in_flight(old_pod, new_pod, events):
            return
        set_aside = self._set_aside.get(new_pod.key)
        if set_aside is not None:  # ``once``: its attempt is spent, whatever changed
            self.nominator.update_nominated_pod(old_pod if old_pod is not None else set_aside.pod, new_pod)
            set_aside.pod = new_pod
            return
        if old_pod is not None:
            for sub_queue in (self._active_q, self._backoff_q):
                qpi = sub_queue.update(new_pod, old_pod.key)
                if qpi is not None:
                    self._note_held(qpi)
                    self.nominator.update_nominated_pod(old_pod, qpi.pod)
                    qpi.pod_signature = self.sign_pod(new_pod)
                    return
        qpi = self._unschedulable.get(new_pod.key)
        if qpi is not None:
            previous = qpi.pod
            qpi.pod = new_pod
            self._note_held(qpi)
            self.nominator.update_nominated_pod(old_pod if old_pod is not None else previous, new_pod)
            qpi.pod_signature = self.sign_pod(new_pod)
            for event in events:
                strategy = self.is_pod_worth_requeuing(qpi, event, old_pod, new_pod)
                queue = self._requeue(qpi, strategy, event.label)
                if queue == ACTIVE_Q or (self.pop_from_backoff_q and queue == BACKOFF_Q):
                    break
            return
        self._move_to_active_q(self.new_queued_pod_info(new_pod), _UNSCHEDULED_UPDATE_LABEL, False)

    def delete(self, pod: Any) -> None:
        """Remove the pod from whichever sub-queue holds it, and from the nominator."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        self._forget_held(pod)
        key = pod.key
        self._failed_after_event.pop(key, None)
        if self._active_q.delete(key) or self._backoff_q.delete(key):
            return
        if self._set_aside.pop(key, None) is None:
            self._unschedulable.delete(key)

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to try (None when activeQ, and the backoff heap, are empty). The pod is
        in flight until :meth:`done`; ``attempts`` and :attr:`scheduling_cycle` go up by one."""
        qpi = self._active_q.pop(self._pop_backoff if self.pop_from_backoff_q else None)
        if qpi is not None:  # in flight now: drop its note, so it is not kept for good
            self._forget_held(qpi.pod)
            if self._failed_after_event:
                self._failed_after_event.pop(qpi.pod.key, None)
        return qpi

    def _pop_backoff(self) -> QueuedPodInfo | None:
        """Upstream pops backoffQ's head early whenever activeQ is empty. A pod group whose pods
        all failed thus spins upstream, hundreds of cycles a second while nothing else is to be
        done, each one seeing the cluster the last one saw until something changes. Here the
        head is a pod of such a group only once a cluster event came since it failed (the spin's
        next cycle that could decide otherwise) or its backoff is over: the same decisions,
        without cycles that cannot change anything (nor a loop in which no simulated time passes)."""
        head = self._backoff_q.peek_backoff()
        if head is None:
            return None
        seen = self._failed_after_event.get(head.pod.key)
        if seen is not None and seen == self._events_seen and self._backoff_q.is_pod_backing_off(head):
            return None
        qpi = self._backoff_q.pop_backoff()
        if qpi is not None:
            self.incoming_pods[(ACTIVE_Q, POP_FROM_BACKOFF_Q)] += 1
        return qpi

    def pop_specific_pod(self, pod: Any) -> QueuedPodInfo | None:
        """Take this pod out of the queue as if it had been activated and popped
        (None if it is not queued, or is gated)."""
        self._activate(pod)
        qpi = self._active_q.get(pod.key)
        if qpi is None:
            return None
        self._active_q.delete(pod.key)
        self._failed_after_event.pop(pod.key, None)
        if not self._active_q.move_to_in_flight(qpi):
            log.error("discarding the popped pod %s: already in flight", pod.key)
            return None
        return qpi

    def done(self, uid: str) -> None:
        """The pod's scheduling cycle is over (in-flight bookkeeping)."""
        self._active_q.done(uid)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, pod_scheduling_cycle: int) -> bool:
        """Put a pod back after a failed attempt. The caller has set ``unschedulable_plugins``
        / ``pending_plugins`` (both empty means an error). Events seen while the pod was in
        flight decide: pool, backoffQ or activeQ; with ``once`` it is set aside instead. Also
        calls :meth:`done`. Returns False (and logs) when the pod is already queued."""
        try:
            key = qpi.pod.key
            if self.once:
                qpi.timestamp = self._clock.now()
                self._set_aside[key] = qpi
                return True
            if key in self._unschedulable or self._active_q.has(key) or self._backoff_q.has(key):
                where = ("unschedulable pods" if key in self._unschedulable else
                         "the active queue" if self._active_q.has(key) else "the backoff queue")
                log.error("pod %s is already present in %s", key, where)
                return False
            if not has_rejectors(qpi):
                qpi.consecutive_errors_count += 1
            else:
                qpi.unschedulable_count += 1
                qpi.consecutive_errors_count = 0
            qpi.timestamp = self._clock.now()
            qpi.backoff_expiration = None
            qpi.was_flushed_from_unschedulable = False  # back after an attempt, not a flush
            strategy = self._determine_hint_for_in_flight_pod(qpi)
            queue = self._requeue(qpi, strategy, SCHEDULE_ATTEMPT_FAILURE)
            log.debug("pod %s moved to %s after a failed attempt (cycle %d, hint %s)",
                      key, queue, pod_scheduling_cycle, strategy.name)
            return True
        finally:
            self.done(pod_uid(qpi.pod))

    def _determine_hint_for_in_flight_pod(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        if not has_rejectors(qpi):
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        if (self.pod_groups_retry_by_backoff and qpi.pod.scheduling_group is not None
                and self._backoff_q.is_pod_backing_off(qpi)):
            # upstream: requeueing by events stops at pod groups; a group's pod is retried
            # after its backoff, whatever the events. (Without a backoff, a retry at once would
            # spin in no time: such a pod waits for an event its rejectors' hints accept.)
            self._failed_after_event[qpi.pod.key] = self._events_seen
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        events = self._active_q.cluster_events_for_pod(pod_uid(qpi.pod))
        if events is None:
            log.error("in-flight pod %s isn't found in the scheduling queue", qpi.pod.key)
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_SKIP
        for e in events:
            s = self.is_pod_worth_requeuing(qpi, e.event, e.old_obj, e.new_obj)
            if s is QueueingStrategy.QUEUE_IMMEDIATELY:
                return s
            if s is QueueingStrategy.QUEUE_AFTER_BACKOFF:
                strategy = s
                if not qpi.pending_plugins:
                    return s
        return strategy

    # ------------------------------------------------------------------ events
    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj: Any = None,
                                            new_obj: Any = None,
                                            pre_check: Callable[[Any], bool] | None = None) -> None:
        """A cluster event happened: every pool pod whose rejectors' hints say Queue moves to
        backoffQ/activeQ (``pre_check(pod)`` may exclude pods first)."""
        if not self._is_event_of_interest(event):
            return
        def gating_plugin_cares(scheduler_name: str, plugin: str) -> bool:
            profile = self._profiles.get(scheduler_name)
            return profile is not None and match_any_cluster_event(event, profile.plugin_events.get(plugin, []))

        pods = self._unschedulable.candidates(gating_plugin_cares)
        if pre_check is not None:
            pods = [q for q in pods if pre_check(q.pod)]
        self._move_pods(pods, event, old_obj, new_obj)

    def assigned_pod_added(self, pod: Any) -> None:
        self._move_pods(self._cross_topology_pods(pod), EVENT_ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old_pod: Any, new_pod: Any, event: ClusterEvent) -> None:
        """A scale-down of an assigned pod may help any pool pod (e.g. NodeResourcesFit
        rejections); other updates only pods with cross-topology terms."""
        if match_cluster_events(_POD_SCALE_DOWN, event):
            self.move_all_to_active_or_backoff_queue(event, old_pod, new_pod)
        else:
            self._move_pods(self._cross_topology_pods(new_pod), event, old_pod, new_pod)

    def activate(self, pods: Iterable[Any] | Mapping[str, Any]) -> None:
        """Move these pods from the pool or backoffQ to activeQ (PreEnqueue permitting). A pod
        in flight gets a ForceActivate event so it is requeued when it comes back; unknown
        pods are ignored."""
        if isinstance(pods, Mapping):
            pods = pods.values()
        for pod in pods:
            if not self._activate(pod):
                self._active_q.add_events_if_pod_in_flight(None, pod, [FORCE_ACTIVATE])

    def _activate(self, pod: Any) -> bool:
        key = pod.key
        qpi = self._unschedulable.get(key)
        from_backoff = False
        if qpi is None:
            qpi = self._backoff_q.get(key)
            if qpi is None:
                return False
            self._backoff_q.delete(key)
            from_backoff = True
        return self._move_to_active_q(qpi, FORCE_ACTIVATE.label, from_backoff)

    # ------------------------------------------------------------------ timers
    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff is over to activeQ (upstream: every whole second)."""
        for qpi in self._backoff_q.pop_all_backoff_completed():
            self._move_to_active_q(qpi, BACKOFF_COMPLETE.label, True)

    def flush_unschedulable_pods_leftover(self) -> None:
        """Pods in the pool for longer than ``pod_max_in_unschedulable_pods_duration`` move as if
        by a wildcard event (upstream: every 30 s; see ``unschedulable_flush_interval``). Gated
        pods stay unless their gating plugin registered a wildcard."""
        now = self._last_flush_tick()
        limit = self.pod_max_in_unschedulable_pods_duration
        pods = self._unschedulable.pop_expired(lambda ts: now - ts > limit)
        for qpi in pods:
            qpi.was_flushed_from_unschedulable = True
        if pods:
            self._move_pods(pods, UNSCHEDULABLE_TIMEOUT, None, None)

    def _last_flush_tick(self) -> float:
        now = self._clock.now()
        step = self._flush_interval
        if step is None:
            return now
        origin = self._flush_origin
        return origin + max(math.floor((now - origin) / step + 1e-9), 0) * step

    def next_backoff_flush(self) -> float | None:
        """When :meth:`flush_backoff_q_completed` would next move a pod (never before now)."""
        t = self._backoff_q.next_completion()
        return None if t is None else max(t, self._clock.now())

    def next_unschedulable_flush(self) -> float | None:
        """When :meth:`flush_unschedulable_pods_leftover` would next move a pod: the first flush
        tick (see ``unschedulable_flush_interval``) more than the limit after the oldest
        movable pod's timestamp, and not before now."""
        qpi = self._unschedulable.oldest(self._flushable_by_timeout)
        if qpi is None:
            return None
        now, limit, ts = self._clock.now(), self.pod_max_in_unschedulable_pods_duration, qpi.timestamp
        step = self._flush_interval
        if step is None:
            t = max(ts + limit, now)
            while not t - ts > limit:
                t = math.nextafter(t, math.inf)
            return t
        origin = self._flush_origin
        k = max(math.ceil((now - origin) / step - 1e-9),
                math.floor((ts + limit - origin) / step) + 1, 0)
        tick = origin + k * step
        while not tick - ts > limit:
            tick += step
        return tick

    def next_wakeup(self) -> float | None:
        """The earliest time one of the two flushes would move a pod, so a simulation can jump
        its clock there; None when no timer would ever move anything."""
        times = [t for t in (self.next_backoff_flush(), self.next_unschedulable_flush())
                 if t is not None]
        return min(times) if times else None

    def _flushable_by_timeout(self, qpi: QueuedPodInfo) -> bool:
        return not qpi.gating_plugin or match_any_cluster_event(UNSCHEDULABLE_TIMEOUT,
                                                                self._gating_events(qpi))


_UNSCHEDULED_ADD_LABEL = EVENT_UNSCHEDULED_POD_ADD.label
_UNSCHEDULED_UPDATE_LABEL = EVENT_UNSCHEDULED_POD_UPDATE.label
