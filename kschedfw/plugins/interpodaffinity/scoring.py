"""InterPodAffinity scoring: the per-topology score map built at PreScore, Score and NormalizeScore.

PreScore walks existing pods once and adds weights to a map ``topology key -> value -> score``:

* the incoming pod's preferred affinity terms (+weight) and anti-affinity terms (-weight) for
  every existing pod they select;
* for existing pods with affinity: ``hardPodAffinityWeight`` for each of their *required*
  affinity terms that select the incoming pod, +weight / -weight for their preferred affinity /
  anti-affinity terms that select it.

A node's score is the sum of the map entries for its own label values. Only nodes hosting pods
with affinity are visited unless the incoming pod has preferred terms of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from kschedfw.fwk.types import MAX_NODE_SCORE

from kschedfw.fwk.pod_info import POD_TERMS_CACHE, AffinityTerm, WeightedAffinityTerm, pod_terms
from kschedfw.plugins.interpodaffinity.filtering import add_domain_counts, domain_counts

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import PodAffinityTermIndex, PodLabelIndex
    from kschedfw.fwk.types import NodeInfo, NodeScore

__all__ = ["PRE_SCORE_STATE_KEY", "PreScoreState", "process_node", "add_indexed_preferred",
           "add_indexed_existing", "score_node", "normalize"]

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

#: topology key -> topology value -> score
ScoreMap = dict[str, dict[str, int]]
#: per cycle: does this (existing pod's) term select the incoming pod?
SelectsMemo = dict[AffinityTerm, bool]


class PreScoreState:
    """What PreScore computed for Score (upstream ``preScoreState``). Never mutated after PreScore,
    so ``clone`` returns the same object as upstream's does."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: ScoreMap) -> None:
        self.topology_score = topology_score

    def clone(self) -> "PreScoreState":
        return self

    def __repr__(self) -> str:
        return f"PreScoreState(topology_score={self.topology_score!r})"


def _add(scores: ScoreMap, key: str, value: str, amount: int) -> None:
    inner = scores.get(key)
    if inner is None:
        inner = scores[key] = {}
    inner[value] = inner.get(value, 0) + amount


def process_node(scores: ScoreMap, node_info: NodeInfo, pod: Pod,
                 preferred_affinity: tuple[WeightedAffinityTerm, ...],
                 preferred_anti_affinity: tuple[WeightedAffinityTerm, ...],
                 ns_labels: Mapping[str, str] | None, hard_weight: int, all_pods: bool,
                 memo: SelectsMemo, existing: bool = True) -> None:
    """Add the contributions of the pods on one node (upstream ``processExistingPod``).

    ``preferred_*`` are the incoming pod's terms with namespace selectors unrolled; with
    ``all_pods`` every pod of the node is matched against them, otherwise (the incoming pod has
    no preferred terms) only pods with affinity are visited. ``memo`` (one per cycle) remembers
    which existing pods' terms select the incoming pod. ``existing`` False leaves the existing
    pods' terms out (they come from :func:`add_indexed_existing`).
    """
    node = node_info.node
    if node is None:
        return
    labels = node.labels
    if not labels:
        return
    if all_pods:
        pods = node_info.pods
        if not pods:
            return
        # The incoming pod's terms: the node's domain is fixed, so count the matching pods.
        for weighted, sign in _signed(preferred_affinity, preferred_anti_affinity):
            term = weighted.term
            value = labels.get(term.topology_key)
            if value is None:
                continue
            n = term.count_matching(pods)
            if n:
                _add(scores, term.topology_key, value, sign * weighted.weight * n)
    if not existing:
        return
    # The existing pods' own terms, matched against the incoming pod (memoised per term object).
    for existing_pod in node_info.pods_with_affinity:
        entry = POD_TERMS_CACHE.get(id(existing_pod))
        terms = entry[1] if entry is not None and entry[0] is existing_pod else pod_terms(existing_pod)
        if hard_weight > 0:
            for term in terms.required_affinity:
                value = labels.get(term.topology_key)
                if value is not None and _selects(memo, term, pod, ns_labels):
                    _add(scores, term.topology_key, value, hard_weight)
        for weighted in terms.preferred_affinity:
            term = weighted.term
            value = labels.get(term.topology_key)
            if value is not None and _selects(memo, term, pod, ns_labels):
                _add(scores, term.topology_key, value, weighted.weight)
        for weighted in terms.preferred_anti_affinity:
            term = weighted.term
            value = labels.get(term.topology_key)
            if value is not None and _selects(memo, term, pod, ns_labels):
                _add(scores, term.topology_key, value, -weighted.weight)


