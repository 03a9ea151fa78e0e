"""Every fact of one scheduling cycle, for `explain`, the test harness and anyone who asks.

The scheduler's cycle takes an optional :class:`CycleRecorder`; with none it pays one
``if recorder is not None`` per phase. :class:`CycleRecord` is the implementation that keeps
everything; :class:`SummaryRecord` keeps a summary whose size does not depend on the number of
nodes (rejection counts, the best-scored nodes), for recording every pod of a large run. What a recorder receives belongs to the framework: a recorder copies what it keeps
(the lists given to :meth:`CycleRecorder.scores` are fresh per call and may be kept).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from kschedfw.fwk.fit_error import Diagnosis
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import PreFilterResult

__all__ = ["CycleRecorder", "CycleRecord", "ForwardingRecorder", "PluginScoreRecord", "SummaryRecord", "ScoredNode"]


class CycleRecorder(Protocol):
    """Receives the facts of one cycle in the order the cycle learns them."""

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        """PreFilter's merged result and status; ``narrowing``: plugins whose result narrowed the nodes."""

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        """Filter is done: ``nodes`` were candidates (after PreFilter narrowing), ``feasible``
        passed, ``diagnosis.node_to_status`` holds each rejection (its absent-node status the
        PreFilter's). Also called when Filter stopped at an error (the cycle's status, given to
        :meth:`result`): ``feasible`` and the rejections are then those found before it."""

    def pre_scored(self, skipped: frozenset[str]) -> None:
        """PreScore is done: ``skipped`` are the Score plugins whose PreScore returned Skip
        (upstream SkipScorePlugins), which give no score this cycle."""

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        """One Score plugin's scores, in ``nodes`` order (``normalized`` is ``raw`` without
        NormalizeScore); a prioritizing extender's come as ``extender <name>``, and then
        :meth:`totals` again with them added."""

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        """Weighted totals per node over all Score plugins."""

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        """The outcome: nodes evaluated and found feasible, the chosen node ("" if none) and the
        cycle's status (None on success). PostFilter has run by now (``diagnosis.post_filter_msg``)."""

    def permit_wait(self, waits: dict[str, float]) -> None:
        """Permit plugins asked the pod to wait: plugin -> timeout in seconds (the scheduler
        calls this after the cycle, when the pod goes to the waiting pods)."""


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
    skipped_score_plugins: frozenset[str] = frozenset()
    plugin_scores: dict[str, PluginScoreRecord] = attrs.Factory(dict)
    node_totals: dict[str, int] = attrs.Factory(dict)
    evaluated: int = 0
    feasible_count: int = 0
    node: str = ""
    status: "Status | None" = None
    permit_waits: dict[str, float] = attrs.Factory(dict)
    _fits: set[str] = attrs.field(factory=set, init=False, repr=False)

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        self.pre_filter_result, self.pre_filter_status, self.narrowing = result, status, narrowing

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        self.nodes, self.feasible, self.diagnosis = list(nodes), list(feasible), diagnosis
        self._fits = set(feasible)

    def pre_scored(self, skipped: frozenset[str]) -> None:
        self.skipped_score_plugins = skipped

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        self.plugin_scores[plugin] = PluginScoreRecord(dict(zip(nodes, raw)), dict(zip(nodes, normalized)),
                                                       dict(zip(nodes, weighted)))

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        self.node_totals = dict(zip(nodes, totals))

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        self.evaluated, self.feasible_count, self.node, self.status = evaluated, feasible, node, status

    def permit_wait(self, waits: dict[str, float]) -> None:
        self.permit_waits = dict(waits)

    def node_status(self, node: str) -> "Status | None":
        """This node's Filter-phase status: None when it fits, else its rejection (a PreFilter
        rejection or narrowing counts for every node it excluded)."""
        if node in self._fits:
            return None
        if self.diagnosis is None:
            return self.pre_filter_status
        return self.diagnosis.node_to_status.get(node)


@attrs.frozen
class ScoredNode:
    """One of the best-scored nodes of a cycle: its total and each plugin's weighted score."""

    node: str
    total: int
    scores: dict[str, int]


