"""The rest of upstream's ``dynamicresources_test.go`` TestPlugin table: claims referenced by name
or through a template, finalizers changing before PreBind, device taints, CEL errors on some
nodes, the allocation timestamp and devices with binding conditions. Each case runs through
:func:`run_case` with upstream's inputs and expectations.

Upstream's ``verify`` compares only the message of a failed status (``ErrorContains``) and its
``testPlugin`` stops at a Filter Error, so where its table names another code, or steps after
that Error, the code here is what upstream's plugin returns (``statusUnschedulable`` is
UnschedulableAndUnresolvable, ``statusError`` an Error) and the steps are the ones it runs.
Upstream's ``AllocationTimestamp: new(metav1.Time)`` means "set, value not checked": here it is
the test clock's time.

Not applicable to v1.36's defaults:

* ``request-admin-access-without-DRAAdminAccess-featuregate``: DRAAdminAccess is GA and locked
  on in v1.36 (upstream emulates v1.35 to turn it off).
* ``podgroup-*``, ``postfilter-*-podgroup*``, ``bind-podgroup-failure``, ``reserved-okay-podgroup``:
  DRAWorkloadResourceClaims (alpha, off).
* ``node-allocatable-*``: DRANodeAllocatableResources (alpha, off).
* ``DRA-disabled``, ``claim-with-prioritized-list-feature-disabled``: DynamicResourceAllocation
  and DRAPrioritizedList are GA and locked on.
* ``canceled``: Filter called with a canceled Go context; kschedfw's Filter has no context (a
  deadline is ``filterTimeout``, see test_filter_timeout.py).
"""

from __future__ import annotations

import copy
import datetime

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code

from .test_plugin import (ALLOCATION, ATTR, BROKEN, CLAIM_NAME, CLAIM_NAME2, DRIVER, FINALIZER, NAMESPACE, NODE,
                          NODE2, NODE3, NOW, OTHER, PENDING, POD_NAME, POD_UID, RESOURCE_NAME, RESOURCE_NAME2,
                          WORKER_SLICE, allocation, claim, device_class, error, exactly, node, pod, resource_slice,
                          run_case, sub, uau, with_resources, written)

DRIVER2 = "some-driver-2"
UNSCHEDULABLE_STILL = (Code.Unschedulable, "still not schedulable")
NOT_AVAILABLE = uau("resourceclaim not available on the node")
DEALLOCATED = (Code.Unschedulable, "deallocation of ResourceClaim completed")
CEL_CLAIM_ERROR = f"claim default/{CLAIM_NAME}: selector #0: CEL runtime error: no such key: {ATTR}"


class SteppingClock:
    """The test clock (upstream's ``time.Now()``), moved on by the polling Handle."""

    def __init__(self):
        self.at = 0.0

    def now(self):
        return self.at

    def now_datetime(self):
        return datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=self.at)


class PollingHandle(Handle):
    """A Handle whose ``wait_for`` polls as upstream's ``wait.PollUntilContextTimeout`` does: at
    once, then every ``interval`` on the test clock, False once the next poll would be past
    ``timeout`` (the context's deadline)."""

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "clock": SteppingClock()})

    def wait_for(self, ready, interval, timeout):
        waited = 0.0
        while not ready():
            if waited + interval > timeout:
                return False
            self.clock.at += interval
            waited += interval
        return True


def stamp(seconds_before_now):
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) - datetime.timedelta(seconds=seconds_before_now)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def allocated(c, alloc, devices=None):
    """upstream ``st.FromResourceClaim(c).Allocation(alloc)`` (which adds the finalizer), with
    ``status.devices`` when given (``AllocatedDeviceStatuses``)."""
    raw = copy.deepcopy(c.raw)
    raw["metadata"]["finalizers"] = [FINALIZER]
    raw["status"] = {"allocation": copy.deepcopy(alloc)}
    if devices is not None:
        raw["status"]["devices"] = devices
    return parse_object(raw)


