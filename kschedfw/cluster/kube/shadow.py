"""What `kschedfw run --dry-run` pretends it wrote: the binds it decided and the victims it would
have deleted. The informers keep reporting the real cluster, where none of that happened; the
backend passes each pod change through :meth:`ShadowWrites.adjust` so the scheduler goes on seeing
its own decisions (a victim stays gone, a pod it bound stays on its node), as it would after
real writes. Only the local cache changes: nothing is sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kschedfw.api import Pod

__all__ = ["ShadowWrites"]


class ShadowWrites:
    def __init__(self) -> None:
        self._deleted: set[str] = set()  # uids of the victims it would have deleted
        self._bound: dict[str, str] = {}  # uid -> the node it would have bound the pod to

    def deleted(self, pod: "Pod") -> None:
        self._deleted.add(pod.uid)

    def bound(self, pod: "Pod", node_name: str) -> None:
        self._bound[pod.uid] = node_name

    def adjust(self, type_: str, pod: "Pod") -> "Pod | None":
        """The pod as the scheduler should see it after the pretended writes; None to drop the
        change (a pretended-deleted pod's later updates; its real deletion still goes through)."""
        if pod.uid in self._deleted:  # kept: the real pod lives on and keeps changing
            return pod if type_ == "DELETED" else None
        node = self._bound.get(pod.uid)
        if node is None:
            return pod
        if type_ == "DELETED":
            del self._bound[pod.uid]
            return pod
        return pod if pod.node_name else pod.with_node(node)
