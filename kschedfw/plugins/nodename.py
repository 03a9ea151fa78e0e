"""NodeName: a pod with ``spec.nodeName`` fits only the node of that name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import SignFragment

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """True when the pod names no node, or names this one."""
    return not pod.node_name or pod.node_name == node_info.name


class NodeName:
    name = "NodeName"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node can be the one the pod names; no hint needed (always Queue).
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return [SignFragment("v1.Pod.Spec.NodeName", pod.node_name)], None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = pod.node_name
        if wanted and wanted != node_info.name:
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_verdict_key(self, state: CycleState, pod: Pod) -> str:
        """Filter reads the Node and the pod's nodeName only (see hookspecs.FilterVerdictKey)."""
        return pod.node_name

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """:meth:`filter` for each node at once (hookspecs.WholeListFilter)."""
        wanted = pod.node_name
        if not wanted:
            return [None] * len(nodes)
        return [Status.unresolvable(ERR_REASON) if wanted != ni.name else None for ni in nodes]
