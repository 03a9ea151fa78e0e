"""Pods and nodes with sensible defaults, built from manifests by the real parser.

A test states only what it cares about: ``make_pod("web", cpu="500m", labels={"app": "web"})``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from kschedfw.api import Node, Pod, parse_object
from kschedfw.cache.snapshot import Snapshot


def make_node(name: str = "node-1", *, cpu: str = "4", memory: str = "32Gi", pods: str = "110",
              labels: Mapping[str, str] | None = None, taints: Iterable[Mapping[str, str]] = (),
              unschedulable: bool = False, zone: str | None = None,
              images: Iterable[tuple[list[str], int]] = (),
              extra_allocatable: Mapping[str, str] | None = None) -> Node:
    """A Ready node; ``kubernetes.io/hostname`` (and the zone label if ``zone``) are set."""
    all_labels = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra_allocatable or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": allocatable, "capacity": dict(allocatable),
                              "conditions": [{"type": "Ready", "status": "True"}]}
    if images:
        status["images"] = [{"names": list(names), "sizeBytes": size} for names, size in images]
    return parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": all_labels},
                         "spec": spec, "status": status})


def make_pod(name: str = "pod-1", *, namespace: str = "default", cpu: str | None = None,
             memory: str | None = None, requests: Mapping[str, str] | None = None,
             labels: Mapping[str, str] | None = None, node_name: str = "", priority: int | None = None,
             scheduler_name: str = "default-scheduler", image: str = "registry.k8s.io/pause:3.10",
             **spec: Any) -> Pod:
    """A pod with one container; extra keyword arguments are ``spec`` fields in manifest form
    (``tolerations=[...]``, ``nodeSelector={...}``, ``affinity={...}``, ...)."""
    resources = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources.update(requests or {})
    container: dict[str, Any] = {"name": "main", "image": image}
    if resources:
        container["resources"] = {"requests": resources}
    body: dict[str, Any] = {"schedulerName": scheduler_name, "containers": [container], **spec}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    return parse_object({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
                         "spec": body})


def make_cluster(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> Snapshot:
    """The scheduler's view of ``nodes`` with the assigned ``pods`` on them."""
    return Snapshot.from_objects(nodes, pods)
