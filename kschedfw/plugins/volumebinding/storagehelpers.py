"""Storage helpers shared by the volume plugins (upstream ``component-helpers/storage`` and the
listers' NotFound errors).

The typed API objects (:class:`~kschedfw.api.PersistentVolumeClaim`, ``PersistentVolume``,
``StorageClass``, ``CSINode``) carry the fields the plugins read most; everything else (resource
versions, deletion timestamps, selectors, volume modes, owner references) is read from the
manifest kept in ``raw``. Kinds without a typed class (``CSIDriver``, ``VolumeAttachment``,
``CSIStorageCapacity``, DRA objects) come as :class:`~kschedfw.api.GenericObject` or plain dicts;
:func:`raw_of` accepts all of them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Mapping, TypeVar

import attrs

from kschedfw.api.accessors import (annotations_of, controller_ref, metadata_of, raw_of, resource_version_of,
                                    spec_of)
from kschedfw.api.quantity import parse_quantity, value as quantity_value
from kschedfw.api.selectors import NodeSelector, NodeSelectorTerm, parse_label_selector
from kschedfw.fwk.types import SignFragment

if TYPE_CHECKING:
    from kschedfw.api import PersistentVolume, PersistentVolumeClaim, Pod, Volume
    from kschedfw.fwk.interface import ObjectLister

#: the objects VolumeBinding annotates
_Annotated = TypeVar("_Annotated", "PersistentVolume", "PersistentVolumeClaim")

# Annotations and well-known names (k8s.io/api and component-helpers/storage/volume).
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_MULTI_ZONE_DELIMITER = "__"

RWOP = "ReadWriteOncePod"
CLAIM_LOST = "Lost"
VOLUME_AVAILABLE = "Available"
FILESYSTEM = "Filesystem"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

#: How the client-go listers name a resource in their NotFound errors (``<resource> "x" not
#: found``): the singular lowercase kind, qualified by the API group outside the core group.
_LISTER_RESOURCE = {
    "PersistentVolumeClaim": "persistentvolumeclaim",
    "PersistentVolume": "persistentvolume",
    "StorageClass": "storageclass.storage.k8s.io",
    "CSINode": "csinode.storage.k8s.io",
    "CSIDriver": "csidriver.storage.k8s.io",
    "VolumeAttachment": "volumeattachment.storage.k8s.io",
    "DeviceClass": "deviceclass.resource.k8s.io",
}


class NotFoundError(LookupError):
    """An object missing from the lister; ``str()`` is the apiserver's NotFound text."""

    def __init__(self, kind: str, name: str, resource: str | None = None) -> None:
        self.kind, self.name = kind, name
        resource = resource or _LISTER_RESOURCE.get(kind, kind.lower())
        super().__init__(f'{resource} "{name}" not found')

    def __str__(self) -> str:
        message: str = self.args[0]
        return message


def get_object(lister: ObjectLister, kind: str, name: str, namespace: str = "") -> Any:
    """The object from ``lister`` or :class:`NotFoundError`."""
    obj = lister.get(kind, name, namespace)
    if obj is None:
        raise NotFoundError(kind, name)
    return obj


def find_object(lister: ObjectLister, kind: str, name: str, namespace: str = "") -> Any:
    """The object from ``lister`` or None."""
    return lister.get(kind, name, namespace)


def quantity_bytes(raw: Any) -> int | None:
    """A storage quantity in bytes (rounded up), None when absent or unparsable."""
    if raw is None:
        return None
    try:
        return quantity_value(parse_quantity(raw))
    except (ValueError, TypeError):
        return None


# --------------------------------------------------------------------------- PVCs and PVs

