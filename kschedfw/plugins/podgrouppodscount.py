"""PodGroupPodsCount: prefer the placement that fits more pods of the group.

A placement scores the group's pods already scheduled plus those the cycle found room for in
it; normalising divides by the best placement's count, not by ``minCount``, so placements a pod
apart stay a few points apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.fwk.interface import NotFound
from kschedfw.fwk.podgroup import MAX_SCORE, MIN_SCORE
from kschedfw.fwk.status import Status

if TYPE_CHECKING:
    from kschedfw.fwk.cycle_state import PodGroupCycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.podgroup import PlacementScore, PodGroupAssignments, PodGroupInfo

NAME = "PodGroupPodsCount"


class PodGroupPodsCount:
    """PlacementScore by the group's pod count (upstream PodGroupPodsCount)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle | None = None) -> None:
        self.handle = handle

    @hookimpl
    def score_placement(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                        placement: PodGroupAssignments) -> int | Status:
        if self.handle is None:
            return Status.as_status("no snapshot to read pod group states from")
        try:
            group_state = self.handle.snapshot.pod_group_states().get(pod_group.namespace, pod_group.name)
        except NotFound as err:
            return Status.as_status(err)
        return group_state.scheduled_pods_count() + len(placement.proposed_assignments)

    @hookimpl
    def normalize_placement_score(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                                  placement_scores: list[PlacementScore]) -> Status | None:
        best = max((s.score for s in placement_scores), default=0)
        best = max(best, 0)
        if best == 0:
            return Status.as_status("no pods from pod group are assigned to any of the candidate placements")
        for s in placement_scores:
            # Go's integer division truncates toward zero; scores here are not negative.
            s.score = MIN_SCORE + s.score * (MAX_SCORE - MIN_SCORE) // best
        return None
