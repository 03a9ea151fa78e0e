"""A scenario's objects on the real API server: created before kube-scheduler starts, read back as
the scheduler's state before each pod, and removed afterwards (namespaces excepted)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, Iterable

from kschedfw.api.accessors import raw_of
from kschedfw.cluster.kube.resources import BY_KIND, RESOURCES, Resource, parse_api_object
from kschedfw.cluster.controllers.resourceclaim import with_generated_claims
from kschedfw.testing.controlplane import APIError, ControlPlane

from tests.differential.gangs import WORKLOAD_API
from tests.differential.scenario import NAMESPACES

#: kinds a scenario may hold beyond those the scheduler watches: read by admission only
EXTRA = {"RuntimeClass": Resource("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", namespaced=False),
         "ResourceClaimTemplate": Resource("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates")}

#: the in-tree workload API (``scheduling.k8s.io``), served when the server runs with its gates;
#: its PodGroup shares a kind name with the coscheduling plugin's (``scheduling.x-k8s.io``)
WORKLOADS = Resource("Workload", WORKLOAD_API, "workloads", optional=True)
POD_GROUPS = Resource("PodGroup", WORKLOAD_API, "podgroups", optional=True)

#: what the scheduler's state is read from (optional APIs only when served), and what admission
#: reads when that state is loaded into the embedded cluster (a stored pod keeps its
#: runtimeClassName, which the embedded cluster admits against the RuntimeClass again)
STATE = (*(r for r in RESOURCES if r.kind not in ("PodGroup", "ElasticQuota")), *EXTRA.values(), WORKLOADS,
         POD_GROUPS)

NOT_READY = "node.kubernetes.io/not-ready"


def resource(kind: str) -> Resource:
    try:
        return BY_KIND.get(kind) or EXTRA[kind]
    except KeyError:
        raise ValueError(f"the differential harness cannot create a {kind}") from None


def resource_of(obj: dict[str, Any]) -> Resource:
    """Where ``obj`` is served: by its kind, and for the workload API's kinds by its group too."""
    if obj.get("apiVersion") == WORKLOAD_API:
        return WORKLOADS if obj["kind"] == "Workload" else POD_GROUPS
    return resource(obj["kind"])


