"""Score: each plugin's Score over the nodes that passed Filter, NormalizeScore, the range check
and the weights (upstream RunScorePlugins), as a total per node.

A plugin's whole-list forms (``score_nodes``, ``normalize_score_values``, see
:mod:`kschedfw.fwk.hookspecs`) stand for the per-node hooks when it declares them. Their values meet
the per-node hook's checks, with the usual case paid once per cycle: the totals are worked out
first and, when they are all ints (one pass in C), every form gave ints; otherwise (or when the
pass failed) each form's values are checked in plan order, which names the plugin and the value
as the hook's check would; pairs and int subclasses, which that check takes as ints, are then
scored again, each form's values converted as they come. NormalizeScore
gets a new list of new :class:`~kschedfw.fwk.types.NodeScore` items every call, so a plugin
may keep them (reusing them across cycles saved nothing measurable in the benchmarks).
"""

from __future__ import annotations

from operator import add
from typing import TYPE_CHECKING, Any, Callable

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.framework.guard import PluginFaults
from kschedfw.framework.plans import Plans, ScorePlan
from kschedfw.framework.plugin_results import checked_status, out_of_range, raised, score_values, whole_list_values
from kschedfw.framework.recorder import CycleRecord
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodePluginScores, NodeScore

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.recorder import CycleRecorder

__all__ = ["NodeScoring"]


