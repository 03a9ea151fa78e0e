"""Which nodes host pods with a given label, kept up to date by the cache.

InterPodAffinity counts, for each of the incoming pod's terms, the pods on every node that the
term's label selector selects, and PodTopologySpread the pods its constraints' selectors select:
a walk over every assigned pod, per pod scheduled. For the common one-label selector
(``app: web``) this index answers with the nodes that host such pods and how many per namespace,
so the walk visits only those nodes (any selector with a ``key = value`` or ``key In (...)``
requirement is narrowed to the nodes hosting such pods).

It also keeps a short log of the pods added and removed (:meth:`PodLabelIndex.changes_since`),
so a user that aggregated counts at one point can bring them up to date with the few pods that
changed since, instead of reading every node again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.types import NodeInfo

__all__ = ["PodLabelIndex"]

_EMPTY: Mapping[Any, Mapping[str, int]] = {}


class PodLabelIndex:
    """``(label key, value) -> {NodeInfo: {namespace: number of pods}}`` over assigned pods, and
    the same over the terminating ones alone (PodTopologySpread does not count those)."""

    __slots__ = ("_by_label", "_terminating", "_log", "_log_start", "_kept", "_kept_nodes")

    #: How many changes the log keeps; a user further behind reads the index afresh.
    LOG_LIMIT = 4096

    def __init__(self) -> None:
        self._by_label: dict[tuple[str, str], dict[Any, dict[str, int]]] = {}
        self._terminating: PodLabelIndex | None = None
        self._log: list[tuple[Any, Any, int]] = []  # (NodeInfo, pod, +1 added / -1 removed)
        self._log_start = 0  # the sequence number of _log[0]
        self._kept: dict[Any, Any] = {}
        self._kept_nodes: Any = None

    def add(self, node_info: "NodeInfo", pod: "Pod") -> None:
        if pod.deletion_timestamp is not None:
            if self._terminating is None:
                self._terminating = PodLabelIndex()
            self._terminating.add_labels(node_info, pod)
        self.add_labels(node_info, pod)
        self._record(node_info, pod, 1)

    def remove(self, node_info: "NodeInfo", pod: "Pod") -> None:
        if pod.deletion_timestamp is not None and self._terminating is not None:
            self._terminating.remove_labels(node_info, pod)
        self.remove_labels(node_info, pod)
        self._record(node_info, pod, -1)

    def _record(self, node_info: "NodeInfo", pod: "Pod", delta: int) -> None:
        log = self._log
        log.append((node_info, pod, delta))
        if len(log) > self.LOG_LIMIT:
            drop = len(log) // 2
            del log[:drop]
            self._log_start += drop

    @property
    def sequence(self) -> int:
        """The sequence number the next change will get (a position for :meth:`changes_since`)."""
        return self._log_start + len(self._log)

    def kept_for(self, nodes: Any) -> dict[Any, Any]:
        """A dict where users keep what they aggregated from this index for the snapshot node
        list ``nodes``; emptied when another list is given (a node changed), so it holds on to
        one list only."""
        if nodes is not self._kept_nodes:
            self._kept.clear()
            self._kept_nodes = nodes
        elif len(self._kept) > 4096:
            self._kept.clear()
        return self._kept

    def changes_since(self, sequence: int) -> list[tuple[Any, Any, int]] | None:
        """``(NodeInfo, pod, +1 | -1)`` for each pod added or removed since ``sequence``, in
        order; None when the log no longer reaches back that far."""
        if sequence < self._log_start:
            return None
        return self._log[sequence - self._log_start:]

    def terminating_with(self, key: str, value: str) -> Mapping[Any, Mapping[str, int]]:
        """:meth:`nodes_with` over the terminating pods (those with a deletion timestamp)."""
        if self._terminating is None:
            return _EMPTY
        return self._terminating.nodes_with(key, value)

    def add_labels(self, node_info: "NodeInfo", pod: "Pod") -> None:
        namespace = pod.namespace
        by_label = self._by_label
        for label in pod.labels.items():
            nodes = by_label.get(label)
            if nodes is None:
                nodes = by_label[label] = {}
            per_namespace = nodes.get(node_info)
            if per_namespace is None:
                per_namespace = nodes[node_info] = {}
            per_namespace[namespace] = per_namespace.get(namespace, 0) + 1

    def remove_labels(self, node_info: "NodeInfo", pod: "Pod") -> None:
        namespace = pod.namespace
        by_label = self._by_label
        for label in pod.labels.items():
            nodes = by_label.get(label)
            if nodes is None:
                continue
            per_namespace = nodes.get(node_info)
            if per_namespace is None:
                continue
            count = per_namespace.get(namespace, 0) - 1
            if count > 0:
                per_namespace[namespace] = count
                continue
            per_namespace.pop(namespace, None)
            if not per_namespace:
                del nodes[node_info]
                if not nodes:
                    del by_label[label]

    def nodes_with(self, key: str, value: str) -> Mapping[Any, Mapping[str, int]]:
        """The NodeInfos hosting pods labelled ``key=value``, with their count per namespace
        (read-only; NodeInfos in the cache's order of first such pod)."""
        return self._by_label.get((key, value), _EMPTY)
