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


def node_update_actions(old: "Node", new: "Node") -> ActionType:
    """Upstream NodeSchedulingPropertiesChange: which node properties the scheduler cares about changed."""
    actions = ActionType.Nothing
    if old.unschedulable != new.unschedulable or old.taints != new.taints:
        actions |= ActionType.UpdateNodeTaint
    if old.allocatable != new.allocatable:
        actions |= ActionType.UpdateNodeAllocatable
    if old.labels != new.labels:
        actions |= ActionType.UpdateNodeLabel
    if old.annotations != new.annotations:
        actions |= ActionType.UpdateNodeAnnotation
    if _ready_conditions(old) != _ready_conditions(new):
        actions |= ActionType.UpdateNodeCondition
    return actions


def _ready_conditions(node: "Node") -> tuple:
    return tuple(sorted((c.type, c.status) for c in node.conditions))
