"""The scheduler: profiles by schedulerName, the scheduling cycle and the binding cycle.
The algorithm of the scheduling cycle (filter, score, select) is :mod:`kschedfw.cycle`, shared
with `explain` and the test harness.

Single-threaded and event-driven: cluster changes arrive as watch events, time comes from the
cluster's clock, and what upstream does concurrently (binding, Permit waits) resumes through
callbacks, so a run is reproducible from its seed.

One event discipline on every backend: the backend queues watch events and the loop hands them to
the handlers (``cluster.deliver()``) before each cycle and after timers ran, never inside a plugin
call or a write. So a bind's outcome (``_bind_finished``) comes before the watch event that
confirms it, as upstream's binding goroutine finishes before its informer sees the bound pod.
"""

from __future__ import annotations

import logging
import random
from typing import TYPE_CHECKING, Any, Callable, Mapping

import attrs

from kschedfw.api.pod import SCHEDULER_ERROR
from kschedfw.cache.cache import Cache
from kschedfw.extenders.cycle import (EXTENDER_NAME, build_extenders, extenders_binding,
                                     with_extender_ignored_resources)
from kschedfw.extenders.http_extender import ExtenderConfigError
from kschedfw.cycle import CLEAR_NOMINATION, ScheduleAlgorithm, ScheduleResult, fit_status
from kschedfw.framework.batch import BatchMetrics
from kschedfw.fwk.cycle_state import BINDING_MAY_WAIT_KEY, PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from kschedfw.fwk.events import (ActionType, ClusterEvent, EventResource, node_scheduling_properties_change,
                                 pod_scheduling_properties_change)
from kschedfw.fwk.fit_error import Diagnosis, FitError
from kschedfw.framework.profile import new_profile
from kschedfw.framework.runtime import Framework, FrameworkError
from kschedfw.loop_metrics import NULL_METRICS
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NominatingInfo, NominatingMode, QueuedPodInfo
from kschedfw.framework.waiting_pods import WaitingPod
from kschedfw.queue import Nominator, PriorityQueue
from kschedfw.queue.active_queue import InFlightEvent
from kschedfw.scheduler_events import NO_EVENT_KINDS, event_label, pod_event_labels, resource_for_kind

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import Backend, WatchEvent
    from kschedfw.config.expand import SchedulerConfig
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.framework.registry import Registry
    from kschedfw.loop_metrics import LoopMetrics
    from kschedfw.metrics import SchedulerMetrics

log = logging.getLogger(__name__)

MAX_EVENT_MESSAGE = 1024


@attrs.define
class AttemptRecord:
    """The outcome of one scheduling attempt, for reports and `explain`."""

    pod: str
    profile: str
    cycle: int
    time: float
    result: str  # "Scheduled" | "Unschedulable" | "SchedulerError" | "Waiting"
    node: str = ""
    message: str = ""
    #: the pod's attempt count when this was recorded (upstream QueuedPodInfo.Attempts)
    attempt: int = 0


