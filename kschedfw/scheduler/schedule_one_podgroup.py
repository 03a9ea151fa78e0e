"""The pod-group scheduling cycle (upstream schedule_one_podgroup.go, gate GenericWorkload).

A popped pod that belongs to a PodGroup brings the group's other unscheduled pods out of the
queue with it. The whole group is tried at once, against one view of the cluster: every pod runs
the normal algorithm, and the ones that fit are assumed, reserved and permitted in memory so the
next pods see them. The group is schedulable as soon as one pod's Permit says Success (for a
gang: the pod that completes ``minCount``). Everything tried is then undone, and only then are
the results applied: binding cycles for the pods that fit, the failure handler for the rest, and
the PodGroup's ``PodGroupScheduled`` condition.

The trial assumes in the cache and refreshes the snapshot after each pod rather than assuming
in the snapshot as upstream does: kschedfw's snapshot shares the cache's pod indexes
(labels, affinity terms), and the loop delivers no watch event during a cycle, so the snapshot
each pod sees is the one upstream's would be.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

import attrs

from kschedfw.api.workload import (POD_GROUP_KIND, POD_GROUP_SCHEDULED, REASON_SCHEDULER_ERROR,
                                   REASON_UNSCHEDULABLE, Condition, PodGroup)
from kschedfw.cycle import CLEAR_NOMINATION, ScheduleResult
from kschedfw.fwk.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState, PodsToActivate
from kschedfw.framework.placements import select_placement
from kschedfw.fwk.interface import NotFound, PodGroupStatusWriter
from kschedfw.fwk.podgroup import Placement, PodGroupInfo
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NominatingInfo, NominatingMode
from kschedfw.preemption.podgroup import run_workload_aware_preemption
from kschedfw.scheduler.binding import activate_pods
from kschedfw.scheduler.outcomes import one_node_failure
from kschedfw.scheduler.podgroup_attempts import GroupAttempt, GroupRecord, fitting

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.runtime import Framework
    from kschedfw.fwk.types import QueuedPodInfo
    from kschedfw.scheduler.schedule_one import SchedulingCycle

log = logging.getLogger(__name__)

__all__ = ["PodGroupUnschedulable", "PodResult", "GroupResult", "PodGroupCycle"]


class PodGroupUnschedulable(Exception):
    """The error every group-level rejection wraps (upstream errPodGroupUnschedulable)."""

    def __init__(self) -> None:
        super().__init__("pod group is unschedulable")


def group_unschedulable(*reasons: str) -> Status:
    """Unschedulable, its message led by "pod group is unschedulable"."""
    return Status(Code.Unschedulable, reasons, error=PodGroupUnschedulable())


@attrs.define
class PodResult:
    """One pod's outcome in the trial (upstream algorithmResult): where it would go, the
    algorithm's status, and, when it was assumed, its Permit status."""

    qpi: "QueuedPodInfo"
    result: ScheduleResult
    state: CycleState
    pods_to_activate: PodsToActivate
    status: Status | None
    permit_status: Status | None = None
    requires_preemption: bool = False
    #: the pod bound to its node, as assumed in the cache (None: not assumed)
    assumed: "Pod | None" = None

    # upstream ProposedAssignment
    @property
    def pod(self) -> "Pod":
        return self.qpi.pod

    @property
    def node_name(self) -> str:
        return self.result.suggested_host

    @property
    def pod_key(self) -> str:
        return self.qpi.pod.key


@attrs.define
class GroupResult:
    """The trial's outcome for the group (upstream podGroupAlgorithmResult): None status is
    Success; Unschedulable or Error otherwise."""

    pod_results: list[PodResult] = attrs.field(factory=list)
    status: Status | None = attrs.field(factory=group_unschedulable)
    waiting_on_preemption: bool = False
    #: with placements: how many were tried, and the chosen one (none feasible: the one that
    #: fitted the most pods) with its pods that fit, for the group's report
    placements: int = 0
    placement: str = ""
    fit: int | None = None


