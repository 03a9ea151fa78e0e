"""Snapshot: the per-cycle view of nodes that plugins read through the Handle.

A pod-group cycle may assume a placement (upstream AssumePlacement): the scheduler's own node
candidates (the nodes filtered and scored, a PreFilter result's nodes, the nominated node, the
"0/N nodes" count) narrow to it, while plugins keep seeing the whole cluster through
:meth:`Snapshot.node_infos`, :meth:`Snapshot.get` and the affinity lists, as upstream's
``List``/``Get`` stay whole. Spread skew and anti-affinity are thus counted across placements."""

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
                 "term_index", "_positions", "pod_groups", "_placement", "_placement_names")

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
        #: while a placement is assumed: its nodes, and their names
        self._placement: list[NodeInfo] | None = None
        self._placement_names: frozenset[str] = frozenset()

    def assume_placement(self, node_infos: "Collection[NodeInfo]") -> None:
        """Narrow the scheduler's node candidates to ``node_infos`` (upstream AssumePlacement)
        until :meth:`forget_placement`; plugins still see every node. A placement holding as
        many nodes as the snapshot is no placement. Raises ValueError, the placement left
        unset, for a node the snapshot does not hold or holds as another NodeInfo."""
        if len(node_infos) == len(self._node_infos):
            self.forget_placement()
            return
        nodes = list(node_infos)
        by_name = self._by_name
        for ni in nodes:
            held = by_name.get(ni.name)
            if held is None:
                self.forget_placement()
                raise ValueError(f"node {ni.name} in placement is not present in snapshot")
            if held is not ni:
                self.forget_placement()
                raise ValueError(f"node {ni.name} in placement is not the same instance as in the snapshot")
        self._placement = nodes
        self._placement_names = frozenset(ni.name for ni in nodes)

    def forget_placement(self) -> None:
        """No placement: the candidates are every node again (upstream ForgetPlacement)."""
        self._placement = None
        self._placement_names = frozenset()

    def nodes_in_placement(self) -> list[NodeInfo]:
        """The scheduler's candidate nodes: the placement's, else all (upstream ListNodesInPlacement)."""
        placement = self._placement
        return self._node_infos if placement is None else placement

    def num_nodes_in_placement(self) -> int:
        """How many candidates there are (upstream NumNodesInPlacement): the "0/N nodes" count."""
        placement = self._placement
        return len(self._node_infos) if placement is None else len(placement)

    def get_in_placement(self, node_name: str) -> NodeInfo | None:
        """The node if it is a candidate (upstream GetNodeInPlacement), else None."""
        if self._placement is not None and node_name not in self._placement_names:
            return None
        return self._by_name.get(node_name)

    def named_in_placement(self, names: "Collection[str]") -> list[NodeInfo]:
        """:meth:`named`, keeping only the placement's nodes (a PreFilter result's nodes)."""
        found = self.named(names)
        if self._placement is None:
            return found
        held = self._placement_names
        return [ni for ni in found if ni.name in held]

    def refill(self, node_infos: Iterable[NodeInfo]) -> None:
        """Hold ``node_infos`` from now on, in their order (the cache's one snapshot after a
        node came or went: whoever was given it sees the new nodes, as upstream's snapshot)."""
        self.forget_placement()
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
