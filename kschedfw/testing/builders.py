"""Kubernetes objects for tests, with sensible defaults, built from manifests by the real parser.

The counterpart of upstream's ``pkg/scheduler/testing/wrappers.go``: a test states only what it
cares about, ``make_pod("web", cpu="500m", labels={"app": "web"}, tolerations=[toleration("k")])``.
Every builder writes a manifest dict and hands it to :func:`kschedfw.api.parse_object`, so the
objects are exactly those the scheduler reads from YAML, and a bad value fails as it would there.

Keyword arguments take manifest fragments (dicts in the API's camelCase) where the API has
structure (``affinity``, ``tolerations``, ``topology_spread_constraints``, ``volumes``); the small
helpers below (:func:`toleration`, :func:`taint`, :func:`spread_constraint`, ...) write the common
ones. ``make_pod(**spec)`` still accepts any other ``spec`` field by its manifest name.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence, TypeVar

from kschedfw.api import (Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
                          PodDisruptionBudget, PriorityClass, StorageClass, parse_object)
from kschedfw.api.other import CSINode
from kschedfw.cache.snapshot import Snapshot

__all__ = [
    "make_pod", "make_node", "make_cluster", "make_pvc", "make_pv", "make_storage_class",
    "make_csi_node", "make_pdb", "make_priority_class", "make_namespace",
    "container", "toleration", "taint", "label_selector", "node_affinity", "pod_affinity_term",
    "spread_constraint", "pvc_volume", "owner_reference", "HOSTNAME", "ZONE", "REGION",
]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
#: deletionTimestamp of a pod built with ``terminating=True``
TERMINATING_SINCE = "2020-01-01T00:00:00Z"

Manifest = dict[str, Any]
#: ``port``, ``(port, protocol)`` or ``(port, protocol, hostIP)``
HostPort = int | tuple[int, str] | tuple[int, str, str]
_Obj = TypeVar("_Obj")


def _parsed(manifest: Manifest, cls: type[_Obj]) -> _Obj:
    """``manifest`` through :func:`parse_object` (the loader's checks and messages), as a ``cls``."""
    obj = parse_object(manifest)
    if not isinstance(obj, cls):
        raise TypeError(f"a {manifest.get('kind')} manifest parsed as {type(obj).__name__}, not {cls.__name__}")
    return obj


# ------------------------------------------------------------------------------ fragments

def container(name: str = "main", *, image: str = "registry.k8s.io/pause:3.10",
              requests: Mapping[str, str] | None = None, limits: Mapping[str, str] | None = None,
              host_ports: Iterable[HostPort] = (),
              restart_policy: str | None = None, **fields: Any) -> Manifest:
    """A container manifest; ``host_ports`` items are ``port``, ``(port, protocol)`` or
    ``(port, protocol, hostIP)``; ``restart_policy="Always"`` makes an init container a sidecar."""
    out: Manifest = {"name": name, "image": image}
    resources: Manifest = {}
    if requests:
        resources["requests"] = dict(requests)
    if limits:
        resources["limits"] = dict(limits)
    if resources:
        out["resources"] = resources
    ports = [_host_port(p) for p in host_ports]
    if ports:
        out["ports"] = ports
    if restart_policy is not None:
        out["restartPolicy"] = restart_policy
    out.update(fields)
    return out


def _host_port(spec: HostPort) -> Manifest:
    parts = (spec,) if isinstance(spec, int) else tuple(spec)
    port, protocol, host_ip = (*parts, "TCP", "")[:3] if len(parts) == 1 else (*parts, "")[:3]
    out: Manifest = {"containerPort": port, "hostPort": port, "protocol": protocol or "TCP"}
    if host_ip:
        out["hostIP"] = host_ip
    return out


def toleration(key: str = "", value: str = "", effect: str = "", *, operator: str | None = None,
               seconds: int | None = None) -> Manifest:
    """A toleration; the operator defaults to ``Equal`` with a value and ``Exists`` without."""
    out: Manifest = {"operator": operator or ("Equal" if value else "Exists")}
    if key:
        out["key"] = key
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    if seconds is not None:
        out["tolerationSeconds"] = seconds
    return out


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Manifest:
    out: Manifest = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def label_selector(match_labels: Mapping[str, str] | None = None, *,
                   exists: Iterable[str] = (), not_exists: Iterable[str] = (),
                   in_: Mapping[str, Iterable[str]] | None = None,
                   not_in: Mapping[str, Iterable[str]] | None = None) -> Manifest:
    """A LabelSelector manifest (``{}`` matches everything)."""
    out: Manifest = {}
    if match_labels:
        out["matchLabels"] = dict(match_labels)
    exprs: list[Manifest] = [{"key": k, "operator": "Exists"} for k in exists]
    exprs += [{"key": k, "operator": "DoesNotExist"} for k in not_exists]
    exprs += [{"key": k, "operator": "In", "values": list(v)} for k, v in (in_ or {}).items()]
    exprs += [{"key": k, "operator": "NotIn", "values": list(v)} for k, v in (not_in or {}).items()]
    if exprs:
        out["matchExpressions"] = exprs
    return out


def node_affinity(*required_terms: Sequence[Mapping[str, Any]],
                  preferred: Iterable[tuple[int, Sequence[Mapping[str, Any]]]] = ()) -> Manifest:
    """``affinity`` with node affinity: each required term is a list of match expressions
    (``{"key": k, "operator": "In", "values": [...]}``), ORed; ``preferred`` is ``(weight, exprs)``."""
    na: Manifest = {}
    if required_terms:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": [dict(e) for e in term]} for term in required_terms]}
    prefs = [{"weight": w, "preference": {"matchExpressions": [dict(e) for e in exprs]}} for w, exprs in preferred]
    if prefs:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = prefs
    return {"nodeAffinity": na}


def pod_affinity_term(topology_key: str, selector: Mapping[str, Any] | None = None, *,
                      namespaces: Iterable[str] = (), namespace_selector: Mapping[str, Any] | None = None,
                      match_label_keys: Iterable[str] = (), mismatch_label_keys: Iterable[str] = ()) -> Manifest:
    """A PodAffinityTerm for ``affinity.podAffinity`` / ``podAntiAffinity``."""
    out: Manifest = {"topologyKey": topology_key}
    if selector is not None:
        out["labelSelector"] = dict(selector)
    if namespaces:
        out["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        out["namespaceSelector"] = dict(namespace_selector)
    if match_label_keys:
        out["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys:
        out["mismatchLabelKeys"] = list(mismatch_label_keys)
    return out


def spread_constraint(max_skew: int, topology_key: str, when_unsatisfiable: str = "DoNotSchedule",
                      selector: Mapping[str, Any] | None = None, *, min_domains: int | None = None,
                      node_affinity_policy: str | None = None, node_taints_policy: str | None = None,
                      match_label_keys: Iterable[str] = ()) -> Manifest:
    """A TopologySpreadConstraint manifest (upstream ``SpreadConstraint(...)``)."""
    out: Manifest = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when_unsatisfiable}
    if selector is not None:
        out["labelSelector"] = dict(selector)
    if min_domains is not None:
        out["minDomains"] = min_domains
    if node_affinity_policy is not None:
        out["nodeAffinityPolicy"] = node_affinity_policy
    if node_taints_policy is not None:
        out["nodeTaintsPolicy"] = node_taints_policy
    if match_label_keys:
        out["matchLabelKeys"] = list(match_label_keys)
    return out


def pvc_volume(claim: str, name: str | None = None, *, read_only: bool = False) -> Manifest:
    """A pod volume that mounts PersistentVolumeClaim ``claim``."""
    source: Manifest = {"claimName": claim}
    if read_only:
        source["readOnly"] = True
    return {"name": name or claim, "persistentVolumeClaim": source}


def owner_reference(kind: str, name: str, *, api_version: str = "apps/v1", uid: str | None = None,
                    controller: bool = True) -> Manifest:
    out: Manifest = {"apiVersion": api_version, "kind": kind, "name": name, "controller": controller}
    if uid is not None:
        out["uid"] = uid
    return out


# ------------------------------------------------------------------------------ objects

def _metadata(name: str, *, namespace: str | None = None, uid: str | None = None,
              labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
              extra: Mapping[str, Any] | None = None) -> Manifest:
    meta: Manifest = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if uid is not None:
        meta["uid"] = uid
    if labels is not None:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    meta.update(extra or {})
    return meta


def make_node(name: str = "node-1", *, cpu: str = "4", memory: str = "32Gi", pods: str = "110",
              labels: Mapping[str, str] | None = None, taints: Iterable[Mapping[str, str]] = (),
              unschedulable: bool = False, zone: str | None = None,
              images: Iterable[tuple[list[str], int]] = (),
              extra_allocatable: Mapping[str, str] | None = None,
              allocatable: Mapping[str, Any] | None = None, capacity: Mapping[str, Any] | None = None,
              annotations: Mapping[str, str] | None = None, uid: str | None = None,
              hostname_label: bool = True, ready: bool = True) -> Node:
    """A Ready node; ``kubernetes.io/hostname`` (and the zone label if ``zone``) are set.

    Allocatable is ``cpu``/``memory``/``pods`` plus ``extra_allocatable``, or exactly
    ``allocatable`` when given; capacity equals allocatable unless ``capacity`` is given (a node
    with only ``capacity`` has that as allocatable too, as the API server reports it).
    """
    all_labels = {HOSTNAME: name} if hostname_label else {}
    all_labels.update(labels or {})
    if zone is not None:
        all_labels[ZONE] = zone
    if allocatable is not None:
        alloc: Manifest | None = dict(allocatable)
    elif capacity is not None:
        alloc = None
    else:
        alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    if alloc is not None:
        alloc.update(extra_allocatable or {})
    spec: Manifest = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: Manifest = {"capacity": dict(capacity) if capacity is not None else dict(alloc or {})}
    if alloc is not None:
        status["allocatable"] = alloc
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    if images:
        status["images"] = [{"names": list(names), "sizeBytes": size} for names, size in images]
    return _parsed({"apiVersion": "v1", "kind": "Node",
                    "metadata": _metadata(name, uid=uid, labels=all_labels, annotations=annotations),
                    "spec": spec, "status": status}, Node)


def make_pod(name: str = "pod-1", *, namespace: str = "default", cpu: str | None = None,
             memory: str | None = None, requests: Mapping[str, str] | None = None,
             labels: Mapping[str, str] | None = None, node_name: str = "", priority: int | None = None,
             scheduler_name: str = "default-scheduler", image: str = "registry.k8s.io/pause:3.10",
             uid: str | None = None, annotations: Mapping[str, str] | None = None,
             limits: Mapping[str, str] | None = None,
             containers: Iterable[Mapping[str, Any]] | None = None,
             init_containers: Iterable[Mapping[str, Any]] = (),
             host_ports: Iterable[HostPort] = (),
             tolerations: Iterable[Mapping[str, Any]] = (),
             node_selector: Mapping[str, str] | None = None,
             affinity: Mapping[str, Any] | None = None,
             topology_spread_constraints: Iterable[Mapping[str, Any]] = (),
             volumes: Iterable[Mapping[str, Any]] = (), pvcs: Iterable[str] = (),
             scheduling_gates: Iterable[str] = (),
             priority_class_name: str | None = None, preemption_policy: str | None = None,
             owner: Mapping[str, Any] | None = None, nominated_node_name: str = "",
             terminating: bool | str = False, phase: str | None = None, start_time: str | None = None,
             conditions: Iterable[Mapping[str, Any]] = (),
             overhead: Mapping[str, str] | None = None,
             status: Mapping[str, Any] | None = None,
             **spec: Any) -> Pod:
    """A pod with one container (``main``, requesting ``cpu``/``memory``/``requests`` and
    ``limits``), or exactly ``containers`` when given.

    ``pvcs`` mounts claims by name; ``owner`` is an :func:`owner_reference`; ``overhead={}`` writes
    an empty overhead (RuntimeClass admission tells it from none); ``terminating`` sets a
    deletionTimestamp (a string is the timestamp itself); ``nominated_node_name``, ``phase``, ``start_time``, ``conditions`` and
    ``status`` fill the status. Other keyword arguments are ``spec`` fields in manifest form
    (``hostNetwork=True``, ``resourceClaims=[...]``, ...).
    """
    if containers is None:
        resources = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        resources.update(requests or {})
        containers = [container(image=image, requests=resources, limits=limits, host_ports=host_ports)]
    elif cpu or memory or requests or limits or host_ports:
        raise ValueError("make_pod: give resources and host ports in containers=[container(...)], not both")
    body: Manifest = {"schedulerName": scheduler_name, "containers": [dict(c) for c in containers]}
    if init_containers:
        body["initContainers"] = [dict(c) for c in init_containers]
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    if priority_class_name is not None:
        body["priorityClassName"] = priority_class_name
    if preemption_policy is not None:
        body["preemptionPolicy"] = preemption_policy
    if tolerations:
        body["tolerations"] = [dict(t) for t in tolerations]
    if node_selector:
        body["nodeSelector"] = dict(node_selector)
    if affinity:
        body["affinity"] = dict(affinity)
    if topology_spread_constraints:
        body["topologySpreadConstraints"] = [dict(c) for c in topology_spread_constraints]
    all_volumes = [dict(v) for v in volumes] + [pvc_volume(claim) for claim in pvcs]
    if all_volumes:
        body["volumes"] = all_volumes
    if scheduling_gates:
        body["schedulingGates"] = [{"name": g} for g in scheduling_gates]
    if overhead is not None:
        body["overhead"] = dict(overhead)
    body.update(spec)
    extra: Manifest = {}
    if owner is not None:
        extra["ownerReferences"] = [dict(owner)]
    if terminating:
        extra["deletionTimestamp"] = terminating if isinstance(terminating, str) else TERMINATING_SINCE
    pod_status: Manifest = {}
    if nominated_node_name:
        pod_status["nominatedNodeName"] = nominated_node_name
    if phase is not None:
        pod_status["phase"] = phase
    if start_time is not None:
        pod_status["startTime"] = start_time
    if conditions:
        pod_status["conditions"] = [dict(c) for c in conditions]
    pod_status.update(status or {})
    manifest: Manifest = {"apiVersion": "v1", "kind": "Pod",
                          "metadata": _metadata(name, namespace=namespace, uid=uid, labels=labels or {},
                                                annotations=annotations, extra=extra),
                          "spec": body}
    if pod_status:
        manifest["status"] = pod_status
    return _parsed(manifest, Pod)


def make_cluster(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> Snapshot:
    """The scheduler's view of ``nodes`` with the assigned ``pods`` on them."""
    return Snapshot.from_objects(nodes, pods)


def make_pvc(name: str, *, namespace: str = "default", storage_class: str | None = None,
             volume_name: str = "", request: str | None = "1Gi",
             access_modes: Iterable[str] = ("ReadWriteOnce",), phase: str | None = None,
             annotations: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None,
             owner: Mapping[str, Any] | None = None, uid: str | None = None) -> PersistentVolumeClaim:
    """A claim; ``storage_class=None`` leaves the class unset (the default class applies),
    ``""`` asks for no class. ``volume_name`` binds it (phase Bound unless ``phase``)."""
    spec: Manifest = {"accessModes": list(access_modes)}
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if volume_name:
        spec["volumeName"] = volume_name
    if phase is None and volume_name:
        phase = "Bound"
    extra = {"ownerReferences": [dict(owner)]} if owner is not None else None
    manifest: Manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": _metadata(name, namespace=namespace, uid=uid, labels=labels,
                                                annotations=annotations, extra=extra),
                          "spec": spec}
    if phase is not None:
        manifest["status"] = {"phase": phase}
    return _parsed(manifest, PersistentVolumeClaim)


def make_pv(name: str, *, capacity: str | None = "1Gi", storage_class: str = "",
            access_modes: Iterable[str] = ("ReadWriteOnce",), claim: tuple[str, str] | None = None,
            node_affinity_terms: Iterable[Sequence[Mapping[str, Any]]] = (),
            labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
            phase: str | None = None, source: Mapping[str, Any] | None = None) -> PersistentVolume:
    """A volume; ``claim`` is ``(namespace, name)`` of the claim it is bound to;
    ``node_affinity_terms`` are lists of match expressions, ORed; ``source`` is one volume-source
    entry such as ``{"csi": {"driver": "d", "volumeHandle": "h"}}`` (default: a hostPath)."""
    spec: Manifest = {"accessModes": list(access_modes)}
    if capacity is not None:
        spec["capacity"] = {"storage": capacity}
    if storage_class:
        spec["storageClassName"] = storage_class
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    terms = [{"matchExpressions": [dict(e) for e in term]} for term in node_affinity_terms]
    if terms:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
    spec.update(source if source is not None else {"hostPath": {"path": f"/tmp/{name}"}})
    manifest: Manifest = {"apiVersion": "v1", "kind": "PersistentVolume",
                          "metadata": _metadata(name, labels=labels, annotations=annotations), "spec": spec}
    if phase is None:
        phase = "Bound" if claim is not None else "Available"
    manifest["status"] = {"phase": phase}
    return _parsed(manifest, PersistentVolume)


def make_storage_class(name: str, *, provisioner: str = "kubernetes.io/no-provisioner",
                       binding_mode: str = "Immediate",
                       allowed_topologies: Mapping[str, Iterable[str]] | None = None,
                       parameters: Mapping[str, str] | None = None) -> StorageClass:
    """A StorageClass; ``allowed_topologies`` maps label keys to allowed values (one term)."""
    manifest: Manifest = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                          "metadata": {"name": name}, "provisioner": provisioner,
                          "volumeBindingMode": binding_mode}
    if allowed_topologies:
        manifest["allowedTopologies"] = [{"matchLabelExpressions": [
            {"key": k, "values": list(v)} for k, v in allowed_topologies.items()]}]
    if parameters:
        manifest["parameters"] = dict(parameters)
    return _parsed(manifest, StorageClass)


