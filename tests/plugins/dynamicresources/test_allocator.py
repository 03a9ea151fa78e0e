"""Port of upstream's allocator table (``structured/internal/allocatortesting/allocator_testing.go``,
run there against the ``incubating`` variant v1.36 uses): one case per upstream case, same name,
same input and expectation. As upstream, results are compared ignoring the order of claims and of
devices within a claim (gomega ``ConsistOf``); configs compare in order.

Cases upstream has that are not here need features this port leaves out (consumable capacity,
list-type attributes); see ``structured/features.py``.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import attrs
import pytest

from kschedfw.api.quantity import parse_quantity
from kschedfw.plugins.dynamicresources.structured import AllocatedState, Allocator, AllocatorError
from tests.plugins.dynamicresources.builders import (
    CAPACITY0, CAPACITY1, CLAIM0, CLAIM1, CLASS_A, CLASS_B, COUNTER_SET1, COUNTER_SET2, DEVICE0, DEVICE1,
    DEVICE2, DEVICE3, DEVICE4, DRIVER_A, DRIVER_B, FIELD_NAME_KEY, FIXED_SHARE_ID, NODE1, NODE2,
    NODE_SELECTION_ALL, NODE_SELECTION_PER_DEVICE, NO_FEATURES, PLANET_KEY, PLANET_VALUE_EARTH, POOL1, POOL2,
    POOL3, POOL4, REGION1, REGION2, REGION_KEY, REQ0, REQ0_SUB_REQ0, REQ0_SUB_REQ1, REQ1, REQ1_SUB_REQ0,
    REQ1_SUB_REQ1, REQ2, REQ2_SUB_REQ0, REQ2_SUB_REQ1, REQ3, SLICE1, SLICE2, SLICE3, SLICE4, SUB_REQ0, SUB_REQ1,
    all_device_request, allocation, claim, claim_with_device_config, claim_with_request,
    class_with_allow_multiple_allocations, class_with_config, config_entry, counter_consumption, counter_set,
    device, device_claim_config, device_class, device_configuration, device_id, distinct_attribute, features,
    local_node_selector, match_attribute, multiple_results, node, node_label_selector, policy_range,
    policy_valid_values, request, request_with_prioritized_list, resource_pool, result, selector, shared_result,
    slice_, slice_with_multiple_devices, slice_with_one_device, sub_request, with_capacity_request,
    with_exactly, with_pool, with_tolerations)


@attrs.frozen(kw_only=True)
class Case:
    claims: list[dict[str, Any]] = attrs.Factory(list)
    classes: list[dict[str, Any]] = attrs.Factory(list)
    slices: list[dict[str, Any]] = attrs.Factory(list)
    node: Any = None
    features: Any = NO_FEATURES
    allocated: list[Any] = attrs.Factory(list)
    allocated_shared: list[Any] = attrs.Factory(list)
    allocated_capacity: dict[Any, dict[str, str]] = attrs.Factory(dict)
    expect: list[dict[str, Any]] | None = None
    error: str | None = None  # substring of the error, as upstream's ContainSubstring
    invocations: int | None = None


def _normalize_selector(sel: dict[str, Any] | None) -> Any:
    if sel is None:
        return None
    terms = []
    for t in sel.get("nodeSelectorTerms") or []:
        terms.append({k: sorted(json.dumps({**r, "values": sorted(r.get("values") or [])}, sort_keys=True)
                                for r in t.get(k) or []) for k in ("matchExpressions", "matchFields")})
    return sorted(json.dumps(t, sort_keys=True) for t in terms)


def _normalize_result(r: dict[str, Any]) -> str:
    """Share IDs are random (upstream replaces them by a fixed one); quantities compare by value."""
    r = dict(r)
    if "shareID" in r:
        r["shareID"] = FIXED_SHARE_ID
    if "consumedCapacity" in r:
        r["consumedCapacity"] = {k: str(Fraction(parse_quantity(v))) for k, v in r["consumedCapacity"].items()}
    return json.dumps(r, sort_keys=True)


def _normalize(allocation: dict[str, Any]) -> str:
    devices = allocation.get("devices") or {}
    return json.dumps({
        "results": sorted(_normalize_result(r) for r in devices.get("results") or []),
        "config": devices.get("config"),
        "nodeSelector": _normalize_selector(allocation.get("nodeSelector")),
    }, sort_keys=True)


CASES: dict[str, Case] = {}

MEM_1GI = selector(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("1Gi")) >= 0')
MEM_2GI = selector(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("2Gi")) >= 0')
LOCAL1 = local_node_selector(NODE1)


def _admin(c: dict[str, Any], index: int = 0, **fields: Any) -> dict[str, Any]:
    return with_exactly(c, index, adminAccess=True, **fields)


def _first_sub_all(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c["spec"]["devices"]["requests"][0]["firstAvailable"][0].update(allocationMode="All", count=0)
    return c


CASES.update({
    "empty": Case(),
    "simple": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "other-node": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
                slice_with_one_device(SLICE2, NODE2, POOL2, DRIVER_A)],
        node=node(NODE2, REGION2),
        expect=[allocation(local_node_selector(NODE2), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "small-and-large": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM_1GI), request(REQ1, CLASS_A, 1, MEM_2GI))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "1Gi"}),
                       device(DEVICE2, {"memory": "2Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "small-and-large-backtrack-requests": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM_1GI), request(REQ1, CLASS_A, 1, MEM_2GI))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}),
                       device(DEVICE1, {"memory": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "small-and-large-backtrack-claims": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, MEM_1GI)), claim(CLAIM1, request(REQ1, CLASS_A, 1, MEM_2GI))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, {"memory": "2Gi"}),
                       device(DEVICE1, {"memory": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "devices-split-across-different-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
                slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "obsolete-slice": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1-obsolete", NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
                slice_("slice-1-obsolete", NODE1, resource_pool(POOL1, 2, generation=2), DRIVER_A, device(DEVICE2))],
        node=node(NODE1, REGION1), expect=[]),
    "duplicate-slice": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[with_pool(slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2),
                with_pool(slice_with_one_device(SLICE1 + "-2", NODE1, POOL1, DRIVER_A), resourceSliceCount=2)],
        node=node(NODE1, REGION1), error="invalid resource pools were encountered"),
    "no-slices": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "not-enough-suitable-devices": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "no-classes": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="could not retrieve device class class-a"),
    "unknown-class": Case(
        claims=[claim_with_request(CLAIM0, REQ0, "unknown-class")], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="could not retrieve device class unknown-class"),
    "empty-class": Case(
        claims=[claim_with_request(CLAIM0, REQ0, "")], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    "no-claims-to-allocate": Case(
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "all-devices-single": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "all-devices-with-consumed-counters": Case(
        features=features(partitionable_devices=True),
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A,
                       device(DEVICE1, consumes=[counter_consumption(COUNTER_SET1, {"memory": "4Gi"})])),
                slice_(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A,
                       counter_sets=[counter_set(COUNTER_SET1, {"memory": "8Gi"})])],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "all-devices-many": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
                slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "all-devices-of-the-incomplete-pool": Case(
        claims=[claim(CLAIM0, with_exactly(claim(CLAIM0, all_device_request(REQ0, CLASS_A)), count=1)
                      ["spec"]["devices"]["requests"][0])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[with_pool(slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), resourceSliceCount=2)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently "
              "being updated"),
    "all-devices-plus-another": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
                slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    "all-devices-plus-another-reversed": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B, 1)), claim(CLAIM0, all_device_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
                slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "all-devices-many-plus-another": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2)),
                allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    "all-devices-many-plus-another-reversed": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_B, 1)), claim(CLAIM0, all_device_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    "all-devices-no-solution": Case(
        claims=[claim(CLAIM1, request(REQ0, CLASS_A, 1)), claim(CLAIM0, all_device_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "all-devices-no-solution-reversed": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "all-devices-slice-without-devices": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1)),
    "all-devices-no-slices": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "all-devices-some-allocated": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], allocated=[device_id(DRIVER_A, POOL1, DEVICE1)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1)),
    "all-devices-some-allocated-admin-access": Case(
        features=features(admin_access=True),
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), allocationMode="All")],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                           result(REQ0, DRIVER_A, POOL1, DEVICE2, True))]),
    "all-devices-some-allocating-admin-access": Case(
        features=features(admin_access=True),
        claims=[_admin(_admin(claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))), 1,
                       allocationMode="All")],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1)),
    "count-devices-some-allocated-admin-access": Case(
        features=features(admin_access=True),
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), count=2)],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                           result(REQ0, DRIVER_A, POOL1, DEVICE2, True))]),
    "separate-claims-share-device-admin-access": Case(
        features=features(admin_access=True),
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A)), _admin(claim_with_request(CLAIM1, REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
    "admin-access-claims-device-allocating-for-non-admin-access": Case(
        features=features(admin_access=True),
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), _admin(claim_with_request(CLAIM1, REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
    "all-devices-slice-without-devices-prioritized-list": Case(
        features=features(prioritized_list=True),
        claims=[_first_sub_all(claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1))))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))]),
    "all-devices-no-slices-prioritized-list": Case(
        features=features(prioritized_list=True),
        claims=[_first_sub_all(claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1))))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))]),
    "all-devices-some-allocated-prioritized-list": Case(
        features=features(prioritized_list=True),
        claims=[_first_sub_all(claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1))))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1)],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))]),
    "network-attached-device": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(node_label_selector(REGION_KEY, REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "unsuccessful-allocation-network-attached-device": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        node=node(NODE2, REGION2)),
    "many-network-attached-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 4))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
                slice_with_one_device(SLICE1, NODE_SELECTION_ALL, POOL2, DRIVER_A),
                slice_with_one_device(SLICE1, node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH), POOL3, DRIVER_A),
                slice_with_one_device(SLICE1, LOCAL1, POOL4, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation({"nodeSelectorTerms": [{
            "matchExpressions": [{"key": REGION_KEY, "operator": "In", "values": [REGION1]},
                                 {"key": PLANET_KEY, "operator": "In", "values": [PLANET_VALUE_EARTH]}],
            "matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [NODE1]}]}]},
            result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1),
            result(REQ0, DRIVER_A, POOL3, DEVICE1), result(REQ0, DRIVER_A, POOL4, DEVICE1))]),
    "local-and-network-attached-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
                slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    "several-different-drivers": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ0, CLASS_B)],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    "already-allocated-devices": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1), device_id(DRIVER_A, POOL1, DEVICE2)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "admin-access-disabled": Case(
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    "admin-access-enabled": Case(
        features=features(admin_access=True),
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1), device_id(DRIVER_A, POOL1, DEVICE2)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
})


INT_ATTRIBUTE = f"{DRIVER_A}/numa"
VERSION_ATTRIBUTE = f"{DRIVER_A}/driverVersion"
STRING_ATTRIBUTE = f"{DRIVER_A}/stringAttribute"
BOOL_ATTRIBUTE = f"{DRIVER_A}/boolAttribute"
NON_EXISTENT_ATTRIBUTE = f"{DRIVER_A}/NonExistentAttribute"
ALL_FOUR = {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 1},
            "stringAttribute": {"string": "stringAttributeValue"}, "boolAttribute": {"bool": True}}


def _selectors(c: dict[str, Any], *expressions: str, mode: str | None = None) -> dict[str, Any]:
    fields: dict[str, Any] = {"selectors": [selector(e) for e in expressions]}
    if mode:
        fields["allocationMode"] = mode
    return with_exactly(c, **fields)


def _with_class_selector(c: dict[str, Any], expression: str) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c["spec"]["selectors"][0]["cel"]["expression"] = expression
    return c


def _two_devices(attribute: str, first: Any, second: Any) -> dict[str, Any]:
    return slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, {attribute: first}),
                  device(DEVICE2, None, {attribute: second}))


CASES.update({
    "with-constraint": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                      constraints=[match_attribute(INT_ATTRIBUTE), match_attribute(VERSION_ATTRIBUTE),
                                   match_attribute(STRING_ATTRIBUTE), match_attribute(BOOL_ATTRIBUTE)])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, ALL_FOUR), device(DEVICE2, None, ALL_FOUR))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "with-constraint-non-existent-attribute": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A, match_attribute(NON_EXISTENT_ATTRIBUTE))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1)),
    "with-constraint-not-matching-int-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match_attribute(INT_ATTRIBUTE)])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_two_devices("numa", {"int": 1}, {"int": 2})], node=node(NODE1, REGION1)),
    "with-constraint-not-matching-int-attribute-all-devices": Case(
        claims=[with_exactly(claim(CLAIM0, request(REQ0, CLASS_A, 0), constraints=[match_attribute(INT_ATTRIBUTE)]),
                             allocationMode="All")],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_two_devices("numa", {"int": 1}, {"int": 2})], node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
              "would not be satisfied"),
    "with-constraint-not-matching-string-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match_attribute(STRING_ATTRIBUTE)])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_two_devices("stringAttribute", {"string": "stringAttributeValue"},
                             {"string": "stringAttributeValue2"})], node=node(NODE1, REGION1)),
    "with-constraint-not-matching-bool-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match_attribute(BOOL_ATTRIBUTE)])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_two_devices("boolAttribute", {"bool": True}, {"bool": False})], node=node(NODE1, REGION1)),
    "with-constraint-not-matching-version-attribute": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), constraints=[match_attribute(VERSION_ATTRIBUTE)])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_two_devices("driverVersion", {"version": "1.0.0"}, {"version": "2.0.0"})],
        node=node(NODE1, REGION1)),
    "with-constraint-for-request": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                      constraints=[match_attribute(VERSION_ATTRIBUTE, REQ0)])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_two_devices("driverVersion", {"version": "1.0.0"}, {"version": "2.0.0"})],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "with-constraint-for-request-retry": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1),
                      constraints=[match_attribute(VERSION_ATTRIBUTE, REQ0), match_attribute(STRING_ATTRIBUTE)])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       device(DEVICE1, None, {"driverVersion": {"version": "1.0.0"}, "stringAttribute": {"string": "a"}}),
                       device(DEVICE2, None, {"driverVersion": {"version": "2.0.0"}, "stringAttribute": {"string": "b"}}),
                       device(DEVICE3, None, {"driverVersion": {"version": "3.0.0"}, "stringAttribute": {"string": "b"}}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "with-class-device-config": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           config=[config_entry("FromClass", [REQ0], DRIVER_A, "classAttribute")])]),
    "with-class-device-config-with-multiple-request-and-configs": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_B, 1))],
        classes=[class_with_config(CLASS_A, DRIVER_A, "classAttribute-A"),
                 class_with_config(CLASS_B, DRIVER_B, "classAttribute-B")],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2),
                slice_with_one_device(SLICE2, NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE0), result(REQ1, DRIVER_A, POOL1, DEVICE1),
                           result(REQ2, DRIVER_B, POOL1, DEVICE1),
                           config=[config_entry("FromClass", [REQ0, REQ1], DRIVER_A, "classAttribute-A"),
                                   config_entry("FromClass", [REQ2], DRIVER_B, "classAttribute-B")])]),
    "claim-with-device-config": Case(
        claims=[claim_with_device_config(CLAIM0, REQ0, CLASS_A, DRIVER_A, "deviceAttribute")],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           config=[config_entry("FromClaim", None, DRIVER_A, "deviceAttribute")])]),
    "unknown-selector": Case(
        claims=[with_exactly(claim_with_request(CLAIM0, REQ0, CLASS_A), selectors=[{}])],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="CEL expression empty (unsupported selector type?)"),
    "unknown-allocation-mode": Case(
        claims=[with_exactly(claim_with_request(CLAIM0, REQ0, CLASS_A), allocationMode="future-mode")],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="unsupported count mode future-mode"),
    "unknown-constraint": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A, {})],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="empty constraint (unsupported constraint type?)"),
    "invalid-CEL-one-device": Case(
        claims=[_selectors(claim_with_request(CLAIM0, REQ0, CLASS_A), "noSuchVar")],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="undeclared reference"),
    "invalid-CEL-one-device-class": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[_with_class_selector(device_class(CLASS_A, DRIVER_A), "noSuchVar")],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="undeclared reference"),
    "invalid-CEL-all-devices": Case(
        claims=[_selectors(claim_with_request(CLAIM0, REQ0, CLASS_A), "noSuchVar", mode="All")],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1), error="undeclared reference"),
    "too-many-devices-single-request": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[device_class(CLASS_A, DRIVER_A)],
        error="exceeds the claim limit"),
    "many-devices-okay": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32))], classes=[device_class(CLASS_A, DRIVER_A)]),
    "too-many-devices-total": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 33)], node=node(NODE1, REGION1),
        error="exceeds the claim limit"),
    "all-devices-invalid-CEL": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))], classes=[device_class(CLASS_A, DRIVER_A)],
        error="exceeds the claim limit"),
})


PL = features(prioritized_list=True)


def _mem(quantity: str) -> dict[str, Any]:
    return selector(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{quantity}")) >= 0')


def _req(name: str, cls: str, count: int, *selectors: dict[str, Any]) -> dict[str, Any]:
    return request(name, cls, count, *selectors)


def _version_device(name: str, memory: str, version: str) -> dict[str, Any]:
    return device(name, {"memory": memory}, {"driverVersion": {"version": version}})


CASES.update({
    "prioritized-list-first-unavailable": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 1),
                                                            sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-non-available": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 2),
                                                            sub_request(SUB_REQ1, CLASS_A, 2)))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
                slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)], node=node(NODE1, REGION1)),
    "prioritized-list-device-config": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1),
                                                            sub_request(SUB_REQ1, CLASS_B, 2)),
                      config=[device_claim_config([REQ0_SUB_REQ0], device_configuration(DRIVER_A, "foo")),
                              device_claim_config([REQ0_SUB_REQ1], device_configuration(DRIVER_B, "bar"))])],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE1),
                           result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE2),
                           config=[config_entry("FromClaim", [REQ0_SUB_REQ1], DRIVER_B, "bar")])]),
    "prioritized-list-class-config": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 2),
                                                            sub_request(SUB_REQ1, CLASS_B, 2)))],
        classes=[class_with_config(CLASS_A, DRIVER_A, "foo"), class_with_config(CLASS_B, DRIVER_B, "bar")],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2)),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE3))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE1),
                           result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE2),
                           config=[config_entry("FromClass", [REQ0_SUB_REQ1], DRIVER_B, "bar")])]),
    "prioritized-list-subrequests-with-expressions": Case(
        features=PL,
        claims=[claim(CLAIM0, _req(REQ0, CLASS_A, 1, _mem("1Gi")),
                      request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 1, _mem("4Gi")),
                                                    sub_request(SUB_REQ1, CLASS_A, 2, _mem("2Gi"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "2Gi"}),
                       device(DEVICE2, {"memory": "2Gi"}), device(DEVICE3, {"memory": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE3), result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE1),
                           result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": Case(
        features=PL,
        claims=[claim(CLAIM0, _req(REQ0, CLASS_A, 1, _mem("8Gi")),
                      request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 1, _mem("2Gi")),
                                                    sub_request(SUB_REQ1, CLASS_A, 1, _mem("1Gi"))),
                      constraints=[match_attribute(VERSION_ATTRIBUTE, REQ0, REQ1)])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _version_device(DEVICE1, "8Gi", "1.0.0")),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, _version_device(DEVICE2, "2Gi", "2.0.0"),
                       _version_device(DEVICE3, "1Gi", "1.0.0"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1_SUB_REQ1, DRIVER_A, POOL2, DEVICE3))]),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": Case(
        features=PL,
        claims=[claim(CLAIM0, _req(REQ0, CLASS_A, 1, _mem("8Gi")),
                      request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 1, _mem("2Gi")),
                                                    sub_request(SUB_REQ1, CLASS_A, 1, _mem("1Gi"))),
                      constraints=[match_attribute(VERSION_ATTRIBUTE, REQ0, REQ1_SUB_REQ0)])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _version_device(DEVICE1, "8Gi", "1.0.0")),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, _version_device(DEVICE2, "2Gi", "2.0.0"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1_SUB_REQ1, DRIVER_A, POOL2, DEVICE2))]),
    "prioritized-list-subrequests-with-allocation-mode-all": Case(
        features=PL,
        claims=[_first_sub_all(claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_A, 1))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "prioritized-list-allocation-mode-all-multiple-requests": Case(
        features=PL,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
            REQ1, sub_request(SUB_REQ0, CLASS_A, 0, mode="All"), sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "prioritized-list-disabled": Case(
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"),
    "prioritized-list-multi-request": Case(
        features=PL,
        claims=[claim(CLAIM0, _req(REQ1, CLASS_A, 1, _mem("8Gi")),
                      request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1, _mem("8Gi")),
                                                    sub_request(SUB_REQ1, CLASS_A, 1, _mem("4Gi"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE1), result(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE2))]),
    "prioritized-list-with-backtracking": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1, _mem("8Gi")),
                                                            sub_request(SUB_REQ1, CLASS_A, 1, _mem("4Gi"))),
                      _req(REQ1, CLASS_A, 1, _mem("8Gi")))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-too-many-in-first-subrequest": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 500),
                                                            sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
})


PD = features(partitionable_devices=True)
PD_PL = features(partitionable_devices=True, prioritized_list=True)


def cdev(name: str, *consumption: tuple[str, dict[str, str]], from_counters: bool = True,
         node_selection: Any = None, **fields: Any) -> dict[str, Any]:
    """A device consuming counters (upstream ``device(name, fromCounters, nil).withDeviceCounterConsumption``)."""
    return device(name, consumes=[counter_consumption(cs, counters) for cs, counters in consumption],
                  capacity_from_counters=from_counters, node_selection=node_selection, **fields)


def counters_slice(name: str, node_selection: Any, pool: Any, driver: str,
                   *sets: tuple[str, dict[str, str]]) -> dict[str, Any]:
    return slice_(name, node_selection, pool, driver, counter_sets=[counter_set(n, c) for n, c in sets])


POOL1_OF_2 = resource_pool(POOL1, 2)
POOL2_OF_2 = resource_pool(POOL2, 2)

CASES.update({
    "partitionable-devices-single-device": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}), from_counters=False)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "partitionable-devices-prioritized-list": Case(
        features=PD_PL,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
            REQ1, sub_request(SUB_REQ0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1, _mem("4Gi"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "6Gi"})), cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi"}))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "partitionable-devices-multiple-devices": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "6Gi"})), cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi"}))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "partitionable-devices-multiple-capacity-pools": Case(
        features=PD_PL,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
            REQ1, sub_request(SUB_REQ0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1, _mem("4Gi"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}), (COUNTER_SET2, {"cpus": "4"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "6Gi"}), (COUNTER_SET2, {"cpus": "6"})),
                       cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi"}), (COUNTER_SET2, {"cpus": "4"}))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}),
                               (COUNTER_SET2, {"cpus": "8"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "partitionable-devices-multiple-counters": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi", "cpus": "6"}),
                            (COUNTER_SET2, {"cpus": "4", "memory": "2Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "6Gi", "cpus": "4"}),
                            (COUNTER_SET2, {"cpus": "6", "memory": "6Gi"})),
                       cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi", "cpus": "4"}),
                            (COUNTER_SET2, {"cpus": "4", "memory": "4Gi"}))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
                               (COUNTER_SET2, {"cpus": "12", "memory": "18Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "partitionable-devices-multiple-pools": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"cpus": "6", "memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"cpus": "4", "memory": "6Gi"})),
                       cdev(DEVICE3, (COUNTER_SET1, {"cpus": "4", "memory": "4Gi"}))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"cpus": "8", "memory": "18Gi"})),
                slice_(SLICE3, NODE1, POOL2_OF_2, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"cpus": "6", "memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"cpus": "1", "memory": "7Gi"})),
                       cdev(DEVICE3, (COUNTER_SET1, {"cpus": "1", "memory": "7Gi"}))),
                counters_slice(SLICE4, NODE1, POOL2_OF_2, DRIVER_A, (COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE2), device_id(DRIVER_A, POOL1, DEVICE3),
                   device_id(DRIVER_A, POOL2, DEVICE1)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL2, DEVICE2), result(REQ1, DRIVER_A, POOL2, DEVICE3))]),
    "partitionable-devices-unused-counters-in-counter-set": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "5Gi"}), from_counters=False),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "4Gi"}), from_counters=False),
                       cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi"}), from_counters=False)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi", "unused": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ0, DRIVER_A, POOL1, DEVICE3))]),
    "partitionable-devices-no-capacity-available": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "16Gi"}))),
                counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE2)], node=node(NODE1, REGION1)),
    "partitionable-devices-overallocated-capacity-pool": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "20Gi"}))),
                counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE2)], node=node(NODE1, REGION1)),
    "partitionable-devices-disabled-device-consumes-counters": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}), from_counters=False)),
                counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}))],
        node=node(NODE1, REGION1)),
    "partitionable-devices-disabled-other-device-do-not-consume-counters": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}), from_counters=False), device(DEVICE2)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    "partitionable-devices-disabled-per-device-node-selection": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1, DRIVER_A, device(DEVICE2, node_selection=NODE1))],
        node=node(NODE1, REGION1)),
    "partitionable-devices-per-device-node-selection-nodename": Case(
        features=PD_PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1, _mem("4Gi"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}), node_selection=NODE1),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "6Gi"}), node_selection=NODE2)),
                counters_slice(SLICE2, NODE_SELECTION_PER_DEVICE, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "partitionable-devices-per-device-node-selection-node-selector": Case(
        features=PD_PL, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}),
                            node_selection=node_label_selector(REGION_KEY, REGION1))),
                counters_slice(SLICE2, NODE_SELECTION_PER_DEVICE, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(node_label_selector(REGION_KEY, REGION1), result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": Case(
        features=PD_PL, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3), request(REQ1, CLASS_B, 3))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}),
                            node_selection=node_label_selector(REGION_KEY, REGION1)),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "4Gi"}), node_selection=NODE1),
                       cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi"}), node_selection=NODE_SELECTION_ALL)),
                counters_slice(SLICE2, NODE_SELECTION_PER_DEVICE, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "18Gi"})),
                slice_(SLICE3, NODE1, POOL2_OF_2, DRIVER_B, cdev(DEVICE1, (COUNTER_SET2, {"memory": "4Gi"})),
                       cdev(DEVICE2, (COUNTER_SET2, {"memory": "4Gi"})), cdev(DEVICE3, (COUNTER_SET2, {"memory": "4Gi"}))),
                counters_slice(SLICE4, NODE1, POOL2_OF_2, DRIVER_B, (COUNTER_SET2, {"memory": "12Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2),
                           result(REQ0, DRIVER_A, POOL1, DEVICE3), result(REQ1, DRIVER_B, POOL2, DEVICE1),
                           result(REQ1, DRIVER_B, POOL2, DEVICE2), result(REQ1, DRIVER_B, POOL2, DEVICE3))]),
})


TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOLERATION_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
DT = features(device_taints=True)


def _tainted(*per_device: list[dict[str, Any]]) -> dict[str, Any]:
    return slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                  *(device(f"device-{i + 1}", taints=t) for i, t in enumerate(per_device)))


def _gen(name: str, generation: str, **extra: Any) -> dict[str, Any]:
    attrs_ = {"generation": {"string": generation}}
    attrs_.update({k: {"bool": v} for k, v in extra.items()})
    return device(name, None, attrs_)


def _gen_sub(name: str, generation: str) -> dict[str, Any]:
    return sub_request(name, CLASS_A, 0, selector(f'device.attributes["{DRIVER_A}"].generation == "{generation}"'),
                       mode="All")


_V6_OR_V5 = claim(CLAIM0, request_with_prioritized_list(REQ0, _gen_sub(SUB_REQ0, "v6"), _gen_sub(SUB_REQ1, "v5")))

CASES.update({
    "tainted-two-devices": Case(
        features=DT, claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_tainted([TAINT_NO_SCHEDULE], [TAINT_NO_EXECUTE])], node=node(NODE1, REGION1)),
    "tainted-one-device-two-taints": Case(
        features=DT, claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_tainted([TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE])], node=node(NODE1, REGION1)),
    "tainted-two-devices-tolerated": Case(
        features=DT, claims=[with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_EXECUTE)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE], [TAINT_NO_EXECUTE])],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE))]),
    "tainted-two-devices-prioritized-list-tolerated": Case(
        features=features(device_taints=True, prioritized_list=True),
        claims=[claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1),
            sub_request(SUB_REQ1, CLASS_A, 1, tolerations=(TOLERATION_NO_EXECUTE,))))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE], [TAINT_NO_EXECUTE])],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE))]),
    "tainted-no-effect": Case(
        features=DT, claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_tainted([TAINT_NONE])], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "tainted-one-device-two-taints-both-tolerated": Case(
        features=DT,
        claims=[with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE])],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, False, TOLERATION_NO_SCHEDULE,
                                          TOLERATION_NO_EXECUTE))]),
    "tainted-disabled": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_tainted([TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE])], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "tainted-prioritized-list": Case(
        features=features(device_taints=True, prioritized_list=True),
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 1),
                                                            sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_tainted([TAINT_NO_SCHEDULE])], node=node(NODE1, REGION1)),
    "tainted-prioritized-list-disabled": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 1),
                                                            sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[_tainted([TAINT_NO_SCHEDULE])], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "tainted-admin-access": Case(
        features=features(device_taints=True, admin_access=True),
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1), device_id(DRIVER_A, POOL1, DEVICE2)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE])], node=node(NODE1, REGION1)),
    "tainted-admin-access-disabled": Case(
        features=features(admin_access=True),
        claims=[_admin(claim_with_request(CLAIM0, REQ0, CLASS_A))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE1), device_id(DRIVER_A, POOL1, DEVICE2)],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE])], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, True))]),
    "tainted-all-devices-single": Case(
        features=DT, claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE])], node=node(NODE1, REGION1)),
    "tainted-all-devices-single-disabled": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[_tainted([TAINT_NO_SCHEDULE])], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-allocation-mode-all": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 0, mode="All"),
                                                            sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE2)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-allocation-mode-all-with-selectors": Case(
        features=PL, claims=[_V6_OR_V5], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _gen(DEVICE1, "v5"))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": Case(
        features=PL, claims=[_V6_OR_V5], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _gen(DEVICE1, "v5")),
                slice_(SLICE2, NODE1, POOL2, DRIVER_A, _gen(DEVICE1, "v5"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1),
                           result(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE1))]),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": Case(
        features=PL, claims=[_V6_OR_V5], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _gen(DEVICE1, "v5")),
                slice_(SLICE2, NODE2, POOL2, DRIVER_A, _gen(DEVICE1, "v5"), _gen(DEVICE2, "v6"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": Case(
        features=PL, claims=[_V6_OR_V5],
        classes=[_with_class_selector(device_class(CLASS_A, DRIVER_A),
                                      f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected')],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _gen(DEVICE1, "v6", selected=False),
                       _gen(DEVICE2, "v5", selected=False), _gen(DEVICE3, "v5", selected=True))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE3))]),
    "max-number-devices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 32)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, *multiple_results(REQ0, DRIVER_A, POOL1, 32, 0))]),
    "partitionable-devices-with-attribute-selector": Case(
        features=PD,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2),
                      request(REQ1, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].special')))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       *(device(f"device-{n}", None, {"special": {"bool": n == 1}},
                                consumes=[counter_consumption(COUNTER_SET1, {f"cpu{n}": "1"}),
                                          counter_consumption(COUNTER_SET2, {"mem": "10Gi"})]) for n in (1, 2, 3))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A,
                               (COUNTER_SET1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}), (COUNTER_SET2, {"mem": "30Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2), result(REQ0, DRIVER_A, POOL1, DEVICE3),
                           result(REQ1, DRIVER_A, POOL1, DEVICE1))]),
    "prioritized-list-max-allocation-limit-request": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 32),
                                                            sub_request(SUB_REQ1, CLASS_A, 16)),
                      request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 32),
                                                    sub_request(SUB_REQ1, CLASS_A, 16)))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 64)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, *multiple_results(REQ0_SUB_REQ1, DRIVER_A, POOL1, 16, 0),
                           *multiple_results(REQ1_SUB_REQ1, DRIVER_A, POOL1, 16, 16))],
        invocations=75),
    "prioritized-list-max-allocation-allocation-mode-all": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 0, mode="All"),
                                                            sub_request(SUB_REQ1, CLASS_A, 2)),
                      request(REQ1, CLASS_B, 2))],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 31),
                slice_with_multiple_devices(SLICE2, NODE1, POOL2, DRIVER_B, 2)],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, "device-0"),
                           result(REQ0_SUB_REQ1, DRIVER_A, POOL1, "device-1"), result(REQ1, DRIVER_B, POOL2, "device-0"),
                           result(REQ1, DRIVER_B, POOL2, "device-1"))],
        invocations=42),
})


BC = features(device_binding_and_status=True)
PD_BC = features(partitionable_devices=True, device_binding_and_status=True)
TAINT_KEY1 = {"key": "key1", "value": "value1", "effect": "NoSchedule"}
TOLERATION_NO_SCHEDULE_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}


def _bc(name: str, ready: str, failed: str, **fields: Any) -> dict[str, Any]:
    return device(name, binding_conditions=[ready], binding_failure_conditions=[failed], **fields)


def _bc_result(req: str, dev: str, ready: str | None, failed: str | None, *tolerations: dict[str, Any]) -> dict[str, Any]:
    return result(req, DRIVER_A, POOL1, dev, False, *tolerations, binding_conditions=[ready] if ready else None,
                  binding_failure_conditions=[failed] if failed else None)


def _mem_counters(counter_set_: str, memory: str) -> list[dict[str, Any]]:
    return [counter_consumption(counter_set_, {"memory": memory})]


CASES.update({
    "device-binding-conditions": Case(
        features=BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _bc(DEVICE1, "IsPrepare", "BindingFailed"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))]),
    "binding-conditions-multiple-devices": Case(
        features=BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _bc(DEVICE1, "IsPrepare", "BindingFailed"),
                       _bc(DEVICE2, "IsPrepare2", "BindingFailed2"), _bc(DEVICE3, "IsPrepare3", "BindingFailed3"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                           _bc_result(REQ0, DEVICE2, "IsPrepare2", "BindingFailed2"),
                           _bc_result(REQ1, DEVICE3, "IsPrepare3", "BindingFailed3"))]),
    "binding-conditions-with-and-without": Case(
        features=BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), _bc(DEVICE2, "IsPrepare", "BindingFailed"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1),
                           _bc_result(REQ1, DEVICE2, "IsPrepare", "BindingFailed"))]),
    "binding-conditions-without-feature-gate": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _bc(DEVICE1, "IsPrepare", "BindingFailed"))],
        node=node(NODE1, REGION1)),
    "node-restriction": Case(
        features=BC, claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH), POOL1, DRIVER_A,
                       device(DEVICE1, binds_to_node=True))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "partitionable-devices-with-binding-conditions": Case(
        features=PD_BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       _bc(DEVICE1, "IsPrepare", "BindingFailed", consumes=_mem_counters(COUNTER_SET1, "4Gi"),
                           capacity_from_counters=True)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))]),
    "partitionable-devices-with-binding-conditions-multiple": Case(
        features=PD_BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       _bc(DEVICE1, "IsPrepare", "BindingFailed", consumes=_mem_counters(COUNTER_SET1, "4Gi")),
                       _bc(DEVICE2, "IsPrepare2", "BindingFailed2", consumes=_mem_counters(COUNTER_SET1, "4Gi"))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                           _bc_result(REQ0, DEVICE2, "IsPrepare2", "BindingFailed2"))]),
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": Case(
        features=PD_BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 3))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       _bc(DEVICE1, "IsPrepare", "BindingFailed", consumes=_mem_counters(COUNTER_SET1, "2Gi")),
                       device(DEVICE2, consumes=_mem_counters(COUNTER_SET1, "2Gi")),
                       _bc(DEVICE3, "IsReady", "BindingTimeout", consumes=_mem_counters(COUNTER_SET1, "4Gi"))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                           _bc_result(REQ0, DEVICE2, None, None), _bc_result(REQ0, DEVICE3, "IsReady", "BindingTimeout"))]),
    "partitionable-devices-with-binding-conditions-multi-slices": Case(
        features=PD_BC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE4, NODE1, resource_pool(POOL1, 4), DRIVER_A,
                       _bc(DEVICE1, "IsPrepare", "BindingFailed", consumes=_mem_counters(COUNTER_SET1, "4Gi"))),
                counters_slice(SLICE3, NODE1, resource_pool(POOL1, 4), DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, resource_pool(POOL1, 4), DRIVER_A,
                       device(DEVICE2, consumes=_mem_counters(COUNTER_SET2, "4Gi"))),
                counters_slice(SLICE1, NODE1, resource_pool(POOL1, 4), DRIVER_A, (COUNTER_SET2, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE2, None, None),
                           _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))]),
    "partitionable-devices-with-binding-conditions-and-taints": Case(
        features=features(partitionable_devices=True, device_binding_and_status=True, device_taints=True),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _bc(DEVICE1, "IsPrepare", "BindingFailed", consumes=_mem_counters(COUNTER_SET1, "4Gi"),
                           taints=[TAINT_KEY1]),
                       device(DEVICE2, consumes=_mem_counters(COUNTER_SET1, "4Gi"))),
                counters_slice(SLICE2, NODE1, POOL1, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1)),
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": Case(
        features=features(partitionable_devices=True, device_binding_and_status=True, device_taints=True),
        claims=[with_tolerations(claim(CLAIM0, request(REQ0, CLASS_A, 2)), TOLERATION_NO_SCHEDULE_KEY1)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       _bc(DEVICE1, "IsPrepare", "BindingFailed", consumes=_mem_counters(COUNTER_SET1, "4Gi"),
                           taints=[TAINT_KEY1]),
                       device(DEVICE2, consumes=_mem_counters(COUNTER_SET1, "4Gi"))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, _bc_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed", TOLERATION_NO_SCHEDULE_KEY1),
                           _bc_result(REQ0, DEVICE2, None, None, TOLERATION_NO_SCHEDULE_KEY1))]),
})



def _gen_slice(name: str, node_name: str, dev: str, generation: int) -> dict[str, Any]:
    return slice_(name, node_name, resource_pool(POOL1, 2, generation=generation), DRIVER_A, device(dev))


def _typed(name: str, type_: str, **fields: Any) -> dict[str, Any]:
    return device(name, None, {"type": {"string": type_}}, **fields)


def _type_is(type_: str) -> dict[str, Any]:
    return selector(f'device.attributes["{DRIVER_A}"].type == "{type_}"')


CASES.update({
    "allocation-mode-all-with-multi-host-resource-pool": Case(
        claims=[claim(CLAIM0, all_device_request(REQ0, CLASS_A))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE2, NODE2, POOL1_OF_2, DRIVER_A, device(DEVICE2))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "multi-host-resource-pool-with-stale-slice-for-current-node": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_gen_slice(SLICE1, NODE1, DEVICE1, 1), _gen_slice(SLICE2, NODE2, DEVICE2, 2)],
        node=node(NODE1, REGION1)),
    "multi-host-resource-pool-complete-update-from-node-1-to-node-2": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_gen_slice(SLICE1, NODE1, DEVICE1, 1), _gen_slice(SLICE1, NODE1, DEVICE2, 1),
                _gen_slice(SLICE2, NODE2, DEVICE1, 2), _gen_slice(SLICE2, NODE2, DEVICE2, 2)],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "multi-host-resource-pool-complete-update-from-node-2-to-node-1": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_gen_slice(SLICE1, NODE2, DEVICE1, 1), _gen_slice(SLICE1, NODE2, DEVICE2, 1),
                _gen_slice(SLICE2, NODE1, DEVICE1, 2), _gen_slice(SLICE2, NODE1, DEVICE2, 2)],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_gen_slice(SLICE1, NODE1, DEVICE1, 1), _gen_slice(SLICE1, NODE1, DEVICE2, 1),
                _gen_slice(SLICE2, NODE2, DEVICE1, 2)],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[_gen_slice(SLICE1, NODE2, DEVICE1, 1), _gen_slice(SLICE1, NODE2, DEVICE2, 1),
                _gen_slice(SLICE2, NODE1, DEVICE1, 2)],
        node=node(NODE1, REGION1)),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, resource_pool(POOL1, 4), DRIVER_A, device(DEVICE1)),
                counters_slice(SLICE2, NODE1, resource_pool(POOL1, 4), DRIVER_A, (COUNTER_SET1, {})),
                slice_(SLICE3, NODE1, resource_pool(POOL1, 4), DRIVER_A, device(DEVICE2)),
                counters_slice(SLICE4, NODE1, resource_pool(POOL1, 4), DRIVER_A, (COUNTER_SET1, {}))],
        node=node(NODE1, REGION1), error="invalid resource pools were encountered"),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, cdev(DEVICE1, (COUNTER_SET2, {}), from_counters=False)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {}))],
        node=node(NODE1, REGION1), error="invalid resource pools were encountered"),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "8Gi"}), from_counters=False)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"other-memory": "8Gi"}))],
        node=node(NODE1, REGION1), error="invalid resource pools were encountered"),
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "8Gi"}), from_counters=False)),
                counters_slice(SLICE2, NODE1, POOL2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1), error="invalid resource pools were encountered"),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": Case(
        features=PD_PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(
            REQ0, sub_request(SUB_REQ0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1, _mem("2Gi"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[counters_slice(SLICE1, NODE1, resource_pool(POOL1, 3), DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, resource_pool(POOL1, 3), DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "6Gi"})),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "2Gi"}))),
                slice_(SLICE3, NODE2, resource_pool(POOL1, 3), DRIVER_A,
                       cdev(DEVICE3, (COUNTER_SET1, {"memory": "6Gi"}), from_counters=False))],
        allocated=[device_id(DRIVER_A, POOL1, DEVICE3)], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))]),
    "partitionable-devices-validation-error-on-non-targeting-slice": Case(
        features=PD, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[counters_slice(SLICE1, NODE1, resource_pool(POOL1, 3), DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"})),
                slice_(SLICE2, NODE1, resource_pool(POOL1, 3), DRIVER_A, cdev(DEVICE1, (COUNTER_SET1, {"memory": "6Gi"}))),
                slice_(SLICE3, NODE2, resource_pool(POOL1, 3), DRIVER_A,
                       cdev(DEVICE3, (COUNTER_SET2, {"memory": "6Gi"}), from_counters=False))],
        node=node(NODE1, REGION1), error="invalid resource pools were encountered"),
    "different-resourceslices-in-pool-can-target-different-nodes": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE2, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE2))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE3, NODE1, resource_pool(POOL2, 1), DRIVER_A, device(DEVICE2))],
        node=node(NODE1, REGION1), expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL2, DEVICE2))]),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE3, NODE1, resource_pool(POOL2, 1), DRIVER_A, device(DEVICE2))],
        allocated=[device_id(DRIVER_A, POOL2, DEVICE2)], node=node(NODE1, REGION1),
        error="invalid resource pools were encountered"),
    "no-allocation-from-incomplete-pools": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1))], node=node(NODE1, REGION1)),
    "check-combinations-within-single-request-single-pool-single-slice": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2), device(DEVICE3), device(DEVICE4))],
        node=node(NODE1, REGION1), invocations=16),
    "check-combinations-within-single-request-single-pool-multiple-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1), device(DEVICE2)),
                slice_(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE3), device(DEVICE4))],
        node=node(NODE1, REGION1), invocations=16),
    "check-combinations-within-single-request-multiple-pools-multiple-slices": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE1)),
                slice_(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, device(DEVICE2)),
                slice_(SLICE3, NODE1, POOL2, DRIVER_A, device(DEVICE3), device(DEVICE4))],
        node=node(NODE1, REGION1), invocations=16),
    "check-combinations-within-single-request-many-pools": Case(
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 5))], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1)), slice_(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2)),
                slice_(SLICE3, NODE1, POOL3, DRIVER_A, device(DEVICE3)), slice_(SLICE4, NODE1, POOL4, DRIVER_A, device(DEVICE4))],
        node=node(NODE1, REGION1), invocations=16),
    "check-combinations-with-backtracking": Case(
        claims=[claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, _type_is("X")))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _typed(DEVICE1, "X"), _typed(DEVICE2, "Y"), _typed(DEVICE3, "Y"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE2), result(REQ1, DRIVER_A, POOL1, DEVICE3),
                           result(REQ2, DRIVER_A, POOL1, DEVICE1))],
        invocations=12),
    "check-combinations-with-backtracking-across-slices-and-pools": Case(
        features=BC,
        claims=[claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, _type_is("X")))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A, _typed(DEVICE1, "X")),
                slice_(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, _typed(DEVICE2, "Y")),
                slice_(SLICE3, NODE1, POOL2, DRIVER_A, _typed(DEVICE3, "Y", binding_conditions=["IsPrepare"],
                                                             binding_failure_conditions=[]))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE2),
                           result(REQ1, DRIVER_A, POOL2, DEVICE3, binding_conditions=["IsPrepare"]),
                           result(REQ2, DRIVER_A, POOL1, DEVICE1))],
        invocations=12),
    "check-combinations-with-prioritized-list": Case(
        features=PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 3, _type_is("Y")),
                                                            sub_request(SUB_REQ1, CLASS_A, 2)),
                      request_with_prioritized_list(REQ2, sub_request(SUB_REQ0, CLASS_A, 2),
                                                    sub_request(SUB_REQ1, CLASS_A, 1, _type_is("X"))))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _typed(DEVICE1, "X"), _typed(DEVICE2, "Y"), _typed(DEVICE3, "Y"))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2),
                           result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3), result(REQ2_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))],
        invocations=26),
})


CC = features(consumable_capacity=True)
CC_PL = features(consumable_capacity=True, prioritized_list=True)
MULTI_CLASS_A = class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)
DEDICATED_CLASS_A = class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, False)
DEVICE1_POOL1 = device_id(DRIVER_A, POOL1, DEVICE1)


def _capacity_claim(name: str, *quantities: str | None, names: tuple[str, ...] = (REQ0, REQ1, REQ2)) -> dict[str, Any]:
    return claim(name, *(with_capacity_request(request(n, CLASS_A, 1), q) for n, q in zip(names, quantities)))


def _shared(dev: str, capacity: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    return device(dev, capacity, allow_multiple=True, **fields)


CASES.update({
    "consumable-capacity-disabled-feature": Case(
        features=BC, claims=[_capacity_claim(CLAIM0, "1")], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"),
    "consumable-capacity-disabled-feature-with-prioritized-list": Case(
        features=features(prioritized_list=True, device_binding_and_status=True),
        claims=[claim(CLAIM0, request_with_prioritized_list(
            REQ0, with_capacity_request(sub_request(SUB_REQ0, CLASS_A, 1), "1"),
            with_capacity_request(sub_request(SUB_REQ1, CLASS_A, 1), "1")))],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        error="claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is "
              "disabled"),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1")], classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY1: "1"}))], node=node(NODE1, REGION1),
        expect=[]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": Case(
        features=CC, claims=[claim(CLAIM0, with_capacity_request(all_device_request(REQ0, CLASS_A), "1"))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY1: "1"}))], node=node(NODE1, REGION1),
        expect=[]),
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[MULTI_CLASS_A], slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "1"}),
                       _shared(DEVICE2, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"}))]),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[MULTI_CLASS_A], slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "2"}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1"), _capacity_claim(CLAIM1, "1")],
        classes=[MULTI_CLASS_A], slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "2"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"})),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}))]),
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("4")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _shared(DEVICE1, policies={CAPACITY0: policy_valid_values("0", "1")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "0"})),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "0"}))]),
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _shared(DEVICE1, policies={CAPACITY0: policy_valid_values("0", "1")}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1"), _capacity_claim(CLAIM1, "1")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("4")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "3")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("4")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "4"}))]),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "2")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _shared(DEVICE1, policies={CAPACITY0: policy_valid_values("1", "4", "2")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "2")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _shared(DEVICE1, policies={CAPACITY0: policy_valid_values("1", "3", "3")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "3"}))]),
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1"), _capacity_claim(CLAIM1, "2")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "6")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("10")}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "2")], allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "2"}},
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("4")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "2")], allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "2"}},
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("2")}),
                       _shared(DEVICE2, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"}))]),
    "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
        features=CC,
        claims=[claim(CLAIM0, with_capacity_request(request(REQ0, CLASS_A, 1), "2"),
                      with_capacity_request(request(REQ1, CLASS_A, 1), "2"),
                      constraints=[match_attribute(STRING_ATTRIBUTE)]),
                _capacity_claim(CLAIM1, "2")],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _shared(DEVICE2, None, attributes={"stringAttribute": {"string": "stringAttributeValue1"}},
                               policies={CAPACITY0: policy_range("2")}),
                       _shared(DEVICE1, None, attributes={"stringAttribute": {"string": "stringAttributeValue2"}},
                               policies={CAPACITY0: policy_range("4")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                           shared_result(REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"})),
                allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
        features=CC_PL,
        claims=[claim(CLAIM0, request_with_prioritized_list(
            REQ0, with_capacity_request(sub_request(SUB_REQ0, CLASS_A, 1), "4"),
            with_capacity_request(sub_request(SUB_REQ1, CLASS_A, 1), "2"), sub_request(SUB_REQ1, CLASS_A, 1)))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "2")], allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "2"}},
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": Case(
        features=CC, claims=[claim(CLAIM0, with_capacity_request(all_device_request(REQ0, CLASS_A), "2"))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "2"}), _shared(DEVICE2))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": Case(
        features=CC, claims=[claim(CLAIM0, with_capacity_request(all_device_request(REQ0, CLASS_A), "2"))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "2"}),
                       _shared(DEVICE2, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}))]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": Case(
        features=CC,
        claims=[claim(CLAIM0, with_capacity_request(request(REQ0, CLASS_A, 1), "1"),
                      with_capacity_request(all_device_request(REQ1, CLASS_A), "1"))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "2"}),
                       _shared(DEVICE2, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}),
                           shared_result(REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}),
                           shared_result(REQ1, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"}))]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": Case(
        features=CC, allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "1"}},
        claims=[claim(CLAIM0, with_capacity_request(all_device_request(REQ0, CLASS_A), "1"))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "2"}),
                       _shared(DEVICE2, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1"}),
                           shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"}))]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": Case(
        features=CC,
        claims=[claim(CLAIM0, with_capacity_request(request(REQ0, CLASS_A, 1), "1"),
                      with_capacity_request(all_device_request(REQ1, CLASS_A), "1"))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "1"}),
                       _shared(DEVICE2, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": Case(
        features=CC, allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "1"}},
        claims=[claim(CLAIM0, with_capacity_request(all_device_request(REQ0, CLASS_A), "1"))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "1"}),
                       _shared(DEVICE2, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "1"}))]),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1")], classes=[DEDICATED_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: "1"}))], node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1"), _capacity_claim(CLAIM1, "1")], classes=[DEDICATED_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1), expect=[]),
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1")], classes=[DEDICATED_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, {CAPACITY0: "1"}))], node=node(NODE1, REGION1),
        expect=[]),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": Case(
        features=CC, allocated=[DEVICE1_POOL1], claims=[_capacity_claim(CLAIM0, "1")], classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1), expect=[]),
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": Case(
        features=CC, claims=[_capacity_claim(CLAIM0, "1")], allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "1"}},
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1), expect=[]),
    "allow-multiple-allocations-with-partitionable-device": Case(
        features=features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
            REQ1, sub_request(SUB_REQ0, CLASS_A, 1, _mem("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1, _mem("4Gi"))))],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {"memory": "4Gi"}), allow_multiple=True),
                       cdev(DEVICE2, (COUNTER_SET1, {"memory": "6Gi"}), allow_multiple=True),
                       cdev(DEVICE3, (COUNTER_SET1, {"memory": "4Gi"}), allow_multiple=True)),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {"memory": "8Gi"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {"memory": "4Gi"}),
                           shared_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3, {"memory": "4Gi"}))]),
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": Case(
        features=features(partitionable_devices=True, consumable_capacity=True),
        claims=[claim(CLAIM0, with_capacity_request(
            request(REQ0, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].mode == "b"')), "1"))],
        allocated_shared=[(DEVICE1_POOL1, FIXED_SHARE_ID)], allocated_capacity={DEVICE1_POOL1: {CAPACITY0: "1"}},
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       cdev(DEVICE1, (COUNTER_SET1, {CAPACITY0: "1"}), allow_multiple=True,
                            attributes={"mode": {"string": "a"}}),
                       cdev(DEVICE2, (COUNTER_SET1, {CAPACITY0: "1"}), allow_multiple=True,
                            attributes={"mode": {"string": "b"}})),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {CAPACITY0: "1"}))],
        node=node(NODE1, REGION1), expect=[]),
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": Case(
        features=features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
        claims=[claim(CLAIM0, with_capacity_request(request(REQ0, CLASS_A, 1), "1"),
                      with_capacity_request(request(REQ2, CLASS_A, 1), "2"),
                      request_with_prioritized_list(
                          REQ1,
                          with_capacity_request(sub_request(SUB_REQ0, CLASS_A, 1, selector(
                              f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("4")) >= 0')), "1"),
                          with_capacity_request(sub_request(SUB_REQ1, CLASS_A, 1, selector(
                              f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("2")) >= 0')), "1")))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       *(cdev(name, (COUNTER_SET1, {CAPACITY0: c0}), (COUNTER_SET2, {CAPACITY1: "4"}), allow_multiple=True,
                              policies={CAPACITY1: policy_range("4")})
                         for name, c0 in ((DEVICE1, "2"), (DEVICE2, "4"), (DEVICE3, "2")))),
                counters_slice(SLICE2, NODE1, POOL1_OF_2, DRIVER_A, (COUNTER_SET1, {CAPACITY0: "4"}),
                               (COUNTER_SET2, {CAPACITY1: "8"}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1", CAPACITY1: "2"}),
                           shared_result(REQ2, DRIVER_A, POOL1, DEVICE3, {CAPACITY0: "2", CAPACITY1: "2"}),
                           shared_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "1", CAPACITY1: "2"}))]),
})



def _bool_selector_sub(name: str) -> dict[str, Any]:
    return sub_request(name, CLASS_A, 1, selector(f'device.attributes["{DRIVER_A}"].boolAttribute'))


CASES.update({
    "with-distinct-constraints": Case(
        features=CC,
        claims=[claim(CLAIM0, *(request(r, CLASS_A, 1) for r in (REQ0, REQ1, REQ2, REQ3)),
                      constraints=[distinct_attribute(BOOL_ATTRIBUTE, REQ0, REQ1),
                                   distinct_attribute(VERSION_ATTRIBUTE, REQ0, REQ1, REQ2),
                                   distinct_attribute(INT_ATTRIBUTE, REQ0, REQ1, REQ2, REQ3)])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, *(
            _shared(name, None, attributes={"driverVersion": {"version": version}, "numa": {"int": numa},
                                            "boolAttribute": {"bool": flag}})
            for name, version, numa, flag in ((DEVICE1, "1.0.0", 0, True), (DEVICE2, "1.0.1", 1, False),
                                              (DEVICE3, "1.0.2", 2, True), (DEVICE4, "1.0.0", 3, True))))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1), shared_result(REQ1, DRIVER_A, POOL1, DEVICE2),
                           shared_result(REQ2, DRIVER_A, POOL1, DEVICE3), shared_result(REQ3, DRIVER_A, POOL1, DEVICE4))]),
    "with-distinct-constraints-attribute-not-set": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[distinct_attribute(BOOL_ATTRIBUTE, REQ0)])],
        classes=[device_class(CLASS_A, DRIVER_A)], slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1))],
        node=node(NODE1, REGION1), expect=[]),
    "with-distinct-constraints-unknown-type-attribute": Case(
        features=CC, claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[distinct_attribute(BOOL_ATTRIBUTE, REQ0)])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, None, attributes={"boolAttribute": {}}))],
        node=node(NODE1, REGION1), error="unsupported attribute value"),
    "with-distinct-constraints-with-subrequests": Case(
        features=CC_PL,
        claims=[claim(CLAIM0, *(request_with_prioritized_list(r, _bool_selector_sub(SUB_REQ0),
                                                              sub_request(SUB_REQ1, CLASS_A, 1))
                                for r in (REQ0, REQ1, REQ2)),
                      constraints=[distinct_attribute(BOOL_ATTRIBUTE, REQ0, REQ1)])],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A, _shared(DEVICE1, None, attributes={"boolAttribute": {"bool": True}}),
                       _shared(DEVICE2, None, attributes={"boolAttribute": {"bool": False}}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0_SUB_REQ0, DRIVER_A, POOL1, DEVICE1),
                           shared_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2),
                           shared_result(REQ2_SUB_REQ0, DRIVER_A, POOL1, DEVICE1))]),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": Case(
        features=CC,
        claims=[claim(CLAIM0, with_capacity_request(request(REQ0, CLASS_A, 1), "1"),
                      with_capacity_request(request(REQ1, CLASS_A, 1), "1"),
                      constraints=[distinct_attribute(STRING_ATTRIBUTE)])],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1, DRIVER_A,
                       _shared(DEVICE1, None, attributes={"stringAttribute": {"string": "stringAttributeValue"}},
                               policies={CAPACITY0: policy_range("2")}))],
        node=node(NODE1, REGION1), expect=[]),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": Case(
        features=CC,
        claims=[claim(CLAIM0, with_capacity_request(request(REQ0, CLASS_A, 1), "2"),
                      with_capacity_request(request(REQ1, CLASS_A, 1), "2"),
                      constraints=[distinct_attribute(STRING_ATTRIBUTE)])],
        classes=[MULTI_CLASS_A],
        slices=[slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       _shared(DEVICE1, None, attributes={"stringAttribute": {"string": "stringAttributeValue1"}},
                               policies={CAPACITY0: policy_range("4")})),
                slice_(SLICE1, NODE1, POOL1_OF_2, DRIVER_A,
                       _shared(DEVICE2, None, attributes={"stringAttribute": {"string": "stringAttributeValue2"}},
                               policies={CAPACITY0: policy_range("4")}))],
        node=node(NODE1, REGION1),
        expect=[allocation(LOCAL1, shared_result(REQ0, DRIVER_A, POOL1, DEVICE1, {CAPACITY0: "2"}),
                           shared_result(REQ1, DRIVER_A, POOL1, DEVICE2, {CAPACITY0: "2"}))]),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator(name: str) -> None:
    tc = CASES[name]
    claims = copy.deepcopy(tc.claims)
    slices = copy.deepcopy(tc.slices)
    classes = copy.deepcopy(tc.classes)
    state = AllocatedState(
        allocated_devices=frozenset(tc.allocated), allocated_shared_device_ids=frozenset(tc.allocated_shared),
        aggregated_capacity={d: {k: Fraction(parse_quantity(v)) for k, v in c.items()}
                             for d, c in tc.allocated_capacity.items()})
    allocator = Allocator(claims, state, classes, slices, tc.features)
    target = tc.node if tc.node is not None else node(NODE1, REGION1)
    if tc.error is not None:
        with pytest.raises(AllocatorError) as excinfo:
            allocator.allocate(target)
        assert tc.error in str(excinfo.value)
        return
    results = allocator.allocate(target) or []
    assert sorted(_normalize(r) for r in results) == sorted(_normalize(r) for r in tc.expect or [])
    # the inputs are not modified
    assert (claims, slices, classes) == (tc.claims, tc.slices, tc.classes)
    if tc.invocations is not None:
        assert allocator.num_allocate_one_invocations == tc.invocations
