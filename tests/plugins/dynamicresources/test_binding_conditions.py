"""PreBind waits for devices' binding conditions (DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus, beta and on in v1.36), on the embedded cluster's simulated clock.

Upstream (``dynamicresources.go`` PreBind): after writing the allocation, it records the Normal
event ``BindingConditionsPending`` "waiting for binding conditions for device on node <node>" and
re-reads the claims every 5 s (the first time at once) until every binding condition of every
device is true in ``status.devices``; a true failure condition ("device binding failed") or
``bindingTimeout`` (default 10m) ends it with an Error, so the pod is unreserved and retried.
Other pods are scheduled meanwhile."""

from __future__ import annotations

import copy

from kschedfw.api import parse_object
from kschedfw.config.validate import default_config
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation

DRIVER = "fabric.example.com"


def objects(with_conditions=True):
    device = {"name": "gpu-0"}
    if with_conditions:
        device.update(bindsToNode=True, bindingConditions=["attached"], bindingFailureConditions=["failed"])
    raw = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
         "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
         "spec": {"driver": DRIVER, "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [device]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "train-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu"}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "train-gpu"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x"}]}},
    ]
    return [parse_object(o) for o in raw]


def simulation(**kwargs):
    registry = default_registry()
    return Simulation(default_config(registry, FeatureGates()), registry, objects(**kwargs))


def driver_reports(sim, at, condition):
    """A driver setting ``condition`` True on the allocated device at simulated time ``at``."""
    def report():
        claim = sim.cluster.get("ResourceClaim", "train-gpu", "default")
        raw = copy.deepcopy(claim.raw)
        raw["status"]["devices"] = [{"driver": DRIVER, "pool": "n1", "device": "gpu-0", "conditions": [
            {"type": condition, "status": "True", "reason": "Driver", "message": f"device {condition}",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
        sim.cluster.update(parse_object(raw))
    sim.cluster.call_at(at, report)


def outcomes(result):
    return {o.key: o for o in result.pods}


def events(sim, reason):
    return [(e.time, e.message) for e in sim.cluster.events if e.reason == reason]


def test_the_pod_binds_at_the_first_poll_after_the_conditions_are_true():
    sim = simulation()
    driver_reports(sim, 12.0, "attached")
    waiting = outcomes(sim.run(until=11.0))
    assert waiting["default/train"].status == "Binding"
    assert waiting["default/web"].status == "Bound"  # the scheduler went on meanwhile
    assert events(sim, "BindingConditionsPending") == [(0.0, "waiting for binding conditions for device on node n1")]
    result = outcomes(sim.run())
    assert result["default/train"].status == "Bound" and result["default/train"].node == "n1"
    [(bound_at, _)] = [e for e in events(sim, "Scheduled") if "train" in e[1]]
    assert bound_at == 15.0  # polls at 0, 5, 10, 15


def test_a_failure_condition_ends_the_wait_with_an_error_and_the_pod_is_retried():
    sim = simulation()
    driver_reports(sim, 7.0, "failed")
    result = outcomes(sim.run(until=60.0))
    assert result["default/train"].status != "Bound"
    failures = [m for t, m in events(sim, "FailedScheduling") if t == 10.0]
    assert failures and "device binding failed: claim=train-gpu, reason=Driver" in failures[0]


def test_without_a_driver_the_pod_waits_and_is_reported_as_binding():
    sim = simulation()
    result = outcomes(sim.run())
    assert result["default/train"].status == "Binding"
    assert result["default/web"].status == "Bound"


def test_devices_without_binding_conditions_bind_at_once():
    sim = simulation(with_conditions=False)
    result = outcomes(sim.run())
    assert result["default/train"].status == "Bound"
    assert events(sim, "BindingConditionsPending") == []
