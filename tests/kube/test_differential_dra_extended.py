"""Differential for extended resources backed by a DeviceClass (DRAExtendedResource, on in v1.36):
pods asking for ``<ns>.example.com/gpu`` that no node advertises, through the shipped
kube-scheduler and through `kschedfw run` against the same API server: same nodes, same devices,
the same claims created by the scheduler (generateName, annotation, owner, requests, allocation,
reservedFor) and the same ``status.extendedResourceClaimStatus`` on the pods."""

from __future__ import annotations

from typing import Iterator

import pytest

from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest
from tests.kube.test_differential import both, cluster  # noqa: F401 (a fixture)
from tests.kube.test_differential_dra import RESOURCE

ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


@pytest.fixture
def gpus(control_plane: ControlPlane, namespace: str, cluster):  # noqa: F811
    """A DeviceClass providing ``<ns>.example.com/gpu``; two GPUs on node a, one on (tainted) b,
    one on c, published by hand."""
    driver = f"{namespace}.example.com"
    resource = f"{namespace}.example.com/gpu"
    made = [f"{RESOURCE}/deviceclasses/{namespace}-gpu"]
    control_plane.api("POST", f"{RESOURCE}/deviceclasses", {
        "metadata": {"name": f"{namespace}-gpu"},
        "spec": {"extendedResourceName": resource,
                 "selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    for node, count in {f"{namespace}-a": 2, f"{namespace}-b": 1, f"{namespace}-c": 1}.items():
        control_plane.api("POST", f"{RESOURCE}/resourceslices", {
            "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}})
        made.append(f"{RESOURCE}/resourceslices/{node}-gpus")
    yield resource
    for path in made:
        control_plane.api("DELETE", path)


def claims_of(cp: ControlPlane, ns: str) -> dict[str, dict]:
    """The scheduler's claims by owning pod, without what differs between any two API writes."""
    out = {}
    for claim in cp.api("GET", f"{RESOURCE}/namespaces/{ns}/resourceclaims")["items"]:
        meta = claim["metadata"]
        (owner,) = meta["ownerReferences"]
        allocation = claim["status"]["allocation"]
        out[owner["name"]] = {
            "generateName": meta["generateName"], "name prefix": meta["name"].startswith(meta["generateName"]),
            "annotation": meta["annotations"].get(ANNOTATION), "finalizers": meta.get("finalizers"),
            "owner": (owner["kind"], owner.get("controller")), "spec": claim["spec"],
            "devices": [(r["request"], r["pool"], r["device"])
                        for r in allocation["devices"]["results"]],
            "reservedFor": [r["name"] for r in claim["status"]["reservedFor"]]}
    return out


def pod_statuses(cp: ControlPlane, ns: str) -> dict[str, dict]:
    out = {}
    for pod in cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"]:
        status = pod["status"].get("extendedResourceClaimStatus")
        if status is not None:
            claim = cp.api("GET", f"{RESOURCE}/namespaces/{ns}/resourceclaims/{status['resourceClaimName']}")
            out[pod["metadata"]["name"]] = {"requestMappings": status["requestMappings"],
                                            "claim owner": claim["metadata"]["ownerReferences"][0]["name"]}
    return out


def release(cp: ControlPlane, ns: str) -> None:
    """What the garbage collector would do once the pods are gone: the claims they owned go."""
    for claim in cp.api("GET", f"{RESOURCE}/namespaces/{ns}/resourceclaims")["items"]:
        path = f"{RESOURCE}/namespaces/{ns}/resourceclaims/{claim['metadata']['name']}"
        claim["metadata"].pop("finalizers", None)
        cp.api("PUT", path, claim)
        cp.api("DELETE", path)


def test_kube_scheduler_and_kschedfw_allocate_extended_resources_alike(control_plane, namespace, cluster,  # noqa: F811
                                                                       gpus, tmp_path):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 3
    seen: dict[str, tuple[dict, dict]] = {}

    def waves(ns: str, scheduler: str) -> Iterator[list[dict]]:
        if ns != namespace:  # the second run: free the first run's devices
            release(control_plane, namespace)

        def pod(name, *containers):
            manifest = pod_manifest(name, ns, scheduler=scheduler)
            manifest["spec"]["containers"] = [
                {"name": f"c{i}", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "100m", gpus: str(n)}, "limits": {gpus: str(n)}}}
                for i, n in enumerate(containers)]
            return manifest
        yield from ([pod("two", 1, 1)], [pod("one", 1)], [pod("more", 1)])
        # every wave settled, the pods are still there: what the scheduler wrote
        seen[ns] = (claims_of(control_plane, ns), pod_statuses(control_plane, ns))

    upstream, ours = both(control_plane, namespace, tmp_path, make_waves=waves)
    a, c = f"{namespace}-a", f"{namespace}-c"
    assert {k: v[0] for k, v in upstream.items()} == {"two": a, "one": c, "more": ""}
    assert upstream["more"][2].startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 cannot allocate all claims. "
        "still not schedulable, preemption: ")
    assert ours == upstream
    upstream_claims, upstream_statuses = seen[namespace]
    # the request is named after the resource's place among the container's sorted requests (cpu first)
    assert upstream_claims["two"]["devices"] == [("container-0-request-1", a, "gpu-0"),
                                                 ("container-1-request-1", a, "gpu-1")]
    assert upstream_claims["two"]["annotation"] == "true" and upstream_claims["two"]["name prefix"]
    assert upstream_statuses["two"]["requestMappings"] == [
        {"containerName": "c0", "resourceName": gpus, "requestName": "container-0-request-1"},
        {"containerName": "c1", "resourceName": gpus, "requestName": "container-1-request-1"}]
    ours_ns = f"{namespace}-k"
    assert seen[ours_ns] == (upstream_claims, upstream_statuses)
    release(control_plane, ours_ns)
