"""Builders for the allocator table, named after upstream's helpers in
``structured/internal/allocatortesting/allocator_testing.go`` so each case reads like its original."""

from __future__ import annotations

import copy
from typing import Any

from kschedfw.api.node import Node
from kschedfw.plugins.dynamicresources.structured import DeviceID, Features
from kschedfw.testing import make_node

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB_REQ0, SUB_REQ1 = "subReq-0", "subReq-1"
REQ0_SUB_REQ0, REQ0_SUB_REQ1 = "req-0/subReq-0", "req-0/subReq-1"
REQ1_SUB_REQ0, REQ1_SUB_REQ1 = "req-1/subReq-0", "req-1/subReq-1"
REQ2_SUB_REQ0, REQ2_SUB_REQ1 = "req-2/subReq-0", "req-2/subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
FIELD_NAME_KEY, REGION_KEY, PLANET_KEY, PLANET_VALUE_EARTH = "metadata.name", "region", "planet", "earth"
NODE_SELECTION_ALL = "nodeSelectionAll"
NODE_SELECTION_PER_DEVICE = "nodeSelectionPerDevice"
FROM_COUNTERS = "fromCounters"

NO_FEATURES = Features(admin_access=False, prioritized_list=False, device_taints=False, partitionable_devices=False,
                       device_binding_and_status=False, consumable_capacity=False)


def features(**on: bool) -> Features:
    """upstream ``Features{X: true}``: everything else off."""
    return Features(**{**_off(), **on})


def _off() -> dict[str, bool]:
    return {"admin_access": False, "prioritized_list": False, "device_taints": False, "partitionable_devices": False,
            "device_binding_and_status": False, "consumable_capacity": False}


def device_id(driver: str, pool: str, device: str) -> DeviceID:
    return DeviceID(driver, pool, device)


def node(name: str, region: str) -> Node:
    return make_node(name, labels={REGION_KEY: region, PLANET_KEY: PLANET_VALUE_EARTH}, hostname_label=False)


def selector(expression: str) -> dict[str, Any]:
    return {"cel": {"expression": expression}}


def device_class(name: str, driver: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [selector(f'device.driver == "{driver}"')]}}


def device_configuration(driver: str, attribute: str) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def class_with_config(name: str, driver: str, attribute: str) -> dict[str, Any]:
    c = device_class(name, driver)
    c["spec"]["config"] = [device_configuration(driver, attribute)]
    return c


def request(name: str, cls: str, count: int, *selectors: dict[str, Any]) -> dict[str, Any]:
    exactly: dict[str, Any] = {"count": count, "allocationMode": "ExactCount", "deviceClassName": cls}
    if selectors:
        exactly["selectors"] = list(selectors)
    return {"name": name, "exactly": exactly}


def all_device_request(name: str, cls: str) -> dict[str, Any]:
    return {"name": name, "exactly": {"allocationMode": "All", "deviceClassName": cls}}


def sub_request(name: str, cls: str, count: int, *selectors: dict[str, Any],
                tolerations: tuple[dict[str, Any], ...] = (), mode: str = "ExactCount") -> dict[str, Any]:
    sub: dict[str, Any] = {"name": name, "count": count, "allocationMode": mode, "deviceClassName": cls}
    if selectors:
        sub["selectors"] = list(selectors)
    if tolerations:
        sub["tolerations"] = list(tolerations)
    return sub


