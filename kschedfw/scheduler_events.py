"""Turning object changes into ClusterEvents: which scheduling-relevant properties changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedfw.framework.events import ActionType, EventResource

if TYPE_CHECKING:
    from kschedfw.api import Node

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
