"""The binding cycle (the binding half of upstream schedule_one.go): PreBindPreFlight, WaitOnPermit,
PreBind and Bind, then FinishBinding and PostBind, or, on any failure, unreserve and forget.

Upstream runs it on a goroutine; here the backend runs PreBind and Bind (at once on the embedded
cluster, off-thread on a real API server) and hands the outcome back on the scheduler's thread,
and a Permit wait resumes it through its WaitingPod's callback, so everything stays reproducible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, MutableMapping, Sequence

from kschedfw.cycle import CLEAR_NOMINATION
from kschedfw.extenders.cycle import EXTENDER_NAME, extenders_binding
from kschedfw.fwk.cycle_state import BINDING_MAY_WAIT_KEY, CycleState, PodsToActivate
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource
from kschedfw.fwk.status import Code, Status
from kschedfw.scheduler.outcomes import one_node_failure

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.cache.cache import Cache
    from kschedfw.framework.runtime import Framework
    from kschedfw.framework.waiting_pods import WaitingPod
    from kschedfw.extenders.http_extender import HTTPExtender
    from kschedfw.fwk.interface import Backend
    from kschedfw.fwk.types import QueuedPodInfo
    from kschedfw.queue import PriorityQueue
    from kschedfw.scheduler.loop_metrics import LoopMetrics
    from kschedfw.scheduler.outcomes import AttemptLog, FailureHandler

_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)


def activate_pods(queue: "PriorityQueue", pods_to_activate: PodsToActivate) -> None:
    """Move the pods a plugin asked to activate (CycleState's PodsToActivate) to the activeQ."""
    if pods_to_activate.map:
        pods = list(pods_to_activate.map.values())
        pods_to_activate.map.clear()
        queue.activate(pods)


class BindingCycle:
    """The binding cycles of every profile. ``on_bound`` is called after each pod bound."""

    def __init__(self, *, cluster: "Backend", cache: "Cache", queue: "PriorityQueue",
                 waiting_pods: MutableMapping[str, "WaitingPod"], extenders: Sequence["HTTPExtender"],
                 attempts: "AttemptLog", handle_failure: "FailureHandler", metrics: "LoopMetrics",
                 on_bound: Callable[[], None]) -> None:
        self.cluster = cluster
        self.clock = cluster.clock
        self.cache = cache
        self.queue = queue
        self.waiting_pods = waiting_pods
        self.extenders = extenders
        self.attempts = attempts
        self.handle_failure = handle_failure
        self.metrics = metrics
        self.on_bound = on_bound
        self.bound_uids: set[str] = set()  # pods this scheduler bound (not the ones that came bound)
        self.waiting_bindings: set[str] = set()  # pods whose binding cycle waits (BINDING_MAY_WAIT_KEY)

    def start(self, fwk: "Framework", state: CycleState, qpi: "QueuedPodInfo", assumed: "Pod", host: str,
              cycle: int, waits: dict[str, float], pods_to_activate: PodsToActivate) -> None:
        """The binding cycle of a pod assumed on ``host`` whose Permit plugins passed or asked to
        wait (``waits``: plugin -> deadline), in upstream's order: PreBindPreFlight first, then
        WaitOnPermit, then PreBind and Bind."""
        preflight = fwk.run_pre_bind_pre_flights(state, assumed, host)
        if preflight is not None and not preflight.is_skip():
            self.run(fwk, state, qpi, assumed, host, cycle, preflight, pods_to_activate)
            return
        if preflight is None or waits:
            # NominatedNodeNameForExpectation (on in v1.36): tell others where the pod is going
            self.cluster.set_nominated_node_name(qpi.pod, host)
        if not waits:
            self.run(fwk, state, qpi, assumed, host, cycle, None, pods_to_activate)
            return
        clock = self.clock
        wait_started = clock.now()

        def resume(wp: "WaitingPod") -> None:
            self.waiting_pods.pop(assumed.uid, None)
            code = wp.status.code.name if wp.status is not None else "Success"
            self.metrics.permit_wait_duration.labels(code).observe(clock.now() - wait_started)
            self.run(fwk, state, qpi, assumed, host, cycle, wp.status, pods_to_activate)

        self.waiting_pods[assumed.uid] = fwk.new_waiting_pod(assumed, host, waits, clock.now(), resume)

    def run(self, fwk: "Framework", state: CycleState, qpi: "QueuedPodInfo", assumed: "Pod", host: str,
            cycle: int, permit_status: Status | None, pods_to_activate: PodsToActivate) -> None:
        """After WaitOnPermit (``permit_status``: its outcome, None when nothing waited)."""
        pod = qpi.pod
        goroutines = self.metrics.goroutines
        goroutines.labels("binding").inc()  # upstream counts its binding goroutines
        if permit_status is not None and not permit_status.is_success():
            goroutines.labels("binding").dec()
            if permit_status.is_rejected():
                status = one_node_failure(pod, host, permit_status)
            else:  # preempted while waiting, or an error: retried, not marked unschedulable
                status = Status(Code.Error, permit_status.reasons, plugin=permit_status.plugin)
            self.binding_cycle_error(fwk, state, qpi, assumed, host, status, cycle)
            return
        self.queue.done(pod.uid)

        # the backend runs PreBind and Bind at once (embedded) or off-thread, as upstream's binding
        # goroutine; the outcome comes back on the scheduler's thread either way
        def pre_bind_and_bind() -> Status:
            pre_bind = fwk.run_pre_bind_plugins(state, assumed, host)
            if pre_bind is not None:
                return pre_bind
            return self.bind(fwk, state, assumed, host)

        def finished(status: Status) -> None:
            self.waiting_bindings.discard(pod.uid)
            self.bind_finished(fwk, state, qpi, assumed, host, cycle, pods_to_activate, status)

        if state.get(BINDING_MAY_WAIT_KEY):
            self.waiting_bindings.add(pod.uid)
            self.cluster.submit_binding(pre_bind_and_bind, finished, may_wait=True)
        else:
            self.cluster.submit_binding(pre_bind_and_bind, finished)

    def bind(self, fwk: "Framework", state: CycleState, assumed: "Pod", host: str) -> Status:
        """Upstream bind: an interested binding extender binds the pod, else the Bind plugins."""
        handled, status = extenders_binding(self.extenders, assumed, host)
        if not handled:
            return fwk.run_bind_plugins(state, assumed, host)
        if status is not None:
            return status
        self.cluster.apply_extender_binding(assumed, host)
        return Status(Code.Success, plugin=EXTENDER_NAME)

    def bind_finished(self, fwk: "Framework", state: CycleState, qpi: "QueuedPodInfo", assumed: "Pod",
                      host: str, cycle: int, pods_to_activate: PodsToActivate, status: Status) -> None:
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
            self.binding_cycle_error(fwk, state, qpi, assumed, host, status, cycle)
            return
        now = self.clock.now()
        self.cache.finish_binding(assumed, now)
        self.metrics.attempt(pod.uid, "scheduled", fwk.profile_name)
        self.metrics.pod_scheduled(qpi, now)
        self.bound_uids.add(pod.uid)
        self.cluster.record_event(pod, "Normal", "Scheduled", f"Successfully assigned {pod.key} to {host}")
        self.attempts.record(qpi, fwk, cycle, "Scheduled", host)
        fwk.run_post_bind_plugins(state, assumed, host)
        activate_pods(self.queue, pods_to_activate)
        self.on_bound()

    def binding_cycle_error(self, fwk: "Framework", state: CycleState, qpi: "QueuedPodInfo", assumed: "Pod",
                            host: str, status: Status, cycle: int) -> None:
        """Upstream handleBindingCycleError: unreserve, forget, and treat the forget as an
        AssignedPod/Delete event, since the assumed pod held resources others may want."""
        self.undo_reserve(fwk, state, assumed, host)
        if status.is_rejected():
            self.handle_failure(fwk, qpi, status, CLEAR_NOMINATION, cycle)
            self.queue.move_all_to_active_or_backoff_queue(_ASSIGNED_POD_DELETE, assumed, None,
                                                           lambda p: p.uid != assumed.uid)
        else:
            self.queue.move_all_to_active_or_backoff_queue(_ASSIGNED_POD_DELETE, assumed, None)
            self.handle_failure(fwk, qpi, status, CLEAR_NOMINATION, cycle)

    def undo_reserve(self, fwk: "Framework", state: CycleState, assumed: "Pod", host: str) -> None:
        """Upstream unreserveAndForget: Unreserve plugins, then the assumed pod leaves the cache."""
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        self.cache.forget_pod(assumed)
