"""What a pod group's scheduling attempt gave, for reports and `explain`.

The pod-group cycle keeps every group's last attempt as a :class:`GroupAttempt` (a few counts:
how many pods were tried and how many found a node, in the placement that fitted the most, and
the condition the PodGroup got), which the report's one line per pending group is made of. When
`explain` asks (:attr:`~kschedfw.scheduler.schedule_one_podgroup.PodGroupCycle.recorder_for`),
a :class:`GroupRecord` also keeps each placement tried, with its pods' nodes, every
PlacementScore plugin's weighted score and the total, and the placement chosen; without it the
cycle records nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Sequence

import attrs

if TYPE_CHECKING:
    from kschedfw.fwk.podgroup import Placement, PlacementPluginScores
    from kschedfw.fwk.status import Status

__all__ = ["GroupAttempt", "GroupRecord", "PlacementTried", "PodTried", "RESULTS", "fitting"]

#: an attempt's result, as upstream's pod-group metrics label it
RESULTS = ("scheduled", "unschedulable", "waiting_on_preemption", "error")


class _Tried(Protocol):
    """What is read of a pod's result in one placement (the cycle's PodResult)."""

    @property
    def status(self) -> "Status | None": ...

    @property
    def requires_preemption(self) -> bool: ...

    @property
    def node_name(self) -> str: ...

    @property
    def pod_key(self) -> str: ...


def fitting(pod_results: Sequence[_Tried]) -> int:
    """How many pods found a node (without preemption) in one attempt of the group."""
    return sum(1 for r in pod_results if (r.status is None or r.status.is_success()) and not r.requires_preemption)


@attrs.frozen
class GroupAttempt:
    """A group's scheduling attempt in short: ``tried`` pods, ``fit`` of which found a node in
    ``placement`` (the chosen placement; with none feasible, the one that fitted the most, first
    of equals; "" without placements), of ``placements`` tried (0: the cycle ran without the
    TopologyAwareWorkloadScheduling gate), the ``result`` (one of :data:`RESULTS`) and the
    PodGroupScheduled condition's message."""

    cycle: int
    time: float
    profile: str
    tried: int
    fit: int
    result: str
    message: str
    placements: int = 0
    placement: str = ""


@attrs.frozen
class PodTried:
    """One pod in one placement: its node ("" when it found none) and, then, why not."""

    pod: str
    node: str
    message: str = ""
    needs_preemption: bool = False


@attrs.frozen
class PlacementTried:
    """The group tried in one placement: its nodes, each pod's outcome, and the attempt's status
    message ("" when the group fits there)."""

    name: str
    nodes: int
    pods: tuple[PodTried, ...]
    feasible: bool
    message: str = ""


@attrs.define
class GroupRecord:
    """Everything of one attempt of a group, for `explain` (made only when it asks)."""

    pods: tuple[str, ...] = ()
    placements: list[PlacementTried] = attrs.Factory(list)
    #: each feasible placement's (name, [(plugin, weighted score)], total, randomizer), when
    #: PlacementScore ran (two feasible placements or more)
    scores: list[tuple[str, list[tuple[str, int]], int, int]] = attrs.Factory(list)
    chosen: str | None = None
    ties: str = "random"
    attempt: GroupAttempt | None = None

    def tried(self, name: str, nodes: int, pod_results: Sequence[_Tried], status: "Status | None",
              feasible: bool) -> None:
        """The group's attempt in one placement (``pod_results``: the cycle's PodResults)."""
        pods = []
        for r in pod_results:
            pod_status = r.status
            ok = pod_status is None or pod_status.is_success()
            preempting = r.requires_preemption
            pods.append(PodTried(r.pod_key, r.node_name if ok or preempting else "",
                                 "" if pod_status is None or ok else pod_status.message(), preempting))
        message = "" if status is None or status.is_success() else status.message()
        self.placements.append(PlacementTried(name, nodes, tuple(pods), feasible, message))

    def scored(self, scores: "Sequence[PlacementPluginScores]", chosen: "Placement | None") -> None:
        self.scores = [(s.placement.name, list(s.scores), s.total_score, s.randomizer) for s in scores]
        self.chosen = chosen.name if chosen is not None else None

    def ended(self, attempt: GroupAttempt) -> None:
        self.attempt = attempt