def reserved(c):
    """upstream ``reserve(claim, pod)``: the claim as PreBind writes it for an allocated claim."""
    raw = copy.deepcopy(c.raw)
    raw["status"]["reservedFor"] = [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]
    return raw


def stamped(raw):
    raw = copy.deepcopy(raw)
    raw["status"]["allocation"].setdefault("allocationTimestamp", NOW)
    return raw


def deallocated(c):
    """What PostFilter writes: no allocation, reservation or device status (the finalizer stays)."""
    raw = copy.deepcopy(c.raw)
    raw["status"] = {}
    return raw


def with_finalizer(c, finalizers):
    raw = copy.deepcopy(c.raw)
    raw["metadata"]["finalizers"] = finalizers
    return parse_object(raw)


def with_device_class_name(c, class_name):
    """upstream ``updateDeviceClassName``: every request (or all its subrequests) asks for ``class_name``."""
    raw = copy.deepcopy(c.raw)
    for request in raw["spec"]["devices"]["requests"]:
        for target in request.get("firstAvailable") or [request["exactly"]]:
            target["deviceClassName"] = class_name
    return parse_object(raw)


def taint_devices(s):
    raw = copy.deepcopy(s.raw)
    for device in raw["spec"]["devices"]:
        device.setdefault("taints", []).append({"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"})
    return parse_object(raw)


def fabric_slice(driver, device):
    """upstream ``fabricSlice``: a device bound to the node once its binding conditions hold (the
    slice names both the node and a node selector, as upstream's does)."""
    raw = copy.deepcopy(resource_slice(NODE, device).raw)
    raw["metadata"]["name"] = f"{NODE}-{driver}"
    raw["spec"]["driver"] = driver
    raw["spec"]["nodeSelector"] = ALLOCATION["nodeSelector"]
    raw["spec"]["devices"][0].update(bindsToNode=True, bindingConditions=["condition"],
                                     bindingFailureConditions=["failed"])
    return parse_object(raw)


def binding_allocation(driver=DRIVER, device="instance-1", request="req-1", timestamp=None):
    """upstream ``allocationResultWithBindingConditions`` (``...2`` with driver 2)."""
    alloc = allocation((request, device))
    alloc["devices"]["results"][0].update(driver=driver, bindingConditions=["condition"],
                                          bindingFailureConditions=["failed"])
    if timestamp is not None:
        alloc["allocationTimestamp"] = timestamp
    return alloc


def device_status(driver=DRIVER, device="instance-1", **conditions):
    out = {"driver": driver, "pool": NODE, "device": device}
    if conditions:
        out["conditions"] = [{"type": t, "status": s} for t, s in conditions.items()]
    return out


TEMPLATE_POD = kit.make_pod(POD_NAME, namespace=NAMESPACE, uid=POD_UID,
                            resourceClaims=[{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}],
                            status={"resourceClaimStatuses": [{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}]})
ALLOCATED = allocated(PENDING, ALLOCATION)
PENDING2 = claim(name=CLAIM_NAME2)
WORKER2_SLICE = resource_slice(NODE2, ("instance-1", {ATTR: True}))
WORKER3_SLICE = resource_slice(NODE3, ("instance-1", {ATTR: True}))
BROKEN_CLAIM = claim(requests=[{"name": "req-1", "exactly": exactly(selectors=[BROKEN])}])
FABRIC_SLICE = fabric_slice(DRIVER, "instance-1")
FABRIC_SLICE2 = fabric_slice(DRIVER2, "instance-2")
BIND_ALLOCATION = binding_allocation()
BOUND = allocated(PENDING, binding_allocation(timestamp=NOW), [device_status(condition="True", failed="False")])
BOUND2 = allocated(PENDING2, binding_allocation(DRIVER2, "instance-2", "req-2", NOW),
                   [device_status(DRIVER2, "instance-2", condition="True", failed="False")])
FAILED_BINDING = allocated(PENDING, binding_allocation(timestamp=NOW),
                           [device_status(condition="False", failed="True")])
