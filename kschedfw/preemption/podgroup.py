"""Workload-aware preemption: room for a whole pod group (upstream ``podgrouppreemption.go``).

When a pod group's cycle finds the group unschedulable, the preemptor is the group (its
PodGroup's priority, its unscheduled pods) and the domain is the whole cluster. Victims are
units: a pod, or every pod of a PodGroup with ``disruptionMode: PodGroup`` (evicted together,
with the group's priority). Every unit of lower priority than the preemptor is taken out of the
snapshot's NodeInfos; if the group's algorithm (``scheduling_func``, rerun without post filters)
still fails, preemption cannot help. Otherwise units are put back one by one, PDB-violating ones
first and most important first, and each one the group still fits without stays. What is left
is evicted by the :class:`~kschedfw.preemption.executor.Executor` (asynchronously by default:
meanwhile DefaultPreemption's PreEnqueue holds the group's pods); the victims' events read
``Preempted by podgroup <PodGroup uid> on node cluster``.

The entry point of a pod-group cycle is :func:`run_workload_aware_preemption`, which backs the
snapshot up around the plugin's call and restores it, as upstream's cycle does.
"""

from __future__ import annotations

import datetime as _dt
import functools
import logging
from typing import TYPE_CHECKING, Callable, Sequence

import attrs

from kschedfw.api.workload_names import DISRUPTION_MODE_POD_GROUP, POD_GROUP_KIND
from kschedfw.fwk.status import Status
from kschedfw.fwk.victims import Victims
from kschedfw.preemption.executor import Executor, PodGroupPreemptor, pod_group_priority, pod_group_uid
from kschedfw.preemption.pdb import pod_violates_budget
from kschedfw.preemption.types import get_pod_start_time, now_datetime

if TYPE_CHECKING:
    from kschedfw.api.workload import PodGroup
    from kschedfw.api import Pod, PodDisruptionBudget
    from kschedfw.fwk.interface import Handle, ObjectLister, SharedLister
    from kschedfw.fwk.types import NodeInfo

__all__ = [
    "PodGroupSchedulingFunc", "PodGroupPostFilter", "PodGroupEvaluator", "Victim", "Domain",
    "new_domain_for_workload_preemption", "more_important_victim", "filter_victims_with_pdb_violation",
    "preemption_policy", "run_workload_aware_preemption", "backup_node_infos", "ERR_NO_VICTIMS", "ERR_NOT_ELIGIBLE_NEVER",
    "ERR_SCHEDULING_CONSTRAINTS", "ERR_NOT_REGISTERED", "DOMAIN_NAME",
]

log = logging.getLogger(__name__)

#: reruns the group's algorithm on the snapshot as preemption changed it, without post filters
PodGroupSchedulingFunc = Callable[[], "Status | None"]
#: a PodGroupPostFilter plugin's hook: ``(pod_group, pods, scheduling_func) -> Status | None``
PodGroupPostFilter = Callable[["PodGroup", "list[Pod]", PodGroupSchedulingFunc], "Status | None"]

ERR_NO_VICTIMS = "No preemption victims found for incoming preemptor"
ERR_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_SCHEDULING_CONSTRAINTS = "workload aware preemption is not supported for pod groups with scheduling constraints"
ERR_NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
#: the name of the one domain (logs only)
DOMAIN_NAME = "cluster-domain"


def run_workload_aware_preemption(post_filters: Sequence[PodGroupPostFilter], lister: "ObjectLister", namespace: str,
                                  name: str, pods: Sequence["Pod"], scheduling_func: PodGroupSchedulingFunc,
                                  snapshot: "SharedLister") -> Status:
    """What a pod-group cycle calls when its algorithm found the group ``namespace/name``
    Unschedulable and WorkloadAwarePreemption is on (upstream runWorkloadAwarePreemption): the
    profile's PodGroupPostFilter plugin (DefaultPreemption's) with the PodGroup, its unscheduled
    ``pods`` and ``scheduling_func`` rerunning the group's algorithm without post filters.

    Success: victims are being evicted; the group waits for them (its pods are held at
    PreEnqueue meanwhile). Unschedulable or UnschedulableAndUnresolvable: preemption does not
    help; the cycle appends the status to the group's. Error (the PodGroup is gone, or the
    plugin failed): the cycle reports it. Groups with a topology constraint are refused. The
    snapshot's NodeInfos are backed up before the plugin runs and restored after it."""
    if not post_filters:
        return Status.unschedulable(ERR_NOT_REGISTERED)
    pod_group = lister.get(POD_GROUP_KIND, name, namespace)
    if getattr(pod_group, "kind", None) != POD_GROUP_KIND:
        return Status.as_status(f'failed to get pod group object: podgroup.scheduling.k8s.io "{name}" not found')
    constraints = pod_group.scheduling_constraints
    if constraints is not None and constraints.topology:
        return Status.unschedulable(ERR_SCHEDULING_CONSTRAINTS)
    restore = backup_node_infos(snapshot.node_infos())
    try:
        status = post_filters[0](pod_group, list(pods), scheduling_func)
    finally:
        restore()
    return status if status is not None else Status.success()


