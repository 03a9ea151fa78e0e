"""PodTopologySpread scoring: PreScore, Score and NormalizeScore.

PreScore takes the soft (``ScheduleAnyway``) constraints and, for every constraint except those
on ``kubernetes.io/hostname``, counts the matching pods per topology value over all nodes, but
only for values some feasible node has. Each constraint gets the weight
``ln(number of its domains among the feasible nodes + 2)`` (for hostname: the number of scored
nodes), so spreading over few large domains is not drowned by many small ones.

Score is ``round(sum(count(domain) * weight + maxSkew - 1))``; hostname counts are taken from the
node itself. NormalizeScore inverts it: ``100 * (max + min - score) / max``, 100 for all when the
maximum is 0. Nodes lacking a topology key are ignored (score 0) when the pod has its own
constraints or the defaulting is not System.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from kschedfw import hookimpl
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import MAX_NODE_SCORE
from kschedfw.plugins.podtopologyspread.filtering import exact_label
from kschedfw.plugins.podtopologyspread.common import (HONOR, LABEL_HOSTNAME, NAME, SCHEDULE_ANYWAY,
                                                       Constraint, candidate_nodes,
                                                       count_pods_match_selector,
                                                       filter_constraints,
                                                       node_labels_match_constraints,
                                                       required_node_affinity)

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import PodLabelIndex
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, NodeScore

#: what Score reads per constraint: (topology key, is hostname, counts, weight, maxSkew - 1 as
#: float, selector match function or None when the selector is empty)
_ScoreItem = tuple[str, bool, dict[str, int], float, float, "Callable[[Mapping[str, str]], bool] | None"]

__all__ = ["PRE_SCORE_STATE_KEY", "INVALID_SCORE", "PreScoreState", "Scoring",
           "topology_normalizing_weight", "go_round"]

PRE_SCORE_STATE_KEY = "PreScore" + NAME
INVALID_SCORE = -1


class PreScoreState:
    """Computed at PreScore, read by Score and NormalizeScore (never mutated afterwards).

    ``topology_value_to_pod_counts[i]`` maps the topology values of constraint ``i`` present
    among the feasible nodes to their matching pod counts (empty for hostname constraints);
    ``ignored_nodes`` are feasible nodes missing a required topology key.
    """

    __slots__ = ("constraints", "ignored_nodes", "topology_value_to_pod_counts",
                 "topology_normalizing_weight", "is_hostname", "namespace", "items")

    def __init__(self) -> None:
        self.constraints: tuple[Constraint, ...] = ()
        self.ignored_nodes: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []
        self.is_hostname: tuple[bool, ...] = ()
        self.namespace = ""
        self.items: tuple[_ScoreItem, ...] = ()

    def clone(self) -> "PreScoreState":
        return self

    def __repr__(self) -> str:
        return (f"PreScoreState(constraints={list(self.constraints)!r}, "
                f"ignored_nodes={self.ignored_nodes!r}, "
                f"topology_value_to_pod_counts={self.topology_value_to_pod_counts!r}, "
                f"topology_normalizing_weight={self.topology_normalizing_weight!r})")


def topology_normalizing_weight(size: int) -> float:
    """``ln(size + 2)``: in [1.09, 8.52] for 1 to 5000 domains."""
    return math.log(size + 2)


def go_round(x: float) -> int:
    """Go's ``math.Round``: halves round away from zero."""
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1
    return int(r) if x >= 0 else -go_round(-x)


