"""The other objects the scheduler reads: priority classes, PDBs, namespaces, storage objects,
the RuntimeClasses the API server's admission reads, and :class:`GenericObject` for every other
kind (custom resources pass through unchanged)."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from kschedfw.api import _parse
from kschedfw.api.resources import parse_resource_list
from kschedfw.api.selectors import (LabelSelector, NodeSelector, NodeSelectorRequirement,
                                    NodeSelectorTerm, parse_label_selector, parse_node_selector)

__all__ = [
    "PriorityClass", "PodDisruptionBudget", "Namespace", "PersistentVolumeClaim",
    "PersistentVolume", "StorageClass", "CSINode", "RuntimeClass", "RuntimeClassScheduling",
    "GenericObject",
    "parse_priority_class", "parse_pod_disruption_budget", "parse_namespace",
    "parse_persistent_volume_claim", "parse_persistent_volume", "parse_storage_class",
    "parse_csi_node", "parse_runtime_class", "parse_generic_object", "CLUSTER_SCOPED_KINDS",
]

CLUSTER_SCOPED_KINDS = _parse.CLUSTER_SCOPED_KINDS



class _FromDict:
    """Mixin: ``Cls.from_dict(d, source=, line=)`` with errors naming the object."""

    __slots__ = ()
    _KIND = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "", line: int | None = None,
                  template: bool = False) -> Any:
        return _parse.parse_in_context(_PARSERS[cls._KIND], cls._KIND, d, source=source, line=line,
                                       template=template)


# --------------------------------------------------------------------------- PriorityClass

@attrs.frozen(slots=True)
class PriorityClass(_FromDict):
    _KIND = "PriorityClass"

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"
    description: str = ""
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)


def parse_priority_class(d: dict[str, Any], *, template: bool = False) -> PriorityClass:
    m = _parse.metadata(d, "PriorityClass", namespaced=False, template=template)
    value = _parse.integer(d.get("value"), "value")
    if value is None:
        raise _parse.fail("value", "Required value: a priority class needs an integer value")
    policy = _parse.string(d.get("preemptionPolicy"), "preemptionPolicy") or "PreemptLowerPriority"
    if policy not in ("PreemptLowerPriority", "Never"):
        raise _parse.fail("preemptionPolicy", f"Unsupported value: {policy!r}: supported values: "
                                              f"\"Never\", \"PreemptLowerPriority\"")
    return PriorityClass(m.name, value, _parse.boolean(d.get("globalDefault"), "globalDefault"),
                         policy, _parse.string(d.get("description"), "description"), d)


# --------------------------------------------------------------------------- PodDisruptionBudget

@attrs.frozen(slots=True)
class PodDisruptionBudget(_FromDict):
    _KIND = "PodDisruptionBudget"

    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, str] = attrs.field(factory=dict)
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    uid: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def parse_pod_disruption_budget(d: dict[str, Any], *, template: bool = False) -> PodDisruptionBudget:
    m = _parse.metadata(d, "PodDisruptionBudget", namespaced=True, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    status = _parse.mapping(d.get("status"), "status")
    disrupted = _parse.mapping(status.get("disruptedPods"), "status.disruptedPods")
    return PodDisruptionBudget(
        name=m.name, namespace=m.namespace,
        selector=parse_label_selector(spec.get("selector"), "spec.selector"),
        min_available=_parse.int_or_string(spec.get("minAvailable"), "spec.minAvailable"),
        max_unavailable=_parse.int_or_string(spec.get("maxUnavailable"), "spec.maxUnavailable"),
        disruptions_allowed=_parse.integer(status.get("disruptionsAllowed"),
                                           "status.disruptionsAllowed", 0),
        disrupted_pods={str(k): (v if isinstance(v, str) else str(v)) for k, v in disrupted.items()},
        raw=d, uid=m.uid,
    )


# --------------------------------------------------------------------------- Namespace

@attrs.frozen(slots=True)
class Namespace(_FromDict):
    _KIND = "Namespace"

    name: str
    labels: dict[str, str] = attrs.field(factory=dict)
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    uid: str = ""
    phase: str = "Active"


def parse_namespace(d: dict[str, Any], *, template: bool = False) -> Namespace:
    m = _parse.metadata(d, "Namespace", namespaced=False, template=template)
    status = _parse.mapping(d.get("status"), "status")
    return Namespace(m.name, m.labels, d, m.uid,
                     _parse.string(status.get("phase"), "status.phase") or "Active")


# --------------------------------------------------------------------------- storage

@attrs.frozen(slots=True)
class PersistentVolumeClaim(_FromDict):
    """``storage_class_name`` is None when the field is absent (use the default class) and ``""``
    when explicitly empty (no class)."""

    _KIND = "PersistentVolumeClaim"

    name: str
    namespace: str = "default"
    volume_name: str = ""
    storage_class_name: str | None = None
    access_modes: tuple[str, ...] = ()
    requests: dict[str, int] = attrs.field(factory=dict)
    phase: str = "Pending"
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    uid: str = ""
    annotations: dict[str, str] = attrs.field(factory=dict)
    labels: dict[str, str] = attrs.field(factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def parse_persistent_volume_claim(d: dict[str, Any], *, template: bool = False) -> PersistentVolumeClaim:
    m = _parse.metadata(d, "PersistentVolumeClaim", namespaced=True, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    status = _parse.mapping(d.get("status"), "status")
    res = _parse.mapping(spec.get("resources"), "spec.resources")
    return PersistentVolumeClaim(
        name=m.name, namespace=m.namespace,
        volume_name=_parse.string(spec.get("volumeName"), "spec.volumeName"),
        storage_class_name=_parse.opt_string(spec.get("storageClassName"), "spec.storageClassName"),
        access_modes=_parse.string_tuple(spec.get("accessModes"), "spec.accessModes"),
        requests=parse_resource_list(res.get("requests"), field="spec.resources.requests"),
        phase=_parse.string(status.get("phase"), "status.phase") or "Pending",
        raw=d, uid=m.uid, annotations=m.annotations, labels=m.labels,
    )


_PV_NON_SOURCE_KEYS = frozenset((
    "accessModes", "capacity", "claimRef", "persistentVolumeReclaimPolicy", "storageClassName",
    "mountOptions", "volumeMode", "nodeAffinity", "volumeAttributesClassName",
))


@attrs.frozen(slots=True)
class PersistentVolume(_FromDict):
    """``source``/``details``: the volume-source key (``csi``, ``awsElasticBlockStore``...) and its
    mapping."""

    _KIND = "PersistentVolume"

    name: str
    labels: dict[str, str] = attrs.field(factory=dict)
    capacity: dict[str, int] = attrs.field(factory=dict)
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    claim_ref: tuple[str, str] | None = None
    node_affinity: NodeSelector | None = None
    csi_driver: str | None = None
    phase: str = "Pending"
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    uid: str = ""
    annotations: dict[str, str] = attrs.field(factory=dict)
    source: str = ""
    details: dict[str, Any] = attrs.field(factory=dict)


def parse_persistent_volume(d: dict[str, Any], *, template: bool = False) -> PersistentVolume:
    m = _parse.metadata(d, "PersistentVolume", namespaced=False, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    status = _parse.mapping(d.get("status"), "status")
    claim_ref = None
    if spec.get("claimRef") is not None:
        ref = _parse.mapping(spec.get("claimRef"), "spec.claimRef")
        claim_ref = (_parse.string(ref.get("namespace"), "spec.claimRef.namespace"),
                     _parse.string(ref.get("name"), "spec.claimRef.name"))
    node_affinity = None
    if spec.get("nodeAffinity") is not None:
        na = _parse.mapping(spec.get("nodeAffinity"), "spec.nodeAffinity")
        node_affinity = parse_node_selector(na.get("required"), "spec.nodeAffinity.required")
    source, details = "", {}
    for key, val in spec.items():
        if key not in _PV_NON_SOURCE_KEYS:
            source, details = key, _parse.mapping(val, f"spec.{key}")
            break
    csi_driver = None
    if source == "csi":
        csi_driver = _parse.string(details.get("driver"), "spec.csi.driver") or None
    return PersistentVolume(
        name=m.name, labels=m.labels,
        capacity=parse_resource_list(spec.get("capacity"), field="spec.capacity"),
        access_modes=_parse.string_tuple(spec.get("accessModes"), "spec.accessModes"),
        storage_class_name=_parse.string(spec.get("storageClassName"), "spec.storageClassName"),
        claim_ref=claim_ref, node_affinity=node_affinity, csi_driver=csi_driver,
        phase=_parse.string(status.get("phase"), "status.phase") or "Pending",
        raw=d, uid=m.uid, annotations=m.annotations, source=source, details=dict(details),
    )


@attrs.frozen(slots=True)
class StorageClass(_FromDict):
    """``allowed_topologies``: each ``matchLabelExpressions`` term as a NodeSelectorTerm of ``In``
    requirements (so it can be matched against node labels directly)."""

    _KIND = "StorageClass"

    name: str
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    parameters: dict[str, str] = attrs.field(factory=dict)


def parse_storage_class(d: dict[str, Any], *, template: bool = False) -> StorageClass:
    m = _parse.metadata(d, "StorageClass", namespaced=False, template=template)
    mode = _parse.string(d.get("volumeBindingMode"), "volumeBindingMode") or "Immediate"
    if mode not in ("Immediate", "WaitForFirstConsumer"):
        raise _parse.fail("volumeBindingMode", f"Unsupported value: {mode!r}: supported values: "
                                               f"\"Immediate\", \"WaitForFirstConsumer\"")
    terms = []
    for i, t in enumerate(_parse.seq(d.get("allowedTopologies"), "allowedTopologies")):
        f = f"allowedTopologies[{i}]"
        t = _parse.mapping(t, f)
        reqs = []
        for j, e in enumerate(_parse.seq(t.get("matchLabelExpressions"), f"{f}.matchLabelExpressions")):
            ef = f"{f}.matchLabelExpressions[{j}]"
            e = _parse.mapping(e, ef)
            key = _parse.string(e.get("key"), f"{ef}.key")
            if not key:
                raise _parse.fail(f"{ef}.key", "Required value")
            reqs.append(NodeSelectorRequirement(key, "In",
                                                _parse.string_tuple(e.get("values"), f"{ef}.values")))
        terms.append(NodeSelectorTerm(tuple(reqs)))
    params = _parse.mapping(d.get("parameters"), "parameters")
    return StorageClass(m.name, _parse.string(d.get("provisioner"), "provisioner"), mode,
                        tuple(terms), d, {str(k): str(v) for k, v in params.items()})


@attrs.frozen(slots=True)
class CSINode(_FromDict):
    """``drivers``: driver name -> how many volumes it can attach on the node (None: no limit)."""

    _KIND = "CSINode"

    name: str
    drivers: dict[str, int | None] = attrs.field(factory=dict)
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)


def parse_csi_node(d: dict[str, Any], *, template: bool = False) -> CSINode:
    m = _parse.metadata(d, "CSINode", namespaced=False, template=template)
    spec = _parse.mapping(d.get("spec"), "spec")
    drivers: dict[str, int | None] = {}
    for i, drv in enumerate(_parse.seq(spec.get("drivers"), "spec.drivers")):
        f = f"spec.drivers[{i}]"
        drv = _parse.mapping(drv, f)
        name = _parse.string(drv.get("name"), f"{f}.name")
        if not name:
            raise _parse.fail(f"{f}.name", "Required value")
        alloc = _parse.mapping(drv.get("allocatable"), f"{f}.allocatable")
        drivers[name] = _parse.integer(alloc.get("count"), f"{f}.allocatable.count")
    return CSINode(m.name, drivers, d)


# --------------------------------------------------------------------------- RuntimeClass

@attrs.frozen(slots=True)
class RuntimeClassScheduling:
    """``scheduling`` of a RuntimeClass: ``node_selector`` is None when absent; ``tolerations``
    are kept as written, as admission merges them."""

    node_selector: dict[str, str] | None = None
    tolerations: tuple[dict[str, Any], ...] = ()


@attrs.frozen(slots=True)
class RuntimeClass(_FromDict):
    """A ``node.k8s.io/v1`` RuntimeClass. The scheduler never reads one; the API server's
    RuntimeClass admission copies its overhead and scheduling into the pods that name it.
    ``overhead`` is None when the class has no ``overhead`` (``{}`` when it has one without
    ``podFixed``), ``scheduling`` None when it has no ``scheduling``: upstream tells them apart."""

    _KIND = "RuntimeClass"

    name: str
    handler: str = ""
    overhead: dict[str, int] | None = None
    scheduling: RuntimeClassScheduling | None = None
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)


def parse_runtime_class(d: dict[str, Any], *, template: bool = False) -> RuntimeClass:
    m = _parse.metadata(d, "RuntimeClass", namespaced=False, template=template)
    overhead = None
    if d.get("overhead") is not None:
        pod_fixed = _parse.mapping(d["overhead"], "overhead").get("podFixed")
        overhead = parse_resource_list(pod_fixed, field="overhead.podFixed")
    scheduling = None
    if d.get("scheduling") is not None:
        s = _parse.mapping(d["scheduling"], "scheduling")
        tolerations = tuple(_parse.mapping(t, f"scheduling.tolerations[{i}]") for i, t in enumerate(
            _parse.seq(s.get("tolerations"), "scheduling.tolerations")))
        for i, t in enumerate(tolerations):
            for key in ("key", "operator", "value", "effect"):
                _parse.string(t.get(key), f"scheduling.tolerations[{i}].{key}")
            _parse.integer(t.get("tolerationSeconds"), f"scheduling.tolerations[{i}].tolerationSeconds")
        node_selector = None if s.get("nodeSelector") is None \
            else _parse.string_map(s["nodeSelector"], "scheduling.nodeSelector")
        scheduling = RuntimeClassScheduling(node_selector, tolerations)
    return RuntimeClass(m.name, _parse.string(d.get("handler"), "handler"), overhead, scheduling, d)


# --------------------------------------------------------------------------- anything else

@attrs.frozen(slots=True)
class GenericObject:
    """Any other kind (Service, ReplicaSet, PodGroup, ElasticQuota...), kept as loaded."""

    api_version: str
    kind: str
    name: str
    namespace: str = ""
    raw: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)
    labels: dict[str, str] = attrs.field(factory=dict)
    annotations: dict[str, str] = attrs.field(factory=dict)
    uid: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def spec(self) -> dict[str, Any]:
        spec = self.raw.get("spec")
        return spec if isinstance(spec, dict) else {}

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "", line: int | None = None,
                  template: bool = False) -> "GenericObject":
        return _parse.parse_in_context(parse_generic_object, "", d, source=source, line=line, template=template)


def parse_generic_object(d: dict[str, Any], *, template: bool = False) -> GenericObject:
    kind = _parse.string(d.get("kind"), "kind")
    m = _parse.metadata(d, kind, namespaced=kind not in CLUSTER_SCOPED_KINDS, template=template)
    return GenericObject(_parse.string(d.get("apiVersion"), "apiVersion"), kind, m.name,
                         m.namespace, d, m.labels, m.annotations, m.uid)


_PARSERS: dict[str, Callable[..., Any]] = {
    "PriorityClass": parse_priority_class,
    "PodDisruptionBudget": parse_pod_disruption_budget,
    "Namespace": parse_namespace,
    "PersistentVolumeClaim": parse_persistent_volume_claim,
    "PersistentVolume": parse_persistent_volume,
    "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node,
    "RuntimeClass": parse_runtime_class,
}