def request_with_prioritized_list(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None,
          config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": devices}}


def claim_with_request(name: str, req: str, cls: str, *constraints: dict[str, Any]) -> dict[str, Any]:
    return claim(name, request(req, cls, 1), constraints=list(constraints))


def with_exactly(c: dict[str, Any], index: int = 0, **fields: Any) -> dict[str, Any]:
    """Set fields of ``spec.devices.requests[index].exactly`` (upstream edits the object in place)."""
    c = copy.deepcopy(c)
    c["spec"]["devices"]["requests"][index]["exactly"].update(fields)
    return c


def with_tolerations(c: dict[str, Any], *tolerations: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"].setdefault("tolerations", []).extend(tolerations)
    return c


def claim_with_device_config(name: str, req: str, cls: str, driver: str, attribute: str) -> dict[str, Any]:
    c = claim_with_request(name, req, cls)
    c["spec"]["devices"]["config"] = [device_configuration(driver, attribute)]
    return c


def device_claim_config(requests: list[str], config: dict[str, Any]) -> dict[str, Any]:
    return {"requests": requests, **config}


def match_attribute(attribute: str, *requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {"matchAttribute": attribute}
    if requests:
        out["requests"] = list(requests)
    return out


def distinct_attribute(attribute: str, *requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {"distinctAttribute": attribute}
    if requests:
        out["requests"] = list(requests)
    return out


def device(name: str, capacity: dict[str, str] | None = None, attributes: dict[str, Any] | None = None,
           *, taints: list[dict[str, Any]] | None = None, consumes: list[dict[str, Any]] | None = None,
           node_selection: Any = None, binding_conditions: list[str] | None = None,
           binding_failure_conditions: list[str] | None = None, binds_to_node: bool | None = None,
           capacity_from_counters: bool = False, allow_multiple: bool = False,
           policies: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    if allow_multiple:
        d["allowMultipleAllocations"] = True
    if attributes:
        d["attributes"] = attributes
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if taints:
        d["taints"] = taints
    if consumes:
        d["consumesCounters"] = consumes
        if capacity_from_counters:
            d["capacity"] = {k: dict(v) for c in consumes for k, v in c["counters"].items()}
    if isinstance(node_selection, dict):
        d["nodeSelector"] = node_selection
    elif node_selection == NODE_SELECTION_ALL:
        d["allNodes"] = True
    elif node_selection:
        d["nodeName"] = node_selection
    if policies:
        d.setdefault("capacity", {}).update(policies)
    if binding_conditions is not None:
        d["bindingConditions"] = binding_conditions
    if binding_failure_conditions is not None:
        d["bindingFailureConditions"] = binding_failure_conditions
    if binds_to_node is not None:
        d["bindsToNode"] = binds_to_node
    return d


def counter_consumption(counter_set: str, counters: dict[str, str]) -> dict[str, Any]:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def counter_set(name: str, counters: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def resource_pool(name: str, count: int, generation: int = 1) -> dict[str, Any]:
    return {"name": name, "resourceSliceCount": count, "generation": generation}


def slice_(name: str, node_selection: Any, pool: Any, driver: str, *devices: dict[str, Any],
           counter_sets: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": driver,
                            "pool": resource_pool(pool, 1) if isinstance(pool, str) else dict(pool)}
    if isinstance(node_selection, dict):
        spec["nodeSelector"] = node_selection
    elif node_selection == NODE_SELECTION_ALL:
        spec["allNodes"] = True
    elif node_selection == NODE_SELECTION_PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = node_selection
    if devices:
        spec["devices"] = list(devices)
    if counter_sets:
        spec["sharedCounters"] = counter_sets
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def slice_with_one_device(name: str, node_selection: Any, pool: Any, driver: str) -> dict[str, Any]:
    return slice_(name, node_selection, pool, driver, device(DEVICE1))


def slice_with_multiple_devices(name: str, node_selection: Any, pool: Any, driver: str, count: int) -> dict[str, Any]:
    return slice_(name, node_selection, pool, driver, *(device(f"device-{i}") for i in range(count)))


def with_pool(s: dict[str, Any], **fields: Any) -> dict[str, Any]:
    s = copy.deepcopy(s)
    s["spec"]["pool"].update(fields)
    return s


def node_label_selector(key: str, *values: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local_node_selector(node_name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [node_name]}]}]}


def result(req: str, driver: str, pool: str, dev: str, admin_access: bool = False,
           *tolerations: dict[str, Any], binding_conditions: list[str] | None = None,
           binding_failure_conditions: list[str] | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {"request": req, "driver": driver, "pool": pool, "device": dev}
    if admin_access:
        r["adminAccess"] = True
    if tolerations:
        r["tolerations"] = list(tolerations)
    if binding_conditions:
        r["bindingConditions"] = binding_conditions
    if binding_failure_conditions:
        r["bindingFailureConditions"] = binding_failure_conditions
    return r


def multiple_results(req: str, driver: str, pool: str, count: int, start: int) -> list[dict[str, Any]]:
    return [result(req, driver, pool, f"device-{i}") for i in range(start, start + count)]


def allocation(node_selector: dict[str, Any] | None, *results: dict[str, Any],
               config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"devices": {"results": list(results)}}
    if config:
        out["devices"]["config"] = config
    if node_selector is not None:
        out["nodeSelector"] = node_selector
    return out


def config_entry(source: str, requests: list[str] | None, driver: str, attribute: str) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source}
    if requests:
        out["requests"] = requests
    out.update(device_configuration(driver, attribute))
    return out


CAPACITY0, CAPACITY1 = "capacity-0", "capacity-1"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


def class_with_allow_multiple_allocations(name: str, driver: str, multiple: bool) -> dict[str, Any]:
    c = device_class(name, driver)
    c["spec"]["selectors"][0]["cel"]["expression"] = (
        f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multiple).lower()}')
    return c


def policy_range(value: str) -> dict[str, Any]:
    """upstream withCapacityRequestPolicyRange: default 2, valid range 2..4 in steps of 2."""
    return {"value": value, "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}


def policy_valid_values(default: str, value: str, *more: str) -> dict[str, Any]:
    """upstream withCapacityRequestPolicyValidValues: the default is the smallest valid value."""
    return {"value": value, "requestPolicy": {"default": default, "validValues": [default, *more]}}


def with_capacity_request(request_: dict[str, Any], quantity: str | None) -> dict[str, Any]:
    request_ = copy.deepcopy(request_)
    body = request_["exactly"] if "exactly" in request_ else request_
    body["capacity"] = {"requests": {CAPACITY0: quantity} if quantity is not None else {}}
    return request_


def shared_result(req: str, driver: str, pool: str, dev: str, consumed: dict[str, str] | None = None,
                  *tolerations: dict[str, Any]) -> dict[str, Any]:
    """A device shared by several allocations (upstream ``withConsumedCapacity(&fixedShareID, ...)``)."""
    r = result(req, driver, pool, dev, False, *tolerations)
    r["shareID"] = FIXED_SHARE_ID
    if consumed:
        r["consumedCapacity"] = consumed
    return r
