"""The scheduler's watch-event handlers (upstream eventhandlers.go): nodes and assigned pods go to
the cache, pods of our profiles waiting to be scheduled go to the queue, and every change that may
make a pod schedulable moves the pods it concerns out of the unschedulable pool.

The loop hands them the backend's queued events (``Backend.deliver``), never inside a write or a
plugin call; they read and write only the cache, the queue and the pods waiting at Permit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Container, Mapping

from kschedfw.api.workload_names import POD_GROUP_KIND
from kschedfw.fwk.events import (ActionType, ClusterEvent, EventResource, node_scheduling_properties_change,
                                 pod_scheduling_properties_change)
from kschedfw.scheduler.event_labels import (NO_EVENT_KINDS, WATCH_ACTIONS, event_label, pod_event_labels,
                                             resource_for_kind)

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.cache.cache import Cache
    from kschedfw.framework.waiting_pods import WaitingPod
    from kschedfw.fwk.interface import WatchCallback, WatchEvent
    from kschedfw.queue import PriorityQueue
    from kschedfw.scheduler.loop_metrics import LoopMetrics

_ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UnschedulablePod, ActionType.Add)


class EventHandlers:
    """Upstream's informer event handlers, for the profiles named in ``scheduler_names``.

    ``generic_workload`` (the gate): PodGroups are watched; ``gang_scheduling`` (the gate): a new
    unscheduled pod also moves the pods waiting for their gang (upstream EventUnscheduledPodAdd)."""

    def __init__(self, *, cache: "Cache", queue: "PriorityQueue", scheduler_names: Container[str],
                 waiting_pods: Mapping[str, "WaitingPod"], metrics: "LoopMetrics",
                 generic_workload: bool = False, gang_scheduling: bool = False) -> None:
        self.cache = cache
        self.queue = queue
        self.scheduler_names = scheduler_names
        self.waiting_pods = waiting_pods
        self.metrics = metrics
        self.generic_workload = generic_workload
        self.gang_scheduling = gang_scheduling
        #: called after each handled event (the queueing-hint audit dry-runs the pods it skipped)
        self.after_event: Callable[["WatchEvent"], None] | None = None
        #: called with each deleted PodGroup, so that what the scheduler keeps per group
        #: (its last attempt, the condition it wrote) does not outlive the group
        self.on_pod_group_deleted: Callable[[Any], None] | None = None

    def callback(self) -> "WatchCallback":
        """What the backend calls with each event, chosen once: timed when metrics are kept."""
        return self.on_watch_event_timed if self.metrics.enabled else self.on_watch_event

    def on_watch_event(self, event: "WatchEvent") -> None:
        if event.kind in NO_EVENT_KINDS:  # read through a lister or not at all; upstream has no handler
            return
        if event.kind == POD_GROUP_KIND and not self.generic_workload:  # no PodGroup informer then
            return
        self._handle(event)

    def on_watch_event_timed(self, event: "WatchEvent") -> None:
        """:meth:`on_watch_event`, observing scheduler_event_handling_duration_seconds."""
        if event.kind in NO_EVENT_KINDS or (event.kind == POD_GROUP_KIND and not self.generic_workload):
            return
        metrics = self.metrics
        if event.kind == "Node" and event.type == "MODIFIED":  # observed per changed property
            self._handle(event)
            return
        start = metrics.now()
        self._handle(event)
        took = metrics.now() - start
        if event.kind == "Pod":
            old = event.old if event.old is not None and not event.old.is_terminated else None
            new = event.new if event.new is not None and not event.new.is_terminated else None
            if old is None and new is None:
                return
            for label in pod_event_labels(old, new, self._responsible):
                metrics.event_handling_duration.labels(label).observe(took)
            return
        metrics.event_handling_duration.labels(event_label(event)).observe(took)

    def _handle(self, event: "WatchEvent") -> None:
        kind = event.kind
        if kind == "Pod":
            self._on_pod_event(event)
        elif kind == "Node":
            self._on_node_event(event)
        else:
            cluster_event = ClusterEvent(resource_for_kind(kind), WATCH_ACTIONS[event.type])
            self.queue.move_all_to_active_or_backoff_queue(cluster_event, event.old, event.new)
            if kind == POD_GROUP_KIND and event.type == "DELETED" and self.on_pod_group_deleted is not None:
                self.on_pod_group_deleted(event.old)
        if self.after_event is not None:
            self.after_event(event)

    # ------------------------------------------------------------------ nodes
    def _on_node_event(self, event: "WatchEvent") -> None:
        if event.type == "ADDED":
            self.cache.add_node(event.new)
            self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.Node, ActionType.Add),
                                                           None, event.new)
        elif event.type == "MODIFIED":
            metrics = self.metrics
            started = metrics.now()
            self.cache.update_node(event.old, event.new)
            updating = metrics.now() - started
            # one event per changed property, as upstream, so each matches its registrations
            for cluster_event in node_scheduling_properties_change(event.new, event.old):
                moving = metrics.now()
                self.queue.move_all_to_active_or_backoff_queue(cluster_event, event.old, event.new)
                # upstream: the cache update plus this event's moving
                metrics.event_handling_duration.labels(cluster_event.label).observe(updating + metrics.now() - moving)
        else:
            self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.Node, ActionType.Delete),
                                                           event.old, None)
            self.cache.remove_node(event.old)

    # ------------------------------------------------------------------ pods
    def _responsible(self, pod: "Pod") -> bool:
        """Upstream responsibleForPod: one of our profiles serves the pod's schedulerName."""
        return pod.scheduler_name in self.scheduler_names

    def _on_pod_event(self, event: "WatchEvent") -> None:
        """Completed pods are invisible, as upstream's informer filters ``status.phase``
        Succeeded/Failed out: a pod finishing is a delete."""
        old = event.old if event.old is not None and not event.old.is_terminated else None
        new = event.new if event.new is not None and not event.new.is_terminated else None
        if old is None and new is not None:
            self._add_pod(new)
        elif old is not None and new is not None:
            self._update_pod(old, new)
        elif old is not None:
            self._delete_pod(old)

    def _add_pod(self, pod: "Pod") -> None:
        if pod.node_name:
            self._add_assigned_pod(pod)
        elif self._responsible(pod):
            self.cache.add_pod_group_member(pod)
            self.queue.add(pod)
            if self.gang_scheduling:
                self.queue.move_all_to_active_or_backoff_queue(_UNSCHEDULED_POD_ADD, None, pod)

    def _add_assigned_pod(self, pod: "Pod") -> None:
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff_queue(_ASSIGNED_POD_ADD, None, pod)

    def _update_pod(self, old: "Pod", new: "Pod") -> None:
        if old.node_name:
            self.cache.update_pod(old, new)
            for evt in pod_scheduling_properties_change(new, old):
                self.queue.move_all_to_active_or_backoff_queue(evt, old, new)
        elif new.node_name:  # bound: leaves the queue (and its group's unscheduled pods), enters the cache
            if self._responsible(old):
                self.cache.remove_pod_group_member(old)
            self._add_assigned_pod(new)
            if self._responsible(old):
                self.queue.delete(old)
        elif self._responsible(old):
            if old.resource_version and old.resource_version == new.resource_version:
                return
            self.cache.update_pod_group_member(old, new)
            if self.cache.is_assumed(new):
                if new.deletion_timestamp is not None and old.deletion_timestamp is None:
                    self._assumed_pod_deleted(new)
                return
            self.queue.update(old, new)
            if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
                # it counted as running on its nominated node for lower or equal priority pods
                self._nominated_pod_gone(old)

    def _delete_pod(self, pod: "Pod") -> None:
        if pod.node_name:
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff_queue(_ASSIGNED_POD_DELETE, pod, None)
        elif self._responsible(pod):
            self.cache.remove_pod_group_member(pod)
            self.queue.delete(pod)
            if self.cache.is_assumed(pod):
                self._assumed_pod_deleted(pod)
            elif pod.nominated_node_name:
                self._nominated_pod_gone(pod)

    def _nominated_pod_gone(self, pod: "Pod") -> None:
        priority = pod.effective_priority
        self.queue.move_all_to_active_or_backoff_queue(_ASSIGNED_POD_DELETE, pod, None,
                                                       lambda p: p.effective_priority <= priority)

    def _assumed_pod_deleted(self, pod: "Pod") -> None:
        """Upstream handleAssumedPodDeletion: a pod waiting at Permit is rejected (its binding
        cycle cleans up); otherwise its assumed resources are freed here."""
        assumed = self.cache.get_pod(pod.uid)
        if assumed is None:
            return
        waiting = self.waiting_pods.get(pod.uid)
        if waiting is not None:
            waiting.reject("", "removed")
        else:
            self.cache.forget_pod(assumed)
        self.queue.move_all_to_active_or_backoff_queue(_ASSIGNED_POD_DELETE, assumed, None)
