"""NodeUnschedulable: keep pods off cordoned nodes (``spec.unschedulable``).

A pod that tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint may still go there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.api import Node, Pod, Taint
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.signers import TOLERATIONS_SIGNER_NAME, tolerations_signature
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import SignFragment
from kschedfw.plugins.helper import as_objects, tolerations_tolerate_taint_gated

if TYPE_CHECKING:
    from kschedfw.api import Toleration
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, value="", effect="NoSchedule")


class NodeUnschedulable:
    name = "NodeUnschedulable"

    # TaintTolerationComparisonOperators: whether Gt/Lt tolerations count.
    enable_comparison_operators = False  # TaintTolerationComparisonOperators: alpha, off in v1.36

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.enable_comparison_operators = (handle is not None and
                                            handle.feature_gates.enabled("TaintTolerationComparisonOperators"))

    def _tolerates_unschedulable(self, pod: Pod) -> bool:
        return tolerations_tolerate_taint_gated(pod.tolerations, _UNSCHEDULABLE_TAINT,
                                                self.enable_comparison_operators)

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                                 self.is_schedulable_after_pod_toleration_change),
        ]

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        _, modified = as_objects(old_obj, new_obj, Pod)
        if modified is not None and modified.uid == pod.uid:
            # Tolerations can only be added; this one matters only if it covers the cordon taint.
            if self._tolerates_unschedulable(modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original, modified = as_objects(old_obj, new_obj, Node)
        if modified is None:
            return QueueingHint.QueueSkip
        # Queue when a schedulable node is added, or a node is uncordoned.
        if original is None:
            return QueueingHint.QueueSkip if modified.unschedulable else QueueingHint.Queue
        if original.unschedulable and not modified.unschedulable:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return [SignFragment(TOLERATIONS_SIGNER_NAME, tolerations_signature(pod))], None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        if not node.unschedulable:
            return None
        if self._tolerates_unschedulable(pod):
            return None
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_verdict_key(self, state: CycleState, pod: Pod) -> tuple[Toleration, ...]:
        """Filter reads the Node and the pod's tolerations only (see hookspecs.FilterVerdictKey)."""
        return pod.tolerations

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """:meth:`filter` for each node at once (hookspecs.WholeListFilter)."""
        out: list[Status | None] = [None] * len(nodes)
        cordoned = [i for i, ni in enumerate(nodes) if (node := ni.node) is not None and node.unschedulable]
        if cordoned and not self._tolerates_unschedulable(pod):
            for i in cordoned:
                out[i] = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
        return out
