"""NodePorts: a pod's host ports must be free on the node."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.api import Pod
from kschedfw.fwk.cycle_state import StateNotFound
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.status import Status
from kschedfw.fwk.signers import HOST_PORTS_SIGNER_NAME, host_ports_signature
from kschedfw.fwk.types import SignFragment
from kschedfw.plugins.helper import as_objects, fits_ports, get_host_ports, sanitize_host_port

if TYPE_CHECKING:
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, PreFilterResult

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class _PreFilterState(tuple[tuple[str, str, int], ...]):
    """The pod's wanted host ports as ``(ip, protocol, port)``; not changed by other pods."""

    __slots__ = ()

    def clone(self) -> "_PreFilterState":
        return self


def _wanted_ports(pod: Pod) -> tuple[tuple[str, str, int], ...]:
    return tuple((p.host_ip, p.protocol, p.host_port) for p in get_host_ports(pod))


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """True when none of the pod's host ports is taken on the node."""
    return fits_ports(_wanted_ports(pod), node_info.used_ports)


class NodePorts:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return [SignFragment(HOST_PORTS_SIGNER_NAME, host_ports_signature(pod))], None

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        wanted = _wanted_ports(pod)
        if not wanted:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(wanted))
        return None, None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Container ports are immutable, so pod updates never free a port; only deletions do.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old_obj: Any, new_obj: Any = None) -> QueueingHint:
        deleted, _ = as_objects(old_obj, None, Pod)
        if deleted is None:
            return QueueingHint.Queue
        if not deleted.node_name and not deleted.nominated_node_name:
            # An unscheduled pod held no ports.
            return QueueingHint.QueueSkip
        freed = get_host_ports(deleted)
        if not freed:
            return QueueingHint.QueueSkip
        in_use = {sanitize_host_port(p.host_ip, p.protocol, p.host_port) for p in freed if p.host_port > 0}
        if fits_ports(_wanted_ports(pod), in_use):
            # No port in common: deleting that pod cannot help this one.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            wanted = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFound:
            return Status.as_status(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        used = node_info.used_ports
        if used and not fits_ports(wanted, used):
            return Status.unschedulable(ERR_REASON)
        return None
