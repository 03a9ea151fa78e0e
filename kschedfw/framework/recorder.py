"""Every fact of one scheduling cycle, for `explain`, the test harness and anyone who asks.

The scheduler's cycle takes an optional :class:`CycleRecorder`; with none it pays one
``if recorder is not None`` per phase. :class:`CycleRecord` is the implementation that keeps
everything. What a recorder receives belongs to the framework: a recorder copies what it keeps
(the lists given to :meth:`CycleRecorder.scores` are fresh per call and may be kept).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from kschedfw.framework.fit_error import Diagnosis
    from kschedfw.framework.status import Status
    from kschedfw.framework.types import PreFilterResult

__all__ = ["CycleRecorder", "CycleRecord", "PluginScoreRecord"]


class CycleRecorder(Protocol):
    """Receives the facts of one cycle in the order the cycle learns them."""

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        """PreFilter's merged result and status; ``narrowing``: plugins whose result narrowed the nodes."""

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        """Filter is done: ``nodes`` were candidates (after PreFilter narrowing), ``feasible``
        passed, ``diagnosis.node_to_status`` holds each rejection (its absent-node status the
        PreFilter's)."""

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        """One Score plugin's scores, in ``nodes`` order (``normalized`` is ``raw`` without NormalizeScore)."""

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        """Weighted totals per node over all Score plugins."""

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        """The outcome: nodes evaluated and found feasible, the chosen node ("" if none) and the
        cycle's status (None on success)."""


@attrs.define
class PluginScoreRecord:
    raw: dict[str, int] = attrs.Factory(dict)
    normalized: dict[str, int] = attrs.Factory(dict)
    weighted: dict[str, int] = attrs.Factory(dict)


@attrs.define
class CycleRecord:
    """A :class:`CycleRecorder` that keeps every fact."""

    pre_filter_result: "PreFilterResult | None" = None
    pre_filter_status: "Status | None" = None
    narrowing: tuple[str, ...] = ()
    nodes: list[str] = attrs.Factory(list)
    feasible: list[str] = attrs.Factory(list)
    diagnosis: "Diagnosis | None" = None
    plugin_scores: dict[str, PluginScoreRecord] = attrs.Factory(dict)
    node_totals: dict[str, int] = attrs.Factory(dict)
    evaluated: int = 0
    feasible_count: int = 0
    node: str = ""
    status: "Status | None" = None
    _fits: set[str] = attrs.field(factory=set, init=False, repr=False)

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        self.pre_filter_result, self.pre_filter_status, self.narrowing = result, status, narrowing

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        self.nodes, self.feasible, self.diagnosis = list(nodes), list(feasible), diagnosis
        self._fits = set(feasible)

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        self.plugin_scores[plugin] = PluginScoreRecord(dict(zip(nodes, raw)), dict(zip(nodes, normalized)),
                                                       dict(zip(nodes, weighted)))

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        self.node_totals = dict(zip(nodes, totals))

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        self.evaluated, self.feasible_count, self.node, self.status = evaluated, feasible, node, status

    def node_status(self, node: str) -> "Status | None":
        """This node's Filter-phase status: None when it fits, else its rejection (a PreFilter
        rejection or narrowing counts for every node it excluded)."""
        if node in self._fits:
            return None
        if self.diagnosis is None:
            return self.pre_filter_status
        return self.diagnosis.node_to_status.get(node)
