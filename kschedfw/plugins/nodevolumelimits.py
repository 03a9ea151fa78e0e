"""NodeVolumeLimits: CSI attach limits per node (upstream ``nodevolumelimits/csi.go``).

The limit of a driver on a node is ``CSINode.spec.drivers[].allocatable.count``; a driver without
a count, or a node without a CSINode, has no limit. Counted against it are the unique volumes
(``<driver>/<volumeHandle>``) of the pods on the node and of the node's VolumeAttachments; the new
pod's volumes already attached there are not counted twice. PVC-backed volumes (including generic
ephemeral ones) are resolved through their PV, or through their StorageClass's provisioner while
unbound; in-tree volumes count for their CSI driver when CSI migration applies (AWS EBS, GCE PD,
Azure Disk, Cinder, Portworx, with a CSINode). Exceeding: Unschedulable
``node(s) exceed max volume count``. A missing PVC of the new pod: UnschedulableAndUnresolvable
``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not found``.

PreFilter returns Skip for pods without PVCs, generic ephemeral volumes or migratable in-tree
inline volumes.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any, Mapping

import kschedfw
from kschedfw import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, Status
from kschedfw.fwk.features import enabled
from kschedfw.plugins.volumebinding import csitranslation as csitrans
from kschedfw.api.accessors import spec_of
from kschedfw.plugins.volumebinding.storagehelpers import (NotFoundError, find_object, pod_volume_claim_name,
                                                           pvc_class, volume_is_for_pod,
                                                           volumes_sign_fragments)

if TYPE_CHECKING:
    from kschedfw.api import CSINode, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass, Volume
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, PreFilterResult, SignFragment

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
_VA_STATE_KEY = "PreFilter" + NAME + "/VolumeAttachments"

#: In-tree plugins whose CSI migration counts (upstream ``isCSIMigrationOn``).
_MIGRATION_ON = frozenset((csitrans.AWS_EBS_IN_TREE, csitrans.PORTWORX_IN_TREE,
                           csitrans.GCE_PD_IN_TREE, csitrans.AZURE_DISK_IN_TREE,
                           csitrans.CINDER_IN_TREE))


def is_csi_migration_on(csi_node: CSINode | None, plugin_name: str) -> bool:
    if csi_node is None or not plugin_name:
        return False
    return plugin_name in _MIGRATION_ON


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """Driver -> attach limit from the CSINode (drivers without a count have no limit)."""
    if csi_node is None:
        return {}
    return {driver: count for driver, count in csi_node.drivers.items() if count is not None}


class _LookupError(Exception):
    """An error of the volume lookup; ``not_found`` marks the missing-PVC case."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


class _VolumeAttachmentIndex:
    """node name -> {unique volume name: driver}, built once per cycle (upstream: an indexer)."""

    def __init__(self, by_node: dict[str, dict[str, str]]) -> None:
        self.by_node = by_node

    def clone(self) -> "_VolumeAttachmentIndex":
        return self