def backup_node_infos(node_infos: Sequence["NodeInfo"]) -> Callable[[], None]:
    """Upstream BackupSnapshot for a snapshot whose NodeInfos are the cache's own: a copy of
    each, and the function that puts every one back as it was. Their generations move on, so
    nothing worked out from the changed NodeInfos is taken for the restored ones."""
    backups = [(node_info, node_info.clone()) for node_info in node_infos]

    def restore() -> None:
        for node_info, backup in backups:
            generation = max(node_info.generation, backup.generation) + 1
            for field in _NODE_INFO_STATE:
                setattr(node_info, field, getattr(backup, field))
            node_info.generation = generation
    return restore


#: what a NodeInfo's pods make of it (what preemption changes and the backup restores)
_NODE_INFO_STATE = ("pods", "pods_with_affinity", "pods_with_required_anti_affinity", "used_ports", "requested",
                    "non_zero_requested", "pvc_ref_counts")


def preemption_policy(pods: Sequence["Pod"]) -> str:
    """``Never`` if any pod of the group says so, else ``PreemptLowerPriority``."""
    return "Never" if any(p.preemption_policy == "Never" for p in pods) else "PreemptLowerPriority"


# --------------------------------------------------------------------------- victims

@attrs.define(eq=False)
class Victim:
    """A unit evicted as a whole: one pod, or the pods of a PodGroup in PodGroup disruption mode.
    ``priority`` is the pod's or the PodGroup's; ``earliest_start_time`` the earliest of its
    pods' start times (a pod that has not started counts as starting now)."""

    pods: list["Pod"]
    priority: int
    earliest_start_time: _dt.datetime | None = None

    @property
    def is_pod_group(self) -> bool:
        """Its pods belong to a pod group (whatever the group's disruption mode)."""
        return self.pods[0].scheduling_group is not None


def new_victim(pods: list["Pod"], priority: int, now: _dt.datetime) -> Victim:
    return Victim(pods, priority, min(get_pod_start_time(p, now) for p in pods))


def more_important_victim(v1: Victim, v2: Victim) -> bool:
    """Is ``v1`` kept before ``v2``? Higher priority first; at equal priority a pod group before a
    lone pod; two pods: the older one; two groups: the larger, then the older."""
    if v1.priority != v2.priority:
        return v1.priority > v2.priority
    if v1.is_pod_group != v2.is_pod_group:
        return v1.is_pod_group
    if v1.is_pod_group and len(v1.pods) != len(v2.pods):
        return len(v1.pods) > len(v2.pods)
    t1, t2 = v1.earliest_start_time, v2.earliest_start_time
    return t1 is not None and t2 is not None and t1 < t2


def _by_importance(victims: list[Victim]) -> list[Victim]:
    """Most important first (stable: equal units keep the order they were found in)."""
    def compare(a: Victim, b: Victim) -> int:
        return -1 if more_important_victim(a, b) else 1 if more_important_victim(b, a) else 0
    return sorted(victims, key=functools.cmp_to_key(compare))


@attrs.define(eq=False)
class Domain:
    """Where victims are looked for: the whole cluster for workload-aware preemption."""

    name: str
    nodes: list["NodeInfo"]
    victims: list[Victim]


def new_domain_for_workload_preemption(nodes: Sequence["NodeInfo"], pod_group_of: Callable[["Pod"], PodGroup | None],
                                       name: str, now: _dt.datetime) -> Domain:
    """Every pod on ``nodes`` as a victim, those of one PodGroup with ``disruptionMode: PodGroup``
    (``pod_group_of`` finds a pod's) together as one, in the order they are found."""
    units: dict[str, tuple[list["Pod"], int]] = {}
    for node_info in nodes:
        for pod in node_info.pods:
            group = pod_group_of(pod) if pod.scheduling_group is not None else None
            if group is None or group.disruption_mode != DISRUPTION_MODE_POD_GROUP:
                units[f"pod/{pod.uid}"] = ([pod], pod.effective_priority)
                continue
            key = f"podgroup/{pod_group_uid(group)}"
            if key in units:
                units[key][0].append(pod)
            else:
                units[key] = ([pod], pod_group_priority(group))
    return Domain(name, list(nodes), [new_victim(pods, priority, now) for pods, priority in units.values()])


