"""Differential for DRA: the same pods with ResourceClaims on the same devices through the shipped
kube-scheduler and through `kschedfw run`: same nodes, same devices, same message for the pod
that finds no free device."""

from __future__ import annotations

import pytest

from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest
from tests.kube.test_differential import both, cluster  # noqa: F401 (a fixture)

RESOURCE = "/apis/resource.k8s.io/v1"


@pytest.fixture
def devices(control_plane: ControlPlane, namespace: str, cluster):  # noqa: F811
    """GPUs published by hand: two A100s on node a, one on (tainted) node b, one H100 on node c."""
    driver = f"{namespace}.example.com"
    gpus = {f"{namespace}-a": ["a100", "a100"], f"{namespace}-b": ["a100"], f"{namespace}-c": ["h100"]}
    made = [f"{RESOURCE}/deviceclasses/{namespace}-gpu"]
    control_plane.api("POST", f"{RESOURCE}/deviceclasses", {
        "metadata": {"name": f"{namespace}-gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    for node, models in gpus.items():
        control_plane.api("POST", f"{RESOURCE}/resourceslices", {
            "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}}
                                 for i, m in enumerate(models)]}})
        made.append(f"{RESOURCE}/resourceslices/{node}-gpus")
    yield driver
    for path in made:
        control_plane.api("DELETE", path)


def claims(driver: str, cls: str) -> dict[str, dict]:
    def exactly(count=1, model=None):
        body = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
        if model:
            body["selectors"] = [{"cel": {"expression": f'device.attributes["{driver}"].model == "{model}"'}}]
        return body
    return {
        "prefer-h100": {"requests": [{"name": "gpu", "firstAvailable": [
            {"name": "h100", **exactly(model="h100")}, {"name": "any", **exactly()}]}]},
        "two": {"requests": [{"name": "gpus", "exactly": exactly(2)}]},
        "one-more": {"requests": [{"name": "gpu", "exactly": exactly()}]},
    }


def release(cp: ControlPlane, ns: str, names) -> None:
    """What the resourceclaim controller would do once the pods are gone: deallocate, delete."""
    for name in names:
        path = f"{RESOURCE}/namespaces/{ns}/resourceclaims/{name}"
        claim = cp.api("GET", path)
        claim.pop("status", None)
        claim = cp.api("PUT", path + "/status", claim)
        claim["metadata"].pop("finalizers", None)
        cp.api("PUT", path, claim)
        cp.api("DELETE", path)


def test_kube_scheduler_and_kschedfw_allocate_the_same_devices(control_plane, namespace, cluster, devices,  # noqa: F811
                                                               tmp_path):
    assert len(control_plane.api("GET", "/api/v1/nodes")["items"]) == 3
    specs = claims(devices, f"{namespace}-gpu")
    allocations: dict[str, dict] = {}

    def waves(ns: str, scheduler: str) -> list[list[dict]]:
        if ns != namespace:  # the second run: keep the first run's allocations, free its devices
            allocations[namespace] = allocated(ns=namespace)
            release(control_plane, namespace, specs)
        for name, spec in specs.items():
            control_plane.api("POST", f"{RESOURCE}/namespaces/{ns}/resourceclaims",
                              {"metadata": {"name": name}, "spec": {"devices": spec}})

        def pod(name):
            return pod_manifest(name, ns, scheduler=scheduler,
                                resourceClaims=[{"name": "gpu", "resourceClaimName": name}])
        return [[pod("prefer-h100")], [pod("two")], [pod("one-more")]]

    def allocated(ns: str) -> dict[str, list[tuple[str, str, str]]]:
        out = {}
        for name in specs:
            claim = control_plane.api("GET", f"{RESOURCE}/namespaces/{ns}/resourceclaims/{name}")
            results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])
            out[name] = [(r["request"], r["pool"], r["device"]) for r in results]
        return out

    upstream, ours = both(control_plane, namespace, tmp_path, make_waves=waves)
    a, c = f"{namespace}-a", f"{namespace}-c"
    assert {k: v[0] for k, v in upstream.items()} == {"prefer-h100": c, "two": a, "one-more": ""}
    assert upstream["one-more"][2].startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 cannot allocate all claims. "
        "still not schedulable, preemption: ")
    assert ours == upstream
    assert allocations[namespace] == {"prefer-h100": [("gpu/h100", c, "gpu-0")],
                                      "two": [("gpus", a, "gpu-0"), ("gpus", a, "gpu-1")], "one-more": []}
    assert allocated(f"{namespace}-k") == allocations[namespace]
    release(control_plane, f"{namespace}-k", specs)