FAILED_BINDING2 = allocated(PENDING2, binding_allocation(DRIVER2, "instance-2", "req-2", NOW),
                            [device_status(DRIVER2, "instance-2", condition="False", failed="True")])
# upstream: allocated time.Now()-10m ago, so past the default bindingTimeout a moment later
TIMED_OUT = allocated(PENDING, binding_allocation(timestamp=stamp(601)), [device_status()])
MIXED = allocated(PENDING, binding_allocation(timestamp=stamp(601)),
                  [device_status(condition1="True", condition2="False")])
# upstream prebind-fail-with-binding-timeout: allocated so that bindingTimeout (600s) ends 10s
# into PreBind's wait
TIMING_OUT = allocated(PENDING, binding_allocation(timestamp=stamp(590)), [device_status()])
RESERVED_ALLOCATED = [stamped(reserved(ALLOCATED))]
FAST_BINDING_TIMEOUT = {"bindingTimeout": "1s"}  # no driver sets the conditions: time out quickly


def _drop_finalizers(raw):
    raw["metadata"].pop("finalizers", None)
    return raw


def _add_finalizer(raw):
    raw["metadata"]["finalizers"] = [FINALIZER]
    return raw


def _unstamped(raw):
    raw = copy.deepcopy(raw)
    del raw["status"]["allocation"]["allocationTimestamp"]
    return raw