class PodGroupCycle:
    """Schedules the group of a popped pod, with the scheduling cycle's collaborators."""

    def __init__(self, cycle: "SchedulingCycle", *, topology_aware: bool = False,
                 workload_aware_preemption: bool = False) -> None:
        self.cycle = cycle
        #: gate TopologyAwareWorkloadScheduling: the group is tried in each generated placement
        self.topology_aware = topology_aware
        #: gate WorkloadAwarePreemption: an Unschedulable group preempts as a whole
        self.workload_aware_preemption = workload_aware_preemption
        #: the uids of the group being tried in memory. Plugins that activate the group's
        #: unscheduled pods meanwhile (GangScheduling's Permit) are not heard for these:
        #: they are in flight in this very cycle. Upstream records a ForceActivate for each,
        #: which sends a failed gang's pods to backoffQ and, with SchedulerPopFromBackoffQ,
        #: straight back into another attempt, a loop in which no time passes; here they
        #: wait in the unschedulable pool for an event, as a single failed pod does.
        self.trial_uids: set[str] = set()
        #: PodGroup uid -> the PodGroupScheduled condition this scheduler last wrote. A live
        #: cluster's writes are asynchronous, so the group read back may not carry it yet; a
        #: True written must still not be taken back to False by the group's next cycle.
        self.written: dict[str, Condition] = {}
        #: each group's last attempt ("namespace/name"), which the reports read
        self.last_attempts: dict[str, GroupAttempt] = {}
        #: asked once per group cycle with the group's key for a record of it (None: record
        #: nothing more than :attr:`last_attempts`); `explain` sets it
        self.recorder_for: Callable[[str], GroupRecord | None] | None = None

    def forget(self, group: object) -> None:
        """Drop the last attempt and the written condition of ``group``, a deleted PodGroup:
        kept for every group ever seen, they would grow without end in a long run."""
        if isinstance(group, PodGroup):
            self.last_attempts.pop(group.key, None)
            self.written.pop(group.uid, None)

    # ------------------------------------------------------------------ gathering the group
    def gather(self, qpi: "QueuedPodInfo", group_name: str) -> list["QueuedPodInfo"]:
        """The popped pod and its group's other unscheduled pods, taken from the queue
        (upstream podGroupInfoForPod); sorted by priority (highest first), then by first
        attempt. Raises NotFound when the cache knows no pod of the group."""
        cycle = self.cycle
        pod = qpi.pod
        state = cycle.cache.pod_group_states().get(pod.namespace, group_name)
        queued = [qpi]
        for other in state.unscheduled_pods().values():
            if other.name == pod.name:
                continue
            popped = cycle.queue.pop_specific_pod(other)
            if popped is not None:
                queued.append(popped)
        queued.sort(key=lambda q: (-q.pod.effective_priority,
                                   q.initial_attempt_timestamp if q.initial_attempt_timestamp is not None else 0.0))
        return queued

    def schedule(self, qpi: "QueuedPodInfo", group_name: str) -> None:
        """Upstream ScheduleOne's pod-group branch and scheduleOnePodGroup."""
        cycle = self.cycle
        try:
            group = self.gather(qpi, group_name)
        except NotFound as err:
            fwk = cycle.frameworks.get(qpi.pod.scheduler_name)
            if fwk is None:
                cycle.queue.done(qpi.pod.uid)
                return
            cycle.handle_failure(fwk, qpi, Status.as_status(f"error while retrieving pod group state: {err}"),
                                 None, cycle.queue.scheduling_cycle)
            return
        names = {q.pod.scheduler_name for q in group}
        fwk = cycle.frameworks.get(qpi.pod.scheduler_name) if len(names) == 1 else None
        if fwk is None:
            first = group[0].pod.scheduler_name
            other = next((n for n in names if n != first), first)
            message = (f'all pods in a single pod group should have the same .spec.schedulerName set, '
                       f'got: "{other}" and "{first}"' if len(names) > 1
                       else f'profile not found for scheduler name "{first}"')
            for member in group:
                member_fwk = cycle.frameworks.get(member.pod.scheduler_name)
                if member_fwk is None:
                    cycle.queue.done(member.pod.uid)
                    continue
                cycle.handle_failure(member_fwk, member, Status.as_status(message), CLEAR_NOMINATION,
                                     cycle.queue.scheduling_cycle)
            return
        group = [member for member in group if not self._skip(member)]
        if not group:
            return
        metrics = cycle.metrics
        started = metrics.now()
        try:
            cycle.cache.update_snapshot()
        except Exception as exc:  # upstream: an Error result for the whole group, submitted
            log.exception("updating the snapshot for pod group %s/%s failed", qpi.pod.namespace, group_name)
            self.submit(fwk, group, qpi.pod.namespace, group_name, GroupResult(status=Status.as_status(exc)))
            return
        key = f"{qpi.pod.namespace}/{group_name}"
        recorder = self.recorder_for(key) if self.recorder_for is not None else None
        if recorder is not None:
            recorder.pods = tuple(member.pod.key for member in group)
        self.trial_uids = {member.pod.uid for member in group}
        group_state = CycleState()
        try:
            if self.topology_aware:
                result = self.placement_algorithm(fwk, group_state, group, qpi.pod.namespace, group_name,
                                                  recorder=recorder)
            else:
                result = self.algorithm(fwk, group_state, group)
                if recorder is not None:
                    recorder.tried("", len(cycle.cache.snapshot), result.pod_results, result.status,
                                   result.status is None or result.status.is_success())
            group_status = result.status
            if self.workload_aware_preemption and group_status is not None and group_status.code is Code.Unschedulable:
                self._after_preemption(result, group_status, self.run_workload_aware_preemption(
                    fwk, group_state, group, qpi.pod.namespace, group_name))
        finally:
            self.trial_uids = set()
        metrics.pod_group_algorithm_ran(metrics.now() - started)
        self.submit(fwk, group, qpi.pod.namespace, group_name, result)
        self._attempted(fwk, key, group, result, started, recorder)

    # ------------------------------------------------------------------ workload-aware preemption
    def run_workload_aware_preemption(self, fwk: "Framework", group_state: CycleState, group: list["QueuedPodInfo"],
                                      namespace: str, name: str) -> Status:
        """Upstream runWorkloadAwarePreemption: the profile's PodGroupPostFilter plugin
        (DefaultPreemption) on a backed-up snapshot, its scheduling function the group's
        algorithm rerun without post filters."""
        def scheduling_func() -> Status | None:
            if self.topology_aware:
                return self.placement_algorithm(fwk, group_state, group, namespace, name, post_filters=False).status
            return self.algorithm(fwk, group_state, group, post_filters=False).status

        cache = self.cycle.cache
        cache.pod_indexes = False  # the victims leave the NodeInfos, not the cache's pod indexes
        try:
            return run_workload_aware_preemption(fwk.pod_group_post_filter_plugins(), fwk.handle.lister, namespace,
                                                 name, [q.pod for q in group], scheduling_func, cache.snapshot)
        finally:
            cache.pod_indexes = True
            cache.update_snapshot()

    @staticmethod
    def _after_preemption(result: GroupResult, group_status: Status, status: Status) -> None:
        """Upstream podGroupCycle after preemption: Success leaves the group waiting for its
        victims, an Error replaces the group's status, any other status joins its reasons."""
        if status.is_success():
            result.waiting_on_preemption = True
        elif status.code is Code.Error:
            result.status = status
        else:
            result.status = attrs.evolve(group_status, reasons=(*group_status.reasons, status.message()))

    def _skip(self, qpi: "QueuedPodInfo") -> bool:
        """Upstream skipPodSchedule: a deleting or already assumed pod is dropped."""
        cycle = self.cycle
        pod = qpi.pod
        if pod.deletion_timestamp is not None:
            cycle.cluster.record_event(pod, "Warning", "FailedScheduling", f"skip schedule deleting pod: {pod.key}")
        elif not cycle.cache.is_assumed(pod):
            return False
        cycle.queue.done(pod.uid)
        return True

    # ------------------------------------------------------------------ the trial
    def algorithm(self, fwk: "Framework", group_state: CycleState, group: list["QueuedPodInfo"], *,
                  post_filters: bool = True) -> GroupResult:
        """Upstream podGroupSchedulingDefaultAlgorithm: each pod in order, the fitting ones
        assumed so the next see them; everything assumed is forgotten before returning.
        ``post_filters=False``: no pod runs PostFilter (workload-aware preemption's reruns)."""
        result = GroupResult()
        reverts: list[PodResult] = []
        requires_preemption = False
        try:
            for qpi in group:
                pod_result = self._try_pod(fwk, group_state, qpi, post_filters)
                result.pod_results.append(pod_result)
                status = pod_result.status
                if status is not None and not status.is_success() and not pod_result.requires_preemption:
                    if status.is_rejected():
                        continue
                    result.status = Status.as_status(
                        f"failed to schedule other pod from a pod group: {status.message()}")
                    result.waiting_on_preemption = False
                    break
                reverts.append(pod_result)
                requires_preemption = requires_preemption or pod_result.requires_preemption
                permit = pod_result.permit_status
                if permit is None or permit.is_success():
                    if requires_preemption:
                        result.status = group_unschedulable("pod group is waiting for preemption to complete")
                        result.waiting_on_preemption = True
                    else:
                        result.status = None
        finally:
            for pod_result in reversed(reverts):
                self._revert(fwk, pod_result)
            if reverts:  # the snapshot's pod-group states must not count the pods just forgotten
                self.cycle.cache.update_snapshot()
        return result

    def placement_algorithm(self, fwk: "Framework", group_state: CycleState, group: list["QueuedPodInfo"],
                            namespace: str, name: str, *, post_filters: bool = True,
                            recorder: GroupRecord | None = None) -> GroupResult:
        """Upstream podGroupSchedulingPlacementAlgorithm: the default algorithm in each
        placement the PlacementGenerate plugin proposes (the scheduler's node candidates
        narrowed to its nodes; plugins still see the whole cluster),
        the best one chosen by :func:`kschedfw.framework.placements.select_placement`."""
        cycle = self.cycle
        snapshot = cycle.cache.snapshot
        all_nodes = list(snapshot.node_infos())
        info = PodGroupInfo(name=name, namespace=namespace, unscheduled_pods=tuple(q.pod for q in group))
        best: list[tuple[int, str]] = []  # the placement that fitted the most pods, first of equals

        def attempt(placement: Placement) -> GroupResult:
            try:
                snapshot.assume_placement(placement.nodes)
            except ValueError as err:  # upstream: an Error for the group, no more placements
                return GroupResult(status=Status.as_status(f"failed to assume pod group placement: {err}"))
            try:
                outcome = self.algorithm(fwk, group_state, group, post_filters=post_filters)
            finally:
                snapshot.forget_placement()
            fit = fitting(outcome.pod_results)
            if not best or fit > best[0][0]:
                best[:] = [(fit, placement.name)]
            if recorder is not None:
                ok = outcome.status is None or outcome.status.is_success()
                recorder.tried(placement.name, len(placement.nodes), outcome.pod_results, outcome.status,
                               ok or outcome.waiting_on_preemption)
            return outcome

        selection = select_placement(fwk, group_state, info, all_nodes, attempt, rng=cycle.algorithm.rng,
                                     ties=cycle.algorithm.ties)
        if recorder is not None:
            recorder.scored(selection.scores, selection.placement)
            recorder.ties = cycle.algorithm.ties
        outcome = selection.outcome
        status = selection.status
        fit, where = best[0] if best else (0, "")
        if selection.placement is not None and outcome is not None:
            fit, where = fitting(outcome.pod_results), selection.placement.name
        tried = len(selection.placements)
        if outcome is None:
            return GroupResult(status=status if status is not None else group_unschedulable(), placements=tried,
                               placement=where, fit=fit)
        return GroupResult(pod_results=outcome.pod_results, status=status,
                           waiting_on_preemption=outcome.waiting_on_preemption and (
                               status is outcome.status or status is not None and status.is_rejected()),
                           placements=tried, placement=where, fit=fit)

    def _try_pod(self, fwk: "Framework", group_state: CycleState, qpi: "QueuedPodInfo",
                 post_filters: bool = True) -> PodResult:
        """Upstream podGroupPodSchedulingAlgorithm: the algorithm, then assume, Reserve and
        Permit in memory for a pod that fits (or that would fit after preemption)."""
        cycle = self.cycle
        pod = qpi.pod
        state, pods_to_activate = _new_state()
        state.set_pod_group_scheduling_cycle(group_state)
        state.skip_all_post_filter_plugins = not post_filters
        cycle.cache.update_snapshot()
        try:
            result, status = cycle.algorithm.schedule_pod(fwk, state, pod, None, cycle=cycle.queue.scheduling_cycle)
        except Exception as exc:  # a bug in the core must not lose the group
            log.exception("scheduling %s failed", pod.key)
            result, status = ScheduleResult(nominating_info=CLEAR_NOMINATION), Status.as_status(exc)
        requires_preemption = False
        if status is not None and not status.is_success():
            nominated = result.nominating_info
            if nominated is None or not nominated.nominated_node_name:
                return PodResult(qpi, result, state, pods_to_activate, status)
            result = attrs.evolve(result, suggested_host=nominated.nominated_node_name)
            requires_preemption = True
        host = result.suggested_host
        assumed = pod.with_node(host)
        cycle.cache.assume_pod(assumed)
        cycle.cache.update_snapshot()  # Permit reads the group's states from the snapshot
        reserve = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if reserve is not None and not reserve.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            cycle.cache.forget_pod(assumed)
            return PodResult(qpi, ScheduleResult(nominating_info=CLEAR_NOMINATION), state, pods_to_activate,
                             one_node_failure(pod, host, reserve))
        permit, _ = fwk.run_permit_plugins(state, assumed, host, cycle.clock.now())
        if permit is not None and not permit.is_wait() and not permit.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            cycle.cache.forget_pod(assumed)
            return PodResult(qpi, ScheduleResult(nominating_info=CLEAR_NOMINATION), state, pods_to_activate,
                             one_node_failure(pod, host, permit))
        return PodResult(qpi, result, state, pods_to_activate, status, permit, requires_preemption, assumed)

    def _revert(self, fwk: "Framework", pod_result: PodResult) -> None:
        host = pod_result.node_name
        assumed = pod_result.assumed if pod_result.assumed is not None else pod_result.pod.with_node(host)
        fwk.run_reserve_plugins_unreserve(pod_result.state, assumed, host)
        self.cycle.cache.forget_pod(assumed)

    # ------------------------------------------------------------------ applying the result
    def submit(self, fwk: "Framework", group: list["QueuedPodInfo"], namespace: str, name: str,
               result: GroupResult) -> None:
        """Upstream submitPodGroupAlgorithmResult: binding cycles or failures, then the
        PodGroup's condition."""
        cycle = self.cycle
        number = cycle.queue.scheduling_cycle
        group_status = result.status
        group_ok = group_status is None or group_status.is_success()
        if group_ok:
            cycle.cache.update_snapshot()
        for i, qpi in enumerate(group):
            pod_result = result.pod_results[i] if i < len(result.pod_results) else None
            if pod_result is None:
                state, pods_to_activate = _new_state()
                pod_result = PodResult(qpi, ScheduleResult(), state, pods_to_activate, group_status)
            status = pod_result.status
            pod_ok = status is None or status.is_success()
            if group_status is not None and group_status.code is Code.Error:
                failure = status if status is not None and status.code is Code.Error else group_status
                cycle.handle_failure(fwk, qpi, failure, CLEAR_NOMINATION, number)
            elif pod_ok and group_ok:
                pod_result.state.set_pod_group_scheduling_cycle(None)
                self._bind(fwk, pod_result, number)
            elif pod_ok and group_status is not None and group_status.is_rejected():
                if result.waiting_on_preemption:
                    cycle.handle_failure(fwk, qpi, group_status,
                                         NominatingInfo(pod_result.node_name, NominatingMode.Override), number)
                else:
                    permit = pod_result.permit_status
                    cycle.handle_failure(fwk, qpi, group_unschedulable(*(permit.reasons if permit else ())),
                                         CLEAR_NOMINATION, number)
            elif pod_ok:
                cycle.handle_failure(fwk, qpi, Status.as_status(
                    f"received unexpected pod group scheduling algorithm status code: {group_status}"),
                    CLEAR_NOMINATION, number)
            elif pod_result.requires_preemption and not result.waiting_on_preemption:
                permit = pod_result.permit_status
                cycle.handle_failure(fwk, qpi, group_unschedulable(*(permit.reasons if permit else ())),
                                     CLEAR_NOMINATION, number)
            else:
                cycle.handle_failure(fwk, qpi, status if status is not None else group_unschedulable(),
                                     pod_result.result.nominating_info, number)
        if group_ok:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="True", reason="Scheduled",
                                  message=group_status.message() if group_status is not None else "")
        elif group_status is not None and group_status.is_rejected():
            condition = Condition(type=POD_GROUP_SCHEDULED, status="False", reason=REASON_UNSCHEDULABLE,
                                  message=group_status.message())
        else:
            condition = Condition(type=POD_GROUP_SCHEDULED, status="False", reason=REASON_SCHEDULER_ERROR,
                                  message=group_status.message() if group_status is not None else "")
        self.update_condition(namespace, name, condition)

    def _bind(self, fwk: "Framework", pod_result: PodResult, number: int) -> None:
        """Upstream prepareForBindingCycle and runBindingCycle: assume in the cache, Reserve,
        Permit (a gang's pods wait there until the last one allows them), then bind."""
        cycle = self.cycle
        qpi = pod_result.qpi
        pod = qpi.pod
        state = pod_result.state
        host = pod_result.node_name
        assumed = pod.with_node(host)
        cycle.cache.assume_pod(assumed)
        cycle.queue.nominator.delete_nominated_pod_if_exists(pod)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status is not None and not status.is_success():
            cycle.binding.undo_reserve(fwk, state, assumed, host)
            cycle.handle_failure(fwk, qpi, one_node_failure(pod, host, status), CLEAR_NOMINATION, number)
            return
        status, waits = fwk.run_permit_plugins(state, assumed, host, cycle.clock.now())
        if status is not None and not status.is_wait() and not status.is_success():
            cycle.binding.undo_reserve(fwk, state, assumed, host)
            cycle.handle_failure(fwk, qpi, one_node_failure(pod, host, status), CLEAR_NOMINATION, number)
            return
        activate_pods(cycle.queue, pod_result.pods_to_activate)
        cycle.attempts.record(qpi, fwk, number, "Waiting" if waits else "Assumed", host)
        cycle.binding.start(fwk, state, qpi, assumed, host, number, waits, pod_result.pods_to_activate)

    def _attempted(self, fwk: "Framework", key: str, group: list["QueuedPodInfo"], result: GroupResult,
                   started: float, recorder: GroupRecord | None) -> None:
        """The attempt's metrics (upstream's, by result and profile) and its summary."""
        status = result.status
        if status is None or status.is_success():
            outcome = "scheduled"
        elif status.is_rejected():
            outcome = "waiting_on_preemption" if result.waiting_on_preemption else "unschedulable"
        else:
            outcome = "error"
        metrics = self.cycle.metrics
        metrics.pod_group_attempt(outcome, fwk.profile_name, metrics.now() - started)
        fit = result.fit if result.fit is not None else fitting(result.pod_results)
        attempt = GroupAttempt(self.cycle.queue.scheduling_cycle, self.cycle.clock.now(), fwk.profile_name,
                               len(group), fit, outcome, status.message() if status is not None else "",
                               result.placements, result.placement)
        self.last_attempts[key] = attempt
        if recorder is not None:
            recorder.ended(attempt)

    def update_condition(self, namespace: str, name: str, condition: Condition) -> None:
        """Upstream updatePodGroupCondition: never takes a True condition back to False, stamps
        the group's generation as the condition's ``observedGeneration``, and writes nothing
        when the condition would not change."""
        cluster = self.cycle.cluster
        current = cluster.get(POD_GROUP_KIND, name, namespace)
        if not isinstance(current, PodGroup) or not isinstance(cluster, PodGroupStatusWriter):
            return
        existing = current.condition(condition.type)
        mine = self.written.get(current.uid) if condition.type == POD_GROUP_SCHEDULED else None
        if mine is not None and mine.status == "True" and (existing is None or existing.status != "True"):
            existing = mine
        if existing is not None and existing.status == "True" and condition.status != "True":
            return
        condition = attrs.evolve(condition, observed_generation=current.generation)
        if existing is not None and (existing.status, existing.reason, existing.message, existing.observed_generation) \
                == (condition.status, condition.reason, condition.message, condition.observed_generation):
            return
        if condition.type == POD_GROUP_SCHEDULED:
            self.written[current.uid] = condition
        try:
            cluster.patch_pod_group_condition(current, condition)
        except NotFound:
            log.info("PodGroup %s/%s is gone: its status is not written", namespace, name)


def _new_state() -> tuple[CycleState, PodsToActivate]:
    """A pod's CycleState in the group's cycle, holding the PodsToActivate its plugins may fill."""
    state = CycleState()
    pods_to_activate = PodsToActivate()
    state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
    return state, pods_to_activate
