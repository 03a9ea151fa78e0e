"""`kschedfw simulate` on a pod asking for ``example.com/gpu: 1`` that no node advertises but a
DeviceClass provides (``spec.extendedResourceName``, DRAExtendedResource, on in v1.36): the pod is
bound, the scheduler's claim for it is created and allocated as kube-scheduler v1.36 writes it,
and the pod's ``status.extendedResourceClaimStatus`` names it."""

from __future__ import annotations

import json

import yaml

from kschedfw.testing import make_pod, run_cli
from tests.cli.test_simulate_dra import DRIVER, gpu_slice, node

GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
             "spec": {"extendedResourceName": "example.com/gpu",
                      "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def gpu_pod(name, gpus=1):
    """A pod asking for ``gpus`` of the extended resource (requests equal to limits)."""
    limits = {"example.com/gpu": str(gpus)}
    return make_pod(name, image="busybox", requests=limits, limits=limits).raw


def simulate(tmp_path, items, *args):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    after = tmp_path / "after.yaml"
    result = run_cli("simulate", str(path), "--output", "json", "--write-out", str(after), *args).assert_ok().json
    return result, yaml.safe_load(after.read_text())["items"]


def test_pod_gets_a_device_for_its_extended_resource(tmp_path):
    result, written = simulate(tmp_path, [node("n1"), gpu_slice("n1", 1), GPU_CLASS, gpu_pod("a")],
                               "--explain", "default/a")
    (a,) = result["pods"]
    assert (a["status"], a["node"]) == ("Bound", "n1")
    (claim,) = [i for i in written if i["kind"] == "ResourceClaim"]
    meta = claim["metadata"]
    assert meta["name"].startswith("a-extended-resources-") and meta["generateName"] == "a-extended-resources-"
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert [(r["kind"], r["name"], r["controller"]) for r in meta["ownerReferences"]] == [("Pod", "a", True)]
    assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["spec"] == {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}
    allocation = claim["status"]["allocation"]
    assert allocation["devices"]["results"] == [{"request": "container-0-request-0", "driver": DRIVER, "pool": "n1",
                                                 "device": "gpu-0"}]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["a"]
    (pod,) = [i for i in written if i["kind"] == "Pod"]
    assert pod["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": meta["name"]}
    (explained,) = result["explain"]
    assert explained["claims"] == [{"name": "for extended resources", "claim": f"default/{meta['name']}",
                                    "devices": [{"request": "container-0-request-0", "driver": DRIVER, "pool": "n1",
                                                 "device": "gpu-0"}]}]


def test_a_second_pod_waits_for_the_only_device(tmp_path):
    result, written = simulate(tmp_path, [node("n1"), gpu_slice("n1", 1), GPU_CLASS, gpu_pod("a"),
                                                  gpu_pod("b")], "--explain", "default/b")
    by_name = {p["pod"]: p for p in result["pods"]}
    assert by_name["default/a"]["status"] == "Bound"
    assert by_name["default/b"]["status"] != "Bound"
    assert "cannot allocate all claims" in json.dumps(by_name["default/b"])
    assert len([i for i in written if i["kind"] == "ResourceClaim"]) == 1
    (explained,) = result["explain"]
    assert "claims" not in explained  # nothing created for b
    n1 = explained["attempts"][0]["nodes"]["n1"]
    assert (n1["plugin"], n1["reason"]) == ("DynamicResources", "cannot allocate all claims")
    assert n1["details"] == ["claim default/<extended-resources>, request container-0-request-0: wants 1 device(s) "
                             "of class gpu; the node has 1 device(s), 1 of the class, 0 free"]


def test_a_node_advertising_the_resource_is_the_device_plugins(tmp_path):
    plugin_node = node("n2")
    plugin_node["status"]["allocatable"]["example.com/gpu"] = "1"
    result, written = simulate(tmp_path, [plugin_node, GPU_CLASS, gpu_pod("a")])
    (a,) = result["pods"]
    assert (a["status"], a["node"]) == ("Bound", "n2")
    assert [i for i in written if i["kind"] == "ResourceClaim"] == []
    (pod,) = [i for i in written if i["kind"] == "Pod"]
    assert "extendedResourceClaimStatus" not in (pod.get("status") or {})
