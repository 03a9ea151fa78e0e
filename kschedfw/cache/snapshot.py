"""Snapshot: the per-cycle view of nodes that plugins read through the Handle."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Iterable

from kschedfw.cache.image_states import fill_image_states
from kschedfw.cache.podgroupstate import PodGroupStates
from kschedfw.fwk.types import NodeInfo

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod
    from kschedfw.cache.label_index import PodLabelIndex
    from kschedfw.cache.term_index import PodAffinityTermIndex


class Snapshot:
    """Node infos in a stable order, with the lists InterPodAffinity and preemption need."""

    __slots__ = ("_node_infos", "_by_name", "generation", "_lists", "affinity_version", "label_index",
                 "term_index", "_positions", "pod_groups", "_whole")

    def __init__(self, node_infos: Iterable[NodeInfo] = (), generation: int = 0) -> None:
        self._node_infos = list(node_infos)
        self._by_name = {ni.name: ni for ni in self._node_infos}
        self.generation = generation
        self._lists: dict[str, tuple[int, list[NodeInfo]]] = {}
        #: Set by the cache, which bumps it whenever a node enters or leaves one of the lists;
        #: None (a snapshot built by hand) means "recompute on every call".
        self.affinity_version: int | None = None
        #: Set by the cache: which nodes host pods with a given label (None: a snapshot built
        #: by hand, whose users walk the pods).
        self.label_index: "PodLabelIndex | None" = None
        #: Set by the cache: which nodes host pods with a given affinity term (None: walk them).
        self.term_index: "PodAffinityTermIndex | None" = None
        self._positions: dict[str, int] | None = None  # name -> index in _node_infos, built when asked
        #: the PodGroup states as of this cycle (copied by the cache; a pod-group cycle assumes
        #: and forgets its pods here)
        self.pod_groups = PodGroupStates()
        #: while a placement is assumed: the whole snapshot's list, map and positions
        self._whole: tuple[list[NodeInfo], dict[str, NodeInfo], dict[str, int] | None] | None = None

    def assume_placement(self, node_infos: Iterable[NodeInfo]) -> None:
        """Hold only ``node_infos`` (a placement of a pod-group cycle, upstream
        AssumePlacement) until :meth:`forget_placement` gives the whole snapshot back without
        rebuilding it (a group is tried in every placement, each costing its nodes only)."""
        if self._whole is None:
            self._whole = (self._node_infos, self._by_name, self._positions)
        self._node_infos = list(node_infos)
        self._by_name = {ni.name: ni for ni in self._node_infos}
        self._lists = {}
        self._positions = None

    def forget_placement(self) -> None:
        """The whole snapshot again (upstream ForgetPlacement)."""
        if self._whole is not None:
            self._node_infos, self._by_name, self._positions = self._whole
            self._whole = None
            self._lists = {}

    def refill(self, node_infos: Iterable[NodeInfo]) -> None:
        """Hold ``node_infos`` from now on, in their order (the cache's one snapshot after a
        node came or went: whoever was given it sees the new nodes, as upstream's snapshot)."""
        self._whole = None
        self._node_infos = list(node_infos)
        self._by_name = {ni.name: ni for ni in self._node_infos}
        self._lists = {}
        self._positions = None

    @classmethod
    def from_objects(cls, nodes: Iterable["Node"], pods: Iterable["Pod"] = ()) -> "Snapshot":
        """Build a snapshot from nodes and the pods assigned to them (tests and tools)."""
        infos = {node.name: NodeInfo(node=node) for node in nodes}
        pods = list(pods)
        for pod in pods:
            if pod.node_name and pod.node_name in infos:
                infos[pod.node_name].add_pod(pod)
        fill_image_states(infos.values())
        snapshot = cls(infos.values())
        snapshot.pod_groups = PodGroupStates.from_pods(pods)
        return snapshot

    def node_infos(self) -> list[NodeInfo]:
        return self._node_infos

    def get(self, node_name: str) -> NodeInfo | None:
        return self._by_name.get(node_name)

    def __len__(self) -> int:
        return len(self._node_infos)

    def named(self, names: "Collection[str]") -> list[NodeInfo]:
        """The NodeInfos whose names are in ``names``, in snapshot order (names it does not
        hold are ignored). A few names (a PreFilter result pinning a DaemonSet pod to its node)
        cost their own lookups, not a pass over every node."""
        infos = self._node_infos
        if 8 * len(names) >= len(infos):
            return [ni for ni in infos if ni.name in names]
        positions = self._positions
        if positions is None:
            positions = self._positions = {ni.name: i for i, ni in enumerate(infos)}
        return [infos[i] for i in sorted(positions[name] for name in names if name in positions)]

    def pod_group_states(self) -> PodGroupStates:
        """The PodGroup states of this cycle (upstream Snapshot.PodGroupStates)."""
        return self.pod_groups

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        """Nodes with pods that have (anti-)affinity; recomputed only when such pods changed."""
        return self._cached("affinity", lambda ni: ni.pods_with_affinity)

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return self._cached("anti", lambda ni: ni.pods_with_required_anti_affinity)

    def _cached(self, key: str, has: "Callable[[NodeInfo], list[Pod]]") -> list[NodeInfo]:
        version = self.affinity_version
        if version is None:
            return [ni for ni in self._node_infos if has(ni)]
        cached = self._lists.get(key)
        if cached is None or cached[0] != version:
            cached = (version, [ni for ni in self._node_infos if has(ni)])
            self._lists[key] = cached
        return cached[1]
