"""NodeName: a pod with ``spec.nodeName`` fits only the node of that name."""

from __future__ import annotations

from typing import Any

from kschedfw import hookimpl
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import SignFragment

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod, node_info) -> bool:
    """True when the pod names no node, or names this one."""
    return not pod.node_name or pod.node_name == node_info.node.name


class NodeName:
    name = "NodeName"

    def __init__(self, args: dict | None = None, handle: Any = None) -> None:
        self.handle = handle

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node can be the one the pod names; no hint needed (always Queue).
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]

    @hookimpl
    def sign_pod(self, pod):
        return [SignFragment("v1.Pod.Spec.NodeName", pod.node_name)], None

    @hookimpl
    def filter(self, state, pod, node_info) -> Status | None:
        wanted = pod.node_name
        if wanted and wanted != node_info.node.name:
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_verdict_key(self, state, pod) -> Any:
        """Filter reads the Node and the pod's nodeName only (see hookspecs.FilterVerdictKey)."""
        return pod.node_name

    def filter_nodes(self, state, pod, nodes) -> list[Status | None]:
        """:meth:`filter` for each node at once (hookspecs.WholeListFilter)."""
        wanted = pod.node_name
        if not wanted:
            return [None] * len(nodes)
        return [Status.unresolvable(ERR_REASON) if wanted != ni.node.name else None for ni in nodes]
