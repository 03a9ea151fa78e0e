"""CapacityScheduling: elastic quotas per namespace, with quota-aware preemption.

Port of scheduler-plugins ``pkg/capacityscheduling``. An ElasticQuota
(``scheduling.x-k8s.io/v1alpha1``, one per namespace) gives the namespace a guaranteed ``min`` and
a ceiling ``max``. A namespace may borrow beyond its min what other namespaces leave unused, but:

* PreFilter refuses a pod whose namespace would go over its ``max`` (counting nominated pods of
  the namespace with at least the pod's priority), and a pod that would take the quotas' total use
  over the sum of all ``min``\\ s;
* PostFilter preempts: a namespace at or over its min (with the pod) may only evict its own
  lower-priority pods; a namespace below its min reclaims what others borrowed, evicting pods (of
  any priority) from namespaces that use more than their min. Pods in namespaces without a quota
  may only evict lower-priority pods of such namespaces.

Use is tracked from cluster events as upstream's informers do: pods count once they are assigned
to a node (or reserved by this plugin) until they are deleted or finish.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Mapping

from kschedfw import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, Status,
                      hookimpl)
from kschedfw.fwk.status import Code
from kschedfw.preemption import (Candidate, Evaluator, Executor, Victims, filter_pods_with_pdb_violation,
                                         more_important_pod, now_datetime, sort_by_importance)

from kschedfw_capacityscheduling.elasticquota import (ElasticQuotaInfo, ElasticQuotaInfos, MissingUID, Resource,
                                                      compute_pod_resource_request)

if TYPE_CHECKING:
    from kschedfw import CycleState, NodeInfo, NodeToStatus, PostFilterResult, PreFilterResult
    from kschedfw.api import Pod, PodDisruptionBudget
    from kschedfw.fwk.interface import Handle, WatchEvent

log = logging.getLogger(__name__)

NAME = "CapacityScheduling"
ELASTIC_QUOTA_KIND = "ElasticQuota"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ELASTIC_QUOTA_SNAPSHOT_KEY = "ElasticQuotaSnapshot"

ERR_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_NOT_ELIGIBLE_STATE = "not eligible due to failed to read from cycleState"
ERR_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

ARGS_SCHEMA: dict[str, Any] = {
    "$comment": "CapacityScheduling takes no args",
    "type": "object",
    "properties": {},
    "additionalProperties": False,
    "default": {},
}


def validate_args(args: Mapping[str, Any]) -> list:
    """CapacityScheduling has no args (upstream has no args type for it)."""
    return []


class PreFilterState:
    """What PreFilter computed for PostFilter and Reserve (upstream ``PreFilterState``)."""

    __slots__ = ("pod_req", "nominated_pods_req_in_eq_with_pod_req", "nominated_pods_req_with_pod_req")

    def __init__(self, pod_req: Resource, in_eq: Resource | None = None, total: Resource | None = None) -> None:
        self.pod_req = pod_req
        #: the pod plus nominated pods of its namespace with at least its priority
        self.nominated_pods_req_in_eq_with_pod_req = in_eq if in_eq is not None else Resource()
        #: the above plus nominated pods of other quota namespaces that use no more than their min
        self.nominated_pods_req_with_pod_req = total if total is not None else Resource()

    def clone(self) -> "PreFilterState":
        return self  # never changed after PreFilter, as upstream


class ElasticQuotaSnapshotState:
    """A copy of the quotas for one scheduling cycle; preemption dry runs change their clones."""

    __slots__ = ("elastic_quota_infos",)

    def __init__(self, infos: ElasticQuotaInfos) -> None:
        self.elastic_quota_infos = infos

    def clone(self) -> "ElasticQuotaSnapshotState":
        return ElasticQuotaSnapshotState(self.elastic_quota_infos.clone())


class CapacityScheduling:
    """PreFilter (+AddPod/RemovePod), PostFilter, Reserve/Unreserve: elastic quotas per namespace."""

    name = NAME
    args_schema = ARGS_SCHEMA
    validate_args = staticmethod(validate_args)

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        if args:
            raise ValueError(f"{NAME} takes no args, got {sorted(args)}")
        self.handle: Handle = handle
        self.elastic_quota_infos = ElasticQuotaInfos()
        self.executor = Executor(self.handle, async_preemption=False)
        # Informers: start from what the cluster holds, then follow its changes.
        for eq in self.handle.lister.list(ELASTIC_QUOTA_KIND):
            self.add_elastic_quota(eq)
        for pod in self.handle.lister.list("Pod"):
            if pod.node_name:
                self.add_pod(pod)
        self.handle.subscribe(ELASTIC_QUOTA_KIND, self._on_elastic_quota_event)
        self.handle.subscribe("Pod", self._on_pod_event)

    # ================================================================== informer side
    def _on_elastic_quota_event(self, event: "WatchEvent") -> None:
        if event.type == "ADDED":
            self.add_elastic_quota(event.new)
        elif event.type == "MODIFIED":
            self.update_elastic_quota(event.old, event.new)
        elif event.type == "DELETED":
            self.delete_elastic_quota(event.old)

    def _on_pod_event(self, event: "WatchEvent") -> None:
        """A filtering handler that passes assigned pods only."""
        old, new = event.old, event.new
        old_assigned = old is not None and bool(old.node_name)
        new_assigned = new is not None and bool(new.node_name)
        if event.type == "ADDED":
            if new_assigned:
                self.add_pod(new)
        elif event.type == "MODIFIED":
            if new_assigned and not old_assigned:
                self.add_pod(new)
            elif new_assigned and old_assigned:
                self.update_pod(old, new)
            elif old_assigned:
                self.delete_pod(old)
        elif event.type == "DELETED" and old_assigned:
            self.delete_pod(old)

    @staticmethod
    def _info_for(eq: Any) -> ElasticQuotaInfo | None:
        try:
            return ElasticQuotaInfo.from_object(eq)
        except (ValueError, TypeError) as exc:
            log.warning("ignoring ElasticQuota %s/%s: %s", eq.namespace, eq.name, exc)
            return None

    def add_elastic_quota(self, eq: Any) -> None:
        if eq.namespace in self.elastic_quota_infos:
            return  # one ElasticQuota per namespace: the first one counts
        info = self._info_for(eq)
        if info is not None:
            self.elastic_quota_infos[eq.namespace] = info

    def update_elastic_quota(self, old: Any, new: Any) -> None:
        info = self._info_for(new)
        if info is None:
            return
        previous = self.elastic_quota_infos.get(old.namespace)
        if previous is not None:
            info.pods = previous.pods
            info.used = previous.used
        self.elastic_quota_infos[new.namespace] = info

    def delete_elastic_quota(self, eq: Any) -> None:
        self.elastic_quota_infos.pop(eq.namespace, None)

    def add_pod(self, pod: "Pod") -> None:
        info = self.elastic_quota_infos.get(pod.namespace)
        if info is None:
            quotas = self.handle.lister.list(ELASTIC_QUOTA_KIND, pod.namespace)
            if not quotas:
                return
            info = self._info_for(quotas[0])
            if info is None:
                return
            self.elastic_quota_infos[pod.namespace] = info
        try:
            info.add_pod_if_not_present(pod)
        except MissingUID as exc:
            log.error("Failed to add Pod %s to its associated elasticQuota: %s", pod.key, exc)

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        if old.phase in ("Succeeded", "Failed"):
            return
        if new.phase not in ("Running", "Pending"):
            info = self.elastic_quota_infos.get(new.namespace)
            if info is not None:
                try:
                    info.delete_pod_if_present(new)
                except MissingUID as exc:
                    log.error("Failed to delete Pod %s from its associated elasticQuota: %s", new.key, exc)

    def delete_pod(self, pod: "Pod") -> None:
        info = self.elastic_quota_infos.get(pod.namespace)
        if info is not None:
            try:
                info.delete_pod_if_present(pod)
            except MissingUID as exc:
                log.error("Failed to delete Pod %s from its associated elasticQuota: %s", pod.key, exc)

    def snapshot_elastic_quota(self) -> ElasticQuotaSnapshotState:
        return ElasticQuotaSnapshotState(self.elastic_quota_infos.clone())

    # ================================================================== queueing
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(ELASTIC_QUOTA_KIND, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(ELASTIC_QUOTA_KIND, ActionType.Update),
                                 self.is_schedulable_after_elastic_quota_updated),
            ClusterEventWithHint(ClusterEvent(ELASTIC_QUOTA_KIND, ActionType.Delete)),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]

    def _has_quota(self, namespace: str) -> bool:
        if namespace in self.elastic_quota_infos:
            return True
        return bool(self.handle.lister.list(ELASTIC_QUOTA_KIND, namespace))

    def is_schedulable_after_pod_deleted(self, pod: "Pod", old: Any, new: Any) -> QueueingHint:
        """A deleted pod frees quota only if its namespace has one (it counted while assigned, and
        as a nominated pod while pending)."""
        if old is None or not self._has_quota(old.namespace):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_elastic_quota_updated(self, pod: "Pod", old: Any, new: Any) -> QueueingHint:
        """Queue when the update raised a max of the pod's namespace or any min (the sum of
        minimums bounds what all namespaces may use)."""
        if old is None or new is None:
            return QueueingHint.Queue
        if old.spec == new.spec:
            return QueueingHint.QueueSkip
        try:
            before, after = ElasticQuotaInfo.from_object(old), ElasticQuotaInfo.from_object(new)
        except (ValueError, TypeError):
            return QueueingHint.Queue
        if _grew(before.min, after.min):
            return QueueingHint.Queue
        if new.namespace == pod.namespace and _grew(before.max, after.max):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # ================================================================== scheduling cycle
    @hookimpl
    def pre_filter(self, state: "CycleState", pod: "Pod", nodes: list["NodeInfo"]
                   ) -> "tuple[PreFilterResult | None, Status | None]":
        snapshot = self.snapshot_elastic_quota()
        pod_req = compute_pod_resource_request(pod)
        state.write(ELASTIC_QUOTA_SNAPSHOT_KEY, snapshot)
        infos = snapshot.elastic_quota_infos
        eq = infos.get(pod.namespace)
        if eq is None:
            state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_req))
            return None, None
        in_eq = Resource()
        total = Resource()
        priority = pod.effective_priority
        for node_info in self.handle.snapshot.node_infos():
            for p in self.handle.nominated_pods_for_node(node_info.name):
                if p.uid == pod.uid:
                    continue
                info = self.elastic_quota_infos.get(p.namespace)
                if info is None:
                    continue
                request = compute_pod_resource_request(p)
                if p.namespace == pod.namespace and p.effective_priority >= priority:
                    in_eq.add_resource(request)
                    total.add_resource(request)
                elif p.namespace != pod.namespace and not info.used_over_min():
                    total.add_resource(request)
        in_eq.add_resource(pod_req)
        total.add_resource(pod_req)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_req, in_eq, total))
        if eq.used_over_max_with(in_eq):
            return None, Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota {eq.namespace} is "
                "more than Max")
        if infos.aggregated_used_over_min_with(total):
            return None, Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota used is more "
                "than min")
        return None, None

    @hookimpl
    def pre_filter_add_pod(self, state: "CycleState", pod_to_schedule: "Pod", pod_to_add: "Pod",
                           node_info: "NodeInfo") -> Status | None:
        return self._update_quota_snapshot(state, pod_to_add, add=True)

    @hookimpl
    def pre_filter_remove_pod(self, state: "CycleState", pod_to_schedule: "Pod", pod_to_remove: "Pod",
                              node_info: "NodeInfo") -> Status | None:
        return self._update_quota_snapshot(state, pod_to_remove, add=False)

    def _update_quota_snapshot(self, state: "CycleState", pod: "Pod", *, add: bool) -> Status | None:
        """Count ``pod`` in (or out of) its namespace's quota in this cycle's snapshot."""
        snapshot = state.get(ELASTIC_QUOTA_SNAPSHOT_KEY)
        if not isinstance(snapshot, ElasticQuotaSnapshotState):
            return Status.as_status(f'error reading "{ELASTIC_QUOTA_SNAPSHOT_KEY}" from cycleState: not found')
        info = snapshot.elastic_quota_infos.get(pod.namespace)
        if info is not None:
            try:
                if add:
                    info.add_pod_if_not_present(pod)
                else:
                    info.delete_pod_if_present(pod)
            except MissingUID as exc:
                verb = "add Pod %s to" if add else "delete Pod %s from"
                log.error(f"Failed to {verb} its associated elasticQuota: %s", pod.key, exc)
        return None

    @hookimpl
    def post_filter(self, state: "CycleState", pod: "Pod", filtered_node_status_map: "NodeToStatus"
                    ) -> "tuple[PostFilterResult | None, Status]":
        evaluator = Evaluator(NAME, self.handle, Preemptor(self.handle, state), self.executor)
        return evaluator.preempt(state, pod, filtered_node_status_map)

    @hookimpl
    def reserve(self, state: "CycleState", pod: "Pod", node_name: str) -> Status | None:
        info = self.elastic_quota_infos.get(pod.namespace)
        if info is not None:
            try:
                info.add_pod_if_not_present(pod)
            except MissingUID as exc:
                return Status.as_status(str(exc))
        return None

    @hookimpl
    def unreserve(self, state: "CycleState", pod: "Pod", node_name: str) -> None:
        info = self.elastic_quota_infos.get(pod.namespace)
        if info is not None:
            try:
                info.delete_pod_if_present(pod)
            except MissingUID as exc:
                log.error("Failed to delete Pod %s from its associated elasticQuota: %s", pod.key, exc)


def _grew(before: Resource | None, after: Resource | None) -> bool:
    """Did any amount go up? (A removed extended resource counts too: for a max it means unlimited.)"""
    if before is None or after is None:
        return before is not after
    if (after.milli_cpu > before.milli_cpu or after.memory > before.memory
            or after.ephemeral_storage > before.ephemeral_storage
            or after.allowed_pod_number > before.allowed_pod_number):
        return True
    return any(amount > before.scalar_resources.get(name, 0) for name, amount in after.scalar_resources.items()) \
        or any(name not in after.scalar_resources for name in before.scalar_resources)


# ====================================================================== preemption

class Preemptor:
    """The preemption policy of CapacityScheduling, for kschedfw's preemption Evaluator
    (upstream ``preemptor``): every node is a candidate (offset 0), default node choice."""

    def __init__(self, handle: Handle, state: "CycleState") -> None:
        self.handle = handle
        self.state = state

    def _more_important(self) -> Callable[["Pod", "Pod"], bool]:
        now = now_datetime(self.handle)
        return lambda a, b: more_important_pod(a, b, now)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes

    def candidates_to_victims_map(self, candidates: list[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> None:
        return None

    def pod_eligible_to_preempt_others(self, pod: "Pod", nominated_node_status: Status | None) -> tuple[bool, str]:
        """Not with ``preemptionPolicy: Never``; not while a pod this preemption may target is
        still terminating on the pod's nominated node."""
        if pod.preemption_policy == "Never":
            return False, ERR_NOT_ELIGIBLE_NEVER
        pre = self.state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, PreFilterState):
            return False, ERR_NOT_ELIGIBLE_STATE
        nominated = pod.nominated_node_name
        if not nominated:
            return True, ""
        if nominated_node_status is not None and nominated_node_status.code is Code.UnschedulableAndUnresolvable:
            return True, ""
        snapshot = self.state.get(ELASTIC_QUOTA_SNAPSHOT_KEY)
        if not isinstance(snapshot, ElasticQuotaSnapshotState):
            return True, ""
        node_info = self.handle.snapshot.get(nominated)
        if node_info is None:
            return True, ""
        infos = snapshot.elastic_quota_infos
        priority = pod.effective_priority
        preemptor_info = infos.get(pod.namespace)
        if preemptor_info is not None:
            more_than_min = preemptor_info.used_over_min_with(pre.nominated_pods_req_in_eq_with_pod_req)
            for p in node_info.pods:
                if p.deletion_timestamp is None:
                    continue
                info = infos.get(p.namespace)
                if info is None:
                    continue
                if p.namespace == pod.namespace and p.effective_priority < priority:
                    return False, ERR_NOT_ELIGIBLE_TERMINATING
                if p.namespace != pod.namespace and not more_than_min and info.used_over_min():
                    return False, ERR_NOT_ELIGIBLE_TERMINATING
        else:
            for p in node_info.pods:
                if p.namespace in infos:
                    continue
                if p.deletion_timestamp is not None and p.effective_priority < priority:
                    return False, ERR_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo",
                               pdbs: list["PodDisruptionBudget"]) -> tuple[list["Pod"], int, Status]:
        """The pods to evict from ``node_info`` (a copy, as ``state``) so that ``pod`` fits, by the
        quota rules in the module docstring; then as many as possible are reprieved."""
        snapshot = state.get(ELASTIC_QUOTA_SNAPSHOT_KEY)
        if not isinstance(snapshot, ElasticQuotaSnapshotState):
            return [], 0, Status.unschedulable("Failed to read elasticQuotaSnapshot from cycleState")
        pre = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(pre, PreFilterState):
            return [], 0, Status.unschedulable("Failed to read preFilterState from cycleState")
        handle = self.handle
        more_important = self._more_important()

        def remove(victim: "Pod") -> Status | None:
            if not node_info.remove_pod(victim):
                return Status.as_status(f"no corresponding pod {victim.name} in pods of node {node_info.name}")
            status = handle.run_pre_filter_extension_remove_pod(state, pod, victim, node_info)
            return status if status is not None and not status.is_success() else None

        def add(victim: "Pod") -> Status | None:
            node_info.add_pod(victim)
            status = handle.run_pre_filter_extension_add_pod(state, pod, victim, node_info)
            return status if status is not None and not status.is_success() else None

        infos = snapshot.elastic_quota_infos
        priority = pod.effective_priority
        preemptor_info = infos.get(pod.namespace)
        # least important first
        pods = list(reversed(sort_by_importance(list(node_info.pods), more_important)))
        potential: list["Pod"] = []
        in_eq = pre.nominated_pods_req_in_eq_with_pod_req
        total = pre.nominated_pods_req_with_pod_req
        if preemptor_info is not None:
            more_than_min = preemptor_info.used_over_min_with(in_eq)
            for p in pods:
                info = infos.get(p.namespace)
                if info is None:
                    continue
                if more_than_min:
                    # Its guaranteed share is not borrowed: only its own lower-priority pods.
                    chosen = p.namespace == pod.namespace and p.effective_priority < priority
                else:
                    # Below its min: reclaim from namespaces that use more than theirs.
                    chosen = p.namespace != pod.namespace and info.used_over_min()
                if chosen:
                    potential.append(p)
                    error = remove(p)
                    if error is not None:
                        return [], 0, _as_error(error)
        else:
            for p in pods:
                if p.namespace in infos:
                    continue
                if p.effective_priority < priority:
                    potential.append(p)
                    error = remove(p)
                    if error is not None:
                        return [], 0, _as_error(error)
        if not potential:
            return [], 0, Status.unresolvable(
                f"No victims found on node {node_info.name} for preemptor pod {pod.name}")
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status
        if preemptor_info is not None and (preemptor_info.used_over_max_with(pre.pod_req)
                                           or infos.aggregated_used_over_min_with(pre.pod_req)):
            return [], 0, Status.unschedulable("global quota max exceeded")

        victims: list["Pod"] = []
        potential = sort_by_importance(potential, more_important)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)

        def reprieve(p: "Pod") -> tuple[bool, Status | None]:
            error = add(p)
            if error is not None:
                return False, error
            result = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            fits = result is None or result.is_success()
            if not fits:
                error = remove(p)
                if error is not None:
                    return False, error
                victims.append(p)
            if preemptor_info is not None and (preemptor_info.used_over_max_with(in_eq)
                                               or infos.aggregated_used_over_min_with(total)):
                error = remove(p)
                if error is not None:
                    return False, error
                victims.append(p)
            return fits, None

        num_violating = 0
        for p in violating:
            fits, error = reprieve(p)
            if error is not None:
                log.error("Failed to reprieve pod %s: %s", p.key, error.message())
                return [], 0, _as_error(error)
            if not fits:
                num_violating += 1
        for p in non_violating:
            _, error = reprieve(p)
            if error is not None:
                log.error("Failed to reprieve pod %s: %s", p.key, error.message())
                return [], 0, _as_error(error)
        if violating and non_violating:
            victims = sort_by_importance(victims, more_important)
        return victims, num_violating, Status.success()


def _as_error(status: Status) -> Status:
    return Status(Code.Error, status.reasons, error=status.error)
