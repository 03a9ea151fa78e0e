"""The kinds the scheduler watches, where the API serves them, and how each is parsed into the
:mod:`kschedfw.api` types with only what the scheduler reads."""

from __future__ import annotations

from typing import Any

import attrs

from kschedfw.api import parse_object
from kschedfw.api.workload_names import POD_GROUP_KIND

__all__ = ["Resource", "RESOURCES", "POD_FIELD_SELECTOR", "parse_api_object"]

# upstream's pod informer: terminated pods neither hold resources nor need scheduling
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"

# large fields no plugin reads: dropped before parsing, so a cached object stays small
_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


@attrs.frozen
class Resource:
    kind: str
    group_version: str  # "v1", "policy/v1", ...
    plural: str
    namespaced: bool = True
    field_selector: str | None = None
    optional: bool = False  # watched only when the server serves it (custom or newer APIs)
    #: watched only with this feature gate on, and then required: upstream registers the informer
    #: only with the gate, and its cache sync (so scheduling) waits until the API is served
    feature_gate: str = ""
    #: the key the object store holds this kind under when the kind name alone is ambiguous
    #: (``scheduling.k8s.io/PodGroup`` beside the coscheduling plugin's ``PodGroup``)
    store_key: str = ""
    #: listed and watched in this namespace only (default: every namespace)
    namespace: str = ""

    @property
    def store_kind(self) -> str:
        return self.store_key or self.kind

    @property
    def display_name(self) -> str:
        """``plural.group/version`` (``podgroups.scheduling.k8s.io/v1alpha2``), as messages name it."""
        group, _, version = self.group_version.rpartition("/")
        return f"{self.plural}.{group}/{version}" if group else f"{self.plural}/{version}"

    @property
    def path(self) -> str:
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        return f"{base}/namespaces/{self.namespace}/{self.plural}" if self.namespace else f"{base}/{self.plural}"

    @property
    def discovery_path(self) -> str:
        return "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"

    def object_path(self, name: str, namespace: str = "") -> str:
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        if self.namespaced:
            return f"{base}/namespaces/{namespace}/{self.plural}/{name}"
        return f"{base}/{self.plural}/{name}"


RESOURCES: tuple[Resource, ...] = (
    Resource("Pod", "v1", "pods", field_selector=POD_FIELD_SELECTOR),
    Resource("Node", "v1", "nodes", namespaced=False),
    Resource("Namespace", "v1", "namespaces", namespaced=False),
    Resource("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    Resource("PersistentVolume", "v1", "persistentvolumes", namespaced=False),
    Resource("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
    Resource("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", namespaced=False),
    Resource("StorageClass", "storage.k8s.io/v1", "storageclasses", namespaced=False),
    Resource("CSINode", "storage.k8s.io/v1", "csinodes", namespaced=False),
    Resource("CSIDriver", "storage.k8s.io/v1", "csidrivers", namespaced=False),
    Resource("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", namespaced=False),
    Resource("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    # read only by PodTopologySpread's default constraints (upstream helper.DefaultSelector):
    # the Services, ReplicationControllers, ReplicaSets and StatefulSets selecting a pod
    Resource("Service", "v1", "services"),
    Resource("ReplicationController", "v1", "replicationcontrollers"),
    Resource("ReplicaSet", "apps/v1", "replicasets"),
    Resource("StatefulSet", "apps/v1", "statefulsets"),
    Resource("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", optional=True),
    Resource("DeviceClass", "resource.k8s.io/v1", "deviceclasses", namespaced=False, optional=True),
    Resource("ResourceSlice", "resource.k8s.io/v1", "resourceslices", namespaced=False, optional=True),
    Resource("PodGroup", "scheduling.x-k8s.io/v1alpha1", "podgroups", optional=True),
    # the workload API's PodGroups (kube-scheduler v1.36 has no Workload informer: none read them)
    Resource("PodGroup", "scheduling.k8s.io/v1alpha2", "podgroups", optional=True, feature_gate="GenericWorkload",
             store_key=POD_GROUP_KIND),
    Resource("ElasticQuota", "scheduling.x-k8s.io/v1alpha1", "elasticquotas", optional=True),
)

BY_KIND = {r.store_kind: r for r in RESOURCES}


def parse_api_object(resource: Resource, d: dict[str, Any]) -> Any:
    """An object as the API server sent it (list items carry no kind) -> a kschedfw.api object."""
    meta = d.get("metadata")
    if isinstance(meta, dict):
        slim = {k: v for k, v in meta.items() if k != "managedFields"}
        annotations = slim.get("annotations")
        if annotations and any(a in annotations for a in _DROPPED_ANNOTATIONS):
            slim["annotations"] = {k: v for k, v in annotations.items() if k not in _DROPPED_ANNOTATIONS}
        d = {**d, "metadata": slim}
    if "kind" not in d or "apiVersion" not in d:
        d = {"kind": resource.kind, "apiVersion": resource.group_version, **d}
    return parse_object(d, default_kind=resource.kind, source=f"{resource.plural} from the API server")
