"""The pod-group placement points: PlacementGenerate, then PlacementScore with
NormalizePlacementScore, the range check and the weights (upstream RunPlacementGeneratePlugins,
RunPlacementScorePlugins).

A profile has at most one PlacementGenerate plugin (the config and the plans refuse more), asked
once per pod-group cycle with the placement of every node given; without one, that placement is
the only candidate. PlacementScore runs as Score does, a placement standing for a node: each
plugin scores every feasible placement, normalises its own list, and each score, once in
[MIN_SCORE, MAX_SCORE], is weighted. Every call is guarded (see
:mod:`~kschedfw.framework.plugin_results`): what a plugin raises or returns wrongly is an Error
naming it.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.plans import Plans
from kschedfw.framework.plugin_results import checked_status, raised
from kschedfw.fwk.podgroup import (MAX_SCORE, MIN_SCORE, GeneratePlacementsResult, Placement, PlacementPluginScores,
                                   PlacementScore)
from kschedfw.fwk.status import Code, Status

if TYPE_CHECKING:
    from kschedfw.fwk.cycle_state import PodGroupCycleState
    from kschedfw.fwk.podgroup import PodGroupAssignments, PodGroupInfo
    from kschedfw.fwk.types import NodeInfo

__all__ = ["PlacementPoints"]

_GENERATE = "PlacementGenerate"
_SCORE = "PlacementScore"
_NORMALIZE = "NormalizePlacementScore"
_GENERATE_WANT = "(GeneratePlacementsResult | None, Status | None)"


class PlacementPoints:
    """:class:`~kschedfw.framework.runtime.Framework`'s placement points, each run over the
    :class:`~kschedfw.framework.plans.Plans` it is given (plain, or timed in a cycle that
    records plugin metrics: the Framework chooses)."""

    def __init__(self, faults: PluginFaults) -> None:
        self.faults = faults

    def run_placement_generate_plugins(self, plans: Plans, state: "PodGroupCycleState", pod_group: "PodGroupInfo",
                                       nodes: "list[NodeInfo]") -> tuple[list[Placement], Status | None]:
        """The candidate placements for ``pod_group`` over ``nodes``: the profile's
        PlacementGenerate plugin's, given the placement of all ``nodes`` as its parent, or that
        placement alone without one. A non-Success status comes back as the plugin gave it
        (naming the plugin); no placement at all is Unschedulable "no feasible placements found"."""
        parent = Placement("", nodes)
        if not plans.placement_generate:
            return [parent], None
        name, fn = plans.placement_generate[0]
        try:
            out = fn(state, pod_group, parent)
        except Exception as exc:
            return [], raised(self.faults, name, _GENERATE, exc)
        result, status = self._generated(name, out)
        if status is not None and not status.is_success():
            status.plugin = name
            return [], status
        if result is None or not result.placements:
            return [], Status(Code.Unschedulable, ("no feasible placements found",), plugin=name)
        return list(result.placements), None

    def _generated(self, name: str, out: Any) -> tuple[GeneratePlacementsResult | None, Status | None]:
        """A GeneratePlacements return, checked: ``(result, status)`` whose result holds
        Placements; anything else is an Error naming what came back."""
        if not (isinstance(out, tuple) and len(out) == 2 and (out[0] is None or isinstance(out[0],
                GeneratePlacementsResult)) and (out[1] is None or isinstance(out[1], Status))):
            return None, self._wrong(name, _GENERATE, out, _GENERATE_WANT)
        result, status = out
        if result is not None and (status is None or status.is_success()):
            if not isinstance(result.placements, (list, tuple)):
                return None, self._wrong(name, _GENERATE, result.placements, "a list of Placement as the placements")
            wrong = next((p for p in result.placements if not isinstance(p, Placement)), None)
            if wrong is not None:
                return None, self._wrong(name, _GENERATE, wrong, "Placement in the placements")
        return result, status

    def run_placement_score_plugins(self, plans: Plans, state: "PodGroupCycleState", pod_group: "PodGroupInfo",
                                    placements: "list[PodGroupAssignments]"
                                    ) -> tuple[list[PlacementPluginScores], Status | None]:
        """Per feasible placement (in ``placements`` order), each PlacementScore plugin's
        weighted score and their total (upstream RunPlacementScorePlugins); the first failure,
        in upstream's words, as an Error naming the plugin. ``randomizer`` is left 0 (the
        selection draws it)."""
        plan = plans.placement_score
        by_plugin: list[list[PlacementScore]] = [[] for _ in plan]
        for assignments in placements:
            for scores, (name, fn, _, _) in zip(by_plugin, plan):
                try:
                    out = fn(state, pod_group, assignments)
                except Exception as exc:
                    return [], _failed("running PlacementScore plugins", name,
                                       raised(self.faults, name, _SCORE, exc))
                score, status = self._score(name, out)
                if status is not None:
                    return [], _failed("running PlacementScore plugins", name, status)
                scores.append(PlacementScore(assignments.placement, score))
        for scores, (name, _, _, normalize) in zip(by_plugin, plan):
            if normalize is None:
                continue
            try:
                status = checked_status(self.faults, name, _NORMALIZE, normalize(state, pod_group, scores))
            except Exception as exc:
                status = raised(self.faults, name, _NORMALIZE, exc)
            if status is not None and not status.is_success():
                return [], _failed("running NormalizePlacementScore on PlacementScore plugins", name, status)
        results: list[PlacementPluginScores] = []
        for index, assignments in enumerate(placements):
            weighted: list[tuple[str, int]] = []
            total = 0
            for scores, (name, _, weight, _) in zip(by_plugin, plan):
                # the plugin's NormalizePlacementScore had the list: it may have left anything
                left: Any = getattr(scores[index], "score", None) if index < len(scores) else None
                if not _is_int(left):
                    return [], Status(Code.Error, (self.faults.wrong_type(name, _NORMALIZE, left,
                                                                          "int in PlacementScore.score"),),
                                      plugin=name)
                value = int(left)
                if not MIN_SCORE <= value <= MAX_SCORE:
                    return [], Status(Code.Error, (
                        f'applying score defaultWeights on PlacementScore plugins: plugin "{name}" returns an '
                        f'invalid score {value}, it should in the range of [{MIN_SCORE}, {MAX_SCORE}] after '
                        'normalizing',), plugin=name)
                weighted.append((name, value * weight))
                total += value * weight
            results.append(PlacementPluginScores(assignments.placement, weighted, total))
        return results, None

    def _score(self, name: str, out: Any) -> tuple[int, Status | None]:
        """A ScorePlacement return: the score, or the failed Status it stands for; anything
        else (a float, a bool, a Success status) is an Error naming what came back."""
        if _is_int(out):
            return int(out), None
        if isinstance(out, Status) and not out.is_success():
            return 0, out
        return 0, self._wrong(name, _SCORE, out, "int, or a Status when scoring failed")

    def _wrong(self, name: str, point: str, value: Any, want: str) -> Status:
        return Status(Code.Error, (self.faults.wrong_type(name, point, value, want),), plugin=name)


def _is_int(value: Any) -> bool:
    """An int, or another Integral (a numpy int) but not a bool, as Score's check takes it."""
    return type(value) is int or isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _failed(where: str, name: str, status: Status) -> Status:
    """A placement plugin's failure, as upstream words the cycle's Error."""
    return Status(Code.Error, (f'{where}: plugin "{name}" failed with: {status.message()}',), plugin=name)
