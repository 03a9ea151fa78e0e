"""A pod group's placement selection, as upstream's placement algorithm
(``podGroupSchedulingPlacementAlgorithm`` and ``findBestPlacement``).

The profile's PlacementGenerate plugin proposes placements (without one: all nodes as one);
the pod-group cycle tries the whole group in each (its default algorithm with the snapshot
narrowed to the placement, then reverted: the ``attempt`` callable, the cycle's); an Error stops
at once. No feasible placement: the first one's outcome, Unschedulable "0/N placements are
available, first placement status: ...". One: it. More: PlacementScore decides, the highest
total winning; equal totals go to the highest randomizer, drawn per placement from the
scheduler's seeded randomness (upstream ``rand.Int()``), or with ``ties="name"`` (a kschedfw
extension, as the node cycle's) to the smallest placement name. A placement is feasible when
its attempt succeeded or waits on preemption.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Callable, Generic, Protocol, Sequence, TypeVar

import attrs

from kschedfw.fwk.podgroup import Placement, PlacementPluginScores, PodGroupAssignments, ProposedAssignment
from kschedfw.fwk.status import Code, Status

if TYPE_CHECKING:
    from kschedfw.framework.runtime import Framework
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.podgroup import PodGroupInfo
    from kschedfw.fwk.types import NodeInfo

__all__ = ["PlacementOutcome", "PlacementSelection", "select_placement"]

#: how equal totals are broken, as the node cycle's ``ties`` option (:data:`kschedfw.cycle.TIES`)
_TIES = ("random", "name")
#: upstream's Randomizer is a non-negative Go int (63 random bits)
_RANDOMIZER_BITS = 63


class PlacementOutcome(Protocol):
    """What the pod-group cycle's attempt of the group in one placement gave: its status (None
    or Success: the group fits), whether it waits on preemption (then it counts as feasible),
    and each pod's result (``node_name`` empty for a pod that found no node)."""

    @property
    def status(self) -> Status | None: ...

    @property
    def waiting_on_preemption(self) -> bool: ...

    @property
    def pod_results(self) -> Sequence[ProposedAssignment]: ...


Outcome = TypeVar("Outcome", bound=PlacementOutcome)


@attrs.frozen
class PlacementSelection(Generic[Outcome]):
    """The chosen ``placement`` and the ``outcome`` of the group's attempt in it, and the
    ``status`` the cycle goes on with: the outcome's, or the Unschedulable "0/N placements ..."
    with the first placement's outcome (``placement`` None), or an Error (a plugin's, an
    attempt's). ``placements`` are the candidates, ``scores`` each feasible one's plugin scores
    when PlacementScore ran (what explain shows)."""

    status: Status | None
    placement: Placement | None = None
    outcome: Outcome | None = None
    placements: tuple[Placement, ...] = ()
    scores: tuple[PlacementPluginScores, ...] = ()


def select_placement(fwk: "Framework", state: "CycleState", pod_group: "PodGroupInfo", nodes: "list[NodeInfo]",
                     attempt: Callable[[Placement], Outcome], *, rng: random.Random, ties: str = "random"
                     ) -> PlacementSelection[Outcome]:
    """Upstream's placement algorithm over ``nodes`` (the cycle's snapshot), ``attempt``
    trying the group in one placement. The group's cycle state records plugin metrics from
    here on, as upstream's does for every placement cycle."""
    if ties not in _TIES:
        raise ValueError(f"ties: {ties!r} is not one of {', '.join(_TIES)}")
    state.record_plugin_metrics = True
    placements, status = fwk.run_placement_generate_plugins(state, pod_group, nodes)
    if status is not None and not status.is_success():
        return PlacementSelection(status)
    candidates = tuple(placements)
    first: Outcome | None = None
    feasible: list[tuple[Placement, Outcome]] = []
    for placement in candidates:
        outcome = attempt(placement)
        result = outcome.status
        if result is not None and result.code is Code.Error:
            return PlacementSelection(result, outcome=outcome, placements=candidates)
        if first is None:
            first = outcome
        if result is None or result.is_success() or outcome.waiting_on_preemption:
            feasible.append((placement, outcome))
    if not feasible:
        first_status = first.status if first is not None else None
        message = first_status.message() if first_status is not None else ""
        return PlacementSelection(
            Status.unschedulable(f"0/{len(candidates)} placements are available, first placement status: {message}"),
            outcome=first, placements=candidates)
    if len(feasible) == 1:
        placement, outcome = feasible[0]
        return PlacementSelection(outcome.status, placement, outcome, candidates)
    assignments = [PodGroupAssignments(placement, [r for r in outcome.pod_results if r.node_name])
                   for placement, outcome in feasible]
    scores, status = fwk.run_placement_score_plugins(state, pod_group, assignments)
    if status is not None and not status.is_success():
        return PlacementSelection(status, placements=candidates)
    best = _best(scores, rng, ties)
    placement, outcome = next(pair for pair in feasible if pair[0] is best.placement)
    return PlacementSelection(outcome.status, placement, outcome, candidates, tuple(scores))


def _best(scores: list[PlacementPluginScores], rng: random.Random, ties: str) -> PlacementPluginScores:
    """The highest total; among equal totals the highest randomizer (drawn for every placement,
    as upstream's), the first of equals; with ``ties="name"`` the smallest placement name."""
    if ties == "name":
        top = max(s.total_score for s in scores)
        return min((s for s in scores if s.total_score == top), key=lambda s: s.placement.name)
    for score in scores:
        score.randomizer = rng.getrandbits(_RANDOMIZER_BITS)
    best = scores[0]
    for score in scores[1:]:
        if score.total_score > best.total_score or (score.total_score == best.total_score
                                                    and score.randomizer > best.randomizer):
            best = score
    return best
