"""The scheduler's volume binder (upstream ``volumebinding/binder.go``).

* :meth:`VolumeBinder.get_pod_volume_claims` (PreFilter) sorts the pod's PVCs into bound, unbound
  with delayed binding (WaitForFirstConsumer) and unbound immediate ones, and lists the PVs of the
  delayed claims' storage classes.
* :meth:`VolumeBinder.find_pod_volumes` (Filter, per node) checks bound PVs' node affinity, picks
  the smallest matching available PV for each delayed claim, or checks that the class can
  provision on this node (provisioner, allowed topologies, CSIStorageCapacity).
* :meth:`VolumeBinder.assume_pod_volumes` (Reserve) records the choices in the assume caches,
  :meth:`VolumeBinder.revert_assumed_pod_volumes` (Unreserve) drops them, and
  :meth:`VolumeBinder.bind_pod_volumes` (PreBind) writes them through the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from kschedfw.api.selectors import parse_label_selector
from kschedfw.fwk.interface import PersistentVolumeClaimBinder
from kschedfw.plugins.volumebinding import csitranslation as csitrans
from kschedfw.plugins.volumebinding.assume_cache import PVAssumeCache, PVCAssumeCache
from kschedfw.api.accessors import annotations_of, is_being_deleted, spec_of
from kschedfw.plugins.volumebinding.storagehelpers import (ANN_BOUND_BY_CONTROLLER, ANN_MIGRATED_PLUGINS,
                                                           ANN_SELECTED_NODE, NOT_SUPPORTED_PROVISIONER,
                                                           VOLUME_AVAILABLE, WAIT_FOR_FIRST_CONSUMER,
                                                           NotFoundError, check_access_modes,
                                                           check_node_affinity, claim_selector_matches,
                                                           find_object, is_pvc_fully_bound,
                                                           is_volume_bound_to_claim,
                                                           match_topology_selector_terms,
                                                           pod_volume_claim_name, pv_class,
                                                           pv_storage_capacity, pvc_class,
                                                           pvc_has_storage_request, pvc_storage_request,
                                                           quantity_bytes, volume_attributes_class,
                                                           volume_is_for_pod, volume_mode, with_annotation,
                                                           with_pv_claim_ref)

if TYPE_CHECKING:
    from kschedfw.api import (CSINode, Node, PersistentVolume, PersistentVolumeClaim, Pod,
                              StorageClass, Volume)
    from kschedfw.fwk.interface import Handle, ObjectLister

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

#: In-tree plugins whose PVs are translated to CSI before the node-affinity check
#: (upstream ``isCSIMigrationOnForPlugin``).
_MIGRATION_ON = frozenset((csitrans.AWS_EBS_IN_TREE, csitrans.GCE_PD_IN_TREE,
                           csitrans.AZURE_DISK_IN_TREE, csitrans.CINDER_IN_TREE,
                           csitrans.PORTWORX_IN_TREE))


class BinderError(Exception):
    """A failure that makes Filter/Reserve/PreBind return Error (the pod is retried)."""


@attrs.define
class BindingInfo:
    """A PVC and the PV proposed for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    def storage_class_name(self) -> str:
        return self.pv.storage_class_name

    def storage_resource(self) -> tuple[int, int]:
        return pvc_storage_request(self.pvc), pv_storage_capacity(self.pv)


@attrs.define
class DynamicProvision:
    """A PVC to provision, with the CSIStorageCapacity that showed room for it (if checked)."""

    pvc: PersistentVolumeClaim
    node_capacity: Any = None   # a CSIStorageCapacity (an untyped kind)


@attrs.define
class PodVolumes:
    static_bindings: list[BindingInfo] | None = None
    dynamic_provisions: list[DynamicProvision] | None = None


@attrs.define
class PodVolumeClaims:
    bound_claims: list[PersistentVolumeClaim] = attrs.Factory(list)
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = attrs.Factory(list)
    unbound_claims_immediate: list[PersistentVolumeClaim] = attrs.Factory(list)
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = attrs.Factory(dict)


def capacity_limit(capacity: Any) -> int | None:
    """volumeLimit: ``maximumVolumeSize`` if set (more precise), else ``capacity``."""
    raw = capacity.raw if hasattr(capacity, "raw") else capacity
    if not isinstance(raw, dict):
        return None
    if raw.get("maximumVolumeSize") is not None:
        return quantity_bytes(raw.get("maximumVolumeSize"))
    return quantity_bytes(raw.get("capacity"))


