"""Cluster events and queueing hints: how a rejected pod learns it is worth retrying.

Also what an update of a pod or a node stands for (upstream ``PodSchedulingPropertiesChange``
and ``NodeSchedulingPropertiesChange``), so both backends and the queue classify changes alike.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, Callable

import attrs


class ActionType(enum.IntFlag):
    """What happened to a resource; bit values and order as upstream v1.36."""

    Add = 1
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdateNodeDeclaredFeature = 1 << 7
    UpdatePodLabel = 1 << 8
    UpdatePodScaleDown = 1 << 9
    UpdatePodToleration = 1 << 10
    UpdatePodSchedulingGatesEliminated = 1 << 11
    UpdatePodGeneratedResourceClaim = 1 << 12
    #: any other pod update; only plugins registered for a general Pod/Update hear it
    UpdatePodOther = 1 << 13
    All = (1 << 14) - 1
    Update = All & ~(Add | Delete)
    Nothing = 0


class EventResource(str, enum.Enum):
    """The resource an event is about. Custom resources use their own string (e.g. ``PodGroup``)."""

    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnschedulablePod = "UnschedulablePod"
    TargetPod = "TargetPod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    VolumeAttachment = "storage.k8s.io/VolumeAttachment"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    StorageClass = "storage.k8s.io/StorageClass"
    ResourceClaim = "resource.k8s.io/ResourceClaim"
    ResourceSlice = "resource.k8s.io/ResourceSlice"
    DeviceClass = "resource.k8s.io/DeviceClass"
    PodGroup = "scheduling.k8s.io/PodGroup"
    Wildcard = "*"


class QueueingHint(enum.IntEnum):
    """A hint's verdict on one event for one rejected pod."""

    QueueSkip = 0
    Queue = 1


@attrs.frozen
class ClusterEvent:
    """A change in the cluster: a resource (EventResource or a custom resource string) and action."""

    resource: str
    action_type: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        """Upstream ``ClusterEvent.Label()``, the ``event`` label of metrics: the custom label, or
        the resource then upstream's name of the action (blank for a combination of flags)."""
        if self.custom_label:
            return self.custom_label
        return f"{_resource_name(self.resource)}{_action_label(self.action_type)}"

    def describe(self) -> str:
        """The label with every flag of a combined action named (``NodeAdd|UpdateNodeLabel``),
        for people reading which events a plugin registered. Only the resource's own actions are
        named (``resource.k8s.io/DeviceClassAdd|Update``, not the node and pod update flags a
        general ``Update`` is made of), as upstream's ``ActionType.String()`` names them."""
        if self.custom_label:
            return self.custom_label
        resource = _resource_name(self.resource)
        return f"{resource}{describe_action(self.action_type, resource)}"

    def is_wildcard(self) -> bool:
        return _resource_name(self.resource) == "*" and self.action_type == ActionType.All

    def matches(self, incoming: "ClusterEvent") -> bool:
        """Does this registration cover ``incoming``? (upstream ``MatchClusterEvents``)

        A wildcard registration matches everything. Otherwise the resources must match (``*``
        matches any; ``Pod`` matches ``AssignedPod`` and ``UnschedulablePod``), the actions must
        overlap, and the incoming action must be no broader than the registered one, so a plain
        ``Node/Update`` does not wake a plugin registered only for ``Node/UpdateNodeLabel``.
        """
        if self.is_wildcard():
            return True
        mine, theirs = _resource_name(self.resource), _resource_name(incoming.resource)
        if not (mine == "*" or mine == theirs or _pod_family_match(mine, theirs)):
            return False
        registered, action = int(self.action_type), int(incoming.action_type)
        return bool(registered & action) and action <= registered


def _resource_name(resource: Any) -> str:
    return resource.value if isinstance(resource, EventResource) else str(resource)


def _pod_family_match(registered: str, incoming: str) -> bool:
    """A plugin registered for ``Pod`` hears about assigned and unschedulable pods too."""
    return registered == "Pod" and incoming in ("AssignedPod", "UnschedulablePod")


#: upstream's ActionType bits: every flag but kschedfw's own UpdatePodOther
_UPSTREAM_BITS = int(ActionType.All) & ~int(ActionType.UpdatePodOther)
_UPSTREAM_UPDATE = int(ActionType.Update) & ~int(ActionType.UpdatePodOther)


@functools.lru_cache(maxsize=None)
def _action_label(action: ActionType) -> str:
    """Upstream ``ActionType.String()``: the name of one flag, ``All`` or ``Update``, and the
    empty string for any other combination (so ``Node`` + ``Add|UpdateNodeLabel`` labels as just
    ``Node``) and for no action. ``UpdatePodOther`` is upstream's general ``Update``."""
    value = int(action)
    if value & ActionType.UpdatePodOther:
        value = (value & _UPSTREAM_BITS) | _UPSTREAM_UPDATE
    if value == _UPSTREAM_BITS:
        return "All"
    if value == _UPSTREAM_UPDATE:
        return "Update"
    if value and value & (value - 1) == 0:
        return ActionType(value).name or ""
    return ""


#: the update flags that can happen to a node, and to a pod (upstream ``nodeActionTypes`` and
#: ``podActionTypes`` in ``pkg/scheduler/framework/types.go``, plus UpdateNodeDeclaredFeature and
#: kschedfw's UpdatePodOther); every other resource has only Add, Delete and a general Update
_NODE_UPDATES = (ActionType.UpdateNodeAllocatable | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint
                 | ActionType.UpdateNodeCondition | ActionType.UpdateNodeAnnotation
                 | ActionType.UpdateNodeDeclaredFeature)