class NodeVolumeLimits:
    """CSI volume attach limits. Args: none.

    ``features`` (or ``handle.feature_gates``) may enable the alpha gate ``VolumeLimitScaling``:
    a pod using a CSI driver whose CSIDriver sets ``preventPodSchedulingIfMissing`` then only fits
    nodes where that driver is installed.
    """

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle, *,
                 features: Mapping[str, bool] | None = None) -> None:
        self.handle = handle
        self.enable_volume_limit_scaling = enabled(features, "VolumeLimitScaling") if features is not None \
            else handle.feature_gates.enabled("VolumeLimitScaling")
        self.random_volume_id_prefix = secrets.token_hex(16)

    @kschedfw.hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return volumes_sign_fragments(pod)

    # ------------------------------------------------------------------ prefilter
    @kschedfw.hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        for volume in pod.volumes:
            if volume.claim_name or volume.source == "ephemeral" or \
                    csitrans.is_inline_migratable(volume):
                return None, None
        return None, Status.skip()

    # ------------------------------------------------------------------ filter
    @kschedfw.hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        lister = self.handle.lister
        csi_node: CSINode | None = find_object(lister, "CSINode", node.name)

        new_volumes: dict[str, str] = {}
        try:
            self._filter_attachable_volumes(pod, csi_node, True, new_volumes)
        except _LookupError as exc:
            if exc.not_found:
                return Status.unresolvable(str(exc))
            return Status.as_status(str(exc))
        if not new_volumes:
            return None

        if self.enable_volume_limit_scaling:
            for driver in new_volumes.values():
                if not self._csi_driver_on_node(driver, csi_node):
                    return Status.unschedulable(f"{driver} CSI driver is not installed on the node")

        limits = volume_limits(csi_node)
        if not limits:
            return None

        attached: dict[str, str] = {}
        for existing in node_info.pods:
            try:
                self._filter_attachable_volumes(existing, csi_node, False, attached)
            except _LookupError as exc:
                return Status.as_status(str(exc))
        attached_count: dict[str, int] = {}
        for unique_name, driver in attached.items():
            new_volumes.pop(unique_name, None)   # a volume shared with a running pod counts once
            attached_count[driver] = attached_count.get(driver, 0) + 1

        for unique_name, driver in self._node_volume_attachments(state, node.name).items():
            if unique_name not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1

        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _csi_driver_on_node(self, driver: str, csi_node: CSINode | None) -> bool:
        obj = find_object(self.handle.lister, "CSIDriver", driver)
        if obj is None:
            return True   # not a CSI driver we know of: do not block the pod
        if not spec_of(obj).get("preventPodSchedulingIfMissing"):
            return True
        return csi_node is not None and driver in csi_node.drivers

    def _filter_attachable_volumes(self, pod: Pod, csi_node: CSINode | None, new_pod: bool,
                                   result: dict[str, str]) -> None:
        lister = self.handle.lister
        for volume in pod.volumes:
            claim, is_ephemeral = pod_volume_claim_name(pod, volume)
            if claim is None:
                self._check_attachable_inline_volume(volume, csi_node, result)
                continue
            if not claim:
                raise _LookupError("PersistentVolumeClaim had no name")
            pvc: PersistentVolumeClaim | None = find_object(lister, "PersistentVolumeClaim", claim,
                                                            pod.namespace)
            if pvc is None:
                if new_pod:
                    # The new pod cannot run without its PVC.
                    raise _LookupError(f"looking up PVC {pod.namespace}/{claim}: "
                                       f"{NotFoundError('PersistentVolumeClaim', claim)}", True)
                continue  # a running pod's missing PVC is not counted
            if is_ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise _LookupError(err)
            driver, handle = self._csi_driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver

    def _check_attachable_inline_volume(self, volume: Volume, csi_node: CSINode | None,
                                        result: dict[str, str]) -> None:
        plugin = csitrans.plugin_for_volume(volume)
        if plugin is None:
            return
        if not is_csi_migration_on(csi_node, plugin.in_tree_name):
            return
        try:
            source = csitrans.translate_inline_volume(volume)
        except csitrans.TranslationError as exc:
            raise _LookupError(f"converting volume({volume.name}) from inline to csi: {exc}") from None
        result[f"{plugin.csi_driver}/{source.volume_handle}"] = plugin.csi_driver

    def _csi_driver_info(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        if not pvc.volume_name:
            return self._csi_driver_info_from_sc(csi_node, pvc)
        pv: PersistentVolume | None = find_object(self.handle.lister, "PersistentVolume", pvc.volume_name)
        if pv is None:
            # Deleted, or the PVC is pre-bound to a PV not created yet: count by StorageClass.
            return self._csi_driver_info_from_sc(csi_node, pvc)
        if pv.source == "csi":
            return pv.csi_driver or "", str((pv.details or {}).get("volumeHandle") or "")
        plugin = csitrans.plugin_for_pv(pv)
        if plugin is None or not is_csi_migration_on(csi_node, plugin.in_tree_name):
            return "", ""
        try:
            _translated, source = csitrans.translate_pv(pv)
        except csitrans.TranslationError:
            return "", ""
        return source.driver, source.volume_handle

    def _csi_driver_info_from_sc(self, csi_node: CSINode | None, pvc: PersistentVolumeClaim
                                 ) -> tuple[str, str]:
        class_name = pvc_class(pvc)
        if not class_name:
            return "", ""   # immediate binding: it must be bound before scheduling
        sc: StorageClass | None = find_object(self.handle.lister, "StorageClass", class_name)
        if sc is None:
            return "", ""
        # A random prefix keeps these apart from real volume handles.
        handle = f"{self.random_volume_id_prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = sc.provisioner
        if csitrans.is_migratable_in_tree_plugin_by_name(provisioner):
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return csitrans.csi_name_from_in_tree_name(provisioner), handle
        return provisioner, handle

    # ------------------------------------------------------------------ volume attachments
    def _node_volume_attachments(self, state: CycleState | None, node_name: str) -> dict[str, str]:
        index: _VolumeAttachmentIndex | None = state.get(_VA_STATE_KEY) if state is not None else None
        if index is None:
            index = self._build_va_index()
            if state is not None:
                state.write(_VA_STATE_KEY, index)
        return index.by_node.get(node_name, {})

    def _build_va_index(self) -> _VolumeAttachmentIndex:
        lister = self.handle.lister
        by_node: dict[str, dict[str, str]] = {}
        for va in lister.list("VolumeAttachment"):
            spec = spec_of(va)
            node_name = spec.get("nodeName") or ""
            attacher = spec.get("attacher") or ""
            pv_name = (spec.get("source") or {}).get("persistentVolumeName")
            if not node_name or not attacher or not pv_name:
                continue
            pv: PersistentVolume | None = find_object(lister, "PersistentVolume", pv_name)
            if pv is None or pv.source != "csi":
                continue
            handle = str((pv.details or {}).get("volumeHandle") or "")
            by_node.setdefault(node_name, {})[f"{attacher}/{handle}"] = attacher
        return _VolumeAttachmentIndex(by_node)

    # ------------------------------------------------------------------ events
    @kschedfw.hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Any new CSINode may make room: no hint on purpose.
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Update),
                                 self.is_schedulable_after_csi_node_updated),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                                 self.is_schedulable_after_pvc_added),
            ClusterEventWithHint(ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete),
                                 self.is_schedulable_after_volume_attachment_deleted),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        deleted: Pod = old_obj
        if not deleted.volumes:
            return QueueingHint.QueueSkip
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QueueSkip
        for volume in deleted.volumes:
            if volume.claim_name or volume.source == "ephemeral" or \
                    csitrans.is_inline_migratable(volume):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pvc_added(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        pvc: PersistentVolumeClaim = new_obj
        if pvc.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        for volume in pod.volumes:
            claim, _ = pod_volume_claim_name(pod, volume)
            if claim is not None and claim == pvc.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_volume_attachment_deleted(self, pod: Pod, old_obj: Any, new_obj: Any
                                                        ) -> QueueingHint:
        attacher = spec_of(old_obj).get("attacher") or ""
        for volume in pod.volumes:
            if volume.claim_name:
                return QueueingHint.Queue
            if not csitrans.is_inline_migratable(volume):
                continue
            source = csitrans.translate_inline_volume(volume)   # raises: the hint counts as Queue
            if attacher == source.driver:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_node_updated(self, pod: Pod, old_obj: CSINode, new_obj: CSINode
                                              ) -> QueueingHint:
        old_limits = {d: (c or 0) for d, c in old_obj.drivers.items()}
        for driver, count in new_obj.drivers.items():
            if (count or 0) > old_limits.get(driver, 0):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