def filter_victims_with_pdb_violation(victims: Sequence[Victim], pdbs: Sequence["PodDisruptionBudget"]
                                      ) -> tuple[list[Victim], list[Victim]]:
    """Split ``victims`` (order kept) into those that would break a PDB and the others. A unit
    breaks one when any of its pods does; the budgets are consumed across the units in order,
    up to the first pod of a unit that breaks one."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[Victim] = []
    non_violating: list[Victim] = []
    for victim in victims:
        broken = any(pod_violates_budget(pod, pdbs, allowed) for pod in victim.pods)
        (violating if broken else non_violating).append(victim)
    return violating, non_violating


# --------------------------------------------------------------------------- the evaluator

class PodGroupEvaluator:
    """Workload-aware preemption with a Handle's snapshot, listers and an :class:`Executor`."""

    def __init__(self, handle: "Handle", executor: Executor, plugin_name: str) -> None:
        self.handle = handle
        self.executor = executor
        self.plugin_name = plugin_name

    def _pod_group_of(self, pod: "Pod") -> PodGroup | None:
        group = pod.scheduling_group
        if group is None or group.pod_group_name is None:
            return None
        found = self.handle.lister.get(POD_GROUP_KIND, group.pod_group_name, pod.namespace)
        return found if getattr(found, "kind", None) == POD_GROUP_KIND else None  # (a typed PodGroup)

    def preempt(self, pod_group: PodGroup, pods: Sequence["Pod"], scheduling_func: PodGroupSchedulingFunc) -> Status:
        """Choose victims so that ``pods`` of ``pod_group`` fit, and evict them; see the module
        docstring. ``scheduling_func`` reads the Handle's snapshot, which this changes (the
        chosen victims are left out of its NodeInfos): the caller backs it up and restores it
        (:func:`run_workload_aware_preemption`)."""
        now = now_datetime(self.handle)
        domain = new_domain_for_workload_preemption(list(self.handle.snapshot.node_infos()), self._pod_group_of,
                                                    DOMAIN_NAME, now)
        preemptor = PodGroupPreemptor(pod_group, tuple(pods))
        pdbs = list(self.handle.lister.list("PodDisruptionBudget"))
        victims, status = self.select_victims_on_domain(preemptor, domain, pdbs, scheduling_func)
        if victims is None:
            return status
        metrics = self.handle.metrics
        if metrics is not None:
            metrics.preemption_victims_chosen(len(victims.pods))
        result = self.executor.actuate_pod_group_preemption(victims, pods, pod_group, self.plugin_name)
        return result if result is not None else Status.success()

    def select_victims_on_domain(self, preemptor: PodGroupPreemptor, domain: Domain,
                                 pdbs: Sequence["PodDisruptionBudget"], scheduling_func: PodGroupSchedulingFunc
                                 ) -> tuple[Victims | None, Status]:
        """The units to evict (their pods, most important unit first), or None and why not.
        Leaves the chosen victims out of the domain's NodeInfos (each change moves the
        NodeInfo's generation on, as the cache does)."""
        if preemption_policy(preemptor.members) == "Never":
            log.debug("preemptor %s is not eligible for preemption: %s", preemptor.key, ERR_NOT_ELIGIBLE_NEVER)
            return None, Status.unschedulable(ERR_NOT_ELIGIBLE_NEVER)
        by_name = {ni.name: ni for ni in domain.nodes}

        def remove(victim: Victim) -> None:
            # no PreFilter extensions: the group's algorithm runs PreFilter itself
            for pod in victim.pods:
                node_info = by_name[pod.node_name]
                if not node_info.remove_pod(pod):
                    raise LookupError(f"no corresponding pod {pod.name} in pods of node {node_info.name}")
                node_info.generation += 1

        def add(victim: Victim) -> None:
            for pod in victim.pods:
                node_info = by_name[pod.node_name]
                node_info.add_pod(pod)
                node_info.generation += 1

        priority = preemptor.priority
        potential = [v for v in domain.victims if v.priority < priority]
        if not potential:
            return None, Status.unresolvable(ERR_NO_VICTIMS)
        try:
            for victim in potential:
                remove(victim)
            status = scheduling_func()
            if status is not None and not status.is_success():
                return None, status
            potential = _by_importance(potential)
            violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)
            chosen: list[Victim] = []
            for victim in violating + non_violating:
                add(victim)
                result = scheduling_func()
                if result is None or result.is_success():
                    continue  # reprieved
                remove(victim)
                log.debug("pods %s are potential preemption victims on domain %s",
                          ",".join(p.name for p in victim.pods), domain.name)
                chosen.append(victim)
        except LookupError as exc:
            return None, Status.as_status(str(exc))
        chosen = _by_importance(chosen)
        return Victims([pod for victim in chosen for pod in victim.pods]), Status.success()
