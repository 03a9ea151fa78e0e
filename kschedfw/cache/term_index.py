"""Which nodes host pods with a given pod (anti-)affinity term, kept up to date by the cache.

InterPodAffinity's PreFilter (existing pods' required anti-affinity) and PreScore (existing
pods' required and preferred affinity, preferred anti-affinity) ask, of every term of every
assigned pod with affinity, whether it selects the incoming pod, and add up per topology domain
where it does. Pods of one workload share their compiled terms (``AffinityTerm`` objects are
interned), so this index groups them: ``term -> {NodeInfo: number of pods}``. A cycle then
decides once per distinct term whether it selects the pod and visits only the nodes of the
terms that do, instead of every pod with affinity on every node.

The terms are the pods' compiled ones (:func:`kschedfw.fwk.pod_info.pod_terms`); the index remembers what it
added for each pod, so removal takes out exactly that even if the compile caches were reset.
Per term, the pods per topology value are kept from cycle to cycle and updated from a short log
of changes (:meth:`PodAffinityTermIndex.domain_counts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw.fwk.pod_info import PodTerms, has_pod_affinity, pod_terms

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.types import NodeInfo

__all__ = ["PodAffinityTermIndex", "TermNodes"]

#: ``{NodeInfo: number of pods on it carrying the term}``
TermNodes = dict[Any, int]


def _pod_terms(pod: "Pod") -> PodTerms | None:
    if not has_pod_affinity(pod):
        return None
    return pod_terms(pod)


class PodAffinityTermIndex:
    """Assigned pods' affinity terms, grouped by term object.

    ``required_affinity`` and ``required_anti_affinity`` map ``AffinityTerm -> TermNodes``;
    ``preferred_affinity`` and ``preferred_anti_affinity`` map ``(AffinityTerm, weight) ->
    TermNodes``. Read-only for users; entries with no pods left are removed.
    """

    __slots__ = ("required_affinity", "required_anti_affinity", "preferred_affinity",
                 "preferred_anti_affinity", "_added", "_log", "_log_start", "_kept", "_kept_nodes")

    #: How many changes the log keeps; a user further behind reads the nodes afresh.
    LOG_LIMIT = 4096

    def __init__(self) -> None:
        self.required_affinity: dict[Any, TermNodes] = {}
        self.required_anti_affinity: dict[Any, TermNodes] = {}
        self.preferred_affinity: dict[tuple[Any, int], TermNodes] = {}
        self.preferred_anti_affinity: dict[tuple[Any, int], TermNodes] = {}
        # pod uid -> (NodeInfo, the four key tuples added for it)
        self._added: dict[str, tuple[Any, tuple[tuple[Any, ...], ...]]] = {}
        # (NodeInfo, the four key tuples, +1 added / -1 removed), and the sequence of _log[0]
        self._log: list[tuple[Any, tuple[tuple[Any, ...], ...], int]] = []
        self._log_start = 0
        # (table number, key, topology key) -> [log position, {value: pods}], for _kept_nodes
        self._kept: dict[tuple[int, Any, str], list[Any]] = {}
        self._kept_nodes: Any = None

    def add(self, node_info: "NodeInfo", pod: "Pod") -> None:
        terms = _pod_terms(pod)
        if terms is None:
            return
        keys = (tuple(terms.required_affinity), tuple(terms.required_anti_affinity),
                tuple((w.term, w.weight) for w in terms.preferred_affinity),
                tuple((w.term, w.weight) for w in terms.preferred_anti_affinity))
        if not any(keys):
            return
        if pod.uid in self._added:  # re-added without a removal: take the old one out first
            self._remove_uid(pod.uid)
        self._added[pod.uid] = (node_info, keys)
        self._record(node_info, keys, 1)
        for table, table_keys in zip(self._tables(), keys):
            for key in table_keys:
                nodes = table.get(key)
                if nodes is None:
                    nodes = table[key] = {}
                nodes[node_info] = nodes.get(node_info, 0) + 1

    def remove(self, node_info: "NodeInfo", pod: "Pod") -> None:
        if pod.uid in self._added:
            self._remove_uid(pod.uid)

    def _remove_uid(self, uid: str) -> None:
        node_info, keys = self._added.pop(uid)
        self._record(node_info, keys, -1)
        for table, table_keys in zip(self._tables(), keys):
            for key in table_keys:
                nodes = table.get(key)
                if nodes is None:
                    continue
                count = nodes.get(node_info, 0) - 1
                if count > 0:
                    nodes[node_info] = count
                    continue
                nodes.pop(node_info, None)
                if not nodes:
                    del table[key]

    def _record(self, node_info: Any, keys: tuple[tuple[Any, ...], ...], delta: int) -> None:
        log = self._log
        log.append((node_info, keys, delta))
        if len(log) > self.LOG_LIMIT:
            drop = len(log) // 2
            del log[:drop]
            self._log_start += drop

    def domain_counts(self, table: int, key: Any, topology_key: str, nodes: Any) -> dict[str, int]:
        """``{node label topology_key's value: pods}`` over the entry ``key`` of table ``table``
        (0 required affinity, 1 required anti-affinity, 2 preferred affinity, 3 preferred
        anti-affinity), skipping nodes that are gone or lack the label; values may map to 0.
        Kept while ``nodes`` (the snapshot's node list, replaced whenever a node changes) is the
        same object, and brought up to date from the log of pods added and removed since."""
        sequence = self._log_start + len(self._log)
        if nodes is not self._kept_nodes or len(self._kept) > 4096:
            self._kept.clear()  # hold on to one node list only
            self._kept_nodes = nodes
        kept_key = (table, key, topology_key)
        entry = self._kept.get(kept_key)
        if entry is not None and entry[0] >= self._log_start:
            counts: dict[str, int] = entry[1]
            if entry[0] < sequence:
                for node_info, keys, delta in self._log[entry[0] - self._log_start:]:
                    n = keys[table].count(key)
                    if not n:
                        continue
                    node = node_info.node
                    if node is None:
                        continue
                    value = node.labels.get(topology_key)
                    if value is not None:
                        counts[value] = counts.get(value, 0) + delta * n
                entry[0] = sequence
            return counts
        counts = {}
        for node_info, n in self._tables()[table].get(key, {}).items():
            node = node_info.node
            if node is None:
                continue
            value = node.labels.get(topology_key)
            if value is not None:
                counts[value] = counts.get(value, 0) + n
        self._kept[kept_key] = [sequence, counts]
        return counts

    def _tables(self) -> tuple[dict[Any, TermNodes], ...]:
        return (self.required_affinity, self.required_anti_affinity, self.preferred_affinity,
                self.preferred_anti_affinity)

    def __len__(self) -> int:
        """How many pods with affinity terms are indexed."""
        return len(self._added)
