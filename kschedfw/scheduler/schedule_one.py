"""The scheduling cycle (the scheduling half of upstream schedule_one.go): pop a pod, run the
algorithm (:mod:`kschedfw.cycle`) on a fresh snapshot, assume the pod on the chosen node, Reserve
and Permit, then hand it to the binding cycle; on any failure, the failure handler."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable, Mapping

from kschedfw.cycle import CLEAR_NOMINATION, ScheduleAlgorithm, ScheduleResult
from kschedfw.fwk.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from kschedfw.fwk.status import Status
from kschedfw.scheduler.binding import activate_pods
from kschedfw.scheduler.outcomes import one_node_failure

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.scheduler.schedule_one_podgroup import PodGroupCycle
    from kschedfw.cache.cache import Cache
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.framework.runtime import Framework
    from kschedfw.fwk.interface import Backend
    from kschedfw.queue import PriorityQueue
    from kschedfw.scheduler.binding import BindingCycle
    from kschedfw.scheduler.loop_metrics import LoopMetrics
    from kschedfw.scheduler.outcomes import AttemptLog, FailureHandler

log = logging.getLogger(__name__)


def new_cycle_state() -> tuple[CycleState, PodsToActivate]:
    """A scheduling cycle's CycleState, holding the PodsToActivate its plugins may fill."""
    state = CycleState()
    pods_to_activate = PodsToActivate()
    state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
    return state, pods_to_activate


class SchedulingCycle:
    """Upstream ScheduleOne up to the binding cycle, for every profile (``frameworks``, by
    schedulerName)."""

    def __init__(self, *, cluster: "Backend", cache: "Cache", queue: "PriorityQueue",
                 frameworks: Mapping[str, "Framework"], algorithm: ScheduleAlgorithm, binding: "BindingCycle",
                 attempts: "AttemptLog", handle_failure: "FailureHandler", metrics: "LoopMetrics",
                 generic_workload: bool = False, topology_aware: bool = False,
                 workload_aware_preemption: bool = False) -> None:
        self.cluster = cluster
        self.clock = cluster.clock
        self.cache = cache
        self.queue = queue
        self.frameworks = frameworks
        self.algorithm = algorithm
        self.binding = binding
        self.attempts = attempts
        self.handle_failure = handle_failure
        self.metrics = metrics
        #: the cycle of a pod's whole PodGroup (gate GenericWorkload), None while the gate is off
        self.pod_groups: PodGroupCycle | None = None
        if generic_workload:  # (the module, and the workload objects, load only with the gate)
            from kschedfw.scheduler.schedule_one_podgroup import PodGroupCycle
            self.pod_groups = PodGroupCycle(self, topology_aware=topology_aware,
                                            workload_aware_preemption=workload_aware_preemption)
        #: asked once per scheduling cycle for a recorder of that cycle (None: record nothing)
        self.recorder_for: Callable[["Pod"], "CycleRecorder | None"] | None = None

    def schedule_one(self) -> bool:
        """Hand out the cluster's changes so far, then pop one pod and run its scheduling cycle
        (and binding cycle unless it waits); False when no pod was ready."""
        self.cluster.deliver()
        qpi = self.queue.pop()
        if qpi is None:
            return False
        pod = qpi.pod
        pod_groups = self.pod_groups
        if pod_groups is not None and pod.scheduling_group is not None \
                and pod.scheduling_group.pod_group_name is not None:
            pod_groups.schedule(qpi, pod.scheduling_group.pod_group_name)
            return True
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
        state, pods_to_activate = new_cycle_state()
        state.record_plugin_metrics = record_plugin_metrics
        cycle = self.queue.scheduling_cycle
        self.cache.update_snapshot()
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
            self.handle_failure(fwk, qpi, status, result.nominating_info, cycle)
            return True
        host = result.suggested_host
        assumed = pod.with_node(host)
        self.cache.assume_pod(assumed)
        self.queue.nominator.delete_nominated_pod_if_exists(pod)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status is not None:
            self.binding.undo_reserve(fwk, state, assumed, host)
            self.handle_failure(fwk, qpi, one_node_failure(pod, host, status), CLEAR_NOMINATION, cycle)
            return True
        status, waits = fwk.run_permit_plugins(state, assumed, host, self.clock.now())
        if status is not None and not status.is_wait():
            self.binding.undo_reserve(fwk, state, assumed, host)
            self.handle_failure(fwk, qpi, one_node_failure(pod, host, status), CLEAR_NOMINATION, cycle)
            return True
        activate_pods(self.queue, pods_to_activate)
        if waits and recorder is not None:
            recorder.permit_wait(waits)
        self.attempts.record(qpi, fwk, cycle, "Waiting" if waits else "Assumed", host)
        self.binding.start(fwk, state, qpi, assumed, host, cycle, waits, pods_to_activate)
        return True

    def schedule_pod(self, fwk: "Framework", state: CycleState, pod: "Pod",
                     recorder: "CycleRecorder | None" = None, *, dry_run: bool = False
                     ) -> tuple[ScheduleResult, Status | None]:
        """The scheduling algorithm (upstream SchedulePod) on the current snapshot; see
        :class:`kschedfw.cycle.ScheduleAlgorithm` for ``recorder`` and ``dry_run``."""
        return self.algorithm.schedule_pod(fwk, state, pod, recorder, dry_run=dry_run)
