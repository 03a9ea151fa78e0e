"""Differential for devices with binding conditions (DRADeviceBindingConditions, beta and on in
v1.36): the shipped kube-scheduler and `kschedfw run` both allocate the device, write the claim,
record ``BindingConditionsPending`` and hold the pod in PreBind until a driver (this test) reports
the device's binding condition true in the claim's ``status.devices``; then both bind it to the
same node."""

from __future__ import annotations

import threading
import time

import pytest

from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest
from tests.kube.test_differential import both, cluster  # noqa: F401 (a fixture)
from tests.kube.test_differential_dra import release

RESOURCE = "/apis/resource.k8s.io/v1"
ATTACH_AFTER = 2.0  # seconds the driver takes to attach the device once the claim is allocated


@pytest.fixture
def fabric(control_plane: ControlPlane, namespace: str, cluster):  # noqa: F811
    """One fabric-attached device on node c, which needs attaching before a pod can use it."""
    driver = f"{namespace}.example.com"
    node = f"{namespace}-c"
    made = [f"{RESOURCE}/deviceclasses/{namespace}-fabric", f"{RESOURCE}/resourceslices/{node}-fabric"]
    control_plane.api("POST", f"{RESOURCE}/deviceclasses", {
        "metadata": {"name": f"{namespace}-fabric"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    control_plane.api("POST", f"{RESOURCE}/resourceslices", {
        "metadata": {"name": f"{node}-fabric"},
        "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "bindsToNode": True, "bindingConditions": ["Attached"],
                              "bindingFailureConditions": ["AttachFailed"]}]}})
    yield driver
    for path in made:
        control_plane.api("DELETE", path)


class Driver(threading.Thread):
    """Attaches the allocated device of claim ``ns/name``: ``ATTACH_AFTER`` seconds after the
    allocation appears, it sets the condition ``Attached`` and notes whether the pod was still
    unbound then (the scheduler waited in PreBind)."""

    def __init__(self, cp: ControlPlane, ns: str, name: str, pod: str) -> None:
        super().__init__(daemon=True)
        self.cp, self.ns, self.name, self.pod = cp, ns, name, pod
        self.unbound_when_attached: bool | None = None

    def run(self) -> None:
        path = f"{RESOURCE}/namespaces/{self.ns}/resourceclaims/{self.name}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            claim = self.cp.api("GET", path)
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation:
                break
            time.sleep(0.1)
        else:
            return
        time.sleep(ATTACH_AFTER)
        pod = self.cp.api("GET", f"/api/v1/namespaces/{self.ns}/pods/{self.pod}")
        self.unbound_when_attached = not pod["spec"].get("nodeName")
        claim = self.cp.api("GET", path)
        claim["status"]["devices"] = [{
            "driver": r["driver"], "pool": r["pool"], "device": r["device"],
            "conditions": [{"type": "Attached", "status": "True", "reason": "Attached", "message": "attached",
                            "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
            for r in claim["status"]["allocation"]["devices"]["results"]]
        self.cp.api("PUT", path + "/status", claim)


def test_both_wait_for_the_binding_condition_then_bind(control_plane, namespace, cluster, fabric,  # noqa: F811
                                                        tmp_path):
    drivers: dict[str, Driver] = {}

    def waves(ns: str, scheduler: str) -> list[list[dict]]:
        if ns != namespace:  # the second run: free the first run's device (no resourceclaim controller here)
            release(control_plane, namespace, ["fabric-gpu"])
        control_plane.api("POST", f"{RESOURCE}/namespaces/{ns}/resourceclaims", {
            "metadata": {"name": "fabric-gpu"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": f"{namespace}-fabric"}}]}}})
        drivers[ns] = Driver(control_plane, ns, "fabric-gpu", "train")
        drivers[ns].start()
        return [[pod_manifest("train", ns, scheduler=scheduler,
                              resourceClaims=[{"name": "gpu", "resourceClaimName": "fabric-gpu"}])]]

    upstream, ours = both(control_plane, namespace, tmp_path, make_waves=waves, must_bind=True)
    assert upstream["train"][0] == f"{namespace}-c"
    assert ours["train"][0] == upstream["train"][0]
    for ns, driver in drivers.items():
        driver.join(30)
        assert driver.unbound_when_attached is True, f"{ns}: the pod was bound before its device was attached"
        events = control_plane.api("GET", f"/api/v1/namespaces/{ns}/events")["items"]
        pending = [e["message"] for e in events if e["reason"] == "BindingConditionsPending"]
        assert pending == [f"waiting for binding conditions for device on node {namespace}-c"], ns
    release(control_plane, f"{namespace}-k", ["fabric-gpu"])
