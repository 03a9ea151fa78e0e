"""SchedulingGates: keep pods with ``spec.schedulingGates`` out of the active queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw import hookimpl
from kschedfw.api import Pod
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.status import Status
from kschedfw.plugins.helper import as_objects

if TYPE_CHECKING:
    from kschedfw.fwk.interface import Handle


class SchedulingGates:
    """PreEnqueue: a pod that still carries scheduling gates waits, gated by this plugin."""

    name = "SchedulingGates"

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.scheduling_gates
        if not gates:
            return None
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # The pod's own update that removes its last gates is what can let it in.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated),
                self.is_schedulable_after_update_pod_scheduling_gates_eliminated),
        ]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(
            self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        _, modified = as_objects(old_obj, new_obj, Pod)
        if modified is None or modified.uid != pod.uid:
            # Another pod's gates went away: that does not help this one.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