class Scheduler:
    def __init__(self, config: "SchedulerConfig", registry: "Registry", cluster: "Backend",
                 *, seed: int = 0, record_attempts: bool = True,
                 feature_gates: Mapping[str, bool] | None = None, fast_paths: bool = True,
                 once: bool = False, ties: str = "random", metrics: "SchedulerMetrics | None" = None) -> None:
        """``once`` and ``ties`` are kschedfw extensions, not upstream: with ``once`` a pod whose
        attempt fails is never retried (see :class:`~kschedfw.queue.PriorityQueue`); ``ties``
        is how the cycle breaks ties between the best nodes (:data:`kschedfw.cycle.TIES`).
        ``metrics``: report upstream's metrics there (every profile compiles its timed plan
        against it: plugin durations for the sampled cycles, extension-point durations for every
        run); None: none are kept."""
        # extenders' ignoredByScheduler resources are NodeResourcesFit's ignoredResources (upstream)
        config = with_extender_ignored_resources(config)
        try:
            self.extenders = build_extenders(config)
        except ExtenderConfigError as exc:
            raise FrameworkError(f"couldn't build extenders: {exc}") from None
        self.config = config
        self.cluster = cluster
        self.clock = cluster.clock
        self.cache = Cache()
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.attempts: list[AttemptRecord] = []
        self.record_attempts = record_attempts
        self.ignored_pods: dict[str, str] = {}  # pod key -> schedulerName nobody serves
        self.bound_count = 0
        self.bound_uids: set[str] = set()  # pods this scheduler bound (not the ones that came bound)
        self.waiting_bindings: set[str] = set()  # pods whose binding cycle waits (BINDING_MAY_WAIT_KEY)
        #: upstream's metrics, or the null metrics that keep nothing (chosen once)
        self.metrics: "LoopMetrics" = metrics if metrics is not None else NULL_METRICS
        self.frameworks: dict[str, Framework] = {}
        #: upstream's batching counters (gate OpportunisticBatching), for every profile
        self.batch_metrics = BatchMetrics()
        # built before the queue (which needs the profiles' QueueSort), so every Handle has it
        nominator = Nominator(self._current_pod)
        for profile in config.profiles:
            fwk = new_profile(profile, registry, cluster, snapshot=self.cache.snapshot, nominator=nominator,
                              waiting_pods=self.waiting_pods, activate=self._activate, extenders=self.extenders,
                              metrics=metrics, feature_gates=feature_gates, fast_paths=fast_paths,
                              batch_metrics=self.batch_metrics, seed=seed)
            self.frameworks[profile.scheduler_name] = fwk
        first = next(iter(self.frameworks.values()))
        # the cycle uses no batch when ties go by name: signing the pods would be wasted
        batching = ties == "random" and any(fwk.batch is not None for fwk in self.frameworks.values())
        self.queue = PriorityQueue(less=first.less, frameworks=self.frameworks, clock=self.clock,
                                   sort_key=first.queue_sort_key,
                                   pod_initial_backoff=float(config.pod_initial_backoff_seconds),
                                   pod_max_backoff=float(config.pod_max_backoff_seconds),
                                   pod_lister=self._current_pod, namespace_labels=self._namespace_labels,
                                   pod_signers={name: fwk.sign_pod for name, fwk in self.frameworks.items()}
                                   if batching else None, once=once, nominator=nominator)
        if metrics is not None:
            self.queue.observe_hint = metrics.queueing_hint_ran
        self.algorithm = ScheduleAlgorithm(percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
                                           rng=random.Random(seed), nominator=self.queue.nominator,
                                           extenders=self.extenders, ties=ties)
        # the watch handler is chosen once too: timed, or not
        cluster.watch(self.on_watch_event if metrics is None else self._on_watch_event_timed)
        #: called when something changed: a pod was bound, or a backend timer ran
        self.on_progress: Callable[[], None] | None = None
        #: asked once per scheduling cycle for a recorder of that cycle (None: record nothing)
        self.recorder_for: Callable[["Pod"], "CycleRecorder | None"] | None = None

    def metric_counts(self) -> tuple[dict[str, int], dict[str, Any]]:
        """What :meth:`SchedulerMetrics.publish` copies: the pending pods per queue, and the
        counts kept anyway (incoming pods, unschedulable plugins, cache sizes, in-flight
        events, batching)."""
        queue = self.queue
        inflight: dict[str, int] = {}
        for item in queue.active_q.in_flight_events():
            label = item.event.label if isinstance(item, InFlightEvent) else "PodPopped"
            inflight[label] = inflight.get(label, 0) + 1
        batch = self.batch_metrics.counters()
        return dict(queue.pending_pods()), {
            "incoming": dict(queue.incoming_pods), "unschedulable": queue.unschedulable_reasons(),
            "cache": self.cache.sizes(), "inflight": inflight,
            "batch_attempts": batch[self.batch_metrics.ATTEMPTS],
            "batch_flushed": batch[self.batch_metrics.CACHE_FLUSHED],
        }

    # ================================================================== event handlers
    def on_watch_event(self, event: "WatchEvent") -> None:
        """Upstream's informer event handlers (the backend calls :meth:`_on_watch_event_timed`
        instead when metrics are kept)."""
        if event.kind in NO_EVENT_KINDS:  # read through a lister or not at all; upstream has no handler
            return
        self._handle_watch_event(event)

    def _on_watch_event_timed(self, event: "WatchEvent") -> None:
        """:meth:`on_watch_event`, observing scheduler_event_handling_duration_seconds."""
        if event.kind in NO_EVENT_KINDS:
            return
        metrics = self.metrics
        if event.kind == "Node" and event.type == "MODIFIED":  # observed per changed property
            self._handle_watch_event(event)
            return
        start = metrics.now()
        self._handle_watch_event(event)
        took = metrics.now() - start
        if event.kind == "Pod":
            old = event.old if event.old is not None and not event.old.is_terminated else None
            new = event.new if event.new is not None and not event.new.is_terminated else None
            if old is None and new is None:
                return
            for label in pod_event_labels(old, new, lambda pod: pod.scheduler_name in self.frameworks):
                metrics.event_handling_duration.labels(label).observe(took)
            return
        metrics.event_handling_duration.labels(event_label(event)).observe(took)

    def _handle_watch_event(self, event: "WatchEvent") -> None:
        kind = event.kind
        if kind == "Pod":
            self._on_pod_event(event)
        elif kind == "Node":
            self._on_node_event(event)
        else:
            resource = resource_for_kind(kind)
            action = {"ADDED": ActionType.Add, "MODIFIED": ActionType.Update, "DELETED": ActionType.Delete}[event.type]
            self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(resource, action), event.old, event.new)

    def _on_node_event(self, event: "WatchEvent") -> None:
        if event.type == "ADDED":
            self.cache.add_node(event.new)
            self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.Node, ActionType.Add), None, event.new)
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
            self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.Node, ActionType.Delete), event.old, None)
            self.cache.remove_node(event.old)

    def _responsible(self, pod: "Pod") -> bool:
        if pod.scheduler_name in self.frameworks:
            return True
        self.ignored_pods[pod.key] = pod.scheduler_name
        return False

    def _on_pod_event(self, event: "WatchEvent") -> None:
        """Upstream's pod informer handlers. Completed pods are invisible, as upstream's informer
        filters ``status.phase`` Succeeded/Failed out: a pod finishing is a delete."""
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
            self.queue.add(pod)

    def _add_assigned_pod(self, pod: "Pod") -> None:
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.AssignedPod, ActionType.Add), None, pod)

    def _update_pod(self, old: "Pod", new: "Pod") -> None:
        if old.node_name:
            self.cache.update_pod(old, new)
            for evt in pod_scheduling_properties_change(new, old):
                self.queue.move_all_to_active_or_backoff_queue(evt, old, new)
        elif new.node_name:  # bound: enters the cache, leaves the queue
            self._add_assigned_pod(new)
            if old.scheduler_name in self.frameworks:
                self.queue.delete(old)
        elif self._responsible(old):
            if old.resource_version and old.resource_version == new.resource_version:
                return
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
            self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.AssignedPod, ActionType.Delete), pod, None)
        elif pod.scheduler_name in self.frameworks:
            self.queue.delete(pod)
            if self.cache.is_assumed(pod):
                self._assumed_pod_deleted(pod)
            elif pod.nominated_node_name:
                self._nominated_pod_gone(pod)

    def _nominated_pod_gone(self, pod: "Pod") -> None:
        priority = pod.effective_priority
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.AssignedPod, ActionType.Delete),
                                                       pod, None, lambda p: p.effective_priority <= priority)

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
        self.queue.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.AssignedPod, ActionType.Delete), assumed, None)

    def _current_pod(self, key: str) -> "Pod | None":
        namespace, _, name = key.partition("/")
        return self.cluster.get("Pod", name, namespace)

    def _namespace_labels(self, namespace: str) -> dict[str, str] | None:
        ns = self.cluster.get("Namespace", namespace)
        return ns.labels if ns is not None else None

    def _activate(self, pods: Any) -> None:
        self.queue.activate(list(pods))

    # ================================================================== scheduling cycle
    def schedule_one(self) -> bool:
        """Hand out the cluster's changes so far, then pop one pod and run its scheduling cycle
        (and binding cycle unless it waits)."""
        self.cluster.deliver()
        qpi = self.queue.pop()
        if qpi is None:
            return False
        pod = qpi.pod
        # upstream ShouldRecordPluginMetrics: a sample of cycles runs the timed plugin plans
        metrics = self.metrics
        record_plugin_metrics = metrics.cycle_started(pod.uid)
        fwk = self.frameworks.get(pod.scheduler_name)
        if fwk is None:
            self.queue.done(pod.uid)
            return True
        if pod.deletion_timestamp is not None:
            self.cluster.record_event(pod, "Warning", "FailedScheduling", f"skip schedule deleting pod: {pod.key}")
            self.queue.done(pod.uid)
            return True
        if self.cache.is_assumed(pod):
            self.queue.done(pod.uid)
            return True
        state, pods_to_activate = self.new_cycle_state()
        state.record_plugin_metrics = record_plugin_metrics
        cycle = self.queue.scheduling_cycle
        self.update_snapshot()
        recorder = self.recorder_for(pod) if self.recorder_for is not None else None
        started = metrics.now()
        try:
            result, status = self.algorithm.schedule_pod(fwk, state, pod, recorder,
                                                         signature=qpi.pod_signature, cycle=cycle)
        except Exception as exc:  # a bug in the core must not lose the pod
            log.exception("scheduling %s failed", pod.key)
            result, status = ScheduleResult(nominating_info=CLEAR_NOMINATION), Status.as_status(exc)
        metrics.algorithm_duration.observe(metrics.now() - started)
        if status is not None and not status.is_success():
            self._handle_failure(fwk, qpi, status, result.nominating_info, cycle)
            return True
        host = result.suggested_host
        assumed = pod.with_node(host)
        self.cache.assume_pod(assumed)
        self.queue.nominator.delete_nominated_pod_if_exists(pod)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status is not None:
            self._undo_reserve(fwk, state, assumed, host)
            self._handle_failure(fwk, qpi, self._one_node_failure(pod, host, status), CLEAR_NOMINATION, cycle)
            return True
        status, waits = fwk.run_permit_plugins(state, assumed, host, self.clock.now())
        if status is not None and not status.is_wait():
            self._undo_reserve(fwk, state, assumed, host)
            self._handle_failure(fwk, qpi, self._one_node_failure(pod, host, status), CLEAR_NOMINATION, cycle)
            return True
        self._activate_pods(pods_to_activate)
        if waits and recorder is not None:
            recorder.permit_wait(waits)
        self._record(qpi, fwk, cycle, "Waiting" if waits else "Assumed", host)
        # binding cycle, upstream order: PreBindPreFlight, WaitOnPermit, PreBind, Bind
        preflight = fwk.run_pre_bind_pre_flights(state, assumed, host)
        if preflight is not None and not preflight.is_skip():
            self._binding_cycle(fwk, state, qpi, assumed, host, cycle, preflight, pods_to_activate)
            return True
        if preflight is None or waits:
            # NominatedNodeNameForExpectation (on in v1.36): tell others where the pod is going
            self.cluster.set_nominated_node_name(pod, host)
        if waits:
            wait_started = self.clock.now()

            def resume(wp: WaitingPod) -> None:
                self.waiting_pods.pop(assumed.uid, None)
                code = wp.status.code.name if wp.status is not None else "Success"
                self.metrics.permit_wait_duration.labels(code).observe(self.clock.now() - wait_started)
                self._binding_cycle(fwk, state, qpi, assumed, host, cycle, wp.status, pods_to_activate)

            self.waiting_pods[assumed.uid] = fwk.new_waiting_pod(assumed, host, waits, self.clock.now(), resume)
            return True
        self._binding_cycle(fwk, state, qpi, assumed, host, cycle, None, pods_to_activate)
        return True

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: "Pod",
                     recorder: "CycleRecorder | None" = None, *, dry_run: bool = False
                     ) -> tuple[ScheduleResult, Status | None]:
        """The scheduling algorithm (upstream SchedulePod) on the current snapshot; see
        :class:`kschedfw.cycle.ScheduleAlgorithm` for ``recorder`` and ``dry_run``."""
        return self.algorithm.schedule_pod(fwk, state, pod, recorder, dry_run=dry_run)

    def new_cycle_state(self) -> tuple[CycleState, PodsToActivate]:
        state = CycleState()
        pods_to_activate = PodsToActivate()
        state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
        return state, pods_to_activate

    def update_snapshot(self) -> None:
        """Refresh the cache's snapshot (the one every profile's Handle holds) for the cycle."""
        self.cache.update_snapshot()

    # ================================================================== binding cycle
    def _binding_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: "Pod",
                       host: str, cycle: int, permit_status: Status | None,
                       pods_to_activate: PodsToActivate) -> None:
        pod = qpi.pod
        self.metrics.goroutines.labels("binding").inc()  # upstream counts its binding goroutines
        if permit_status is not None and not permit_status.is_success():
            self.metrics.goroutines.labels("binding").dec()
            if permit_status.is_rejected():
                status = self._one_node_failure(pod, host, permit_status)
            else:  # preempted while waiting, or an error: retried, not marked unschedulable
                status = Status(Code.Error, permit_status.reasons, plugin=permit_status.plugin)
            self._binding_cycle_error(fwk, state, qpi, assumed, host, status, cycle)
            return
        self.queue.done(pod.uid)
        # the backend runs PreBind and Bind at once (embedded) or off-thread, as upstream's binding
        # goroutine; the outcome comes back on the scheduler's thread either way
        def pre_bind_and_bind() -> Status:
            pre_bind = fwk.run_pre_bind_plugins(state, assumed, host)
            if pre_bind is not None:
                return pre_bind
            return self._bind(fwk, state, assumed, host)

        def finished(status: Status) -> None:
            self.waiting_bindings.discard(pod.uid)
            self._bind_finished(fwk, state, qpi, assumed, host, cycle, pods_to_activate, status)

        if state.get(BINDING_MAY_WAIT_KEY):
            self.waiting_bindings.add(pod.uid)
            self.cluster.submit_binding(pre_bind_and_bind, finished, may_wait=True)
        else:
            self.cluster.submit_binding(pre_bind_and_bind, finished)

    def _bind_finished(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: "Pod", host: str,
                       cycle: int, pods_to_activate: PodsToActivate, status: Status) -> None:
        """The end of the binding cycle once PreBind (on failure) or Bind returned."""
        pod = qpi.pod
        self.metrics.goroutines.labels("binding").dec()
        if status.is_skip():
            status = Status.as_status(f"no bind plugin bound pod {pod.key}")
        if not status.is_success():
            # after WaitOnPermit, failures are retried with backoff; a rejection keeps its code
            # (the PodScheduled reason says Unschedulable), anything else becomes an Error
            if not status.is_rejected():
                status = Status(Code.Error, (status.message(),), plugin=status.plugin)
            self._binding_cycle_error(fwk, state, qpi, assumed, host, status, cycle)
            return
        self.cache.finish_binding(assumed, self.clock.now())
        self.metrics.attempt(pod.uid, "scheduled", fwk.profile_name)
        self.metrics.pod_scheduled(qpi, self.clock.now())
        self.bound_count += 1
        self.bound_uids.add(pod.uid)
        self.cluster.record_event(pod, "Normal", "Scheduled", f"Successfully assigned {pod.key} to {host}")
        self._record(qpi, fwk, cycle, "Scheduled", host)
        fwk.run_post_bind_plugins(state, assumed, host)
        self._activate_pods(pods_to_activate)
        if self.on_progress is not None:
            self.on_progress()

    def _bind(self, fwk: Framework, state: CycleState, assumed: "Pod", host: str) -> Status:
        """Upstream bind: an interested binding extender binds the pod, else the Bind plugins."""
        handled, status = extenders_binding(self.extenders, assumed, host)
        if not handled:
            return fwk.run_bind_plugins(state, assumed, host)
        if status is not None:
            return status
        self.cluster.apply_extender_binding(assumed, host)
        return Status(Code.Success, plugin=EXTENDER_NAME)

    def _binding_cycle_error(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, assumed: "Pod",
                             host: str, status: Status, cycle: int) -> None:
        """Upstream handleBindingCycleError: unreserve, forget, and treat the forget as an
        AssignedPod/Delete event, since the assumed pod held resources others may want."""
        self._undo_reserve(fwk, state, assumed, host)
        event = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
        if status.is_rejected():
            self._handle_failure(fwk, qpi, status, CLEAR_NOMINATION, cycle)
            self.queue.move_all_to_active_or_backoff_queue(event, assumed, None,
                                                           lambda p: p.uid != assumed.uid)
        else:
            self.queue.move_all_to_active_or_backoff_queue(event, assumed, None)
            self._handle_failure(fwk, qpi, status, CLEAR_NOMINATION, cycle)

    def _undo_reserve(self, fwk: Framework, state: CycleState, assumed: "Pod", host: str) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        self.cache.forget_pod(assumed)

    def _activate_pods(self, pods_to_activate: PodsToActivate) -> None:
        if pods_to_activate.map:
            pods = list(pods_to_activate.map.values())
            pods_to_activate.map.clear()
            self.queue.activate(pods)

    @staticmethod
    def _one_node_failure(pod: "Pod", host: str, status: Status) -> Status:
        """A Reserve/Permit rejection becomes a FitError over one node, as upstream reports it."""
        if not status.is_rejected():
            return status
        diagnosis = Diagnosis()
        diagnosis.node_to_status.set(host, status)
        if status.code is Code.Pending:
            diagnosis.pending_plugins.add(status.plugin)
        else:
            diagnosis.unschedulable_plugins.add(status.plugin)
        return fit_status(FitError(pod.key, 1, diagnosis))

    # ================================================================== failure handling
    def _handle_failure(self, fwk: Framework, qpi: QueuedPodInfo, status: Status,
                        nominating_info: NominatingInfo | None, cycle: int) -> None:
        """Upstream handleSchedulingFailure: requeue, nominate, event, PodScheduled condition."""
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else SCHEDULER_ERROR
        self.metrics.attempt(pod.uid, "unschedulable" if status.is_rejected() else "error", fwk.profile_name)
        fit_error = status.error if isinstance(status.error, FitError) else None
        if fit_error is not None:
            qpi.unschedulable_plugins = set(fit_error.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_error.diagnosis.pending_plugins)
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
        message = str(fit_error) if fit_error is not None else status.message()
        current = self.cluster.get("Pod", pod.name, pod.namespace)
        if current is None or current.node_name:
            self.queue.done(pod.uid)
        elif current.uid != pod.uid:
            # recreated while its failure was handled: upstream skips requeueing and status updates
            self.queue.done(pod.uid)
            self._record(qpi, fwk, cycle, reason, "", message)
            return
        else:
            qpi.pod = current
            self.queue.add_unschedulable_if_not_present(qpi, cycle)
            self.queue.done(pod.uid)
        nominated: str | None = None
        if nominating_info is not None and nominating_info.mode is NominatingMode.Override:
            nominated = nominating_info.nominated_node_name
            self.queue.nominator.add_nominated_pod(current or pod, nominating_info)
        event_message = message
        if len(event_message) > MAX_EVENT_MESSAGE:  # events are truncated, the condition is not
            event_message = event_message[:MAX_EVENT_MESSAGE - 4] + " ..."
        self.cluster.record_event(pod, "Warning", "FailedScheduling", event_message)
        self.cluster.patch_pod_scheduling_failure(pod, reason, message, nominated)
        self._record(qpi, fwk, cycle, reason, nominated or "", message)

    def _record(self, qpi: QueuedPodInfo, fwk: Framework, cycle: int, result: str, node: str = "",
                message: str = "") -> None:
        if self.record_attempts:
            self.attempts.append(AttemptRecord(qpi.pod.key, fwk.profile_name, cycle, self.clock.now(),
                                               result, node, message, qpi.attempts))

    # ================================================================== the loop
    def run(self, until: float | None = None, *, stop: Callable[[], bool] | None = None,
            idle: IdleHook | None = None) -> None:
        """Schedule every ready pod, run what falls due (backend timers such as victims' grace
        periods, Permit timeouts, backoff expiry, the 5-minute flush of unschedulable pods), and
        when nothing is ready hand the next deadline to ``idle``.

        ``until``: return once the next deadline is later than this (the clock is not moved there).
        ``stop``: checked before every cycle; True returns at once.
        ``idle(deadline)``: called when nothing is ready, with the next deadline (None: nothing is
        scheduled); it returns False to end the run. A backend that receives events from outside
        blocks there until an event arrives or the deadline passes; the default moves a simulated
        clock to the deadline and ends the run when there is none."""
        if idle is None:
            idle = self._jump
        schedule_one = self.schedule_one
        self.run_due()
        while True:
            if stop is not None and stop():
                return
            if schedule_one():
                continue
            self.run_due()
            if stop is not None and stop():
                return
            if self.queue.pending_pods().get("active", 0):
                continue
            deadline = self.next_wakeup()
            if until is not None and (deadline is None or deadline > until):
                return
            if not idle(deadline):
                return
            self.run_due()

    def _jump(self, deadline: float | None) -> bool:
        """The default idle hook: a simulated clock jumps to the deadline."""
        if deadline is None:
            return False
        if deadline > self.clock.now():
            set_clock = getattr(self.clock, "set", None)
            if set_clock is None:
                raise TypeError("Scheduler.run: this backend's clock cannot jump; pass an idle hook")
            set_clock(deadline)
        return True

    def run_due(self) -> bool:
        """Run everything due now; True when a backend timer ran (which counts as progress:
        ``on_progress`` is called)."""
        cluster = self.cluster
        ran = cluster.run_due_timers()
        cluster.deliver()
        if ran and self.on_progress is not None:
            self.on_progress()
        self.expire_waiting_pods()
        cluster.deliver()
        self.queue.flush_backoff_q_completed()
        self.queue.flush_unschedulable_pods_leftover()
        return ran

    def next_wakeup(self) -> float | None:
        """The next moment something scheduled happens: a backend timer, a Permit timeout, a
        backoff expiry or the unschedulable flush; None when nothing is scheduled."""
        times = [t for t in (self.cluster.next_timer(), self.next_waiting_deadline(), self.queue.next_wakeup())
                 if t is not None]
        return min(times) if times else None

    def plugin_faults(self) -> list[str]:
        """Every plugin fault so far (raised, wrong return type, bad score), one line per
        (profile, plugin, extension point, cause) with its count; each was logged once."""
        return [f"{name}: {line}" for name, fwk in self.frameworks.items() for line in fwk.faults.summary()]

    def expire_waiting_pods(self) -> None:
        now = self.clock.now()
        for wp in list(self.waiting_pods.values()):
            deadline = wp.next_deadline()
            if deadline is not None and deadline <= now:
                wp.expire(now)

    def next_waiting_deadline(self) -> float | None:
        deadlines = [d for wp in self.waiting_pods.values() if (d := wp.next_deadline()) is not None]
        return min(deadlines) if deadlines else None


#: ``idle(deadline) -> keep running?``: see :meth:`Scheduler.run`.
IdleHook = Callable[[float | None], bool]
