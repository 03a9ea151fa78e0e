"""InterPodAffinity filtering: PreFilter state, AddPod/RemovePod and Filter.

The pods' compiled terms (:class:`~kschedfw.fwk.pod_info.AffinityTerm`, :func:`pod_terms`)
are the framework's per-pod info, shared with the cache's term index.

PreFilter counts, per topology pair ``(key, value)``: existing pods whose required anti-affinity
selects the incoming pod, existing pods that match *all* the incoming pod's required affinity
terms (once per term), and existing pods that match each of its required anti-affinity terms.
Filter then only looks the node's labels up in those counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from kschedfw.fwk.pod_info import POD_TERMS_CACHE, AffinityTerm, pod_matches_all_affinity_terms, pod_terms

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod
    from kschedfw.fwk.interface import PodAffinityTermIndex, PodLabelIndex
    from kschedfw.fwk.types import NodeInfo

__all__ = [
    "PRE_FILTER_STATE_KEY", "PreFilterState", "existing_anti_affinity_counts",
    "incoming_affinity_anti_affinity_counts", "satisfy_pod_affinity", "satisfy_pod_anti_affinity",
    "satisfy_existing_pods_anti_affinity", "failed_check", "update_count",
    "indexed_existing_anti_affinity_counts", "add_domain_counts", "indexed_counts", "domain_counts", "clone_counts", "count_pairs",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH", "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
]

# --------------------------------------------------------------------------- topology counts
# Upstream's topologyToMatchedTermCount, a map (key, value) -> count, is kept here as
# {key: {value: count}}: Filter then needs one lookup per topology key instead of one per node
# label. Zero counts are removed (and empty inner maps with them) so emptiness means "no pair".

Counts = dict[str, dict[str, int]]


def update_count(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    """Add ``delta`` to the pair (key, labels[key]) when the node has the key; drop zeros."""
    value = labels.get(key)
    if value is None:
        return
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    total = inner.get(value, 0) + delta
    if total == 0:
        inner.pop(value, None)
        if not inner:
            del counts[key]
    else:
        inner[value] = total


def clone_counts(counts: Counts) -> Counts:
    return {key: dict(values) for key, values in counts.items()}


def count_pairs(counts: Counts) -> dict[tuple[str, str], int]:
    """The counts as upstream's flat ``{(key, value): count}`` map (tests, debugging)."""
    return {(key, value): n for key, values in counts.items() for value, n in values.items()}


# --------------------------------------------------------------------------- PreFilter state

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"


class PreFilterState:
    """What PreFilter computed for Filter (upstream ``preFilterState``).

    ``affinity_terms`` / ``anti_affinity_terms`` are the incoming pod's required terms with their
    namespace selectors unrolled; ``self_match`` records whether the pod matches all its own
    affinity terms (the "first pod of a group" exception of Filter).
    """

    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts",
                 "pod", "affinity_terms", "anti_affinity_terms", "namespace_labels", "self_match")

    def __init__(self, pod: Pod, affinity_terms: tuple[AffinityTerm, ...],
                 anti_affinity_terms: tuple[AffinityTerm, ...],
                 namespace_labels: Mapping[str, str] | None) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.self_match = pod_matches_all_affinity_terms(affinity_terms, pod)
        self.existing_anti_affinity_counts: Counts = {}
        self.affinity_counts: Counts = {}
        self.anti_affinity_counts: Counts = {}

    def clone(self) -> "PreFilterState":
        new = PreFilterState.__new__(PreFilterState)
        new.pod = self.pod
        new.affinity_terms = self.affinity_terms
        new.anti_affinity_terms = self.anti_affinity_terms
        new.namespace_labels = self.namespace_labels
        new.self_match = self.self_match
        new.existing_anti_affinity_counts = clone_counts(self.existing_anti_affinity_counts)
        new.affinity_counts = clone_counts(self.affinity_counts)
        new.anti_affinity_counts = clone_counts(self.anti_affinity_counts)
        return new

    def update_with_pod(self, other: Pod, node: Node | None, multiplier: int) -> None:
        """Count ``other`` in (multiplier 1) or out (-1) as if it ran on ``node``."""
        if node is None:
            return
        labels = node.labels
        pod, ns_labels = self.pod, self.namespace_labels
        for term in pod_terms(other).required_anti_affinity:
            if term.matches(pod, ns_labels):
                update_count(self.existing_anti_affinity_counts, labels, term.topology_key, multiplier)
        if pod_matches_all_affinity_terms(self.affinity_terms, other):
            for term in self.affinity_terms:
                update_count(self.affinity_counts, labels, term.topology_key, multiplier)
        # The incoming pod's namespace selectors are unrolled: no namespace labels needed.
        for term in self.anti_affinity_terms:
            if term.matches(other, None):
                update_count(self.anti_affinity_counts, labels, term.topology_key, multiplier)

    def __repr__(self) -> str:
        return (f"PreFilterState(existing_anti_affinity_counts={self.existing_anti_affinity_counts!r}, "
                f"affinity_counts={self.affinity_counts!r}, "
                f"anti_affinity_counts={self.anti_affinity_counts!r})")


def existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str] | None,
                                  nodes: Iterable[NodeInfo]) -> Counts:
    """Pairs where an existing pod's required anti-affinity term selects ``pod``.

    ``nodes`` are the nodes hosting pods with required anti-affinity.
    """
    counts: Counts = {}
    memo: dict[AffinityTerm, bool] = {}
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.labels
        for existing in node_info.pods_with_required_anti_affinity:
            entry = POD_TERMS_CACHE.get(id(existing))
            terms = entry[1] if entry is not None and entry[0] is existing else pod_terms(existing)
            for term in terms.required_anti_affinity:
                key = term.topology_key
                value = labels.get(key)
                if value is None:
                    continue
                selected = memo.get(term)
                if selected is None:
                    selected = memo[term] = term.matches(pod, ns_labels)
                if selected:
                    inner = counts.get(key)
                    if inner is None:
                        inner = counts[key] = {}
                    inner[value] = inner.get(value, 0) + 1
    return counts


def indexed_existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str] | None,
                                          term_index: PodAffinityTermIndex, nodes: Sequence[NodeInfo]) -> Counts:
    """:func:`existing_anti_affinity_counts` read from the cache's
    :class:`~kschedfw.fwk.interface.PodAffinityTermIndex`: each distinct required
    anti-affinity term of the assigned pods is matched once, and the pods per topology value of
    those that select ``pod`` are read from the index (``nodes``: the snapshot's node list).
    Same counts."""
    counts: Counts = {}
    for term in term_index.required_anti_affinity:
        if term.matches(pod, ns_labels):
            key = term.topology_key
            add_domain_counts(counts, key, term_index.domain_counts(1, term, key, nodes), 1)
    return counts


def add_domain_counts(counts: Counts, key: str, per_value: Mapping[str, int], amount: int) -> None:
    """Add ``amount`` per pod to the pair (key, value) for each ``{value: pods}`` entry with
    pods (a pair appears only where some pod contributes, as in the walk)."""
    inner = counts.get(key)
    for value, n in per_value.items():
        if n:
            if inner is None:
                inner = counts[key] = {}
            inner[value] = inner.get(value, 0) + amount * n


