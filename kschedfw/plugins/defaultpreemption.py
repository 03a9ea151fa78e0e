"""DefaultPreemption: PostFilter that evicts lower-priority pods so a pod can fit (upstream v1.36).

When Filter found no node, PostFilter re-reads the pod, checks it may preempt, dry-runs eviction
on the nodes that failed with plain Unschedulable, picks the node whose eviction hurts least, and
evicts its victims. The pod is nominated to that node and retried; its next attempt tries that
node first. Messages are prefixed with ``preemption: ``.

Args: ``minCandidateNodesPercentage`` (default 10) and ``minCandidateNodesAbsolute`` (default 100)
bound how many candidate nodes the dry run looks for.

With the SchedulerAsyncPreemption gate (Beta, on by default) the plugin is also a PreEnqueue
plugin: a pod whose preemption is still evicting victims waits with
``waiting for the preemption for this pod to be finished``.

With WorkloadAwarePreemption (alpha, off) it is also the one PodGroupPostFilter plugin: a pod
group that did not fit preempts as a whole (:mod:`kschedfw.preemption.podgroup`), its pods wait
at PreEnqueue with ``waiting for the preemption for this pod group to be finished`` while the
victims go, and PostFilter does not preempt for a single pod of a group (the group's cycle
does). With TopologyAwareWorkloadScheduling a pod of a group with a topology constraint does not
preempt either.

Customisation points, as upstream: :attr:`DefaultPreemption.is_eligible_pod` (extra victim filter
on top of "strictly lower priority") and :attr:`DefaultPreemption.more_important_pod` (victim
order). :attr:`DefaultPreemption.offset_rand` draws the random start offset; it comes from a
``random.Random`` seeded from the profile name, so runs are reproducible.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from kschedfw import hookimpl
from kschedfw.api import Pod
from kschedfw.api.workload_names import POD_GROUP_KIND
from kschedfw.fwk.features import enabled
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.status import Code, Status
from kschedfw.preemption import (Candidate, Evaluator, Executor, PodGroupEvaluator, PodGroupSchedulingFunc,
                                 Victims, filter_pods_with_pdb_violation, get_pod_start_time,
                                 more_important_pod, now_datetime, pod_terminating_by_preemption,
                                 pod_group_uid, sort_by_importance)
from kschedfw.preemption.podgroup import ERR_NOT_REGISTERED
from kschedfw.plugins.resource_victims import ERR_NO_VICTIMS, ResourceVictimSelector, victim_memo
from kschedfw.plugins.defaultpreemption_args import ARGS

if TYPE_CHECKING:
    from kschedfw.api import PodDisruptionBudget
    from kschedfw.api.workload import PodGroup
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, NodeToStatus, PostFilterResult

NAME = "DefaultPreemption"
ASYNC_PREEMPTION_GATE = "SchedulerAsyncPreemption"
WORKLOAD_AWARE_PREEMPTION_GATE = "WorkloadAwarePreemption"
TOPOLOGY_AWARE_SCHEDULING_GATE = "TopologyAwareWorkloadScheduling"

ERR_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
ERR_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"
ERR_WAITING_FOR_POD_GROUP_PREEMPTION = "waiting for the preemption for this pod group to be finished"
ERR_POD_GROUP_NOT_FOUND = "preemption: pod group for pod not found"
ERR_PLACEMENT_BASED_GROUP = "preemption: not eligible due to placement-based pod group scheduling limitation"
ERR_WORKLOAD_AWARE_PREEMPTION = "preemption: not eligible due to workload aware preemption enabled"

IsEligiblePodFunc = Callable[["NodeInfo", Pod, Pod], bool]
MoreImportantPodFunc = Callable[[Pod, Pod], bool]


def _every_pod_is_eligible(node_info: "NodeInfo", victim: Pod, preemptor: Pod) -> bool:
    return True


def _go_aggregate(messages: list[str]) -> str:
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


class DefaultPreemption:
    """PostFilter (and PreEnqueue with async preemption): preempt lower-priority pods."""

    name = NAME
    args_spec = ARGS
    args_schema = ARGS.schema
    validate_args = staticmethod(ARGS.validate)

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle, *,
                 features: Mapping[str, bool] | None = None) -> None:
        args = dict(args or {})
        args.setdefault("minCandidateNodesPercentage", 10)
        args.setdefault("minCandidateNodesAbsolute", 100)
        errors = ARGS.validate(args)
        if errors:
            raise ValueError(_go_aggregate([str(e) for e in errors]))
        self.min_candidate_nodes_percentage = int(args["minCandidateNodesPercentage"])
        self.min_candidate_nodes_absolute = int(args["minCandidateNodesAbsolute"])
        profile = handle.profile_name
        self.handle = handle
        def gate(name: str) -> bool:
            # unknown gates read as off (the workload gates are alpha)
            return enabled(features, name) if features is not None else handle.feature_gates.enabled(name)

        self.enable_async_preemption = gate(ASYNC_PREEMPTION_GATE)
        self.enable_workload_aware_preemption = gate(WORKLOAD_AWARE_PREEMPTION_GATE)
        self.enable_topology_aware_scheduling = gate(TOPOLOGY_AWARE_SCHEDULING_GATE)
        self.executor = Executor(self.handle, async_preemption=self.enable_async_preemption)
        self.evaluator = Evaluator(NAME, self.handle, self, self.executor)
        #: workload-aware preemption (None with its gate off)
        self.pod_group_evaluator: PodGroupEvaluator | None = \
            PodGroupEvaluator(self.handle, self.executor, NAME) if self.enable_workload_aware_preemption else None
        self._rng = random.Random(f"{NAME}/{profile}")
        #: ``offset_rand(n)`` -> a start offset in [0, n)
        self.offset_rand: Callable[[int], int] = self._rng.randrange
        #: extra victim filter on top of "lower priority than the preemptor"
        self.is_eligible_pod: IsEligiblePodFunc = _every_pod_is_eligible
        #: victim order, most important first (kept longest)
        self.more_important_pod: MoreImportantPodFunc = self._more_important_pod
        #: pick victims by arithmetic when only NodeResourcesFit can change its verdict (same
        #: results; False: always the plain dry run on copies)
        self.resource_victim_selection = True
        self._victim_memo = victim_memo(handle)

    def _more_important_pod(self, pod1: Pod, pod2: Pod) -> bool:
        return more_important_pod(pod1, pod2, now_datetime(self.handle))

    def _sort_by_importance(self, pods: list[Pod]) -> list[Pod]:
        """Most important first, with :attr:`more_important_pod` (stable)."""
        if self.more_important_pod == self._more_important_pod:
            # The default order as a key: higher priority, then earlier start (same result).
            now = now_datetime(self.handle)
            return sorted(pods, key=lambda p: (-p.effective_priority, get_pod_start_time(p, now)))
        return sort_by_importance(pods, self.more_important_pod)

    # ------------------------------------------------------------------ extension points
    def _pod_group(self, pod: Pod) -> PodGroup | None:
        group = pod.scheduling_group
        if group is None or group.pod_group_name is None:
            return None
        found = self.handle.lister.get(POD_GROUP_KIND, group.pod_group_name, pod.namespace)
        return found if getattr(found, "kind", None) == POD_GROUP_KIND else None  # (a typed PodGroup)

    @hookimpl
    def post_filter(self, state: "CycleState", pod: Pod, filtered_node_status_map: "NodeToStatus"
                    ) -> "tuple[PostFilterResult | None, Status]":
        metrics = self.handle.metrics
        if metrics is not None:  # upstream counts every PostFilter call
            metrics.preemption_attempt()
        if pod.scheduling_group is not None:
            refused = self._group_member_refusal(pod)
            if refused is not None:
                return None, refused
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        message = status.message()
        if message:
            return result, Status(status.code, (f"preemption: {message}",))
        return result, status

    def _group_member_refusal(self, pod: Pod) -> Status | None:
        """A pod of a group preempts alone only without the workload gates: with topology-aware
        scheduling a group with a topology constraint would preempt once per placement, and with
        workload-aware preemption the group's cycle preempts for the whole group."""
        if self.enable_topology_aware_scheduling:
            group = self._pod_group(pod)
            if group is None:
                return Status.unschedulable(ERR_POD_GROUP_NOT_FOUND)
            if group.scheduling_constraints is not None:
                return Status.unschedulable(ERR_PLACEMENT_BASED_GROUP)
        if self.enable_workload_aware_preemption:
            return Status.unschedulable(ERR_WORKLOAD_AWARE_PREEMPTION)
        return None

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enable_async_preemption:
            return None
        if pod.scheduling_group is not None and self.enable_workload_aware_preemption:
            # A pod whose PodGroup is missing is not this plugin's to hold.
            group = self._pod_group(pod)
            if group is not None and self.executor.is_pod_group_running_preemption(pod_group_uid(group)):
                return Status.unresolvable(ERR_WAITING_FOR_POD_GROUP_PREEMPTION)
            return None
        if self.executor.is_pod_running_preemption(pod.uid):
            return Status.unresolvable(ERR_WAITING_FOR_PREEMPTION)
        return None

    @hookimpl
    def pod_group_post_filter(self, pod_group: PodGroup, pods: list[Pod],
                              pod_group_scheduling_func: PodGroupSchedulingFunc) -> Status | None:
        """Workload-aware preemption for ``pod_group`` (see
        :func:`kschedfw.preemption.podgroup.run_workload_aware_preemption`)."""
        if self.pod_group_evaluator is None:
            return Status.unschedulable(ERR_NOT_REGISTERED)
        return self.pod_group_evaluator.preempt(pod_group, pods, pod_group_scheduling_func)

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if self.enable_async_preemption:
            # A pod gated here is released by the victims' deletion; the plugins that rejected
            # it (e.g. NodeResourcesFit) decide about requeueing, so this hint always skips.
            return [ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                         self.is_pod_schedulable_after_pod_deletion)]
        return []

    def is_pod_schedulable_after_pod_deletion(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        return QueueingHint.QueueSkip

    # ------------------------------------------------------------------ preemption interface
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """``max(numNodes * pct / 100, abs)``, never more than ``num_nodes``."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        if n < self.min_candidate_nodes_absolute:
            n = self.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.offset_rand(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[Callable[[str], int]] | None:
        return None

    def is_preemption_allowed(self, node_info: "NodeInfo", victim: Pod, preemptor: Pod) -> bool:
        """Only strictly lower-priority pods may be victims (and ``is_eligible_pod`` must agree)."""
        return victim.effective_priority < preemptor.effective_priority and \
            self.is_eligible_pod(node_info, victim, preemptor)

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        """May ``pod`` preempt? Not with ``preemptionPolicy: Never``, nor while a victim of its
        earlier preemption is still terminating on its nominated node (unless that node is now
        UnschedulableAndUnresolvable for it)."""
        if pod.preemption_policy == "Never":
            return False, ERR_NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code is Code.UnschedulableAndUnresolvable:
                return True, ""
            node_info = self.handle.snapshot.get(nominated)
            if node_info is not None:
                for p in node_info.pods:
                    if self.is_preemption_allowed(node_info, p, pod) and pod_terminating_by_preemption(p):
                        return False, ERR_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def victim_selector(self, state: "CycleState", pod: Pod, pdbs: list["PodDisruptionBudget"],
                        statuses: "NodeToStatus | None" = None
                        ) -> "Callable[[NodeInfo], tuple[list[Pod], int, Status]] | None":
        """``select(node_info)``, giving what :meth:`select_victims_on_node` gives on copies of
        ``state`` and ``node_info`` without making them, for this preemption attempt; None when
        it cannot (the customisation points are not the defaults, or this cycle's Filter plugins
        other than NodeResourcesFit may depend on the pods on a node: see
        :mod:`kschedfw.plugins.resource_victims`). ``statuses``: Filter's verdicts.
        The victims list it returns may be shared: copy it before changing it."""
        if not self.resource_victim_selection or not self.handle.fast_paths \
                or self.is_eligible_pod is not _every_pod_is_eligible \
                or self.more_important_pod != self._more_important_pod \
                or type(self).select_victims_on_node is not DefaultPreemption.select_victims_on_node:
            return None
        handle = self.handle

        def plain(node_info: "NodeInfo") -> tuple[list[Pod], int, Status]:
            return self.select_victims_on_node(state.clone(), pod, node_info.clone(), pdbs)

        return ResourceVictimSelector.build(
            handle, state, pod, statuses=statuses, pdbs=pdbs, sort=self._sort_by_importance,
            plain=plain, memos=self._victim_memo, num_nodes=len(handle.snapshot))

    def select_victims_on_node(self, state: "CycleState", pod: Pod, node_info: "NodeInfo",
                               pdbs: list["PodDisruptionBudget"]) -> tuple[list[Pod], int, Status]:
        """The fewest pods to evict from ``node_info`` so that ``pod`` fits (``state`` and
        ``node_info`` are copies and are changed).

        Remove every eligible victim; if the pod still does not fit, the node is no candidate.
        Otherwise add victims back, most important first and PDB-violating ones before the
        others, keeping each one that still lets the pod fit.
        """
        handle = self.handle

        def remove(victim: Pod) -> Status | None:
            if not node_info.remove_pod(victim):
                return Status.as_status(f"no corresponding pod {victim.name} in pods of node {node_info.name}")
            status = handle.run_pre_filter_extension_remove_pod(state, pod, victim, node_info)
            return status if status is not None and not status.is_success() else None

        def add(victim: Pod) -> Status | None:
            node_info.add_pod(victim)
            status = handle.run_pre_filter_extension_add_pod(state, pod, victim, node_info)
            return status if status is not None and not status.is_success() else None

        potential = [p for p in node_info.pods if self.is_preemption_allowed(node_info, p, pod)]
        for victim in potential:
            error = remove(victim)
            if error is not None:
                return [], 0, Status(Code.Error, error.reasons, error=error.error)
        if not potential:
            return [], 0, Status.unresolvable(ERR_NO_VICTIMS)
        # The pod must fit with every eligible victim gone; affinity to the victims themselves is
        # deliberately not considered.
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status
        potential = self._sort_by_importance(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []

        def reprieve(victim: Pod) -> tuple[bool, Status | None]:
            error = add(victim)
            if error is not None:
                return False, error
            result = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            fits = result is None or result.is_success()
            if not fits:
                error = remove(victim)
                if error is not None:
                    return False, error
                victims.append(victim)
            return fits, None

        num_violating = 0
        for victim in violating:
            fits, error = reprieve(victim)
            if error is not None:
                return [], 0, Status(Code.Error, error.reasons, error=error.error)
            if not fits:
                num_violating += 1
        for victim in non_violating:
            _, error = reprieve(victim)
            if error is not None:
                return [], 0, Status(Code.Error, error.reasons, error=error.error)
        if violating and non_violating:
            victims = self._sort_by_importance(victims)
        return victims, num_violating, Status.success()
