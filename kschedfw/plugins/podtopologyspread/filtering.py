"""PodTopologySpread filtering: PreFilter state, AddPod/RemovePod and Filter.

PreFilter counts, for each hard (``DoNotSchedule``) constraint, the matching pods per topology
value over every node that carries all the constraints' topology keys and passes the
constraint's node inclusion policies. It also keeps the two smallest counts per constraint
(:class:`CriticalPaths`), so that Filter needs no scan: a node fails when
``count(its domain) + (1 if the pod matches the selector) - global minimum > maxSkew``, where the
global minimum is 0 while there are fewer domains than ``minDomains``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from kschedfw import hookimpl
from kschedfw.fwk.status import Code, Status
from kschedfw.plugins.podtopologyspread.common import (HONOR, NAME, Constraint, NodeMatcher,
                                                       Selector, candidate_nodes,
                                                       count_pods_match_selector,
                                                       node_labels_match_constraints,
                                                       required_node_affinity)

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod
    from kschedfw.fwk.interface import PodLabelIndex
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.types import NodeInfo, PreFilterResult

#: (the snapshot's node list, {topology keys: domains}, {one-label count key: [log position,
#: counts]}): what :meth:`Filtering._node_list_cache` keeps
_NodeListCache = tuple[Sequence["NodeInfo"], dict[tuple[str, ...], list[dict[str, int]]], dict[Any, list[Any]]]

__all__ = ["PRE_FILTER_STATE_KEY", "ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH",
           "MAX_INT32", "CriticalPaths", "PreFilterState", "Filtering"]

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
MAX_INT32 = (1 << 31) - 1
_MISSING_LABEL = (ERR_REASON_NODE_LABEL_NOT_MATCH,)  # Filter's reasons, built once
_SKEW_EXCEEDED = (ERR_REASON_CONSTRAINTS_NOT_MATCH,)


class CriticalPaths:
    """The two topology values with the fewest matching pods seen so far.

    ``num0`` is always the minimum; ``num1 >= num0`` but is not guaranteed to be the second
    smallest after updates (enough for preemption, which changes one node at a time on its own
    copy of the state).
    """

    __slots__ = ("value0", "num0", "value1", "num1")

    def __init__(self, value0: str = "", num0: int = MAX_INT32, value1: str = "",
                 num1: int = MAX_INT32) -> None:
        self.value0, self.num0, self.value1, self.num1 = value0, num0, value1, num1

    def update(self, value: str, num: int) -> None:
        if value == self.value0:
            self.num0 = num
            if self.num0 > self.num1:
                self._swap()
        elif value == self.value1:
            self.num1 = num
            if self.num0 > self.num1:
                self._swap()
        elif num < self.num0:
            self.value1, self.num1 = self.value0, self.num0
            self.value0, self.num0 = value, num
        elif num < self.num1:
            self.value1, self.num1 = value, num

    def _swap(self) -> None:
        self.value0, self.num0, self.value1, self.num1 = self.value1, self.num1, self.value0, self.num0

    def copy(self) -> "CriticalPaths":
        return CriticalPaths(self.value0, self.num0, self.value1, self.num1)

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return ((self.value0, self.num0), (self.value1, self.num1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CriticalPaths):
            return NotImplemented
        return self.as_tuple() == other.as_tuple()

    def __repr__(self) -> str:
        return f"CriticalPaths({self.as_tuple()!r})"


class PreFilterState:
    """Computed at PreFilter, read at Filter, updated by AddPod/RemovePod on clones.

    ``tp_value_to_match_num[i]`` maps each topology value of constraint ``i`` to its number of
    matching pods; ``critical_paths[i]`` tracks its minimum. ``self_match[i]`` is 1 when the pod
    being scheduled matches constraint ``i``'s selector. Constraints are shared between clones.
    """

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num", "self_match", "items")

    def __init__(self, constraints: Sequence[Constraint] = (),
                 critical_paths: list[CriticalPaths] | None = None,
                 tp_value_to_match_num: list[dict[str, int]] | None = None,
                 self_match: tuple[int, ...] = ()) -> None:
        self.constraints = tuple(constraints)
        self.critical_paths = critical_paths if critical_paths is not None else []
        self.tp_value_to_match_num = tp_value_to_match_num if tp_value_to_match_num is not None else []
        self.self_match = self_match or (0,) * len(self.constraints)
        # What Filter reads per constraint, in one tuple; the dicts and paths are shared with the
        # fields above and updated in place by AddPod/RemovePod.
        self.items = tuple(
            (c.topology_key, c.max_skew, c.min_domains, sm, m, p)
            for c, sm, m, p in zip(self.constraints, self.self_match, self.tp_value_to_match_num,
                                   self.critical_paths))

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.constraints, [p.copy() for p in self.critical_paths],
                              [dict(m) for m in self.tp_value_to_match_num], self.self_match)

    def __repr__(self) -> str:
        return (f"PreFilterState(constraints={list(self.constraints)!r}, "
                f"critical_paths={self.critical_paths!r}, "
                f"tp_value_to_match_num={self.tp_value_to_match_num!r})")


def _state_error(value: Any) -> Exception:
    """Why ``value`` (read from the cycle state) is not a PreFilterState, in upstream's words."""
    if value is None:
        return LookupError(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    return TypeError(f"{value!r} convert to podtopologyspread.preFilterState error")


def _get_pre_filter_state(state: CycleState) -> PreFilterState:
    s = state.get(PRE_FILTER_STATE_KEY)
    if type(s) is not PreFilterState:
        raise _state_error(s)
    return s


def exact_label(selector: Selector) -> tuple[str, str] | None:
    """``(key, value)`` when the selector is that one label, else None."""
    reqs = selector.requirements
    if selector.nothing or len(reqs) != 1:
        return None
    key, op, values = reqs[0]
    if op == "=" or (op == "In" and len(values) == 1):
        return key, values[0]
    return None


def _count_from_candidates(m: dict[str, int], c: Constraint, key: str,
                           constraints: Sequence[Constraint], namespace: str,
                           index: PodLabelIndex | None, nodes: Sequence[NodeInfo]) -> None:
    """Add the pods ``c`` counts on each node carrying every constraint's key to ``m`` (its
    domains already recorded), visiting only the nodes that can host such a pod."""
    candidates = candidate_nodes(c.selector, index)
    for node_info in nodes if candidates is None else candidates:
        node = node_info.node
        if node is None or not node_info.pods:
            continue
        labels = node.labels
        if node_labels_match_constraints(labels, constraints):
            count = count_pods_match_selector(node_info.pods, c.selector, namespace)
            if count:
                value = labels[key]
                m[value] = m.get(value, 0) + count


def _label_counts(exact: tuple[str, str], key: str, constraints: Sequence[Constraint],
                  namespace: str, index: PodLabelIndex) -> dict[str, int]:
    """``{value of key: pods}`` of the non-terminating pods labelled ``exact`` in
    ``namespace`` on the nodes carrying every constraint's key, read from the label index."""
    counts: dict[str, int] = {}
    terminating = index.terminating_with(*exact)
    for node_info, per_namespace in index.nodes_with(*exact).items():
        n = per_namespace.get(namespace, 0)
        if n and terminating:
            ended = terminating.get(node_info)
            if ended:
                n -= ended.get(namespace, 0)
        if not n:
            continue
        node = node_info.node
        if node is None:
            continue
        labels = node.labels
        if node_labels_match_constraints(labels, constraints):
            value = labels[key]
            counts[value] = counts.get(value, 0) + n
    return counts


def _apply_changes(counts: dict[str, int], changes: Iterable[tuple[NodeInfo, Pod, int]],
                   exact: tuple[str, str], key: str, constraints: Sequence[Constraint],
                   namespace: str) -> None:
    """Bring :func:`_label_counts` up to date with the pods added (+1) and removed (-1) since."""
    label, want = exact
    for node_info, pod, delta in changes:
        if pod.deletion_timestamp is not None or pod.namespace != namespace \
                or pod.labels.get(label) != want:
            continue
        node = node_info.node
        if node is None:
            continue
        labels = node.labels
        if node_labels_match_constraints(labels, constraints):
            value = labels[key]
            counts[value] = counts.get(value, 0) + delta


class Filtering:
    """PreFilter, PreFilterExtensions and Filter of :class:`PodTopologySpread` (a mixin)."""

    name = NAME
    enable_node_inclusion_policy: bool
    enable_taint_toleration_comparison_operators: bool
    _domain_cache: _NodeListCache | None = None

    def _get_constraints(self, pod: Pod) -> list[Constraint]:  # provided by the plugin
        raise NotImplementedError

    def _label_index(self, nodes: Sequence[NodeInfo]) -> PodLabelIndex | None:  # provided by the plugin
        raise NotImplementedError

    # ------------------------------------------------------------------ PreFilter

    def cal_pre_filter_state(self, pod: Pod, nodes: Sequence[NodeInfo]) -> PreFilterState:
        constraints = self._get_constraints(pod)
        if not constraints:
            return PreFilterState()
        n = len(constraints)
        match_nums: list[dict[str, int]] = [{} for _ in range(n)]
        namespace = pod.namespace
        required = required_node_affinity(pod)
        inclusion = self.enable_node_inclusion_policy
        keys = tuple(c.topology_key for c in constraints)
        # Constraints whose node inclusion policies are the defaults with no affinity to honour
        # need no per-node policy check.
        plain = tuple(
            not inclusion or ((c.node_affinity_policy != HONOR or required is None)
                              and c.node_taints_policy != HONOR)
            for c in constraints)
        # With the cache's label index, the pods are counted only on the nodes that can host a
        # selected pod; every domain is still recorded (count 0), in node order.
        index = self._label_index(nodes)
        if index is not None and all(plain) and (inclusion or required is None):
            # No per-pod node condition: the domains depend on the nodes alone and are kept
            # while the snapshot's node list is the same object (the cache replaces it when
            # any node changes).
            match_nums = [dict(domains) for domains in self._domains(nodes, keys)]
            for i, c in enumerate(constraints):
                m = match_nums[i]
                exact = exact_label(c.selector)
                if exact is None:
                    _count_from_candidates(m, c, keys[i], constraints, namespace, index, nodes)
                    continue
                for value, n in self._label_counts(exact, keys[i], constraints, namespace,
                                                   index, nodes).items():
                    if n:
                        m[value] += n
        else:
            candidates = [candidate_nodes(c.selector, index) for c in constraints]
            self._walk(pod, nodes, constraints, keys, plain, candidates, required, match_nums)
        paths = []
        for m in match_nums:
            p = CriticalPaths()
            for value, num in m.items():
                p.update(value, num)
            paths.append(p)
        pod_labels = pod.labels
        self_match = tuple(1 if c.selector.matches(pod_labels) else 0 for c in constraints)
        return PreFilterState(constraints, paths, match_nums, self_match)

    def _walk(self, pod: Pod, nodes: Sequence[NodeInfo], constraints: Sequence[Constraint],
              keys: tuple[str, ...], plain: tuple[bool, ...],
              candidates: list[Iterable[NodeInfo] | None], required: NodeMatcher | None,
              match_nums: list[dict[str, int]]) -> None:
        """Upstream's count over every node; constraints with ``candidates`` (not None) only
        record their domains in the walk and count pods on those nodes afterwards."""
        namespace = pod.namespace
        inclusion = self.enable_node_inclusion_policy
        gate = self.enable_taint_toleration_comparison_operators
        indexed = tuple(enumerate(zip(constraints, keys, plain,
                                      tuple(cands is None for cands in candidates))))
        for node_info in nodes:
            node = node_info.node
            if node is None:
                continue
            if not inclusion and required is not None and not required(node):
                continue
            labels = node.labels
            for key in keys:
                if key not in labels:
                    break
            else:
                pods = node_info.pods
                for i, (c, key, is_plain, walk) in indexed:
                    if not is_plain and not c.match_node_inclusion_policies(pod, node, required, gate):
                        continue
                    value = labels[key]
                    count = count_pods_match_selector(pods, c.selector, namespace) if pods and walk else 0
                    m = match_nums[i]
                    m[value] = m.get(value, 0) + count
        for i, (c, key, is_plain, walk) in indexed:
            if walk:
                continue
            m = match_nums[i]
            for node_info in candidates[i] or ():  # the same checks as the walk's, on fewer nodes
                node = node_info.node
                if node is None or not node_info.pods:
                    continue
                if not inclusion and required is not None and not required(node):
                    continue
                labels = node.labels
                if not node_labels_match_constraints(labels, constraints):
                    continue
                if not is_plain and not c.match_node_inclusion_policies(pod, node, required, gate):
                    continue
                count = count_pods_match_selector(node_info.pods, c.selector, namespace)
                if count:
                    value = labels[key]
                    m[value] = m.get(value, 0) + count

    def _node_list_cache(self, nodes: Sequence[NodeInfo]) -> _NodeListCache:
        """What is kept while the snapshot's node list is the same object: the domains per
        topology keys, and the one-label counts with the label index's log position."""
        cache = self._domain_cache
        if cache is None or cache[0] is not nodes:
            cache = self._domain_cache = (nodes, {}, {})
        return cache

    def _label_counts(self, exact: tuple[str, str], key: str, constraints: Sequence[Constraint],
                      namespace: str, index: PodLabelIndex, nodes: Sequence[NodeInfo]
                      ) -> dict[str, int]:
        """:func:`_label_counts`, kept from cycle to cycle and brought up to date from the
        label index's log of changed pods (read afresh when the log does not reach back)."""
        kept = self._node_list_cache(nodes)[2]
        cache_key = (exact, key, tuple(c.topology_key for c in constraints), namespace)
        entry = kept.get(cache_key)
        sequence = index.sequence
        if entry is not None:
            changes = index.changes_since(entry[0])
            if changes is not None:
                if changes:
                    _apply_changes(entry[1], changes, exact, key, constraints, namespace)
                    entry[0] = sequence
                counts: dict[str, int] = entry[1]
                return counts
        if len(kept) > 1024:
            kept.clear()
        counts = _label_counts(exact, key, constraints, namespace, index)
        kept[cache_key] = [sequence, counts]
        return counts

    def _domains(self, nodes: Sequence[NodeInfo], keys: tuple[str, ...]) -> list[dict[str, int]]:
        """Per key, ``{value: 0}`` for the nodes carrying all ``keys``, in node order; kept per
        node list object."""
        cache = self._node_list_cache(nodes)
        domains = cache[1].get(keys)
        if domains is None:
            domains = [{} for _ in keys]
            indexed = tuple(enumerate(keys))
            for node_info in nodes:
                node = node_info.node
                if node is None:
                    continue
                labels = node.labels
                for key in keys:
                    if key not in labels:
                        break
                else:
                    for i, key in indexed:
                        domains[i].setdefault(labels[key], 0)
            cache[1][keys] = domains
        return domains

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        s = self.cal_pre_filter_state(pod, nodes)
        if not s.constraints:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    # ------------------------------------------------------------------ PreFilterExtensions

    def _update_with_pod(self, s: PreFilterState, updated_pod: Pod, preemptor: Pod,
                         node: Node | None, delta: int) -> None:
        if s is None or node is None or updated_pod.namespace != preemptor.namespace:
            return
        labels = node.labels
        if not node_labels_match_constraints(labels, s.constraints):
            return
        required = required_node_affinity(preemptor)
        inclusion = self.enable_node_inclusion_policy
        if not inclusion and required is not None and not required(node):
            return
        gate = self.enable_taint_toleration_comparison_operators
        pod_labels = updated_pod.labels
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if inclusion and not c.match_node_inclusion_policies(preemptor, node, required, gate):
                continue
            value = labels[c.topology_key]
            m = s.tp_value_to_match_num[i]
            m[value] = m.get(value, 0) + delta
            s.critical_paths[i].update(value, m[value])

    @hookimpl
    def pre_filter_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                           node_info: NodeInfo) -> Status | None:
        try:
            s = _get_pre_filter_state(state)
        except (LookupError, TypeError) as exc:
            return Status.as_status(exc)
        self._update_with_pod(s, pod_to_add, pod_to_schedule, node_info.node, 1)
        return None

    @hookimpl
    def pre_filter_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                              node_info: NodeInfo) -> Status | None:
        try:
            s = _get_pre_filter_state(state)
        except (LookupError, TypeError) as exc:
            return Status.as_status(exc)
        self._update_with_pod(s, pod_to_remove, pod_to_schedule, node_info.node, -1)
        return None

    # ------------------------------------------------------------------ Filter

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if type(s) is not PreFilterState:
            return Status.as_status(_state_error(s))
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        labels = node.labels
        for key, max_skew, min_domains, self_match, match_num, paths in s.items:
            value = labels.get(key)
            if value is None:
                return Status(Code.UnschedulableAndUnresolvable, _MISSING_LABEL)
            # existing matches + self match - global minimum must not exceed maxSkew
            min_match = 0 if len(match_num) < min_domains else paths.num0
            if match_num.get(value, 0) + self_match - min_match > max_skew:
                return Status(Code.Unschedulable, _SKEW_EXCEEDED)
        return None
