"""VolumeRestrictions: disks that cannot be shared between pods on a node, and ReadWriteOncePod.

Upstream: ``pkg/scheduler/framework/plugins/volumerestrictions``.

* Filter rejects a node where an existing pod already uses the same GCE PD (unless both mount it
  read-only), AWS EBS volume, iSCSI IQN (unless both read-only) or Ceph RBD image (overlapping
  monitors, same pool and image, unless both read-only): ``node(s) had no available disk``.
* PreFilter looks up the pod's PVCs: a missing PVC makes the pod UnschedulableAndUnresolvable
  (``persistentvolumeclaim "<name>" not found``). PVCs with the ReadWriteOncePod access mode that
  a scheduled pod already uses make every node Unschedulable (preemption of that pod can help),
  tracked through AddPod/RemovePod during preemption dry runs.
* Pods without such volumes or conflicting ReadWriteOncePod claims: PreFilter returns Skip.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import kschedfw
from kschedfw import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint,
                      Status)
from kschedfw.plugins.volumebinding.storagehelpers import (RWOP, NotFoundError, get_object, pvc_key,
                                                           volumes_sign_fragments)

if TYPE_CHECKING:
    from kschedfw.api import PersistentVolumeClaim, Pod, Volume
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, PreFilterResult, SignFragment

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod")

_RESTRICTED_SOURCES = frozenset(("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"))


class _PreFilterState:
    """Names of the pod's ReadWriteOncePod PVCs and how many scheduled pods use them."""

    __slots__ = ("read_write_once_pod_pvcs", "conflicting_pvc_ref_count")

    def __init__(self, pvcs: frozenset[str], count: int) -> None:
        self.read_write_once_pod_pvcs = pvcs
        self.conflicting_pvc_ref_count = count

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        conflicts = 0
        for volume in pod.volumes:
            if volume.claim_name and volume.claim_name in self.read_write_once_pod_pvcs:
                conflicts += 1
        self.conflicting_pvc_ref_count += multiplier * conflicts

    def clone(self) -> "_PreFilterState":
        return _PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)


def _rbd(details: Mapping[str, Any]) -> tuple[tuple[str, ...], str, str, bool]:
    monitors = tuple(str(m) for m in details.get("monitors") or ())
    return monitors, str(details.get("pool") or "rbd"), str(details.get("image") or ""), \
        bool(details.get("readOnly"))


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Does ``volume`` conflict with one of ``pod``'s volumes?"""
    source, details = volume.source, volume.details or {}
    for existing in pod.volumes:
        if existing.source != source:
            continue
        other = existing.details or {}
        if source == "gcePersistentDisk":
            # The same GCE disk mounted by several pods is fine only if all mount it read-only.
            if details.get("pdName") == other.get("pdName") and \
                    not (bool(details.get("readOnly")) and bool(other.get("readOnly"))):
                return True
        elif source == "awsElasticBlockStore":
            if details.get("volumeID") == other.get("volumeID"):
                return True
        elif source == "iscsi":
            # Same IQN = same volume; only several read-only mounts may share it.
            if details.get("iqn") == other.get("iqn") and \
                    not (bool(details.get("readOnly")) and bool(other.get("readOnly"))):
                return True
        elif source == "rbd":
            mon, pool, image, ro = _rbd(details)
            emon, epool, eimage, ero = _rbd(other)
            if set(mon) & set(emon) and pool == epool and image == eimage and not (ro and ero):
                return True
    return False


def needs_restrictions_check(volume: Volume) -> bool:
    return volume.source in _RESTRICTED_SOURCES


def satisfy_volume_conflicts(pod: Pod, pods_on_node: list[Pod]) -> bool:
    for volume in pod.volumes:
        if not needs_restrictions_check(volume):
            continue
        for existing in pods_on_node:
            if is_volume_conflict(volume, existing):
                return False
    return True


class VolumeRestrictions:
    """Disk conflicts and ReadWriteOncePod claims. Args: none."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    # ------------------------------------------------------------------ sign
    @kschedfw.hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return volumes_sign_fragments(pod)

    # ------------------------------------------------------------------ prefilter
    def _pvc_used_by_pods(self, key: str) -> bool:
        """Upstream StorageInfos().IsPVCUsedByPods: does a pod on any node use claim ``key``?"""
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is None:
            return False
        for node_info in snapshot.node_infos():
            if node_info.pvc_ref_counts.get(key, 0) > 0:
                return True
        return False

    @kschedfw.hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = False
        has_claims = False
        for volume in pod.volumes:
            if volume.source in _RESTRICTED_SOURCES:
                needs_check = True
            elif volume.claim_name:
                has_claims = True
        if not needs_check and not has_claims:
            return None, Status.skip()
        rwop: set[str] = set()
        for volume in pod.volumes:
            if not volume.claim_name:
                continue
            try:
                pvc: PersistentVolumeClaim = get_object(self.handle.lister, "PersistentVolumeClaim", volume.claim_name,
                                 pod.namespace)
            except NotFoundError as exc:
                return None, Status.unresolvable(str(exc))
            if RWOP in pvc.access_modes:
                rwop.add(pvc.name)
        count = 0
        for claim in rwop:
            if self._pvc_used_by_pods(pvc_key(pod.namespace, claim)):
                count += 1   # at most one pod can use a ReadWriteOncePod claim
        if not needs_check and count == 0:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(rwop), count))
        return None, None

    @staticmethod
    def _state(state: CycleState) -> _PreFilterState | Status:
        s: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_status(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        return s

    @kschedfw.hookimpl
    def pre_filter_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                           node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_add, 1)
        return None

    @kschedfw.hookimpl
    def pre_filter_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                              node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_remove, -1)
        return None

    # ------------------------------------------------------------------ filter
    @kschedfw.hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not satisfy_volume_conflicts(pod, node_info.pods):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        s = self._state(state)
        if isinstance(s, Status):
            return s
        if s.conflicting_pvc_ref_count > 0:
            return Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    # ------------------------------------------------------------------ events
    @kschedfw.hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # With queueing hints (GA) only Node/Add is registered for nodes.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                                 self.is_schedulable_after_persistent_volume_claim_added),
        ]

    def is_schedulable_after_persistent_volume_claim_added(self, pod: Pod, old_obj: Any, new_obj: Any
                                                            ) -> QueueingHint:
        pvc: PersistentVolumeClaim = new_obj
        if pvc.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        for volume in pod.volumes:
            if volume.claim_name and volume.claim_name == pvc.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_deleted(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        deleted: Pod = old_obj
        if deleted.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if not satisfy_volume_conflicts(pod, [deleted]):
            return QueueingHint.Queue
        # A deleted pod using one of our PVCs may free a ReadWriteOncePod claim (access modes are
        # not fetched here, as upstream).
        claims = {v.claim_name for v in pod.volumes if v.claim_name}
        for volume in deleted.volumes:
            if volume.claim_name and volume.claim_name in claims:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip
