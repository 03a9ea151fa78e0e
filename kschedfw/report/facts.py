"""What the report shows beyond ``simulate -o json``: each node's topology labels, its other
resources (extended resources, ephemeral storage, huge pages) and DRA devices, and the
PodGroups with their pods. Read once from the cluster after the run, as plain dicts, so the
page is rendered from data and a field a later API version adds does no harm."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from kschedfw.simulation import SimulationResult

__all__ = ["ZONE", "REGION", "node_facts", "pod_groups"]

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

#: shown as bars of their own, or not a resource a person asks about per node
_MAIN = ("cpu", "memory", "pods")


def node_facts(result: "SimulationResult", keys: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """Node name -> ``{"labels": {key: value}`` (region, zone and ``keys``, those the node has),
    ``"resources": {name: {"requested", "allocatable"}}`` (all but cpu, memory and pods),
    ``"devices": [{"device": "driver/pool/name", "claim": "ns/name" or ""}]``}."""
    wanted = (REGION, ZONE, *keys)
    scheduler = result.scheduler
    scheduler.cache.update_snapshot()
    infos = next(iter(scheduler.frameworks.values())).handle.snapshot.node_infos() if scheduler.frameworks else []
    devices = _node_devices(result.cluster)
    out: dict[str, dict[str, Any]] = {}
    for ni in infos:
        labels = ni.node.labels if ni.node is not None else {}
        resources = {name: {"requested": ni.requested.get(name, 0), "allocatable": amount}
                     for name, amount in sorted(ni.allocatable.items()) if name not in _MAIN}
        out[ni.name] = {"labels": {k: labels[k] for k in wanted if k in labels}, "resources": resources,
                        "devices": devices.get(ni.name, [])}
    return out


def _node_devices(cluster: Any) -> dict[str, list[dict[str, str]]]:
    """The devices of each node's ResourceSlices (those with ``spec.nodeName``), with the
    ResourceClaim each is allocated to."""
    allocated: dict[str, str] = {}
    for claim in cluster.list("ResourceClaim"):
        raw = claim.raw or {}
        results = ((((raw.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")) or ()
        for r in results:
            if isinstance(r, dict):
                allocated[f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"] = claim.key
    out: dict[str, list[dict[str, str]]] = {}
    for slice_ in cluster.list("ResourceSlice"):
        spec = (slice_.raw or {}).get("spec") or {}
        node = spec.get("nodeName")
        if not node:
            continue
        pool = (spec.get("pool") or {}).get("name", "")
        for device in spec.get("devices") or ():
            if isinstance(device, dict):
                name = f"{spec.get('driver', '')}/{pool}/{device.get('name', '')}"
                out.setdefault(node, []).append({"device": name, "claim": allocated.get(name, "")})
    for entries in out.values():
        entries.sort(key=lambda d: d["device"])
    return out


def pod_groups(result: "SimulationResult", pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ``scheduling.k8s.io`` PodGroup as its manifest (spec and status), with
    ``"members"``: its pods' entries of ``pods`` (the ``-o json`` list), in that order. Empty
    when the cluster has none (the workload API is loaded only when it has some)."""
    cluster = result.cluster
    from kschedfw.api.workload_names import POD_GROUP_KIND
    groups = cluster.list(POD_GROUP_KIND)
    if not groups:
        return []
    from kschedfw.api.workload import pod_group_manifest
    member_of: dict[str, str] = {}
    for pod in cluster.list("Pod"):
        group = pod.scheduling_group
        if group is not None and group.pod_group_name:
            member_of[pod.key] = f"{pod.namespace}/{group.pod_group_name}"
    out = []
    for pg in sorted(groups, key=lambda g: g.key):
        entry = pod_group_manifest(pg)
        entry["members"] = [p for p in pods if member_of.get(p["pod"]) == pg.key]
        out.append(entry)
    return out