CASES = [
    pytest.param(pod(RESOURCE_NAME), [ALLOCATED, OTHER], [node(NODE)], {},
                 {"in_flight": [], "written": RESERVED_ALLOCATED, "in_flight_after_bind": []},
                 id="claim-reference"),
    pytest.param(TEMPLATE_POD, [ALLOCATED, OTHER], [node(NODE)], {},
                 {"in_flight": [], "written": RESERVED_ALLOCATED, "in_flight_after_bind": []},
                 id="claim-template"),
    pytest.param(pod(RESOURCE_NAME), [with_finalizer(PENDING, [FINALIZER]), device_class(), WORKER_SLICE],
                 [node(NODE)], {"prepare": {"prebind": _drop_finalizers}}, with_resources(),
                 id="with-resources-finalizer-gets-removed"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), WORKER_SLICE], [node(NODE)],
                 {"prepare": {"prebind": _add_finalizer}}, with_resources(), id="with-resources-finalizer-gets-added"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), taint_devices(WORKER_SLICE)], [node(NODE)],
                 {"gates": {"DRADeviceTaints": False}}, with_resources(), id="tainted-device-disabled"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), taint_devices(WORKER_SLICE)], [node(NODE)], {},
                 {"filter": {NODE: uau("cannot allocate all claims")}, "postfilter": UNSCHEDULABLE_STILL},
                 id="tainted-device-enabled"),
    pytest.param(pod(RESOURCE_NAME), [BROKEN_CLAIM, device_class(), WORKER_SLICE, WORKER2_SLICE],
                 [node(NODE), node(NODE2)], {}, {"filter": {NODE: error(CEL_CLAIM_ERROR)}},
                 id="CEL-runtime-error-for-one-of-two-nodes"),
    pytest.param(pod(RESOURCE_NAME), [BROKEN_CLAIM, device_class(), WORKER_SLICE, WORKER2_SLICE, WORKER3_SLICE],
                 [node(NODE), node(NODE2), node(NODE3)], {}, {"filter": {NODE: error(CEL_CLAIM_ERROR)}},
                 id="CEL-runtime-error-for-one-of-three-nodes"),
    pytest.param(pod(RESOURCE_NAME),
                 [with_device_class_name(claim(requests=[{"name": "req-1", "firstAvailable": [sub("subreq-1")]}],
                                               owner=False), "does-not-exist")], [node(NODE)], {},
                 {"prefilter": uau("request req-1/subreq-1: device class does-not-exist does not exist"),
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")},
                 id="claim-with-prioritized-list-unknown-device-class"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), WORKER_SLICE], [node(NODE)],
                 {"gates": {"DRADeviceBindingConditions": False}},
                 {"in_flight": [CLAIM_NAME], "written": [_unstamped(written(PENDING, ALLOCATION))],
                  "in_flight_after_bind": []}, id="dont-add-allocation-timestamp"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), WORKER_SLICE], [node(NODE)], {},
                 with_resources(), id="add-allocation-timestamp"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), FABRIC_SLICE], [node(NODE)],
                 {"args": FAST_BINDING_TIMEOUT, "handle": PollingHandle},
                 {"in_flight": [CLAIM_NAME], "written": [written(PENDING, BIND_ALLOCATION)], "in_flight_after_bind": [],
                  "prebind": error("device binding timeout: context deadline exceeded")},
                 id="bind-claim-with-binding-conditions"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), FABRIC_SLICE], [node(NODE)],
                 {"args": FAST_BINDING_TIMEOUT, "handle": PollingHandle},
                 {"in_flight": [CLAIM_NAME], "written": [written(PENDING, BIND_ALLOCATION)], "in_flight_after_bind": [],
                  "prebind": error("device binding timeout: context deadline exceeded")},
                 id="bind-failure-concurrent-deallocation"),
    pytest.param(pod(RESOURCE_NAME), [BOUND], [node(NODE)], {},
                 {"in_flight": [], "written": [reserved(BOUND)], "in_flight_after_bind": []},
                 id="bound-claim-with-succeeded-binding-conditions"),
    pytest.param(pod(RESOURCE_NAME), [FAILED_BINDING, WORKER_SLICE], [node(NODE)], {},
                 {"filter": {NODE: NOT_AVAILABLE}, "postfilter": DEALLOCATED, "written": [deallocated(FAILED_BINDING)]},
                 id="bound-claim-with-failed-binding"),
    pytest.param(pod(RESOURCE_NAME), [TIMED_OUT], [node(NODE)], {},
                 {"filter": {NODE: NOT_AVAILABLE}, "postfilter": DEALLOCATED, "written": [deallocated(TIMED_OUT)]},
                 id="bound-claim-with-timed-out-binding"),
    pytest.param(pod(RESOURCE_NAME), [TIMING_OUT], [node(NODE)],
                 {"args": {"bindingTimeout": "600s"}, "handle": PollingHandle},
                 {"in_flight": [], "written": [reserved(TIMING_OUT)], "in_flight_after_bind": [],
                  "prebind": error(f"device binding timeout: claim={CLAIM_NAME}")},
                 id="prebind-fail-with-binding-timeout"),
    pytest.param(pod(RESOURCE_NAME), [MIXED], [node(NODE)], {},
                 {"filter": {NODE: NOT_AVAILABLE}, "postfilter": DEALLOCATED, "written": [deallocated(MIXED)]},
                 id="bound-claim-with-mixed-binding-conditions"),
    pytest.param(TEMPLATE_POD, [ALLOCATED, OTHER], [node(NODE)], {},
                 {"in_flight": [], "written": RESERVED_ALLOCATED, "in_flight_after_bind": []},
                 id="bound-claim-without-binding-conditions"),
    pytest.param(pod(RESOURCE_NAME, RESOURCE_NAME2), [BOUND, BOUND2, device_class(), FABRIC_SLICE, FABRIC_SLICE2],
                 [node(NODE)], {},
                 {"in_flight": [], "written": [reserved(BOUND), reserved(BOUND2)], "in_flight_after_bind": []},
                 id="multi-claims-binding-conditions-all-success"),
    pytest.param(pod(RESOURCE_NAME, RESOURCE_NAME2),
                 [BOUND, FAILED_BINDING2, device_class(), FABRIC_SLICE, FABRIC_SLICE2], [node(NODE)], {},
                 {"filter": {NODE: NOT_AVAILABLE}, "postfilter": DEALLOCATED,
                  "written": [deallocated(FAILED_BINDING2)]},
                 id="multi-claims-binding-conditions-one-fail"),
]


@pytest.mark.parametrize("p,objects,nodes,options,want", CASES)
def test_plugin(p, objects, nodes, options, want):
    assert run_case(p, objects, nodes, **options) == want
