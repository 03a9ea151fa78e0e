"""`kschedfw simulate` on DRA manifests: ResourceSlices published by hand, a DeviceClass, pods with
ResourceClaimTemplates. The embedded cluster generates each pod's claim as the resourceclaim
controller does, DynamicResources allocates devices, and the claims come out as kube-scheduler
v1.36 writes them."""

from __future__ import annotations

import json

import yaml

from kschedfw.cli.main import main
from kschedfw.testing import container, make_node, make_pod, run_cli

DRIVER = "gpu.example.com"


def node(name):
    """A node of 64 cpus, roomy enough that only devices decide."""
    return make_node(name, cpu="64", memory="256Gi").raw


def gpu_slice(node_name, count=8):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}},
                                  "capacity": {"memory": {"value": "40Gi"}}} for i in range(count)]}}


DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def template(name, count):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count,
                "selectors": [{"cel": {"expression": 'device.capacity["gpu.example.com"].memory.compareTo('
                                                     'quantity("32Gi")) >= 0'}}]}}]}}}}


def pod(name, template_name):
    """A pod whose one container uses the claim made from ``template_name``."""
    return make_pod(name, containers=[container("c", image="busybox", resources={"claims": [{"name": "gpu"}]})],
                    resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": template_name}]).raw


def cluster(pods):
    return {"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), node("n2"), gpu_slice("n1"), gpu_slice("n2"), DEVICE_CLASS, template("one-gpu", 1),
        template("two-gpus", 2), *pods]}


def simulate(tmp_path, pods):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(cluster(pods)))
    after = tmp_path / "after.yaml"
    run = run_cli("simulate", str(path), "--output", "json", "--write-out", str(after)).assert_ok()
    assert "not read by the scheduler" not in run.stderr  # the templates are the embedded cluster's to read
    result = run.json
    written = yaml.safe_load(after.read_text())["items"]
    return {p["pod"]: p for p in result["pods"]}, written


def claims_of(written):
    return {i["metadata"]["name"]: i for i in written if i["kind"] == "ResourceClaim"}


def test_pods_with_claim_templates_get_devices(tmp_path):
    pods = [pod("one", "one-gpu"), pod("two", "two-gpus")]
    result, written = simulate(tmp_path, pods)
    assert result["default/one"]["status"] == "Bound" and result["default/two"]["status"] == "Bound"
    claims = claims_of(written)
    by_pod = {c["metadata"]["ownerReferences"][0]["name"]: c for c in claims.values()}
    assert set(by_pod) == {"one", "two"}
    one = by_pod["one"]
    assert one["metadata"]["generateName"] == "one-gpu-"
    assert one["metadata"]["name"].startswith("one-gpu-") and len(one["metadata"]["name"]) == len("one-gpu-") + 5
    assert one["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
    assert one["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "one",
                                                   "uid": one["metadata"]["ownerReferences"][0]["uid"],
                                                   "controller": True}]
    assert one["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    node_one = result["default/one"]["node"]
    allocation = one["status"]["allocation"]
    assert allocation["devices"] == {"results": [
        {"request": "gpus", "driver": DRIVER, "pool": node_one, "device": "gpu-0"}]}
    assert allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_one]}]}]}
    assert "allocationTimestamp" in allocation
    assert one["status"]["reservedFor"] == [{"resource": "pods", "name": "one",
                                             "uid": one["metadata"]["ownerReferences"][0]["uid"]}]
    two_devices = [r["device"] for r in by_pod["two"]["status"]["allocation"]["devices"]["results"]]
    assert len(two_devices) == 2
    if result["default/two"]["node"] == node_one:
        assert "gpu-0" not in two_devices
    pod_one = next(i for i in written if i["kind"] == "Pod" and i["metadata"]["name"] == "one")
    assert pod_one["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": one["metadata"]["name"]}]


def test_the_seventeenth_gpu_pod_stays_pending(tmp_path):
    pods = [pod(f"p{i:02d}", "one-gpu") for i in range(17)]
    result, written = simulate(tmp_path, pods)
    bound = [p for p in result.values() if p["status"] == "Bound"]
    assert len(bound) == 16
    assert result["default/p16"]["status"] == "Pending"
    assert result["default/p16"]["message"] == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    devices = [(r["pool"], r["device"]) for c in claims_of(written).values()
               for r in (c.get("status") or {}).get("allocation", {}).get("devices", {}).get("results", ())]
    assert len(devices) == 16 and len(set(devices)) == 16


def test_deleting_a_gpu_pod_frees_its_device_for_the_pending_one(capsys, tmp_path):
    """The pod's generated claim is deallocated and deleted with it; that claim update requeues
    the pod waiting for a device (DynamicResources' queueing hint), which then gets it."""
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(cluster([pod(f"p{i:02d}", "one-gpu") for i in range(17)])))
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump({"kind": "Scenario", "cluster": ["cluster.yaml"], "steps": [
        {"at": "10s", "delete": {"kind": "Pod", "namespace": "default", "name": "p00"}},
        {"advance": "1m"}]}))
    after = tmp_path / "after.yaml"
    code = main(["simulate", str(scenario), "--output", "json", "--write-out", str(after)])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = {p["pod"]: p for p in json.loads(out)["pods"]}
    assert result["default/p16"]["status"] == "Bound"
    claims = claims_of(yaml.safe_load(after.read_text())["items"])
    assert not any(c["metadata"]["ownerReferences"][0]["name"] == "p00" for c in claims.values())
    assert len(claims) == 16
