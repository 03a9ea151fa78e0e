"""The scheduler cache: NodeInfos kept current from cluster events, plus assumed pods.

A pod is *assumed* on its node as soon as the scheduling cycle picks it, so the next pod sees
the resources as used; the cluster's confirmation (``add_pod``) makes it a regular pod, failure
forgets it. Upstream also expires assumed pods whose binding never shows up; here the binding
cycle is synchronous, so an assumed pod is always confirmed or forgotten and nothing expires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedfw.cache.node_tree import NodeTree
from kschedfw.cache.label_index import PodLabelIndex
from kschedfw.cache.image_states import ImageStates, fill_image_states
from kschedfw.cache.podgroupstate import PodGroupStates
from kschedfw.cache.snapshot import Snapshot
from kschedfw.cache.term_index import PodAffinityTermIndex
from kschedfw.fwk.types import NodeInfo

if TYPE_CHECKING:
    from kschedfw.api import Node, Pod


class CacheError(Exception):
    pass


class Cache:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._tree = NodeTree()
        self._pod_states: dict[str, "Pod"] = {}  # uid -> pod as the cache holds it
        self._assumed: set[str] = set()  # uids of assumed pods not yet confirmed by the cluster
        self._images = ImageStates()
        self._images_dirty = True
        self._order_dirty = True
        self._snapshot = Snapshot()
        self._affinity_version = 0  # bumped when a node gains its first or loses its last pod with (anti-)affinity
        self._labels = PodLabelIndex()  # (label, value) -> nodes hosting such pods
        self._terms = PodAffinityTermIndex()  # affinity term -> nodes hosting pods with it
        #: the snapshot carries the two indexes above; off while workload-aware preemption takes
        #: pods out of the NodeInfos behind their back (the plugins then walk the pods)
        self.pod_indexes = True
        self._pod_groups = PodGroupStates()  # pods of each PodGroup, assigned or not

    # ---------------------------------------------------------------- nodes
    def add_node(self, node: "Node") -> NodeInfo:
        info = self._nodes.get(node.name)
        if info is not None and info.node is not None:
            self._images.remove_node(info.node)  # (upstream UpdateNode: remove, then add)
        self._images.add_node(node)
        if info is None:
            info = NodeInfo(node=node)
            self._nodes[node.name] = info
            self._order_dirty = True
        else:
            # A new node object (its pods came first, it was removed, or it changed): the next
            # snapshot gets a new node list, which is how plugins know nodes changed.
            self._order_dirty = True
            info.set_node(node)
            info.generation += 1
        self._tree.add(node)
        self._images_dirty = True
        return info

    def update_node(self, old: "Node | None", new: "Node") -> NodeInfo:
        info = self.add_node(new)
        self._tree.update(new)
        self._order_dirty = True
        return info

    def remove_node(self, node: "Node") -> None:
        info = self._nodes.get(node.name)
        if info is None:
            return
        self._tree.remove(node.name)
        if info.node is not None:
            self._images.remove_node(info.node)
        if info.pods:
            info.set_node(None)  # keep pods until they are deleted, as upstream does
        else:
            del self._nodes[node.name]
        self._order_dirty = True
        self._images_dirty = True

    # ---------------------------------------------------------------- pods
    @staticmethod
    def _affinity_shape(info: NodeInfo) -> tuple[bool, bool]:
        """Whether the node is in the snapshot's lists of nodes with (anti-)affinity pods."""
        return bool(info.pods_with_affinity), bool(info.pods_with_required_anti_affinity)

    def _note_affinity(self, info: NodeInfo, before: tuple[bool, bool]) -> None:
        """Those lists hold NodeInfos, which are shared and always current: they only need a
        recomputation when a node enters or leaves one of them."""
        if self._affinity_shape(info) != before:
            self._affinity_version += 1

    def _add_to_node(self, pod: "Pod", assume: bool = False) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:  # pod arrived before its node: keep an info without node
            info = NodeInfo(node=None)
            self._nodes[pod.node_name] = info
        before = self._affinity_shape(info)
        info.add_pod(pod)
        self._note_affinity(info, before)
        self._labels.add(info, pod)
        self._terms.add(info, pod)
        self._pod_states[pod.uid] = pod
        if pod.scheduling_group is not None:
            if assume:
                self._pod_groups.assume_pod(pod)
            else:
                self._pod_groups.add_pod(pod)

    def _remove_from_node(self, pod: "Pod", forget: bool = False) -> None:
        info = self._nodes.get(pod.node_name)
        if info is not None:
            before = self._affinity_shape(info)
            if info.remove_pod(pod):
                self._labels.remove(info, pod)
                self._terms.remove(info, pod)
            self._note_affinity(info, before)
            if info.node is None and not info.pods:
                del self._nodes[pod.node_name]
        self._pod_states.pop(pod.uid, None)
        if pod.scheduling_group is not None:
            if forget:
                self._pod_groups.forget_pod(pod)
            else:
                self._pod_groups.remove_pod(pod)

    def assume_pod(self, pod: "Pod") -> None:
        if pod.uid in self._pod_states:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._add_to_node(pod, assume=True)
        self._assumed.add(pod.uid)

    def finish_binding(self, pod: "Pod", now: float) -> None:
        """Upstream starts the assumed pod's expiry here; with a synchronous binding cycle nothing
        expires, so the pod simply stays assumed until ``add_pod`` or ``forget_pod``."""

    def forget_pod(self, pod: "Pod") -> None:
        if pod.uid in self._assumed:
            current = self._pod_states.get(pod.uid)
            if current is not None:
                self._remove_from_node(current, forget=True)
            self._assumed.discard(pod.uid)

    def sizes(self) -> dict[str, int]:
        """Upstream scheduler_cache_size: assumed pods, all pods held, nodes."""
        return {"assumed_pods": len(self._assumed), "pods": len(self._pod_states), "nodes": len(self._nodes)}

    def is_assumed(self, pod: "Pod") -> bool:
        return pod.uid in self._assumed

    def add_pod(self, pod: "Pod") -> None:
        """An assigned pod appeared (or an assumed one was confirmed by the cluster)."""
        current = self._pod_states.get(pod.uid)
        if current is not None and pod.uid in self._assumed:
            if current.node_name != pod.node_name:
                self._remove_from_node(current)
                self._add_to_node(pod)
            else:
                self._replace(current, pod)
            self._assumed.discard(pod.uid)
            return
        if current is not None:
            self.update_pod(current, pod)
            return
        self._add_to_node(pod)

    def update_pod(self, old: "Pod", new: "Pod") -> None:
        current = self._pod_states.get(new.uid)
        if current is None:
            self._add_to_node(new)
            return
        if current.node_name != new.node_name:
            self._remove_from_node(current)
            self._add_to_node(new)
        else:
            self._replace(current, new)

    def _replace(self, current: "Pod", new: "Pod") -> None:
        info = self._nodes.get(current.node_name)
        if info is not None:
            before = self._affinity_shape(info)
            if info.remove_pod(current):
                self._labels.remove(info, current)
                self._terms.remove(info, current)
            info.add_pod(new)
            self._labels.add(info, new)
            self._terms.add(info, new)
            self._note_affinity(info, before)
        self._pod_states[new.uid] = new
        if new.scheduling_group is not None:  # upstream's update: out of its group and back in
            self._pod_groups.remove_pod(current)
            self._pod_groups.add_pod(new)

    def remove_pod(self, pod: "Pod") -> None:
        current = self._pod_states.get(pod.uid)
        if current is not None:
            self._remove_from_node(current)
        self._assumed.discard(pod.uid)

    def get_pod(self, uid: str) -> "Pod | None":
        return self._pod_states.get(uid)

    # ---------------------------------------------------------------- pod groups
    # The pods of a PodGroup that are on no node yet: the event handlers report them here
    # (upstream AddPodGroupMember and its pair); assigned and assumed ones come through the
    # methods above.
    def add_pod_group_member(self, pod: "Pod") -> None:
        if pod.scheduling_group is not None:
            self._pod_groups.add_pod(pod)

    def update_pod_group_member(self, old: "Pod", new: "Pod") -> None:
        if new.scheduling_group is not None:
            self._pod_groups.update_pod(old, new)

    def remove_pod_group_member(self, pod: "Pod") -> None:
        if pod.scheduling_group is not None:
            self._pod_groups.remove_pod(pod)

    def pod_group_states(self) -> PodGroupStates:
        """The live PodGroup states (the cache is the Handle's PodGroupManager)."""
        return self._pod_groups

    # ---------------------------------------------------------------- snapshot
    @property
    def snapshot(self) -> Snapshot:
        """The one snapshot :meth:`update_snapshot` refreshes before each cycle (the profiles'
        Handles are given it once)."""
        return self._snapshot

    def update_snapshot(self) -> Snapshot:
        """The view for the next cycle. NodeInfos are shared, not copied: the core is single-threaded
        and nothing changes them while a cycle runs, so only order and image counts are refreshed."""
        if self._images_dirty:
            fill_image_states(self._nodes.values(), self._images)
            self._images_dirty = False
        if self._order_dirty:
            self._snapshot.refill(self._nodes[name] for name in self._tree.list())
            self._order_dirty = False
        self._snapshot.generation += 1
        self._snapshot.affinity_version = self._affinity_version
        indexed = self.pod_indexes
        self._snapshot.label_index = self._labels if indexed else None
        self._snapshot.term_index = self._terms if indexed else None
        if self._pod_groups.states or self._snapshot.pod_groups.states:
            self._pod_groups.copy_into(self._snapshot.pod_groups)
        return self._snapshot

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)
