"""GangScheduling: all or nothing for the pods of a PodGroup with a gang policy.

A gang pod waits out of the queue until its PodGroup exists and at least ``minCount`` of its
pods are known; at Permit it waits (up to 5 minutes) until ``minCount`` pods of the group are
assumed or bound, and the pod that completes the quorum lets every waiting one through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.api import Pod
from kschedfw.api.workload import POD_GROUP_KIND, PodGroup
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kschedfw.fwk.interface import NotFound
from kschedfw.fwk.status import Status
from kschedfw.plugins.helper import as_objects

if TYPE_CHECKING:
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.podgroup import PodGroupStateLister

NAME = "GangScheduling"

#: how long a gang pod waits at Permit for the rest of its gang (upstream permitTimeoutDuration)
PERMIT_TIMEOUT_SECONDS = 5 * 60.0


def matching_scheduling_group(pod1: Pod, pod2: Pod) -> bool:
    """Both pods belong to the same PodGroup (upstream helper.MatchingSchedulingGroup)."""
    group1, group2 = pod1.scheduling_group, pod2.scheduling_group
    return (pod1.namespace == pod2.namespace and group1 is not None and group2 is not None
            and group1.pod_group_name == group2.pod_group_name)


class GangScheduling:
    """PreEnqueue, Permit and their queueing hints for gang PodGroups (upstream GangScheduling)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A new pod may complete its gang's minCount; the group's field is immutable, so pod
        # updates cannot. PodGroups are immutable too: only their creation helps.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add),
                                 self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(EventResource.PodGroup, ActionType.Add),
                                 self.is_schedulable_after_pod_group_added),
        ]

    def is_schedulable_after_pod_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        _, added = as_objects(old_obj, new_obj, Pod)
        if added is None or not matching_scheduling_group(pod, added):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_group_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        _, added = as_objects(old_obj, new_obj, PodGroup)
        group = pod.scheduling_group
        if (added is None or group is None or pod.namespace != added.namespace
                or group.pod_group_name != added.name):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def _pod_group(self, pod: Pod, group_name: str) -> PodGroup | None:
        found = self.handle.lister.get(POD_GROUP_KIND, group_name, pod.namespace)
        return found if isinstance(found, PodGroup) else None

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        group = pod.scheduling_group
        if group is None or group.pod_group_name is None:
            return None
        name = group.pod_group_name
        pod_group = self._pod_group(pod, name)
        if pod_group is None:
            return Status.unresolvable(f'waiting for pods\'s pod group "{name}" to appear in scheduling queue')
        gang = pod_group.scheduling_policy.gang
        if gang is None:  # only gangs wait for their pods
            return None
        try:
            state = self.handle.pod_group_manager.pod_group_states().get(pod.namespace, name)
        except NotFound as err:
            return Status.as_status(err)
        if state.all_pods_count() < gang.min_count:
            return Status.unresolvable("waiting for minCount pods from a gang to appear in scheduling queue")
        return None

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        group = pod.scheduling_group
        if group is None or group.pod_group_name is None:
            return None, 0
        name = group.pod_group_name
        pod_group = self._pod_group(pod, name)
        if pod_group is None:
            # Removed meanwhile: an Error retries the pod when the group is back.
            return Status.as_status(
                f'failed to get podGroup {pod.namespace}/{name}: podgroup.scheduling.k8s.io "{name}" not found'), 0
        gang = pod_group.scheduling_policy.gang
        if gang is None:
            return None, 0
        # Inside the group's own cycle the snapshot holds what that cycle assumed; otherwise
        # the cache's live states do.
        lister: PodGroupStateLister = (self.handle.snapshot.pod_group_states()
                                       if state.is_pod_group_scheduling_cycle()
                                       else self.handle.pod_group_manager.pod_group_states())
        try:
            group_state = lister.get(pod.namespace, name)
        except NotFound as err:
            return Status.as_status(err), 0
        if group_state.scheduled_pods_count() < gang.min_count:
            # The rest of the gang may be waiting for this pod: let them try again.
            self.handle.activate(group_state.unscheduled_pods().values())
            return Status.wait("waiting for minCount pods from a gang to be scheduled"), PERMIT_TIMEOUT_SECONDS
        for uid in group_state.assumed_pods():
            waiting = self.handle.get_waiting_pod(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None, 0