def indexed_counts(term: AffinityTerm, index: PodLabelIndex | None) -> list[tuple[NodeInfo, int]] | None:
    """``(node_info, term.count_matching(node_info.pods))`` for every node where that is not 0,
    read from the cache's :class:`~kschedfw.fwk.interface.PodLabelIndex`; None when the
    term cannot be answered from it (no index, a selector other than one label, a namespace
    selector to evaluate)."""
    if index is None or term.single_label is None:
        return None
    if term.namespace_selector is not None and not term.all_namespaces:
        return None
    key, want = term.single_label
    nodes = index.nodes_with(key, want)
    if term.all_namespaces:
        return [(ni, sum(per_namespace.values())) for ni, per_namespace in nodes.items()]
    namespaces = term.namespaces
    out: list[tuple[NodeInfo, int]] = []
    for ni, per_namespace in nodes.items():
        n = 0
        for namespace, count in per_namespace.items():
            if namespace in namespaces:
                n += count
        if n:
            out.append((ni, n))
    return out


def domain_counts(term: AffinityTerm, index: PodLabelIndex | None, nodes: Sequence[NodeInfo] | None
                  ) -> dict[str, int] | None:
    """``{value of term.topology_key: pods the term selects on nodes with that value}`` over
    every node, from the cache's label index (None when :func:`indexed_counts` cannot answer);
    values may map to 0. Kept from cycle to cycle per term while the snapshot's node list
    (``nodes``) is the same object, and brought up to date from the index's log of changed
    pods, so a cycle does not revisit every node hosting such pods."""
    if index is None or term.single_label is None:
        return None
    if term.namespace_selector is not None and not term.all_namespaces:
        return None
    key = term.topology_key
    kept = index.kept_for(nodes)  # term -> [log position, {topology value: pods}]
    entry = kept.get(term)
    if entry is not None:
        changes = index.changes_since(entry[0])
        if changes is not None:
            counts: dict[str, int] = entry[1]
            if changes:
                label, want = term.single_label
                all_ns, namespaces = term.all_namespaces, term.namespaces
                for ni, pod, delta in changes:
                    if (all_ns or pod.namespace in namespaces) and pod.labels.get(label) == want:
                        node = ni.node
                        if node is not None:
                            value = node.labels.get(key)
                            if value is not None:
                                counts[value] = counts.get(value, 0) + delta
                entry[0] = index.sequence
            return counts
    per_node = indexed_counts(term, index)
    assert per_node is not None
    counts = {}
    for ni, n in per_node:
        node = ni.node
        if node is None:
            continue
        value = node.labels.get(key)
        if value is not None:
            counts[value] = counts.get(value, 0) + n
    kept[term] = [index.sequence, counts]
    return counts


def _indexed_incoming_counts(affinity_terms: tuple[AffinityTerm, ...],
                             anti_affinity_terms: tuple[AffinityTerm, ...],
                             index: PodLabelIndex, nodes: Sequence[NodeInfo]) -> tuple[Counts, Counts] | None:
    """:func:`incoming_affinity_anti_affinity_counts` from the label index: at most one affinity
    term (several must all match one pod) and every term answerable by :func:`domain_counts`."""
    if len(affinity_terms) > 1:
        return None
    per_term = []
    for term in affinity_terms + anti_affinity_terms:
        counts = domain_counts(term, index, nodes)
        if counts is None:
            return None
        per_term.append((term, counts))
    affinity: Counts = {}
    anti: Counts = {}
    for i, (term, counts) in enumerate(per_term):
        target = affinity if i < len(affinity_terms) else anti
        key = term.topology_key
        inner = target.get(key)
        for value, n in counts.items():
            if n:
                if inner is None:
                    inner = target[key] = {}
                inner[value] = inner.get(value, 0) + n
    return affinity, anti