class NodeScoring:
    """:class:`~kschedfw.framework.runtime.Framework`'s Score, run over the Score plan of the
    :class:`~kschedfw.framework.plans.Plans` it is given (a timed copy has no whole-list forms,
    so every plugin's per-node calls are timed)."""

    def __init__(self, faults: PluginFaults) -> None:
        self.faults = faults

    def run_score_plugins(self, plans: Plans, state: CycleState, pod: "Pod", nodes: list[NodeInfo]
                          ) -> tuple[list[NodePluginScores], Status | None]:
        """Score, normalise, range-check and weight: per node, each plugin's weighted score and
        the total (upstream RunScorePlugins). The scheduler's cycle uses
        :meth:`run_score_plugins_totals`, which builds no per-plugin lists."""
        record = CycleRecord()
        totals, status = self.run_score_plugins_totals(plans, state, pod, nodes, record)
        if status is not None:
            return [], status
        return [NodePluginScores(ni.name, [(plugin, s.weighted[ni.name]) for plugin, s in record.plugin_scores.items()],
                                 total) for ni, total in zip(nodes, totals)], None

    def run_score_plugins_totals(self, plans: Plans, state: CycleState, pod: "Pod", nodes: list[NodeInfo],
                                 recorder: "CycleRecorder | None" = None, *, names: list[str] | None = None
                                 ) -> tuple[list[int], Status | None]:
        """Each node's weighted total, in ``nodes`` order; the recorder (if any) gets raw,
        normalised and weighted scores per plugin. The per-node loop is a list comprehension
        over the bound method, or the plugin's whole-list form (``score_nodes``,
        ``normalize_score_values``, see :mod:`kschedfw.fwk.hookspecs`): the hot path. Per-node
        scores are checked once per plugin per cycle (all ints? then only the range), whole-list
        ones once per cycle (see the module's docstring); only a failing check looks at each
        value. A plugin giving every node the same score adds a constant to the totals.
        ``names``: the nodes' names, if the caller has them already."""
        if names is None:
            names = [ni.name for ni in nodes]
        unchecked: list[tuple[str, str, Any]] = []
        try:
            totals, status = self._score_pass(plans.score, state, pod, nodes, names, recorder, unchecked)
            if not unchecked or status is None and type(sum(totals)) is int:
                return totals, status
        except TypeError:  # values that are not all numbers, from a whole-list form
            if not unchecked:
                raise
            status = None
        for name, point, values in unchecked:  # in plan order, as node by node
            try:
                if type(sum(values)) is int:
                    continue
            except TypeError:
                pass
            wrong = score_values(self.faults, name, point, list(values))[1]
            if wrong is not None:
                return [], _failed(name, point, wrong)
            break  # pairs or int subclasses, which the check takes as ints: score again with them
        else:
            if status is not None:
                return [], status
        return self._score_pass(plans.score, state, pod, nodes, names, recorder, None)

    def _score_pass(self, plan: ScorePlan, state: CycleState, pod: "Pod", nodes: list[NodeInfo], names: list[str],
                recorder: "CycleRecorder | None", unchecked: list[tuple[str, str, Any]] | None
                ) -> tuple[list[int], Status | None]:
        """:meth:`run_score_plugins_totals`'s pass over the plugins. Whole-list values are left
        for the caller to check, in ``unchecked`` (plugin, point, values), or, without it,
        checked each as it comes."""
        varying: list[list[int]] = []
        constant = 0
        skip = state.skip_score_plugins
        for name, fn, weight, normalize, score_nodes, normalize_values in plan:
            if skip and name in skip:
                continue
            whole_list = False
            try:
                raw = score_nodes(state, pod, nodes) if score_nodes is not None else None
                if raw is None:
                    raw = [fn(state, pod, ni) for ni in nodes]
                else:
                    whole_list = True
            except Exception as exc:
                return [], _failed(name, "Score", raised(self.faults, name, "Score", exc))
            if whole_list:
                values, status = _whole_list(self.faults, name, "Score", raw, len(nodes), unchecked)
            else:
                values, status = score_values(self.faults, name, "Score", raw)
            if status is not None:
                return [], _failed(name, "Score", status)
            raw_values = values
            if normalize is not None:
                normalized = None
                if normalize_values is not None:
                    try:
                        normalized = normalize_values(state, pod, values)
                    except Exception as exc:
                        return [], _failed(name, "NormalizeScore", raised(self.faults, name, "NormalizeScore", exc))
                if normalized is None:
                    normalized, status = self._normalize(name, normalize, state, pod, names, values)
                    if status is not None:
                        return [], status
                    values, status = score_values(self.faults, name, "NormalizeScore", normalized)
                else:
                    values, status = _whole_list(self.faults, name, "NormalizeScore", normalized, len(values),
                                                 unchecked)
                if status is not None:
                    return [], _failed(name, "NormalizeScore", status)
            low, high = (min(values), max(values)) if values else (0, 0)
            if recorder is not None:
                recorder.scores(name, names, list(raw_values), list(values), [v * weight for v in values])
            if low < MIN_NODE_SCORE or high > MAX_NODE_SCORE:
                return [], out_of_range(name, values)
            if low == high:
                constant += low * weight
            else:
                varying.append([v * weight for v in values] if weight != 1 else values)
        if not varying:
            totals = [constant] * len(nodes)
        elif len(varying) == 1:
            totals = [v + constant for v in varying[0]] if constant else list(varying[0])
        elif len(varying) == 2:  # the default profile's usual case: the two resource scores
            totals = list(map(add, varying[0], varying[1]))
            if constant:
                totals = [v + constant for v in totals]
        elif constant:
            totals = [sum(column) + constant for column in zip(*varying)]
        else:
            totals = [sum(column) for column in zip(*varying)]
        if recorder is not None:
            recorder.totals(names, list(totals))
        return totals, None

    def _normalize(self, name: str, normalize: Callable[..., Any], state: CycleState, pod: "Pod", names: list[str],
                   values: list[int]) -> tuple[list[int], Status | None]:
        """NormalizeScore over a new NodeScore list, the plugin's to keep: (the scores it left,
        error status)."""
        scores = list(map(NodeScore, names, values))
        try:
            status = checked_status(self.faults, name, "NormalizeScore", normalize(state, pod, scores))
        except Exception as exc:
            status = raised(self.faults, name, "NormalizeScore", exc)
        if status is not None and not status.is_success():
            return [], Status(Code.Error, (f'running Normalize on Score plugins: plugin "{name}" failed with: {status.message()}',), plugin=name)
        return [s.score for s in scores], None


def _whole_list(faults: PluginFaults, name: str, point: str, out: Any, count: int,
                unchecked: list[tuple[str, str, Any]] | None) -> tuple[list[int], Status | None]:
    """A whole-list form's values: a list of ``count`` left in ``unchecked`` for the caller, or
    checked now (:func:`~kschedfw.framework.plugin_results.whole_list_values`)."""
    if unchecked is not None and type(out) is list and len(out) == count:
        unchecked.append((name, point, out))
        return out, None
    return whole_list_values(faults, name, point, out, count)


def _failed(name: str, point: str, status: Status) -> Status:
    """A Score or NormalizeScore failure, as upstream words the cycle's Error."""
    where = "running Score plugins" if point == "Score" else "running Normalize on Score plugins"
    return Status(Code.Error, (f'{where}: plugin "{name}" failed with: {status.message()}',), plugin=name)
