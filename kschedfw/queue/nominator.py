"""The nominator (upstream ``nominator.go``): which pods are nominated to run on which node,
waiting for preemption victims to leave. Indexed by node name and by pod uid.

``add_nominated_pod(pod, info)``: mode Override uses ``info.nominated_node_name``; mode Noop
(or no info) keeps ``pod.nominated_node_name`` and does nothing if it is empty. A pod that no
longer exists, or is already bound, is not nominated. An Override to ``""`` only removes the
nomination (upstream files it under node ``""``, which no node can ask for).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping

from kschedfw.fwk.types import NominatingInfo, NominatingMode

if TYPE_CHECKING:
    from kschedfw.api import Pod

PodLister = Callable[[str], "Pod | None"]
"""``lister("namespace/name")`` -> the current version of that pod, or None if it is gone."""


def _uid(pod: Pod) -> str:
    return pod.uid or pod.key


class Nominator:
    __slots__ = ("_pod_lister", "_resolve", "_held", "_by_node", "_node_of", "_all_held", "version")

    def __init__(self, pod_lister: PodLister | None = None,
                 resolve: Callable[[Any], Any] | None = None,
                 held: Mapping[str, Any] | None = None) -> None:
        """``pod_lister`` checks that a pod still exists and is unbound before nominating it
        (without one, only the given pod's own ``node_name`` is checked). ``resolve`` maps a
        stored pod to the version the scheduling queue holds (the queue passes its own).
        ``held`` (uid -> pod object), if given, names pods ``resolve`` would return unchanged:
        a stored pod that is the object held under its uid is not resolved; whoever changes
        ``held`` calls :meth:`held_changed`."""
        self._pod_lister = pod_lister
        self._resolve = resolve
        self._held: Mapping[str, Any] = held if held is not None else {}
        self._by_node: dict[str, dict[str, Any]] = {}   # node -> {uid: pod}, insertion-ordered
        self._node_of: dict[str, str] = {}              # uid -> node
        #: node -> its nominated pods, when every one is the object held under its uid (so
        #: none needs resolving); dropped when the node's nominations or those pods' held
        #: objects change
        self._all_held: dict[str, list[Any]] = {}
        #: bumped by every nomination added or removed, so a caller can keep what it derived
        #: from the nominations while this is unchanged
        self.version = 0

    def held_by(self, resolve: Callable[[Any], Any], held: Mapping[str, Any]) -> None:
        """The scheduling queue's ``resolve`` and ``held`` (see the constructor), given by the
        queue once it is built: the nominator comes first, for the profiles' Handles."""
        self._resolve = resolve
        self._held = held
        self._all_held.clear()

    def add_nominated_pod(self, pod: Any, nominating_info: NominatingInfo | None = None) -> None:
        # Always drop the old entry, so a pod is never stored twice.
        self._delete(pod)
        if nominating_info is not None and nominating_info.mode is NominatingMode.Override:
            node = nominating_info.nominated_node_name
        else:
            node = pod.nominated_node_name
        if not node:
            return
        if self._pod_lister is not None:
            current = self._pod_lister(pod.key)
            if current is None or current.node_name:
                return  # deleted, or already scheduled
        elif pod.node_name:
            return
        uid = _uid(pod)
        self._node_of[uid] = node
        self._by_node.setdefault(node, {}).setdefault(uid, pod)
        self._all_held.pop(node, None)
        self.version += 1

    def update_nominated_pod(self, old_pod: Any, new_pod: Any) -> None:
        """Replace ``old_pod`` by ``new_pod``. If neither carries a nominated node but the old one
        was nominated here (e.g. by preemption just now), the nomination is kept."""
        info = None
        if not old_pod.nominated_node_name and not new_pod.nominated_node_name:
            node = self._node_of.get(_uid(old_pod))
            if node is not None:
                info = NominatingInfo(node, NominatingMode.Override)
        self._delete(old_pod)
        self.add_nominated_pod(new_pod, info)

    def delete_nominated_pod_if_exists(self, pod: Any) -> None:
        self._delete(pod)

    def _delete(self, pod: Any) -> None:
        uid = _uid(pod)
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        self.version += 1
        self._all_held.pop(node, None)
        pods = self._by_node.get(node)
        if pods is not None:
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node]

    def nominated_pods_for_node(self, node_name: str) -> list[Any]:
        """Pods nominated to ``node_name``, in nomination order, each in the version the queue
        holds (the version last given to the nominator if the queue does not hold it)."""
        known = self._all_held.get(node_name)
        if known is not None:
            return known.copy()
        pods = self._by_node.get(node_name)
        if not pods:
            return []
        resolve = self._resolve
        if resolve is None:
            return list(pods.values())
        held = self._held
        out = []
        all_held = True
        for uid, pod in pods.items():
            if held.get(uid) is pod:
                out.append(pod)
            else:
                all_held = False
                out.append(resolve(pod))
        if all_held:
            self._all_held[node_name] = out.copy()
        return out

    def kept_lists(self) -> Mapping[str, list[Any]]:
        """node -> the list :meth:`nominated_pods_for_node` keeps for it while every one of its
        pods is the object held under its uid (a live view; do not change the lists). A list is
        replaced, never changed, when the node's nominations or those objects change, so a
        caller may keep what it derived from one while the same list object is here."""
        return self._all_held

    def held_changed(self, uid: str) -> None:
        """The object ``held`` maps ``uid`` to changed (or is gone)."""
        node = self._node_of.get(uid)
        if node is not None:
            self._all_held.pop(node, None)

    def nominated_node_names(self) -> Collection[str]:
        """The nodes that have nominated pods (a live view)."""
        return self._by_node.keys()

    def nominated_node_name(self, pod: Any) -> str:
        """Where ``pod`` is nominated ("" if nowhere)."""
        return self._node_of.get(_uid(pod), "")

    def nominated_nodes(self) -> dict[str, list[Any]]:
        """node -> nominated pods (a copy; for reporting and tests)."""
        return {node: list(pods.values()) for node, pods in self._by_node.items()}

    def __len__(self) -> int:
        return len(self._node_of)
