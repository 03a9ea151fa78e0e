"""The pod-group contract: what placement plugins are handed and what they read of a group.

Upstream's ``k8s.io/kube-scheduler/framework`` types for workload-aware scheduling: a pod group
as a cycle sees it (:class:`PodGroupInfo`), a candidate set of nodes for the whole group
(:class:`Placement`), the pods the cycle would put on them (:class:`PodGroupAssignments`), a
placement's score, and the scheduler's view of a group's pods (:class:`PodGroupState`), read
through a :class:`PodGroupStateLister` from the cycle's snapshot or, outside a pod-group cycle,
from the Handle's :class:`PodGroupManager`. Pods are keyed by uid, groups by namespace and name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

import attrs

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.types import NodeInfo

__all__ = [
    "MAX_SCORE", "MIN_SCORE", "PodGroupInfo", "Placement", "GeneratePlacementsResult", "ProposedAssignment",
    "PodGroupAssignments", "PlacementScore", "PlacementPluginScores", "PodGroupState", "PodGroupStateLister", "PodGroupManager",
]

#: The highest score a PlacementScore plugin may give after normalising (upstream MaxScore).
MAX_SCORE = 100
#: The lowest (upstream MinScore).
MIN_SCORE = 0


@attrs.frozen
class PodGroupInfo:
    """The pod group a pod-group cycle schedules: its name and namespace, and its pods still to
    place (upstream PodGroupInfo: GetName, GetNamespace, GetUnscheduledPods)."""

    name: str
    namespace: str = "default"
    unscheduled_pods: tuple[Pod, ...] = ()


@attrs.define(eq=False)
class Placement:
    """A set of nodes the whole group may be put on, e.g. one rack (upstream Placement). Compared
    by identity: generated placements may overlap, and each is its own candidate."""

    name: str
    nodes: list[NodeInfo] = attrs.field(factory=list)


@attrs.define
class GeneratePlacementsResult:
    """What a PlacementGenerate plugin proposes (upstream GeneratePlacementsResult): placements
    that may overlap; none at all means the group fits nowhere this plugin allows."""

    placements: list[Placement] = attrs.field(factory=list)


class ProposedAssignment(Protocol):
    """One pod of the group and the node the cycle would bind it to (upstream ProposedAssignment)."""

    @property
    def pod(self) -> Pod: ...

    @property
    def node_name(self) -> str: ...


@attrs.define(eq=False)
class PodGroupAssignments:
    """A feasible placement and the pods the cycle found room for in it (upstream
    PodGroupAssignments, which embeds its Placement: ``name`` and ``nodes`` are the placement's)."""

    placement: Placement
    proposed_assignments: Sequence[ProposedAssignment] = ()

    @property
    def name(self) -> str:
        return self.placement.name

    @property
    def nodes(self) -> list[NodeInfo]:
        return self.placement.nodes


@attrs.define
class PlacementScore:
    """One placement's score from one plugin; NormalizePlacementScore rewrites ``score`` in place
    (upstream PlacementScore)."""

    placement: Placement | None = None
    score: int = 0


@attrs.define(eq=False)
class PlacementPluginScores:
    """One feasible placement's weighted score from each PlacementScore plugin, in profile order,
    and their total (upstream PlacementPluginScores). ``randomizer`` breaks ties between equal
    totals when the best placement is chosen."""

    placement: Placement
    scores: list[tuple[str, int]] = attrs.field(factory=list)
    total_score: int = 0
    randomizer: int = 0


class PodGroupState(Protocol):
    """The scheduler's view of one group's pods (upstream PodGroupState). Every pod the scheduler
    knows is in exactly one of: unscheduled (neither assumed nor bound), assumed (past Reserve,
    e.g. waiting at Permit), assigned (bound). "Scheduled" is assumed or assigned. What is
    returned is a copy, except the pods themselves (read-only)."""

    def all_pods(self) -> set[str]:
        """The uids of every pod of the group."""
        ...

    def all_pods_count(self) -> int: ...

    def unscheduled_pods(self) -> dict[str, Pod]:
        """The unscheduled pods by name (what ``Handle.activate`` takes)."""
        ...

    def assumed_pods(self) -> set[str]: ...

    def assigned_pods(self) -> set[str]: ...

    def scheduled_pods(self) -> list[Pod]:
        """The assigned pods, then the assumed ones (as assumed: with their node)."""
        ...

    def scheduled_pods_count(self) -> int: ...


class PodGroupStateLister(Protocol):
    """The PodGroup states of a cache or of a cycle's snapshot (upstream PodGroupStateLister)."""

    def get(self, namespace: str, pod_group_name: str) -> PodGroupState:
        """The group's state; raises :class:`kschedfw.fwk.interface.NotFound` ("pod group state
        not found for pod group ns/name") for a group none of whose pods the scheduler knows."""
        ...


class PodGroupManager(Protocol):
    """The live PodGroup states, as the scheduler's cache keeps them (upstream PodGroupManager)."""

    def pod_group_states(self) -> PodGroupStateLister: ...