def add_indexed_preferred(scores: ScoreMap, preferred_affinity: tuple[WeightedAffinityTerm, ...],
                          preferred_anti_affinity: tuple[WeightedAffinityTerm, ...],
                          index: PodLabelIndex | None, nodes: Sequence[NodeInfo] | None = None) -> bool:
    """The incoming pod's own preferred terms' part of :func:`process_node` over every node
    (``nodes``, the snapshot's list), read from the cache's label index (``domain_counts``).
    False, with ``scores`` untouched, when a term cannot be answered from it: then
    :func:`process_node` walks the pods."""
    if index is None:
        return False
    per_term = []
    for weighted, sign in _signed(preferred_affinity, preferred_anti_affinity):
        counts = domain_counts(weighted.term, index, nodes)
        if counts is None:
            return False
        per_term.append((weighted, sign, counts))
    for weighted, sign, counts in per_term:
        key = weighted.term.topology_key
        amount = sign * weighted.weight
        for value, n in counts.items():
            if n:
                _add(scores, key, value, amount * n)
    return True


def add_indexed_existing(scores: ScoreMap, pod: Pod, ns_labels: Mapping[str, str] | None,
                         hard_weight: int, term_index: PodAffinityTermIndex, memo: SelectsMemo,
                         nodes: Sequence[NodeInfo]) -> None:
    """The existing pods' part of :func:`process_node` over every node, read from the cache's
    :class:`~kschedfw.fwk.interface.PodAffinityTermIndex`: each distinct term is matched
    against ``pod`` once, and the pods per topology value of those that select it are read
    from the index (``nodes``: the snapshot's node list)."""
    if hard_weight > 0:
        for term in term_index.required_affinity:
            if _selects(memo, term, pod, ns_labels):
                key = term.topology_key
                add_domain_counts(scores, key, term_index.domain_counts(0, term, key, nodes),
                                  hard_weight)
    for weighted in term_index.preferred_affinity:
        term = weighted[0]
        if _selects(memo, term, pod, ns_labels):
            key = term.topology_key
            add_domain_counts(scores, key, term_index.domain_counts(2, weighted, key, nodes),
                              weighted[1])
    for weighted in term_index.preferred_anti_affinity:
        term = weighted[0]
        if _selects(memo, term, pod, ns_labels):
            key = term.topology_key
            add_domain_counts(scores, key, term_index.domain_counts(3, weighted, key, nodes),
                              -weighted[1])


def _selects(memo: SelectsMemo, term: AffinityTerm, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
    selected = memo.get(term)
    if selected is None:
        selected = memo[term] = term.matches(pod, ns_labels)
    return selected


def _signed(affinity: tuple[WeightedAffinityTerm, ...], anti: tuple[WeightedAffinityTerm, ...]
            ) -> Iterable[tuple[WeightedAffinityTerm, int]]:
    for weighted in affinity:
        yield weighted, 1
    for weighted in anti:
        yield weighted, -1


def score_node(state: PreScoreState, labels: Mapping[str, str]) -> int:
    score = 0
    for key, values in state.topology_score.items():
        value = labels.get(key)
        if value is not None:
            score += values.get(value, 0)
    return score


def normalize(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Scale to [0, 100] between the lowest and highest score; all equal -> all 0.

    ``int(100 * (s - min) / (max - min))`` computed in float64 and truncated, as upstream.
    """
    if not state.topology_score or not scores:
        return
    lo = hi = scores[0].score
    for ns in scores:
        s = ns.score
        if s > hi:
            hi = s
        if s < lo:
            lo = s
    diff = hi - lo
    if diff > 0:
        for ns in scores:
            ns.score = int(float(MAX_NODE_SCORE) * ((ns.score - lo) / diff))
    else:
        for ns in scores:
            ns.score = 0



def normalize_values(state: PreScoreState, values: list[int]) -> list[int]:
    """:func:`normalize` over plain ints: the scores it would leave, in the same order."""
    if not state.topology_score or not values:
        return values
    lo, hi = min(values), max(values)
    diff = hi - lo
    if diff > 0:
        return [int(float(MAX_NODE_SCORE) * ((v - lo) / diff)) for v in values]
    return [0] * len(values)