def incoming_affinity_anti_affinity_counts(affinity_terms: tuple[AffinityTerm, ...],
                                           anti_affinity_terms: tuple[AffinityTerm, ...],
                                           nodes: Sequence[NodeInfo], index: PodLabelIndex | None = None
                                           ) -> tuple[Counts, Counts]:
    """Pairs of existing pods matching the incoming pod's required terms.

    Affinity: a pod counts (once per term) only if it matches every term. Anti-affinity: a pod
    counts for each term it matches. Upstream ``getIncomingAffinityAntiAffinityCounts``.
    With the cache's label ``index`` (and ``nodes`` all of the snapshot's nodes), only the
    nodes hosting selected pods are visited; the counts are the same.
    """
    affinity: Counts = {}
    anti: Counts = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity, anti
    if index is not None:
        indexed = _indexed_incoming_counts(affinity_terms, anti_affinity_terms, index, nodes)
        if indexed is not None:
            return indexed
    keys = frozenset(t.topology_key for t in affinity_terms + anti_affinity_terms)
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.labels
        # A node without any of the topology keys cannot contribute a pair.
        for key in keys:
            if key in labels:
                break
        else:
            continue
        pods = node_info.pods
        if not pods:
            continue
        if affinity_terms:
            if len(affinity_terms) == 1:
                n = affinity_terms[0].count_matching(pods)
            else:
                n = sum(1 for p in pods if pod_matches_all_affinity_terms(affinity_terms, p))
            if n:
                for term in affinity_terms:
                    _add(affinity, labels, term.topology_key, n)
        for term in anti_affinity_terms:
            key = term.topology_key
            if key not in labels:
                continue
            n = term.count_matching(pods)
            if n:
                _add(anti, labels, key, n)
    return affinity, anti


def _add(counts: Counts, labels: Mapping[str, str], key: str, n: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    inner[value] = inner.get(value, 0) + n


def failed_check(state: PreFilterState, labels: Mapping[str, str]) -> int:
    """Filter's verdict for a node with ``labels``: 0 when it passes, else which check fails
    first, in upstream's order: 1 the pod's affinity (:func:`satisfy_pod_affinity`), 2 its
    anti-affinity (:func:`satisfy_pod_anti_affinity`), 3 existing pods' anti-affinity
    (:func:`satisfy_existing_pods_anti_affinity`). HOT PATH: the three inlined."""
    terms = state.affinity_terms
    if terms:
        counts = state.affinity_counts
        pods_exist = True
        for term in terms:
            key = term.topology_key
            value = labels.get(key)
            if value is None:
                return 1
            if pods_exist:
                values = counts.get(key)
                if values is None or values.get(value, 0) <= 0:
                    pods_exist = False
        if not pods_exist and (counts or not state.self_match):
            return 1
    counts = state.anti_affinity_counts
    if counts:
        for term in state.anti_affinity_terms:
            key = term.topology_key
            value = labels.get(key)
            if value is not None:
                values = counts.get(key)
                if values is not None and values.get(value, 0) > 0:
                    return 2
    counts = state.existing_anti_affinity_counts
    if counts:
        for key, values in counts.items():
            value = labels.get(key)
            if value is not None and values.get(value, 0) > 0:
                return 3
    return 0


def satisfy_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No existing pod's required anti-affinity is violated in the node's domains."""
    for key, values in state.existing_anti_affinity_counts.items():
        value = labels.get(key)
        if value is not None and values.get(value, 0) > 0:
            return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No pod matching one of the incoming pod's anti-affinity terms shares the term's domain."""
    counts = state.anti_affinity_counts
    if counts:
        for term in state.anti_affinity_terms:
            key = term.topology_key
            value = labels.get(key)
            if value is not None:
                values = counts.get(key)
                if values is not None and values.get(value, 0) > 0:
                    return False
    return True


def satisfy_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Every affinity term has a matching pod in the node's domain, and the node has every key.

    A pod that matches its own terms may go to any node carrying the keys while no pod in the
    cluster matches them yet (the first pod of a group with affinity to itself).
    """
    pods_exist = True
    counts = state.affinity_counts
    for term in state.affinity_terms:
        key = term.topology_key
        value = labels.get(key)
        if value is None:
            return False
        if pods_exist:
            values = counts.get(key)
            if values is None or values.get(value, 0) <= 0:
                pods_exist = False
    if not pods_exist:
        return not counts and state.self_match
    return True