def path_of(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return resource_of(obj).object_path(meta["name"], meta.get("namespace", "default"))


def ensure_namespaces(cp: ControlPlane) -> None:
    for name in NAMESPACES:
        try:
            cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        except APIError as exc:
            if exc.status != 409:
                raise


def label_namespaces(cp: ControlPlane, objects: Iterable[dict[str, Any]]) -> None:
    """Give each namespace the labels the scenario's Namespace object has (none if it has none)."""
    wanted = {o["metadata"]["name"]: (o["metadata"].get("labels") or {}) for o in objects if o["kind"] == "Namespace"}
    for name in NAMESPACES:
        ns = cp.api("GET", f"/api/v1/namespaces/{name}")
        labels = {"kubernetes.io/metadata.name": name, **wanted.get(name, {})}
        if (ns["metadata"].get("labels") or {}) != labels:
            ns["metadata"]["labels"] = labels
            cp.api("PUT", f"/api/v1/namespaces/{name}", ns)


def create(cp: ControlPlane, obj: dict[str, Any]) -> dict[str, Any]:
    """Create one object as a client would; a Node as its kubelet would have it: Ready."""
    kind = obj["kind"]
    if kind == "Namespace":
        raise ValueError("namespaces are relabelled, not created")
    if kind == "Node":
        return _create_node(cp, obj)
    r = resource_of(obj)
    namespace = obj["metadata"].get("namespace", "default")
    base = r.path.rsplit("/", 1)[0] + (f"/namespaces/{namespace}/{r.plural}" if r.namespaced else f"/{r.plural}")
    return cp.api("POST", base, obj)


def _create_node(cp: ControlPlane, node: dict[str, Any]) -> dict[str, Any]:
    status = dict(node.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    status["conditions"] = [*conditions, {"type": "Ready", "status": "True", "reason": "KubeletReady",
                                          "message": "ready", "lastHeartbeatTime": now, "lastTransitionTime": now}]
    status.setdefault("capacity", status.get("allocatable", {}))
    created = cp.api("POST", "/api/v1/nodes", {**node, "status": status})
    # the server may add the not-ready taint at create (TaintNodesByCondition): drop it again
    taints = (created.get("spec") or {}).get("taints") or []
    kept = [t for t in taints if t.get("key") != NOT_READY]
    if len(kept) != len(taints):
        created = cp.api("PATCH", f"/api/v1/nodes/{node['metadata']['name']}", {"spec": {"taints": kept or None}},
                         content_type="application/merge-patch+json")
    return created


def read_state(cp: ControlPlane, kinds: Iterable[str] | None = None) -> list[Any]:
    """Every object (of ``kinds``: default all) the scheduler would list, as stored, parsed as
    kschedfw reads the API server (namespaced ones from the scenario's namespaces only)."""
    wanted = set(kinds) if kinds is not None else None
    out: list[Any] = []
    for r in STATE:
        if wanted is not None and r.kind not in wanted:
            continue
        try:
            items = cp.api("GET", r.path + ("?fieldSelector=" + r.field_selector if r.field_selector else ""))["items"]
        except APIError as exc:
            if exc.status == 404 and r.optional:
                continue
            raise
        for item in items:
            meta = item["metadata"]
            if r.kind == "Namespace" and meta["name"] not in NAMESPACES:
                continue
            if r.namespaced and meta.get("namespace") not in NAMESPACES:
                continue
            out.append(parse_api_object(r, item))
    return out


#: what a scenario changes while it plays (pods: created, bound, preempted, deleted; claims:
#: generated, allocated, freed); nothing writes the other objects then (no kubelet, no
#: controllers), so they are read once
CHANGING = ("Pod", "ResourceClaim", "PodGroup")
STATIC = tuple(r.kind for r in STATE if r.kind not in CHANGING)


#: the start of the pods' start times (see :func:`start`)
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def start(cp: ControlPlane, namespace: str, name: str, number: int) -> None:
    """Do a kubelet's part: give a bound pod its ``status.startTime``, ``number`` seconds after
    :data:`EPOCH`. Without one, upstream's preemption takes "now" as every victim's start time
    (``util.GetPodStartTime``), so its last tie-break between candidate nodes, the latest start
    of the highest-priority victims, would be decided by the clock."""
    when = (EPOCH + dt.timedelta(seconds=number)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cp.api("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status", {"status": {"startTime": when}},
           content_type="application/merge-patch+json")


def delete_pod(cp: ControlPlane, namespace: str, name: str) -> None:
    try:
        cp.api("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {"gracePeriodSeconds": 0})
    except APIError as exc:
        if exc.status != 404:
            raise


def clear(cp: ControlPlane, objects: Iterable[dict[str, Any]], timeout: float = 30.0) -> None:
    """Delete every pod of the scenario's namespaces (grace 0), every claim (freed first: kube-scheduler
    put a finalizer on those it allocated) and every object but namespaces; return when they are gone."""
    for ns in NAMESPACES:
        cp.api("DELETE", f"/api/v1/namespaces/{ns}/pods", {"gracePeriodSeconds": 0})
    for claim in list_claims(cp):
        meta = claim["metadata"]
        path = CLAIMS.object_path(meta["name"], meta["namespace"])
        _free(cp, path)
        _ignore_gone(cp, "DELETE", path, {"gracePeriodSeconds": 0})
    paths = [path_of(o) for o in objects if o["kind"] != "Namespace"]
    for obj, path in zip((o for o in objects if o["kind"] != "Namespace"), paths):
        try:
            cp.api("DELETE", path, {"gracePeriodSeconds": 0})
        except APIError as exc:
            if exc.status != 404:
                raise
        if resource_of(obj) is POD_GROUPS:  # PodGroupProtection's finalizer: no controller removes it here
            _ignore_gone(cp, "PATCH", path, {"metadata": {"finalizers": None}}, MERGE)
    deadline = time.monotonic() + timeout
    while any(cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"] for ns in NAMESPACES) or any(
            _exists(cp, p) for p in paths):
        if time.monotonic() > deadline:
            raise AssertionError("the scenario's objects were not deleted in time")
        time.sleep(0.02)


def _exists(cp: ControlPlane, path: str) -> bool:
    try:
        cp.api("GET", path)
    except APIError as exc:
        if exc.status == 404:
            return False
        raise
    return True


# ---------------------------------------------------------------------- the resourceclaim controller
# Nothing runs kube-controller-manager beside the test API server: the harness does its part for
# the claims of the scenario's pods, as ``kschedfw/cluster/controllers/resourceclaim.py`` does in the embedded
# cluster (same claim names, so both schedulers see the same objects).

CLAIMS = BY_KIND["ResourceClaim"]


def list_claims(cp: ControlPlane) -> list[dict[str, Any]]:
    return [c for ns in NAMESPACES for c in cp.api("GET", f"{CLAIMS.discovery_path}/namespaces/{ns}/resourceclaims")
            ["items"]]


def generate_claims(cp: ControlPlane, pod: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The stored ``pod`` with ``status.resourceClaimStatuses`` naming a claim made from each
    template it names (created, owned by the pod), and those claims as stored."""
    parsed = parse_api_object(BY_KIND["Pod"], pod)
    made: list[dict[str, Any]] = []

    def get(kind: str, name: str, namespace: str) -> Any:
        try:
            return parse_api_object(resource(kind), cp.api("GET", resource(kind).object_path(name, namespace)))
        except APIError as exc:
            if exc.status == 404:
                return None
            raise

    def create_claim(claim: Any) -> Any:
        made.append(create(cp, {**raw_of(claim), "kind": "ResourceClaim"}))
        return claim

    updated = with_generated_claims(parsed, get, create_claim)
    if updated is parsed:
        return pod, made
    meta = pod["metadata"]
    statuses = raw_of(updated)["status"]["resourceClaimStatuses"]
    stored = cp.api("PATCH", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                    {"status": {"resourceClaimStatuses": statuses}}, content_type="application/merge-patch+json")
    return stored, made


def release_claims(cp: ControlPlane) -> bool:
    """The controller's part once pods are gone (deleted by the harness or preempted): claims drop
    the missing pods from ``reservedFor``, claims reserved for nobody are deallocated, and claims
    generated for a missing pod are deleted. Whether a claim was written."""
    wrote = False
    pods = {p["metadata"]["uid"] for ns in NAMESPACES for p in cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"]}
    for claim in list_claims(cp):
        meta = claim["metadata"]
        path = CLAIMS.object_path(meta["name"], meta["namespace"])
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        kept = [r for r in reserved if r.get("uid") in pods]
        owner = next((r for r in meta.get("ownerReferences") or [] if r.get("kind") == "Pod"), None)
        orphan = owner is not None and owner.get("uid") not in pods
        if kept and len(kept) != len(reserved):
            _ignore_gone(cp, "PATCH", path + "/status", {"status": {"reservedFor": kept}}, MERGE)
            wrote = True
        elif not kept and (status or meta.get("finalizers")) and (reserved or orphan):
            _free(cp, path)
            wrote = True
        if orphan:
            _ignore_gone(cp, "DELETE", path, {"gracePeriodSeconds": 0})
            wrote = True
    return wrote


MERGE = "application/merge-patch+json"


def _free(cp: ControlPlane, path: str) -> None:
    """Deallocate a claim and drop the finalizer kube-scheduler put on it when it allocated it."""
    _ignore_gone(cp, "PATCH", path + "/status", {"status": None}, MERGE)
    _ignore_gone(cp, "PATCH", path, {"metadata": {"finalizers": None}}, MERGE)


def allocated_devices(claims: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """``claim request pool/device`` for every device allocated to ``claims``, sorted."""
    return tuple(sorted(
        f"{c['metadata']['name']} {r['request']} {r['pool']}/{r['device']}" for c in claims
        for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ()))


def claim_names(pod: dict[str, Any]) -> list[str]:
    """The claims ``pod`` uses: named, or generated for it (from its status)."""
    generated = {s["name"]: s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses")
                 or ()}
    names = [c.get("resourceClaimName") or generated.get(c["name"]) for c in pod["spec"].get("resourceClaims") or ()]
    return [n for n in names if n]


def pod_devices(cp: ControlPlane, pod: dict[str, Any]) -> tuple[str, ...]:
    """The devices allocated to ``pod``'s claims as the API server holds them."""
    ns = pod["metadata"]["namespace"]
    claims = [_ignore_gone(cp, "GET", CLAIMS.object_path(name, ns)) for name in claim_names(pod)]
    return allocated_devices(c for c in claims if c)


def _ignore_gone(cp: ControlPlane, method: str, path: str, body: Any = None, content_type: str = "application/json"
                 ) -> Any:
    try:
        return cp.api(method, path, body, content_type=content_type)
    except APIError as exc:
        if exc.status != 404:
            raise
    return None