@attrs.define
class SummaryRecord:
    """A :class:`CycleRecorder` of bounded size whatever the cluster's size: rejections counted
    per (plugin, message), the ``top_n`` best-scored nodes, and the outcome. It keeps nothing
    per node, so recording every cycle of a 5000-node run costs little memory."""

    num_nodes: int = 0
    top_n: int = 3
    pre_filter_plugin: str = ""
    pre_filter_message: str = ""
    narrowing: tuple[str, ...] = ()
    candidates: int = 0
    rejections: dict[tuple[str, str], int] = attrs.Factory(dict)
    top: list[ScoredNode] = attrs.Factory(list)
    evaluated: int = 0
    feasible_count: int = 0
    node: str = ""
    post_filter_message: str = ""
    permit_waits: dict[str, float] = attrs.Factory(dict)
    _diagnosis: "Diagnosis | None" = attrs.field(default=None, repr=False)
    _weighted: dict[str, list[int]] = attrs.field(factory=dict, repr=False)

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        self.narrowing = narrowing
        if status is not None and not status.is_success():
            self.pre_filter_plugin, self.pre_filter_message = status.plugin, status.message()

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        self.candidates = len(nodes)
        counts = self.rejections
        for _, status in diagnosis.node_to_status.items():
            key = (status.plugin, status.message())
            counts[key] = counts.get(key, 0) + 1
        outside = self.num_nodes - len(nodes)
        absent = diagnosis.node_to_status.absent_nodes_status
        if outside > 0 and absent.reasons:  # excluded by PreFilter: rejected or narrowed away
            key = (absent.plugin, absent.message())
            counts[key] = counts.get(key, 0) + outside
        self._diagnosis = diagnosis

    def pre_scored(self, skipped: frozenset[str]) -> None:
        pass  # a summary keeps the weighted scores of the plugins that scored

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        self._weighted[plugin] = weighted  # fresh per call; dropped once the totals are known

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        best = heapq.nlargest(self.top_n, range(len(nodes)), key=lambda i: (totals[i], -i))
        self.top = [ScoredNode(nodes[i], totals[i], {p: w[i] for p, w in self._weighted.items()}) for i in best]
        self._weighted = {}

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        self.evaluated, self.feasible_count, self.node = evaluated, feasible, node
        if self._diagnosis is not None:
            self.post_filter_message = self._diagnosis.post_filter_msg
            self._diagnosis = None
        self._weighted = {}

    def permit_wait(self, waits: dict[str, float]) -> None:
        self.permit_waits = dict(waits)


class ForwardingRecorder:
    """A :class:`CycleRecorder` that hands every fact on to ``inner`` (None: to no one); those
    that watch a cycle beside another recorder (a replay's agreement, the hint audit) extend it."""

    def __init__(self, inner: "CycleRecorder | None") -> None:
        self.inner = inner

    def pre_filter(self, result: "PreFilterResult | None", status: "Status | None",
                   narrowing: tuple[str, ...]) -> None:
        if self.inner is not None:
            self.inner.pre_filter(result, status, narrowing)

    def filtered(self, nodes: list[str], feasible: list[str], diagnosis: "Diagnosis") -> None:
        if self.inner is not None:
            self.inner.filtered(nodes, feasible, diagnosis)

    def pre_scored(self, skipped: frozenset[str]) -> None:
        if self.inner is not None:
            self.inner.pre_scored(skipped)

    def scores(self, plugin: str, nodes: list[str], raw: list[int], normalized: list[int],
               weighted: list[int]) -> None:
        if self.inner is not None:
            self.inner.scores(plugin, nodes, raw, normalized, weighted)

    def totals(self, nodes: list[str], totals: list[int]) -> None:
        if self.inner is not None:
            self.inner.totals(nodes, totals)

    def result(self, evaluated: int, feasible: int, node: str, status: "Status | None") -> None:
        if self.inner is not None:
            self.inner.result(evaluated, feasible, node, status)

    def permit_wait(self, waits: dict[str, float]) -> None:
        if self.inner is not None:
            self.inner.permit_wait(waits)
