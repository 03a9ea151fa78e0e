"""`kschedfw run` allocating devices through a real kube-apiserver: DeviceClasses, ResourceSlices
and ResourceClaims come through informers, allocations are written to resourceclaims/status."""

from __future__ import annotations

import pytest

from tests.kube.helpers import pod_manifest, wait_for
from tests.kube.test_run import get_pod, nodes, scheduler_name, start_runner  # noqa: F401 (fixtures)

RESOURCE = "/apis/resource.k8s.io/v1"


@pytest.fixture
def devices(control_plane, namespace, nodes):  # noqa: F811 (the fixture above)
    """One GPU per node, published by hand, and a DeviceClass selecting this test's driver."""
    driver = f"{namespace}.example.com"
    made = [f"{RESOURCE}/deviceclasses/{namespace}-gpu"]
    control_plane.api("POST", f"{RESOURCE}/deviceclasses", {
        "metadata": {"name": f"{namespace}-gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    for node in nodes:
        control_plane.api("POST", f"{RESOURCE}/resourceslices", {
            "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                  "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0"}]}})
        made.append(f"{RESOURCE}/resourceslices/{node}-gpus")
    yield driver
    for path in made:
        control_plane.api("DELETE", path)


def claim_and_pod(cp, namespace, name, scheduler):
    cp.api("POST", f"{RESOURCE}/namespaces/{namespace}/resourceclaims", {
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"{namespace}-gpu"}}]}}})
    cp.api("POST", f"/api/v1/namespaces/{namespace}/pods",
           pod_manifest(name, namespace, scheduler=scheduler,
                        resourceClaims=[{"name": "gpu", "resourceClaimName": name}]))


def test_pods_get_devices_and_the_third_waits(control_plane, namespace, scheduler_name, nodes,  # noqa: F811
                                              devices, tmp_path):
    runner, thread = start_runner(control_plane, tmp_path, scheduler_name)
    try:
        for name in ("p1", "p2", "p3"):
            claim_and_pod(control_plane, namespace, name, scheduler_name)
        placed = {name: wait_for(lambda n=name: get_pod(control_plane, namespace, n)["spec"].get("nodeName"),
                                 what=f"{name} bound") for name in ("p1", "p2")}
        assert sorted(placed.values()) == sorted(nodes)
        for name in ("p1", "p2"):
            claim = control_plane.api("GET", f"{RESOURCE}/namespaces/{namespace}/resourceclaims/{name}")
            assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
            allocation = claim["status"]["allocation"]
            assert allocation["devices"]["results"] == [
                {"request": "gpu", "driver": devices, "pool": placed[name], "device": "gpu-0"}]
            assert allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [placed[name]]
            pod_uid = get_pod(control_plane, namespace, name)["metadata"]["uid"]
            assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": name, "uid": pod_uid}]
        total = len(control_plane.api("GET", "/api/v1/nodes")["items"])

        def waiting():
            found = [c for c in get_pod(control_plane, namespace, "p3")["status"].get("conditions") or []
                     if c["type"] == "PodScheduled"]
            return found[0]["message"] if found else None
        assert wait_for(waiting, what="p3's condition").startswith(
            f"0/{total} nodes are available: {total} cannot allocate all claims. still not schedulable, preemption: ")
    finally:
        runner.stop()
        thread.join(10)
        runner.close()