_POD_UPDATES = (ActionType.UpdatePodLabel | ActionType.UpdatePodScaleDown | ActionType.UpdatePodToleration
                | ActionType.UpdatePodSchedulingGatesEliminated | ActionType.UpdatePodGeneratedResourceClaim
                | ActionType.UpdatePodOther)
_UPDATES_OF = {"Node": _NODE_UPDATES, "Pod": _POD_UPDATES, "AssignedPod": _POD_UPDATES,
               "UnschedulablePod": _POD_UPDATES, "*": ActionType.Update}


def _single_flags(action: ActionType) -> list[str]:
    return [flag.name for flag in ActionType if flag.name and flag.value and (flag.value & (flag.value - 1)) == 0
            and action & flag]


@functools.lru_cache(maxsize=None)
def describe_action(action: ActionType, resource: str = "*") -> str:
    """The actions of ``action`` that can happen to ``resource``, by name, ``|``-joined
    (``Add|UpdateNodeLabel``), ``All`` or ``Update`` (every update the resource has): a readable
    form of a registration, which upstream's labels leave blank."""
    if action == ActionType.All:
        return "All"
    names = _single_flags(action & (ActionType.Add | ActionType.Delete))
    update = action & ActionType.Update
    own = _UPDATES_OF.get(resource, ActionType.Nothing)  # Nothing: no flags of its own
    if update and update & own == own:
        names.append("Update")
    elif update:  # the resource's own update flags; any others only when it has none of them
        names.extend(_single_flags(update & own or update))
    return "|".join(names) or "None"


QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]
"""``hint(pod, old_obj, new_obj) -> QueueingHint``; ``old_obj`` is None on add, ``new_obj`` on delete."""


@attrs.frozen
class ClusterEventWithHint:
    """An event a plugin registers, with an optional hint; no hint means "always Queue"."""

    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


WILDCARD_EVENT = ClusterEvent(EventResource.Wildcard, ActionType.All)
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.Wildcard, ActionType.All, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.Wildcard, ActionType.All, "ForceActivate")
BACKOFF_COMPLETE = ClusterEvent(EventResource.Wildcard, ActionType.All, "BackoffComplete")


# --------------------------------------------------------------------------- what an update stands for

def _raw_status(pod: Any, field: str) -> Any:
    raw = getattr(pod, "raw", None) or {}
    return (raw.get("status") or {}).get(field)


def pod_scheduling_properties_change(new_pod: Any, old_pod: Any) -> list[ClusterEvent]:
    """The events an update of an unscheduled (or assigned) pod stands for (upstream
    ``PodSchedulingPropertiesChange``): label change, scale-down, scheduling gates eliminated,
    toleration added, generated resource claim; ``UpdatePodOther`` when none applies."""
    resource = EventResource.AssignedPod if new_pod.node_name else EventResource.UnschedulablePod
    actions = []
    if dict(new_pod.labels) != dict(old_pod.labels):
        actions.append(ActionType.UpdatePodLabel)
    new_req, old_req = new_pod.request(), old_pod.request()
    if any(name not in new_req or amount > new_req[name] for name, amount in old_req.items()):
        actions.append(ActionType.UpdatePodScaleDown)
    if not new_pod.scheduling_gates and old_pod.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new_pod.tolerations) != len(old_pod.tolerations):
        actions.append(ActionType.UpdatePodToleration)
    if (_raw_status(new_pod, "resourceClaimStatuses") != _raw_status(old_pod, "resourceClaimStatuses")
            or _raw_status(new_pod, "extendedResourceClaimStatus")
            != _raw_status(old_pod, "extendedResourceClaimStatus")):
        actions.append(ActionType.UpdatePodGeneratedResourceClaim)
    if not actions:
        actions.append(ActionType.UpdatePodOther)
    return [ClusterEvent(resource, a) for a in actions]


def node_scheduling_properties_change(new_node: Any, old_node: Any) -> list[ClusterEvent]:
    """The events an update of a node stands for (upstream ``NodeSchedulingPropertiesChange``):
    one per changed property, in upstream's order; none when nothing the scheduler reads changed.
    Cordoning is not an event (it makes nothing schedulable); uncordoning is a taint update, as
    upstream reports it."""
    actions = []
    if old_node.unschedulable != new_node.unschedulable and not new_node.unschedulable:
        actions.append(ActionType.UpdateNodeTaint)
    if old_node.allocatable != new_node.allocatable:
        actions.append(ActionType.UpdateNodeAllocatable)
    if old_node.labels != new_node.labels:
        actions.append(ActionType.UpdateNodeLabel)
    if old_node.taints != new_node.taints:
        actions.append(ActionType.UpdateNodeTaint)
    if _condition_statuses(old_node) != _condition_statuses(new_node):
        actions.append(ActionType.UpdateNodeCondition)
    if old_node.annotations != new_node.annotations:
        actions.append(ActionType.UpdateNodeAnnotation)
    return [ClusterEvent(EventResource.Node, a) for a in actions]


def _condition_statuses(node: Any) -> dict[str, str]:
    return {c.type: c.status for c in node.conditions}