def make_csi_node(name: str, drivers: Mapping[str, int | None] | None = None, *,
                  annotations: Mapping[str, str] | None = None) -> CSINode:
    """A CSINode: driver name -> attach limit (None: no limit). Migrated in-tree plugins are
    listed in the ``storage.alpha.kubernetes.io/migrated-plugins`` annotation."""
    entries = []
    for driver, count in (drivers or {}).items():
        entry: Manifest = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        entries.append(entry)
    return _parsed({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                    "metadata": _metadata(name, annotations=annotations), "spec": {"drivers": entries}}, CSINode)


def make_pdb(name: str = "pdb", *, namespace: str = "default", match_labels: Mapping[str, str] | None = None,
             selector: Mapping[str, Any] | None = None, min_available: int | str | None = None,
             max_unavailable: int | str | None = None, disruptions_allowed: int = 0,
             disrupted_pods: Iterable[str] = ()) -> PodDisruptionBudget:
    """A PodDisruptionBudget with its status (``disruptionsAllowed``, ``disruptedPods``) as the
    disruption controller would have written it."""
    spec: Manifest = {}
    if selector is not None:
        spec["selector"] = dict(selector)
    elif match_labels is not None:
        spec["selector"] = {"matchLabels": dict(match_labels)}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    status = {"disruptionsAllowed": disruptions_allowed,
              "disruptedPods": {pod: TERMINATING_SINCE for pod in disrupted_pods}}
    return _parsed({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": name, "namespace": namespace}, "spec": spec, "status": status},
                   PodDisruptionBudget)


def make_priority_class(name: str, value: int, *, global_default: bool = False,
                        preemption_policy: str | None = None, description: str = "") -> PriorityClass:
    manifest: Manifest = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": name}, "value": value}
    if global_default:
        manifest["globalDefault"] = True
    if preemption_policy is not None:
        manifest["preemptionPolicy"] = preemption_policy
    if description:
        manifest["description"] = description
    return _parsed(manifest, PriorityClass)


def make_namespace(name: str, labels: Mapping[str, str] | None = None, *, phase: str | None = None) -> Namespace:
    """A Namespace (``kubernetes.io/metadata.name`` is set, as the API server does)."""
    manifest: Manifest = {"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name,
                                                                **(labels or {})}}}
    if phase is not None:
        manifest["status"] = {"phase": phase}
    return _parsed(manifest, Namespace)
