"""Coscheduling: all-or-nothing (gang) scheduling of the pods of a PodGroup.

A Python port of the Coscheduling plugin of kubernetes-sigs/scheduler-plugins. Pods join a group
with the label ``scheduling.x-k8s.io/pod-group: <name>``; the group is a ``PodGroup``
(``scheduling.x-k8s.io/v1alpha1``) in the same namespace whose ``spec.minMember`` members must all
get a node before any of them is bound.

- **QueueSort** (``less``): higher priority first; then the group's creation time (or the time it
  last failed), or for pods outside any group their first attempt; then the group key; so members
  of a group leave the queue together and a failed group gives way to others.
- **PreFilter**: rejects a member while its group is backing off, has fewer than ``minMember``
  pods (counting gated ones as missing), or needs more ``minResources`` than the whole cluster
  has free. A pod naming a PodGroup that does not exist passes here and is rejected at Permit.
- **PostFilter**: when a member fits nowhere and too many members are still unassigned, rejects
  every waiting member of the group so its reservations are freed together.
- **Permit**: holds members (Wait) until ``minMember`` are assumed or bound, then allows them all;
  the wait is the PodGroup's ``scheduleTimeoutSeconds``, else ``permitWaitingTimeSeconds``.
- **Reserve/Unreserve**: when one member gives up its reservation, all waiting members do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource,
                      QueueingHint, Status, hookimpl)
from kschedfw.api.field import INVALID, FieldError

from kschedfw_coscheduling.core import (POD_GROUP_KIND, POD_GROUP_LABEL, PermitStatus,
                                        PodGroupManager, pod_group_full_name, pod_group_label,
                                        wait_time_seconds)

if TYPE_CHECKING:
    from kschedfw import Handle

NAME = "Coscheduling"

#: A node added, or changed in a way that can let pods onto it (as NodeResourcesFit registers).
_NODE_CHANGES_THAT_MAY_HELP = (ActionType.Add | ActionType.UpdateNodeAllocatable | ActionType.UpdateNodeLabel
                               | ActionType.UpdateNodeTaint)
_INT64 = {"type": "integer", "minimum": -(2 ** 63), "maximum": 2 ** 63 - 1}
_INT32 = {"type": "integer", "minimum": -(2 ** 31), "maximum": 2 ** 31 - 1}


class Coscheduling:
    """Gang scheduling for PodGroups (``scheduling.x-k8s.io/v1alpha1``)."""

    name = NAME
    args_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "CoschedulingArgs",
        "description": "Arguments of Coscheduling.",
        "type": "object",
        "properties": {
            "permitWaitingTimeSeconds": {
                **_INT64, "default": 60,
                "description": "How long members wait at Permit for the rest of their group "
                               "(a PodGroup's spec.scheduleTimeoutSeconds takes precedence)."},
            "podGroupBackoffSeconds": {
                **_INT64, "default": 0,
                "description": "How long a group that failed is kept out of scheduling; 0: no backoff."},
            "podGroupRejectPercentage": {
                **_INT32, "default": 10,
                "description": "PostFilter rejects the whole group only when more than this percentage "
                               "of minMember is still unassigned (0: always, 100: never)."},
        },
        "additionalProperties": False,
    }

    @staticmethod
    def validate_args(args: dict) -> list[FieldError]:
        """Upstream ValidateCoschedulingArgs (paths relative to ``args``)."""
        errors = []
        for field in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
            value = args.get(field, 0)
            if isinstance(value, int) and value < 0:
                errors.append(FieldError((field,), INVALID, "must be greater than 0", value))
        percentage = args.get("podGroupRejectPercentage", 10)
        if isinstance(percentage, int) and not 0 <= percentage <= 100:
            errors.append(FieldError(("podGroupRejectPercentage",), INVALID, "must be between 0 and 100",
                                     percentage))
        return errors

    def __init__(self, args: dict | None, handle: Handle) -> None:
        args = {**_defaults(), **(args or {})}
        errors = self.validate_args(args)
        if errors:
            raise ValueError("; ".join(str(e) for e in errors))
        self.handle = handle
        self.schedule_timeout = float(args["permitWaitingTimeSeconds"])
        backoff = float(args["podGroupBackoffSeconds"])
        self.pg_backoff = backoff if backoff > 0 else None
        self.pg_reject_threshold = float(args["podGroupRejectPercentage"]) / 100.0
        self.pg_mgr = PodGroupManager(handle, self.schedule_timeout)
        self._rejecting: set[str] = set()

    # ------------------------------------------------------------------ queue
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Events that can make a rejected member schedulable.

        As upstream: a new pod (a missing member may have arrived) and a PodGroup added or updated
        (custom resources are named by their kind). kschedfw adds new room (a node added, grown,
        relabelled or untainted; an assigned pod of someone else deleted) so a gang parked after a
        group-wide rejection is retried when room appears, not only by the periodic flush. Every
        hint looks at the rejected pod's own group, so other events leave the gang in the
        unschedulable pool.
        """
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add), self._is_sibling_added),
            ClusterEventWithHint(ClusterEvent(POD_GROUP_KIND, ActionType.Add | ActionType.Update),
                                 self._is_own_pod_group),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, _NODE_CHANGES_THAT_MAY_HELP), self._may_fit_now),
            ClusterEventWithHint(ClusterEvent(EventResource.AssignedPod, ActionType.Delete), self._may_fit_now),
        ]

    def _is_sibling_added(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        group = pod_group_label(pod)
        if (group and new_obj is not None and getattr(new_obj, "namespace", None) == pod.namespace
                and getattr(new_obj, "labels", {}).get(POD_GROUP_LABEL) == group):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def _is_own_pod_group(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        obj = new_obj if new_obj is not None else old_obj
        if (obj is not None and getattr(obj, "name", None) == pod_group_label(pod)
                and getattr(obj, "namespace", None) == pod.namespace):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def _may_fit_now(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Capacity appeared: worth a retry for a group that has enough members to make quorum."""
        full, pg = self.pg_mgr.get_pod_group(pod)
        if pg is None:
            return QueueingHint.QueueSkip
        deleted = old_obj if new_obj is None else None
        if deleted is not None and getattr(deleted, "labels", None) is not None \
                and pod_group_full_name(deleted) == full:
            return QueueingHint.QueueSkip  # the group's own members giving up their places
        if len(self.pg_mgr.group_pods(pod.namespace, pg.name)) < pg.min_member:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    @hookimpl
    def less(self, pod_info_a: Any, pod_info_b: Any) -> bool:
        """Priority, then group creation (or last failure) time, then group key, then pod key."""
        pod_a, pod_b = pod_info_a.pod, pod_info_b.pod
        prio_a, prio_b = pod_a.effective_priority, pod_b.effective_priority
        if prio_a != prio_b:
            return prio_a > prio_b
        time_a = self.pg_mgr.get_creation_timestamp(pod_a, _initial_attempt(pod_info_a))
        time_b = self.pg_mgr.get_creation_timestamp(pod_b, _initial_attempt(pod_info_b))
        if time_a == time_b:
            return _sort_key(pod_a) < _sort_key(pod_b)
        return time_a < time_b

    # ------------------------------------------------------------------ scheduling cycle
    @hookimpl
    def pre_filter(self, state: Any, pod: Any, nodes: Any) -> Any:
        """UnschedulableAndUnresolvable (no preemption attempt) when the group cannot go now."""
        reason = self.pg_mgr.pre_filter(pod, nodes)
        if reason is not None:
            return None, Status(Code.UnschedulableAndUnresolvable, (reason,))
        return None, None

    @hookimpl
    def post_filter(self, state: Any, pod: Any, filtered_node_status_map: Any) -> Any:
        """A member fits nowhere: give up the group's reservations unless it is nearly complete."""
        full, pg = self.pg_mgr.get_pod_group(pod)
        if pg is None:
            return None, Status.unschedulable("can not find pod group")
        assigned = self.pg_mgr.assigned_count(full)
        if assigned >= pg.min_member:
            return None, Status(Code.Unschedulable)  # enough members already: keep them
        not_assigned = (pg.min_member - assigned) / pg.min_member
        if not_assigned <= self.pg_reject_threshold:
            return None, Status(Code.Unschedulable)  # a small gap: later members may still close it
        # If this member failed, the others very likely will too: free their reservations now.
        self._reject_waiting_members(pod.namespace, pg.name, "optimistic rejection in PostFilter")
        if self.pg_backoff is not None:
            if len(self.pg_mgr.group_pods(pod.namespace, pod_group_label(pod))) >= pg.min_member:
                self.pg_mgr.backoff_pod_group(full, self.pg_backoff)
        self.pg_mgr.delete_permitted_pod_group(full)
        self.pg_mgr.mark_pod_group_schedule_failure(full)
        return None, Status.unschedulable(
            f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter")

    @hookimpl
    def reserve(self, state: Any, pod: Any, node_name: str) -> None:
        """Nothing to reserve; being a Reserve plugin is what gets Unreserve called."""
        return None

    @hookimpl
    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        """One member gave up its place: so do the waiting others, and the group counts as failed."""
        full, pg = self.pg_mgr.get_pod_group(pod)
        if pg is None:
            return
        self.pg_mgr.unreserve(pod)
        self._reject_waiting_members(pod.namespace, pg.name, "rejection in Unreserve")
        self.pg_mgr.delete_permitted_pod_group(full)
        self.pg_mgr.mark_pod_group_schedule_failure(full)

    @hookimpl
    def permit(self, state: Any, pod: Any, node_name: str) -> Any:
        """Wait for the rest of the group; the member that completes it allows every waiting one."""
        decision = self.pg_mgr.permit(state, pod)
        if decision is PermitStatus.POD_GROUP_NOT_SPECIFIED:
            return None, 0.0
        if decision is PermitStatus.POD_GROUP_NOT_FOUND:
            return Status.unschedulable("PodGroup not found"), 0.0
        if decision is PermitStatus.WAIT:
            wait = self.schedule_timeout
            _, pg = self.pg_mgr.get_pod_group(pod)
            group_wait = wait_time_seconds(pg, self.schedule_timeout)
            if group_wait != 0:
                wait = group_wait
            self.pg_mgr.activate_siblings(pod, state)
            return Status(Code.Wait), wait
        full = pod_group_full_name(pod)
        self.pg_mgr.clear_pod_group_schedule_failure(full)

        def allow(waiting_pod: Any) -> None:
            if pod_group_full_name(waiting_pod.get_pod()) == full:
                waiting_pod.allow(NAME)

        self.handle.iterate_over_waiting_pods(allow)
        return None, 0.0

    # ------------------------------------------------------------------ helpers
    def _reject_waiting_members(self, namespace: str, group: str, message: str) -> None:
        """Reject every waiting member of ``namespace/group``.

        Rejecting one runs its Unreserve, which would reject the others again, one level deeper
        each time: the group being rejected is remembered so that happens once, at this level.
        """
        full = f"{namespace}/{group}"
        if full in self._rejecting:
            return
        self._rejecting.add(full)
        try:
            def reject(waiting_pod: Any) -> None:
                member = waiting_pod.get_pod()
                if member.namespace == namespace and pod_group_label(member) == group:
                    waiting_pod.reject(NAME, message)

            self.handle.iterate_over_waiting_pods(reject)
        finally:
            self._rejecting.discard(full)


def _defaults() -> dict:
    return {key: spec["default"] for key, spec in Coscheduling.args_schema["properties"].items()}


def _initial_attempt(pod_info: Any) -> float:
    initial = getattr(pod_info, "initial_attempt_timestamp", None)
    return initial if initial is not None else pod_info.timestamp


def _sort_key(pod: Any) -> tuple[str, str]:
    key = f"{pod.namespace}/{pod.name}"
    return (pod_group_full_name(pod) or key, key)