def _state_error(value: Any) -> Exception:
    if value is None:
        return LookupError(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    return TypeError(f"{value!r}  convert to podtopologyspread.preScoreState error")


class Scoring:
    """PreScore, Score and NormalizeScore of :class:`PodTopologySpread` (a mixin)."""

    handle: Handle
    system_defaulted: bool
    enable_node_inclusion_policy: bool
    enable_match_label_keys: bool
    enable_taint_toleration_comparison_operators: bool

    def _build_default_constraints(self, pod: Pod, action: str) -> list[Constraint]:  # plugin
        raise NotImplementedError

    def _label_index(self, nodes: Sequence[NodeInfo]) -> PodLabelIndex | None:  # the plugin's
        raise NotImplementedError

    def _label_counts(self, exact: tuple[str, str], key: str, constraints: Sequence[Constraint],
                      namespace: str, index: PodLabelIndex, nodes: Sequence[NodeInfo]
                      ) -> dict[str, int]:
        raise NotImplementedError  # provided by Filtering

    def _soft_constraints(self, pod: Pod) -> list[Constraint]:
        if pod.topology_spread_constraints:
            return filter_constraints(pod.topology_spread_constraints, pod.labels, SCHEDULE_ANYWAY,
                                      enable_match_label_keys=self.enable_match_label_keys,
                                      enable_node_inclusion_policy=self.enable_node_inclusion_policy)
        return self._build_default_constraints(pod, SCHEDULE_ANYWAY)

    def init_pre_score_state(self, s: PreScoreState, pod: Pod, filtered_nodes: Sequence[NodeInfo],
                             require_all_topologies: bool) -> None:
        s.constraints = tuple(self._soft_constraints(pod))
        if not s.constraints:
            return
        n = len(s.constraints)
        counts: list[dict[str, int]] = [{} for _ in range(n)]
        topo_size = [0] * n
        keys = tuple(c.topology_key for c in s.constraints)
        is_hostname = tuple(k == LABEL_HOSTNAME for k in keys)
        zonal = tuple(i for i in range(n) if not is_hostname[i])
        ignored = s.ignored_nodes
        for node_info in filtered_nodes:
            node = node_info.node
            assert node is not None  # feasible nodes have a node
            labels = node.labels
            if require_all_topologies:
                missing = False
                for key in keys:
                    if key not in labels:
                        missing = True
                        break
                if missing:
                    ignored.add(node.name)
                    continue
            for i in zonal:
                value = labels.get(keys[i], "")
                c = counts[i]
                if value not in c:
                    c[value] = 0
                    topo_size[i] += 1
        weights: list[float] = []
        for i in range(n):
            size = len(filtered_nodes) - len(ignored) if is_hostname[i] else topo_size[i]
            weights.append(topology_normalizing_weight(size))
        s.topology_value_to_pod_counts = counts
        s.topology_normalizing_weight = weights
        s.is_hostname = is_hostname
        s.namespace = pod.namespace
        s.items = tuple(
            (c.topology_key, is_hostname[i], counts[i], weights[i], float(c.max_skew - 1),
             None if c.selector.empty else c.selector.matches)
            for i, c in enumerate(s.constraints))

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        all_nodes = self.handle.snapshot.node_infos()
        if not all_nodes:
            return Status.skip()
        s = PreScoreState()
        # Only non-system-default spreading requires every topology key on a node, so nodes
        # without a zone label still get hostname spreading under System defaulting.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        self.init_pre_score_state(s, pod, nodes, require_all)
        if not s.constraints:
            return Status.skip()

        constraints = s.constraints
        keys = tuple(c.topology_key for c in constraints)
        counts = s.topology_value_to_pod_counts
        # Hostname counts are taken per node at Score; other constraints only need counting
        # where some feasible node shares the topology value.
        work = tuple((i, c, keys[i], counts[i]) for i, c in enumerate(constraints)
                     if not s.is_hostname[i] and counts[i])
        if work:
            namespace = pod.namespace
            required = required_node_affinity(pod)
            inclusion = self.enable_node_inclusion_policy
            gate = self.enable_taint_toleration_comparison_operators
            index = self._label_index(all_nodes)
            if index is not None and require_all and (inclusion or required is None):
                # One-label selectors with no per-pod node condition: the counts PreFilter keeps
                # across cycles (nodes with every key, per value), read for the feasible values.
                rest: list[tuple[int, Constraint, str, dict[str, int]]] = []
                for item in work:
                    _, c, key, tp_counts = item
                    exact = exact_label(c.selector)
                    if exact is None or (inclusion and (
                            (c.node_affinity_policy == HONOR and required is not None)
                            or c.node_taints_policy == HONOR)):
                        rest.append(item)
                        continue
                    kept = self._label_counts(exact, key, constraints, namespace, index, all_nodes)
                    for value in tp_counts:
                        n = kept.get(value)
                        if n:
                            tp_counts[value] += n
                work = tuple(rest)
            # With the cache's label index, each constraint visits only the nodes that can
            # host a pod it selects (on the others the count is 0), else every node.
            candidates = [candidate_nodes(c.selector, index) for _, c, _, _ in work]
            if all(cands is not None for cands in candidates):
                for (_, c, key, tp_counts), nodes_of in zip(work, candidates):
                    for node_info in nodes_of or ():  # the same checks as the walk's below
                        node = node_info.node
                        if node is None or not node_info.pods:
                            continue
                        if not inclusion and required is not None and not required(node):
                            continue
                        labels = node.labels
                        if require_all and not node_labels_match_constraints(labels, constraints):
                            continue
                        value = labels.get(key, "")
                        if value not in tp_counts:
                            continue
                        if inclusion and not c.match_node_inclusion_policies(pod, node, required, gate):
                            continue
                        tp_counts[value] += count_pods_match_selector(node_info.pods, c.selector,
                                                                      namespace)
                work = ()
            for node_info in all_nodes if work else ():
                node = node_info.node
                if node is None:
                    continue
                if not inclusion and required is not None and not required(node):
                    continue
                labels = node.labels
                if require_all:
                    missing = False
                    for key in keys:
                        if key not in labels:
                            missing = True
                            break
                    if missing:
                        continue
                pods = node_info.pods
                for i, c, key, tp_counts in work:
                    value = labels.get(key, "")
                    if value not in tp_counts:
                        continue
                    if inclusion and not c.match_node_inclusion_policies(pod, node, required, gate):
                        continue
                    if pods:
                        tp_counts[value] += count_pods_match_selector(pods, c.selector, namespace)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if type(s) is not PreScoreState:
            return Status.as_status(_state_error(s))
        node = node_info.node
        assert node is not None  # Score sees only NodeInfos with a node
        if node.name in s.ignored_nodes:
            return 0
        labels = node.labels
        namespace = s.namespace
        total = 0.0
        for key, is_hostname, counts, weight, skew_term, matches in s.items:
            value = labels.get(key)
            if value is None:
                continue
            if is_hostname:
                cnt = 0
                if matches is not None:
                    for p in node_info.pods:
                        if p.deletion_timestamp is None and p.namespace == namespace and matches(p.labels):
                            cnt += 1
            else:
                cnt = counts.get(value, 0)
            total += cnt * weight + skew_term
        return go_round(total)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if type(s) is not PreScoreState:
            return Status.as_status(_state_error(s))
        ignored = s.ignored_nodes
        min_score: int | None = None
        max_score = 0
        for ns in scores:
            if ns.name in ignored:
                ns.score = INVALID_SCORE
                continue
            score = ns.score
            if min_score is None or score < min_score:
                min_score = score
            if score > max_score:
                max_score = score
        if min_score is None:
            min_score = 0
        for ns in scores:
            if ns.score == INVALID_SCORE:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int] | None:
        """:meth:`normalize_score` over plain ints (hookspecs.WholeListNormalizeScore) when no
        node is ignored (the ignored ones are known by name); else None, for the NodeScore path."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if type(s) is not PreScoreState or s.ignored_nodes:
            return None
        if not values:
            return values
        min_score, max_score = min(values), max(0, max(values))
        if max_score == 0:
            return [0 if v == INVALID_SCORE else MAX_NODE_SCORE for v in values]
        return [0 if v == INVALID_SCORE else MAX_NODE_SCORE * (max_score + min_score - v) // max_score
                for v in values]