def find_matching_volume(claim: PersistentVolumeClaim, volumes: list[PersistentVolume],
                         node: Node | None, excluded: dict[str, PersistentVolume],
                         delay_binding: bool = True) -> PersistentVolume | None:
    """FindMatchingVolume: a PV pre-bound to the claim, else the smallest available match."""
    smallest: PersistentVolume | None = None
    smallest_qty = 0
    requested = pvc_storage_request(claim)
    requested_class = pvc_class(claim)
    claim_mode = volume_mode(claim)
    claim_vac = volume_attributes_class(claim)
    for volume in volumes:
        if volume.name in excluded:
            continue
        if volume.claim_ref is not None and not is_volume_bound_to_claim(volume, claim):
            continue
        qty = pv_storage_capacity(volume)
        if qty < requested:
            continue
        if volume_mode(volume) != claim_mode:
            continue
        if volume_attributes_class(volume) != claim_vac:
            continue
        if is_being_deleted(volume):
            continue
        affinity_ok = True
        if node is not None:
            affinity_ok = check_node_affinity(volume, node.labels)
        if is_volume_bound_to_claim(volume, claim):
            # A pre-bound PV whose affinity rejects this node means no match at all here.
            return volume if affinity_ok else None
        if node is None and delay_binding:
            continue
        if volume.phase != VOLUME_AVAILABLE:
            continue
        if not claim_selector_matches(claim, volume.labels):
            continue
        if pv_class(volume) != requested_class:
            continue
        if not affinity_ok:
            continue
        if node is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = volume, qty
    return smallest


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> tuple[PersistentVolume, bool]:
    """GetBindVolumeToClaim: (PV bound to the claim, whether it changed)."""
    dirty = False
    should_set_bound_by_controller = not is_volume_bound_to_claim(pv, pvc)
    new = pv
    ref = spec_of(pv).get("claimRef")
    ref_uid = ref.get("uid") if isinstance(ref, dict) else None
    if pv.claim_ref is None or pv.claim_ref != (pvc.namespace, pvc.name) or (ref_uid or "") != pvc.uid:
        new = with_pv_claim_ref(new, pvc)
        dirty = True
    if should_set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in annotations_of(new):
        new = with_annotation(new, ANN_BOUND_BY_CONTROLLER, "yes")
        dirty = True
    return new, dirty


class VolumeBinder:
    """Volume binding decisions over the handle's lister, with PV/PVC assume caches."""

    def __init__(self, handle: Handle, bind_timeout_seconds: int = 600) -> None:
        self.handle = handle
        self.bind_timeout_seconds = bind_timeout_seconds
        self.pv_cache = PVAssumeCache(lambda: self.handle.lister)
        self.pvc_cache = PVCAssumeCache(lambda: self.handle.lister)

    @property
    def lister(self) -> ObjectLister:
        return self.handle.lister

    # ------------------------------------------------------------------ claims
    def _is_volume_bound(self, pod: Pod, volume: Volume) -> tuple[bool, PersistentVolumeClaim | None]:
        claim, is_ephemeral = pod_volume_claim_name(pod, volume)
        if claim is None:
            return True, None
        key = f"{pod.namespace}/{claim}"
        try:
            pvc = self.pvc_cache.get(key)
        except NotFoundError as exc:
            raise BinderError(f'error getting PVC "{key}": {exc}') from None
        if is_ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                raise BinderError(err)
        return is_pvc_fully_bound(pvc), pvc

    def _is_delay_binding_mode(self, pvc: PersistentVolumeClaim) -> bool:
        class_name = pvc_class(pvc)
        if not class_name:
            return False
        sc: StorageClass | None = find_object(self.lister, "StorageClass", class_name)
        if sc is None:
            return False
        if not sc.volume_binding_mode:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
        return sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        claims = PodVolumeClaims()
        for volume in pod.volumes:
            bound, pvc = self._is_volume_bound(pod, volume)
            if pvc is None:
                continue
            if bound:
                claims.bound_claims.append(pvc)
            elif self._is_delay_binding_mode(pvc) and not pvc.volume_name:
                claims.unbound_claims_delay_binding.append(pvc)
            else:
                # Immediate binding (or pre-bound): should have been bound already.
                claims.unbound_claims_immediate.append(pvc)
        for pvc in claims.unbound_claims_delay_binding:
            class_name = pvc_class(pvc)
            claims.unbound_volumes_delay_binding[class_name] = self.pv_cache.list_pvs(class_name)
        return claims

    # ------------------------------------------------------------------ find
    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node
                         ) -> tuple[PodVolumes, list[str]]:
        """(volumes for this node, conflict reasons); raises BinderError on errors."""
        pod_volumes = PodVolumes()
        unbound_ok = bound_ok = sufficient_storage = bound_pvs_found = True
        static_bindings: list[BindingInfo] = []
        dynamic: list[DynamicProvision] = []

        def done() -> tuple[PodVolumes, list[str]]:
            reasons: list[str] = []
            if not bound_ok:
                reasons.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_ok:
                reasons.append(ERR_REASON_BIND_CONFLICT)
            if not sufficient_storage:
                reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not bound_pvs_found:
                reasons.append(ERR_REASON_PV_NOT_EXIST)
            pod_volumes.static_bindings = static_bindings or None
            pod_volumes.dynamic_provisions = dynamic or None
            return pod_volumes, reasons

        if claims.bound_claims:
            bound_ok, bound_pvs_found = self._check_bound_claims(claims.bound_claims, node)

        if claims.unbound_claims_delay_binding:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for claim in claims.unbound_claims_delay_binding:
                selected = annotations_of(claim).get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        unbound_ok = False      # fast path: provisioning already targets a node
                        return done()
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if to_match:
                unbound_ok, static_bindings, unmatched = self._find_matching_volumes(
                    to_match, claims.unbound_volumes_delay_binding, node)
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, sufficient_storage, dynamic = self._check_volume_provisions(
                    to_provision, node)
        return done()

    def _csi_node(self, node_name: str) -> CSINode | None:
        csi_node: CSINode | None = find_object(self.lister, "CSINode", node_name)
        return csi_node

    def try_translate_pv_to_csi(self, pv: PersistentVolume, csi_node_of: Callable[[], CSINode | None]
                                ) -> PersistentVolume:
        """The PV as CSI sees it when its in-tree plugin is migrated on the node, else itself."""
        plugin = csitrans.plugin_for_pv(pv)
        if plugin is None or plugin.in_tree_name not in _MIGRATION_ON:
            return pv
        csi_node = csi_node_of()
        if csi_node is None:
            return pv
        migrated = annotations_of(csi_node).get(ANN_MIGRATED_PLUGINS) or ""
        if plugin.in_tree_name not in set(migrated.split(",") if migrated else ()):
            return pv
        try:
            translated, _ = csitrans.translate_pv(pv)
        except csitrans.TranslationError as exc:
            raise BinderError(f"could not translate pv: {exc}") from None
        return translated

    def _check_bound_claims(self, claims: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        cache: list[CSINode | None] = []

        def csi_node() -> CSINode | None:
            if not cache:
                cache.append(self._csi_node(node.name))
            return cache[0]

        for pvc in claims:
            try:
                pv = self.pv_cache.get(pvc.volume_name)
            except NotFoundError:
                return True, False
            pv = self.try_translate_pv_to_csi(pv, csi_node)
            if not check_node_affinity(pv, node.labels):
                return False, True
        return True, True

    def _find_matching_volumes(self, claims: list[PersistentVolumeClaim],
                               volumes_by_class: dict[str, list[PersistentVolume]], node: Node
                               ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        chosen: dict[str, PersistentVolume] = {}
        bindings: list[BindingInfo] = []
        unbound: list[PersistentVolumeClaim] = []
        found = True
        # Smallest requests first, to get the smallest fits.
        for pvc in sorted(claims, key=pvc_storage_request):
            pvs = volumes_by_class.get(pvc_class(pvc), [])
            pv = find_matching_volume(pvc, pvs, node, chosen, True)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[pv.name] = pv
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unbound

    def _check_volume_provisions(self, claims: list[PersistentVolumeClaim], node: Node
                                 ) -> tuple[bool, bool, list[DynamicProvision]]:
        provisions: list[DynamicProvision] = []
        for claim in claims:
            class_name = pvc_class(claim)
            if not class_name:
                raise BinderError(f'no class for claim "{claim.namespace}/{claim.name}"')
            sc: StorageClass | None = find_object(self.lister, "StorageClass", class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            provisioner = sc.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.allowed_topologies, node.labels):
                return False, True, []
            sufficient, capacity = self._has_enough_capacity(provisioner, claim, sc, node)
            if not sufficient:
                return True, False, []
            provisions.append(DynamicProvision(claim, capacity))
        return True, True, provisions

    def _has_enough_capacity(self, provisioner: str, claim: PersistentVolumeClaim, sc: StorageClass,
                             node: Node) -> tuple[bool, Any]:
        if not pvc_has_storage_request(claim):
            return True, None
        driver = find_object(self.lister, "CSIDriver", provisioner)
        if driver is None:
            return True, None   # not a CSI driver, or one without capacity tracking
        if spec_of(driver).get("storageCapacity") is not True:
            return True, None
        size = pvc_storage_request(claim)
        for capacity in self.lister.list("CSIStorageCapacity"):
            raw = capacity.raw if hasattr(capacity, "raw") else capacity
            if not isinstance(raw, dict) or raw.get("storageClassName") != sc.name:
                continue
            limit = capacity_limit(capacity)
            if limit is None or limit < size:
                continue
            if self._node_has_access(node, raw.get("nodeTopology")):
                return True, capacity
        return False, None

    @staticmethod
    def _node_has_access(node: Node, topology: Any) -> bool:
        if topology is None:
            return False
        try:
            selector = parse_label_selector(topology, "nodeTopology")
        except Exception:
            return False
        return selector is not None and selector.matches(node.labels)

    # ------------------------------------------------------------------ assume / revert
    def are_pod_volumes_bound(self, pod: Pod) -> bool:
        for volume in pod.volumes:
            try:
                bound, _ = self._is_volume_bound(pod, volume)
            except BinderError:
                return False
            if not bound:
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """Reserve: record the bindings/provisionings in the assume caches; True if all bound."""
        if self.are_pod_volumes_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for binding in pod_volumes.static_bindings or ():
            new_pv, dirty = bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except Exception as exc:
                    self._revert_pvs(new_bindings)
                    raise BinderError(str(exc)) from None
            new_bindings.append(BindingInfo(binding.pvc, new_pv))
        new_provisions: list[DynamicProvision] = []
        for provision in pod_volumes.dynamic_provisions or ():
            claim = with_annotation(provision.pvc, ANN_SELECTED_NODE, node_name)
            try:
                self.pvc_cache.assume(claim)
            except Exception as exc:
                self._revert_pvs(new_bindings)
                self._revert_pvcs([p.pvc for p in new_provisions])
                raise BinderError(str(exc)) from None
            new_provisions.append(DynamicProvision(claim))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def _revert_pvs(self, bindings: list[BindingInfo]) -> None:
        for binding in bindings:
            self.pv_cache.restore(binding.pv)

    def _revert_pvcs(self, claims: list[PersistentVolumeClaim]) -> None:
        for claim in claims:
            self.pvc_cache.restore(claim)

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        self._revert_pvs(list(pod_volumes.static_bindings or ()))
        self._revert_pvcs([p.pvc for p in pod_volumes.dynamic_provisions or ()])

    # ------------------------------------------------------------------ bind
    def bind_pod_volumes(self, pod: Pod, pod_volumes: PodVolumes) -> None:
        """PreBind: write the assumed bindings through ``handle.client.bind_pvc(pvc, pv)``.

        ``bind_pvc(pvc, pv)`` pre-binds ``pv`` (its ``claimRef`` set) to ``pvc``; for a claim to
        provision, ``pv`` is None and ``pvc`` carries the ``volume.kubernetes.io/selected-node``
        annotation. Without such a client method the bindings stay in memory (assumed), which is
        what a simulation without a PV controller needs. Upstream then waits (up to
        ``bindTimeoutSeconds``) for the PV controller to finish; there is no controller to wait
        for here, so a successful call completes the step.
        """
        bindings = pod_volumes.static_bindings
        provisions = pod_volumes.dynamic_provisions
        name = f"{pod.namespace}/{pod.name}"
        if bindings is None:
            raise BinderError(f'failed to get cached bindings for pod "{name}"')
        if provisions is None:
            raise BinderError(f'failed to get cached claims to provision for pod "{name}"')
        client = self.handle.client
        if not isinstance(client, PersistentVolumeClaimBinder):
            return
        bind = client.bind_pvc
        done_bindings = done_provisions = 0
        try:
            for binding in bindings:
                bind(binding.pvc, binding.pv)
                done_bindings += 1
            for provision in provisions:
                bind(provision.pvc, None)
                done_provisions += 1
        except Exception:
            # Revert only what was not written; the rest is in the API now.
            self._revert_pvs(bindings[done_bindings:])
            self._revert_pvcs([p.pvc for p in provisions[done_provisions:]])
            raise
        # Once the API objects reflect the writes, the assumed copies are redundant.
        for binding in bindings:
            api: PersistentVolume | None = find_object(self.lister, "PersistentVolume", binding.pv.name)
            if api is not None and api.claim_ref == binding.pv.claim_ref:
                self.pv_cache.forget(binding.pv)
        for provision in provisions:
            claim: PersistentVolumeClaim | None = find_object(self.lister, "PersistentVolumeClaim",
                                                              provision.pvc.name, provision.pvc.namespace)
            if claim is not None and annotations_of(claim).get(ANN_SELECTED_NODE) == \
                    annotations_of(provision.pvc).get(ANN_SELECTED_NODE):
                self.pvc_cache.forget(provision.pvc)


__all__ = [
    "VolumeBinder", "BinderError", "BindingInfo", "DynamicProvision", "PodVolumes",
    "PodVolumeClaims", "find_matching_volume", "bind_volume_to_claim", "capacity_limit",
    "ERR_REASON_BIND_CONFLICT", "ERR_REASON_NODE_CONFLICT", "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
]
