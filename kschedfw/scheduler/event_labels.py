"""The scheduler's event handlers' vocabulary: the event resource of each kind, and the labels
upstream's handlers observe scheduler_event_handling_duration_seconds under. What a change stands
for is :mod:`kschedfw.fwk.events`' (``*_scheduling_properties_change``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from kschedfw.api.workload_names import WORKLOAD_KIND
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, pod_scheduling_properties_change

if TYPE_CHECKING:
    from kschedfw.fwk.interface import WatchEvent

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


#: kinds upstream only lists (the default selector's Services and controllers, InterPodAffinity's
#: Namespaces, preemption's PriorityClasses and PDBs): it has no handler for them, so no cluster
#: event and no scheduler_event_handling_duration_seconds sample
LISTED_ONLY_KINDS = frozenset(("Service", "ReplicationController", "ReplicaSet", "StatefulSet", "Namespace",
                               "PriorityClass", "PodDisruptionBudget"))

#: kinds without a cluster event: those listed only, RuntimeClasses, which the embedded
#: cluster's admission reads and kube-scheduler never does, and Workloads (the PodGroup
#: admission reads them; kube-scheduler has no Workload informer)
NO_EVENT_KINDS = LISTED_ONLY_KINDS | {"RuntimeClass", WORKLOAD_KIND}


def resource_for_kind(kind: str) -> str:
    """The event resource for an object kind; custom resources are named by their kind."""
    resource = _KIND_RESOURCES.get(kind)
    return resource.value if resource is not None else kind


#: the cluster event action of each watch event type
WATCH_ACTIONS = {"ADDED": ActionType.Add, "MODIFIED": ActionType.Update, "DELETED": ActionType.Delete}
_EVENT_LABELS: dict[tuple[str, str], str] = {}


def pod_event_labels(old: Any, new: Any, responsible: Callable[[Any], bool]) -> list[str]:
    """The scheduler_event_handling_duration_seconds labels one pod change is observed under, as
    upstream v1.36's pod handlers (addPod, updatePod, deletePod) observe them: none for an
    unassigned pod of another scheduler; a bind is an AssignedPodAdd plus, for our own pod, an
    UnschedulablePodDelete; an update also once per specific sub-event, and an unassigned pod's
    update not at all when its resourceVersion did not change. ``old``/``new``: None on add/delete."""
    if new is not None and old is None:
        if new.node_name:
            return ["AssignedPodAdd"]
        return ["UnschedulablePodAdd"] if responsible(new) else []
    if new is None:
        if old.node_name:
            return ["AssignedPodDelete"]
        return ["UnschedulablePodDelete"] if responsible(old) else []
    if old.node_name:
        return ["AssignedPodUpdate", *(e.label for e in pod_scheduling_properties_change(new, old))]
    if new.node_name:
        return ["AssignedPodAdd", "UnschedulablePodDelete"] if responsible(old) else ["AssignedPodAdd"]
    if not responsible(old) or (old.resource_version and old.resource_version == new.resource_version):
        return []
    subs = [e.label for e in pod_scheduling_properties_change(new, old)]
    return ["UnschedulablePodUpdate", *(label for label in subs if label != "UnschedulablePodUpdate")]


def event_label(event: "WatchEvent") -> str:
    """The scheduler_event_handling_duration_seconds label of a watch event of any kind but Pod
    (see :func:`pod_event_labels`), as upstream's handlers name theirs: NodeAdd, NodeDelete,
    PersistentVolumeAdd... (a node update is observed per changed property by the scheduler)."""
    kind, type_ = event.kind, event.type
    key = (kind, type_)
    label = _EVENT_LABELS.get(key)
    if label is None:
        resource = kind if kind == "Node" else resource_for_kind(kind)
        label = _EVENT_LABELS[key] = ClusterEvent(resource, WATCH_ACTIONS[type_]).label
    return label