def pvc_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def pvc_class(pvc: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then ``spec.storageClassName``."""
    ann = annotations_of(pvc)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return getattr(pvc, "storage_class_name", None) or ""


def pv_class(pv: PersistentVolume) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then ``spec.storageClassName``."""
    ann = annotations_of(pv)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return getattr(pv, "storage_class_name", "") or ""


def pvc_storage_request(pvc: PersistentVolumeClaim) -> int:
    return int((getattr(pvc, "requests", None) or {}).get("storage", 0))


def pvc_has_storage_request(pvc: PersistentVolumeClaim) -> bool:
    return "storage" in (getattr(pvc, "requests", None) or {})


def pv_storage_capacity(pv: PersistentVolume) -> int:
    return int((getattr(pv, "capacity", None) or {}).get("storage", 0))


def volume_mode(obj: PersistentVolume | PersistentVolumeClaim) -> str:
    return spec_of(obj).get("volumeMode") or FILESYSTEM


def volume_attributes_class(obj: PersistentVolume | PersistentVolumeClaim) -> str:
    return spec_of(obj).get("volumeAttributesClassName") or ""


def claim_ref_uid(pv: PersistentVolume) -> str:
    ref = spec_of(pv).get("claimRef")
    return str(ref.get("uid") or "") if isinstance(ref, dict) else ""


def is_pvc_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.volume_name) and ANN_BIND_COMPLETED in annotations_of(pvc)


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim: pre-bound or bound to this claim (uid checked when set)."""
    ref = pv.claim_ref
    if ref is None:
        return False
    if ref[0] != pvc.namespace or ref[1] != pvc.name:
        return False
    uid = claim_ref_uid(pv)
    return not uid or uid == pvc.uid


def check_node_affinity(pv: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: the PV's required node affinity matches these labels (fields never do)."""
    affinity: NodeSelector | None = pv.node_affinity
    if affinity is None:
        return True
    return affinity.matches(node_labels, "")


def check_access_modes(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    modes = set(pv.access_modes)
    return all(mode in modes for mode in pvc.access_modes)


def claim_selector_matches(pvc: PersistentVolumeClaim, labels: Mapping[str, str]) -> bool:
    selector = spec_of(pvc).get("selector")
    if selector is None:
        return True
    try:
        parsed = parse_label_selector(selector, "spec.selector")
    except Exception:  # an invalid selector matches nothing, as upstream's error path
        return False
    return parsed is None or parsed.matches(labels)


def match_topology_selector_terms(terms: Iterable[NodeSelectorTerm], labels: Mapping[str, str]) -> bool:
    """MatchTopologySelectorTerms: no terms match everything; an empty term matches nothing."""
    terms = tuple(terms)
    if not terms:
        return True
    return any(term.matches(labels, "") for term in terms)


def with_pv_claim_ref(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """``pv`` pre-bound to ``pvc`` (claimRef set as reference.GetReference builds it)."""
    ref = {"kind": "PersistentVolumeClaim", "namespace": pvc.namespace, "name": pvc.name,
           "uid": pvc.uid, "apiVersion": "v1"}
    rv = resource_version_of(pvc)
    if rv:
        ref["resourceVersion"] = rv
    raw = dict(raw_of(pv))
    raw["spec"] = {**spec_of(pv), "claimRef": ref}
    return attrs.evolve(pv, claim_ref=(pvc.namespace, pvc.name), raw=raw)


def with_annotation(obj: _Annotated, key: str, val: str) -> _Annotated:
    """A copy of a typed object with one more annotation (also written into ``raw``)."""
    annotations = {**annotations_of(obj), key: val}
    raw = dict(raw_of(obj))
    raw["metadata"] = {**metadata_of(obj), "annotations": annotations}
    return attrs.evolve(obj, annotations=annotations, raw=raw)


# --------------------------------------------------------------------------- pod volumes

EPHEMERAL = "ephemeral"
PERSISTENT_VOLUME_CLAIM = "persistentVolumeClaim"


def pod_volume_claim_name(pod: Pod, volume: Volume) -> tuple[str | None, bool]:
    """(PVC name, is generic ephemeral) for a pod volume backed by a PVC, else (None, False)."""
    if volume.source == PERSISTENT_VOLUME_CLAIM:
        return volume.claim_name or "", False
    if volume.source == EPHEMERAL:
        return f"{pod.name}-{volume.name}", True
    return None, False


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: None when ``pvc`` was created for ``pod``, else the error text."""
    ref = controller_ref(pvc)
    if pvc.namespace != pod.namespace or ref is None or str(ref.get("uid") or "") != pod.uid:
        return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)")
    return None


# --------------------------------------------------------------------------- signing

VOLUMES_SIGNER_NAME = "v1.Pod.Spec.Volumes.NonSyntheticSources()"

def volumes_signature(pod: Pod) -> list[str]:
    """fwk.VolumesSigner: the pod's volume sources except configMap and secret, as sorted JSON."""
    out = []
    for volume in pod.volumes:
        if volume.source in ("configMap", "secret"):
            continue
        out.append(json.dumps({volume.source: volume.details} if volume.source else {},
                              sort_keys=True, separators=(",", ":")))
    out.sort()
    return out


def volumes_sign_fragments(pod: Pod) -> tuple[list[SignFragment], None]:
    return [SignFragment(VOLUMES_SIGNER_NAME, volumes_signature(pod))], None
