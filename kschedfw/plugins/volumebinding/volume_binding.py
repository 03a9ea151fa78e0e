"""VolumeBinding: PVC/PV binding decisions made with the pod's scheduling.

Upstream: ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go``.

* PreFilter: a pod without PVCs (``persistentVolumeClaim`` or generic ``ephemeral`` volumes) gets
  Skip. A missing, lost or deleting PVC makes the pod UnschedulableAndUnresolvable with the
  apiserver-style text (``persistentvolumeclaim "<name>" not found``); an unbound PVC whose class
  binds immediately (or a pre-bound one) gives ``pod has unbound immediate PersistentVolumeClaims``.
* Filter: bound PVs' node affinity (``node(s) didn't match PersistentVolume's node affinity``,
  ``node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)``), a matching
  available PV or a provisioner for WaitForFirstConsumer claims (``node(s) didn't find available
  persistent volumes to bind``), CSIStorageCapacity (``node(s) did not have enough free storage``).
* Reserve assumes the bindings in memory, Unreserve reverts them, PreBind writes them through
  ``handle.client.bind_pvc`` (see :meth:`VolumeBinder.bind_pod_volumes`).
* PreScore/Score: only with the alpha gate StorageCapacityScoring (off in v1.36); otherwise Skip.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

import kschedfw
from kschedfw import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint, Status
from kschedfw.fwk.features import enabled
from kschedfw.fwk.types import MAX_NODE_SCORE, PreBindPreFlightResult
from kschedfw.plugins.volumebinding.binder import (BinderError, PodVolumeClaims, PodVolumes,
                                                   VolumeBinder, capacity_limit)
from kschedfw.api.accessors import annotations_of, is_being_deleted, spec_of
from kschedfw.plugins.volumebinding.storagehelpers import (ANN_MIGRATED_PLUGINS, CLAIM_LOST, find_object,
                                                           pod_volume_claim_name, pvc_class,
                                                           pvc_storage_request, quantity_bytes,
                                                           volume_is_for_pod, volumes_sign_fragments)
from kschedfw.plugins.argschema import MAX_CUSTOM_PRIORITY_SCORE
from kschedfw.plugins.volumebinding.args import ARGS

if TYPE_CHECKING:
    from kschedfw.api import PersistentVolumeClaim, Pod, StorageClass
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, PreFilterResult, SignFragment

#: StorageCapacityScoring: ``{storage class: (requested, capacity)}`` -> node score
StorageScorer = Callable[[Mapping[str, tuple[int, int]]], int]

NAME = "VolumeBinding"
STATE_KEY = NAME
MAX_UTILIZATION = 100


class _StateData:
    """Shared by reference across cycle-state clones, as upstream."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "pod_volume_claims", "has_static_bindings")

    def __init__(self, claims: PodVolumeClaims | None = None) -> None:
        self.all_bound = False
        self.pod_volumes_by_node: dict[str, PodVolumes] | None = {} if claims is not None else None
        self.pod_volume_claims = claims
        self.has_static_bindings = False

    def clone(self) -> "_StateData":
        return self


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def build_broken_linear_function(shape: list[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction over (utilization, score) points (Go integer maths)."""
    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                pu, ps = shape[i - 1]
                return ps + _trunc_div((s - ps) * (p - pu), u - pu)
        return shape[-1][1]
    return f


def build_scorer_function(shape: list[tuple[int, int]]) -> StorageScorer:
    """The StorageCapacityScoring scorer: per class utilisation -> score, averaged over classes."""
    raw = build_broken_linear_function(shape)

    def f(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(class_resources: Mapping[str, tuple[int, int]]) -> int:
        if not class_resources:
            return 0
        total = sum(f(req, cap) for req, cap in class_resources.values())
        q = total / len(class_resources)
        return int(q + 0.5) if q >= 0 else -int(-q + 0.5)    # math.Round
    return scorer


class VolumeBinding:
    """Binds PVCs to PVs (or triggers provisioning) for the node the pod is scheduled to.

    Args: ``bindTimeoutSeconds`` (default 600), ``shape`` (StorageCapacityScoring only).
    ``features`` (a test's override, else ``handle.feature_gates``) may turn on the alpha gate
    StorageCapacityScoring.
    """

    name = NAME
    args_spec = ARGS
    args_schema = ARGS.schema
    validate_args = staticmethod(ARGS.validate)

    def __init__(self, args: dict[str, Any] | None, handle: Handle, *,
                 features: Mapping[str, bool] | None = None) -> None:
        args = args or {}
        self.handle = handle
        self.enable_storage_capacity_scoring = enabled(features, "StorageCapacityScoring") if features is not None \
            else self.handle.feature_gates.enabled("StorageCapacityScoring")
        self.bind_timeout_seconds = int(args.get("bindTimeoutSeconds", 600))
        self.binder = VolumeBinder(self.handle, self.bind_timeout_seconds)
        self.scorer: StorageScorer | None = None
        if self.enable_storage_capacity_scoring:
            points = args.get("shape") or [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE},
                                           {"utilization": 100, "score": 0}]
            scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            self.scorer = build_scorer_function(
                [(int(p.get("utilization", 0)), int(p.get("score", 0)) * scale) for p in points])

    @kschedfw.hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return volumes_sign_fragments(pod)

    # ------------------------------------------------------------------ prefilter
    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """(has PVCs, error text making the pod UnschedulableAndUnresolvable)."""
        has_pvc = False
        lister = self.handle.lister
        for volume in pod.volumes:
            claim, is_ephemeral = pod_volume_claim_name(pod, volume)
            if claim is None:
                continue
            has_pvc = True
            pvc: PersistentVolumeClaim | None = find_object(lister, "PersistentVolumeClaim", claim,
                                                            pod.namespace)
            if pvc is None:
                if is_ephemeral:
                    return True, ("waiting for ephemeral volume controller to create the "
                                  f'persistentvolumeclaim "{claim}"')
                return True, f'persistentvolumeclaim "{claim}" not found'
            if pvc.phase == CLAIM_LOST:
                return True, (f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                              f'persistentvolume "{pvc.volume_name}"')
            if is_being_deleted(pvc):
                return True, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if is_ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    return True, err
        return has_pvc, None

    @kschedfw.hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        has_pvc, err = (False, None) if not pod.volumes else self._pod_has_pvcs(pod)
        if err is not None:
            return None, Status.unresolvable(err)
        if not has_pvc:
            state.write(STATE_KEY, _StateData())
            return None, Status.skip()
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BinderError as exc:
            return None, Status.as_status(str(exc))
        if claims.unbound_claims_immediate:
            # Requeued when the PV controller binds them.
            return None, Status.unresolvable("pod has unbound immediate PersistentVolumeClaims")
        state.write(STATE_KEY, _StateData(PodVolumeClaims(
            bound_claims=claims.bound_claims,
            unbound_claims_delay_binding=claims.unbound_claims_delay_binding,
            unbound_volumes_delay_binding=claims.unbound_volumes_delay_binding)))
        return None, None

    # ------------------------------------------------------------------ filter
    @kschedfw.hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        claims, by_node, node = data.pod_volume_claims, data.pod_volumes_by_node, node_info.node
        # Filter runs only for pods PreFilter did not skip (they have claims), on nodes.
        assert claims is not None and by_node is not None and node is not None
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(pod, claims, node)
        except BinderError as exc:
            return Status.as_status(str(exc))
        if reasons:
            return Status.unresolvable(*reasons)
        by_node[node.name] = pod_volumes
        if pod_volumes.static_bindings:
            data.has_static_bindings = True
        return None

    # ------------------------------------------------------------------ score
    @kschedfw.hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        if self.scorer is None:
            return Status.skip()
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        if data.has_static_bindings or self.enable_storage_capacity_scoring:
            return None
        return Status.skip()

    @kschedfw.hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        if self.scorer is None:
            return 0
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        pod_volumes = (data.pod_volumes_by_node or {}).get(node_info.name)
        if pod_volumes is None:
            return 0
        classes: dict[str, list[int]] = {}
        if pod_volumes.static_bindings or not self.enable_storage_capacity_scoring:
            for binding in pod_volumes.static_bindings or ():
                requested, capacity = binding.storage_resource()
                entry = classes.setdefault(binding.storage_class_name(), [0, 0])
                entry[0] += requested
                entry[1] += capacity
        else:
            for provision in pod_volumes.dynamic_provisions or ():
                if provision.node_capacity is None:
                    continue
                entry = classes.setdefault(pvc_class(provision.pvc), [0, 0])
                # Not +=: two claims of one class on a node share that class's capacity.
                entry[1] = capacity_limit_value(provision.node_capacity)
                entry[0] += pvc_storage_request(provision.pvc)
        return self.scorer({k: (v[0], v[1]) for k, v in classes.items()})

    # ------------------------------------------------------------------ reserve
    @kschedfw.hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        pod_volumes = (data.pod_volumes_by_node or {}).get(node_name)
        if pod_volumes is None:
            data.all_bound = True   # the pod references no PVC
            return None
        try:
            data.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
        except BinderError as exc:
            return Status.as_status(str(exc))
        return None

    @kschedfw.hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return
        pod_volumes = (data.pod_volumes_by_node or {}).get(node_name)
        if pod_volumes is None:
            return
        self.binder.revert_assumed_pod_volumes(pod_volumes)

    # ------------------------------------------------------------------ bind
    @kschedfw.hookimpl
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str
                            ) -> tuple[PreBindPreFlightResult | None, Status | None]:
        result = PreBindPreFlightResult(allow_parallel=True)
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return result, Status.as_status("not found")
        if data.all_bound:
            return result, Status.skip()
        if node_name not in (data.pod_volumes_by_node or {}):
            return result, Status.as_status(f'no pod volume found for node "{node_name}"')
        return result, None

    @kschedfw.hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        if data.all_bound:
            return None
        pod_volumes = (data.pod_volumes_by_node or {}).get(node_name)
        if pod_volumes is None:
            return Status.as_status(f'no pod volume found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod, pod_volumes)
        except Exception as exc:
            return Status.as_status(str(exc) or type(exc).__name__)
        return None

    # ------------------------------------------------------------------ events
    @kschedfw.hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Queueing hints are GA: Node Add|UpdateNodeLabel (no UpdateNodeTaint).
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.StorageClass,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume,
                                              ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.Node,
                                              ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIDriver, ActionType.Update),
                                 self.is_schedulable_after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIStorageCapacity,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_csi_storage_capacity_change),
        ]

    def is_schedulable_after_csi_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.Queue
        if annotations_of(old_obj).get(ANN_MIGRATED_PLUGINS) != \
                annotations_of(new_obj).get(ANN_MIGRATED_PLUGINS):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_persistent_volume_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any
                                                             ) -> QueueingHint:
        pvc: PersistentVolumeClaim = new_obj
        if pod.namespace != pvc.namespace:
            return QueueingHint.QueueSkip
        for volume in pod.volumes:
            claim, _ = pod_volume_claim_name(pod, volume)
            if claim is not None and claim == pvc.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_change(self, pod: Pod, old_obj: StorageClass | None,
                                                  new_obj: StorageClass) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.Queue
        if tuple(old_obj.allowed_topologies) != tuple(new_obj.allowed_topologies):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_storage_capacity_change(self, pod: Pod, old_obj: Any, new_obj: Any
                                                         ) -> QueueingHint:
        if old_obj is None:
            return QueueingHint.Queue
        old_limit, new_limit = capacity_limit(old_obj), capacity_limit(new_obj)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_driver_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        name = new_obj.name if hasattr(new_obj, "name") else spec_of(new_obj).get("name")
        for volume in pod.volumes:
            if volume.source != "csi" or (volume.details or {}).get("driver") != name:
                continue
            if spec_of(old_obj).get("storageCapacity") is True and \
                    spec_of(new_obj).get("storageCapacity") is not True:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def capacity_limit_value(capacity: Any) -> int:
    """Capacity for scoring: upstream reads ``capacity`` (not maximumVolumeSize) here."""
    raw = capacity.raw if hasattr(capacity, "raw") else capacity
    return quantity_bytes((raw or {}).get("capacity")) or 0
