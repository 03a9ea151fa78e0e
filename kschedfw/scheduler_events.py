"""Turning object changes into ClusterEvents: which scheduling-relevant properties changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedfw.framework.events import ActionType, EventResource

if TYPE_CHECKING:
    from kschedfw.api import Node
    from kschedfw.framework.interface import WatchEvent

_KIND_RESOURCES = {
    "PersistentVolume": EventResource.PersistentVolume,
    "PersistentVolumeClaim": EventResource.PersistentVolumeClaim,
    "StorageClass": EventResource.StorageClass,
    "CSINode": EventResource.CSINode,
    "CSIDriver": EventResource.CSIDriver,
    "VolumeAttachment": EventResource.VolumeAttachment,
    "CSIStorageCapacity": EventResource.CSIStorageCapacity,
    "ResourceClaim": EventResource.ResourceClaim,
    "ResourceSlice": EventResource.ResourceSlice,
    "DeviceClass": EventResource.DeviceClass,
}


#: kinds upstream only lists (for PodTopologySpread's default selector): no handler, no event
LISTED_ONLY_KINDS = frozenset(("Service", "ReplicationController", "ReplicaSet", "StatefulSet"))


def resource_for_kind(kind: str) -> str:
    """The event resource for an object kind; custom resources are named by their kind."""
    resource = _KIND_RESOURCES.get(kind)
    return resource.value if resource is not None else kind


def node_update_actions(old: "Node", new: "Node") -> list[ActionType]:
    """Upstream NodeSchedulingPropertiesChange: one action per changed property, in upstream's
    order. Cordoning is not an event (it makes nothing schedulable); uncordoning is a taint
    update, as upstream reports it."""
    actions = []
    if old.unschedulable != new.unschedulable and not new.unschedulable:
        actions.append(ActionType.UpdateNodeTaint)
    if old.allocatable != new.allocatable:
        actions.append(ActionType.UpdateNodeAllocatable)
    if old.labels != new.labels:
        actions.append(ActionType.UpdateNodeLabel)
    if old.taints != new.taints:
        actions.append(ActionType.UpdateNodeTaint)
    if _condition_statuses(old) != _condition_statuses(new):
        actions.append(ActionType.UpdateNodeCondition)
    if old.annotations != new.annotations:
        actions.append(ActionType.UpdateNodeAnnotation)
    return actions


def _condition_statuses(node: "Node") -> dict[str, str]:
    return {c.type: c.status for c in node.conditions}


_ACTIONS = {"ADDED": ActionType.Add, "MODIFIED": ActionType.Update, "DELETED": ActionType.Delete}
_EVENT_LABELS: dict[tuple[str, str], str] = {}


def event_label(event: "WatchEvent") -> str:
    """The scheduler_event_handling_duration_seconds label of a watch event, as upstream's
    handlers name theirs: AssignedPodAdd, UnschedulablePodUpdate, NodeDelete, PersistentVolumeAdd...
    (a node update is observed per changed property by the scheduler itself)."""
    kind, type_ = event.kind, event.type
    if kind == "Pod":
        pod = event.new if event.new is not None else event.old
        kind = EventResource.AssignedPod.value if pod.node_name else EventResource.UnschedulablePod.value
        if type_ == "MODIFIED" and pod.node_name and event.old is not None and not event.old.node_name:
            type_ = "ADDED"  # a bind: upstream's informer filter hands it to the assigned-pod Add handler
    key = (kind, type_)
    label = _EVENT_LABELS.get(key)
    if label is None:
        from kschedfw.framework.events import ClusterEvent
        resource = kind if kind in ("AssignedPod", "UnschedulablePod", "Node") else resource_for_kind(kind)
        label = _EVENT_LABELS[key] = ClusterEvent(resource, _ACTIONS[type_]).label
    return label
