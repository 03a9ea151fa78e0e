"""VolumeZone: a pod's bound PersistentVolumes must be in the node's zone and region.

Upstream: ``pkg/scheduler/framework/plugins/volumezone``.

PreFilter collects the zone/region labels (``topology.kubernetes.io/{zone,region}`` and their
``failure-domain.beta`` forms; ``a__b`` means several zones) of the PVs bound to the pod's PVCs;
pods with no such PV get Skip. Unbound PVCs of a WaitForFirstConsumer class are ignored (volume
binding handles them). Filter: a node without any topology label fits (single-zone clusters);
otherwise each PV label must have a matching node label value (a beta PV label may match the GA
node label), else UnschedulableAndUnresolvable ``node(s) had no available volume zone``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import kschedfw
from kschedfw import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, Status
from kschedfw.plugins.volumebinding.storagehelpers import (LABEL_BETA_REGION, LABEL_BETA_ZONE,
                                                           LABEL_MULTI_ZONE_DELIMITER, LABEL_REGION,
                                                           LABEL_ZONE, WAIT_FOR_FIRST_CONSUMER,
                                                           NotFoundError, get_object, pvc_class,
                                                           volumes_sign_fragments)

if TYPE_CHECKING:
    from kschedfw.api import PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, PreFilterResult, SignFragment

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

#: (pv name, label key, allowed values) of one topology label on a PV
PVTopology = tuple[str, str, frozenset[str]]

TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)


def translate_to_ga_label(label: str) -> str:
    if label == LABEL_BETA_REGION:
        return LABEL_REGION
    if label == LABEL_BETA_ZONE:
        return LABEL_ZONE
    return label


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: ``a__b`` -> {a, b}; None when a zone is empty (the label is ignored)."""
    zones: set[str] = set()
    for zone in value.split(LABEL_MULTI_ZONE_DELIMITER):
        zone = zone.strip()
        if not zone:
            return None
        zones.add(zone)
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """(pv name, label key, allowed values) for each topology label on the PV."""
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is None:
            continue
        out.append((pv.name, key, zones))
    return out


class _StateData:
    __slots__ = ("pod_pv_topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.pod_pv_topologies = topologies

    def clone(self) -> "_StateData":
        return self


class VolumeZone:
    """Zone/region labels of bound PVs against node labels. Args: none."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    @kschedfw.hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment], None]:
        return volumes_sign_fragments(pod)

    def _pv_topologies_of_pod(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        lister = self.handle.lister
        topologies: list[PVTopology] = []
        for volume in pod.volumes:
            if volume.source != "persistentVolumeClaim":
                continue
            claim = volume.claim_name
            if not claim:
                return [], Status.unresolvable("PersistentVolumeClaim had no name")
            try:
                pvc: PersistentVolumeClaim = get_object(lister, "PersistentVolumeClaim", claim, pod.namespace)
            except NotFoundError as exc:
                return [], Status.unresolvable(str(exc))
            pv_name = pvc.volume_name
            if not pv_name:
                class_name = pvc_class(pvc)
                if not class_name:
                    return [], Status.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name")
                try:
                    sc: StorageClass = get_object(lister, "StorageClass", class_name)
                except NotFoundError as exc:
                    return [], Status.unresolvable(str(exc))
                mode = sc.volume_binding_mode
                if not mode:
                    return [], Status.unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{class_name}"')
                if mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # unbound volumes are VolumeBinding's business
                return [], Status.unresolvable("PersistentVolume had no name")
            try:
                pv: PersistentVolume = get_object(lister, "PersistentVolume", pv_name)
            except NotFoundError as exc:
                return [], Status.unresolvable(str(exc))
            topologies.extend(pv_topologies(pv))
        return topologies, None

    @kschedfw.hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:
            return None, Status.skip()
        topologies, status = self._pv_topologies_of_pod(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _StateData(topologies))
        return None, None

    @kschedfw.hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        data: _StateData | None = state.get(PRE_FILTER_STATE_KEY)
        if data is None:
            topologies, status = self._pv_topologies_of_pod(pod)
            if status is not None:
                return status
        else:
            topologies = data.pod_pv_topologies
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None     # e.g. a single-zone cluster whose nodes carry no topology labels
        for _pv_name, key, values in topologies:
            value = labels.get(key)
            if value is None:
                value = labels.get(translate_to_ga_label(key))
            if value is None or value not in values:
                return Status.unresolvable(ERR_REASON_CONFLICT)
        return None

    # ------------------------------------------------------------------ events
    @kschedfw.hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.StorageClass, ActionType.Add),
                                 self.is_schedulable_after_storage_class_added),
            ClusterEventWithHint(ClusterEvent(EventResource.Node,
                                              ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_persistent_volume_change),
        ]

    def is_schedulable_after_persistent_volume_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any
                                                            ) -> QueueingHint:
        pvc = new_obj
        if pvc is not None and pod.namespace == pvc.namespace:
            for volume in pod.volumes:
                if volume.source == "persistentVolumeClaim" and volume.claim_name == pvc.name:
                    return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if new_obj.volume_binding_mode != WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_persistent_volume_change(self, pod: Pod, old_obj: Any, new_obj: Any
                                                      ) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.Queue
        if pv_topologies(old_obj) != pv_topologies(new_obj):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
