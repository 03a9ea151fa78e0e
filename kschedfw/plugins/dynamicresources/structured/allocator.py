"""The structured-parameters allocator (upstream ``structured/internal/incubating``, the variant
kube-scheduler v1.36 uses with its default feature gates; see :mod:`.features`).

``Allocator(claims, allocated_state, classes, slices, features)`` is built once per scheduling
cycle; ``allocate(node)`` is called per node and returns one AllocationResult dict per claim,
``None`` when the claims do not fit on the node, or raises :class:`AllocatorError` when the input
is broken (unknown class, CEL error...), with upstream's messages.

The search is upstream's: claims in order, requests in order, ``firstAvailable`` subrequests in
order, and for each wanted device the pools, slices and devices in :mod:`.pools` order, each
request trying combinations rather than permutations; the first complete solution wins.
"""

from __future__ import annotations

import functools
import time
import uuid
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping

from kschedfw.plugins.dynamicresources import cel
from kschedfw.plugins.dynamicresources.structured.capacity import Amount, consumed_from_request, fits
from kschedfw.plugins.dynamicresources.structured.constraints import (DistinctAttributeConstraint,
                                                                      MatchAttributeConstraint)
from kschedfw.plugins.dynamicresources.structured.features import Features
from kschedfw.plugins.dynamicresources.structured.pools import Pool, gather_pools, node_matches
from kschedfw.plugins.dynamicresources.structured.requests import (ALL, EXACT_COUNT, Request, exact_request,
                                                                   sub_requests, taint_prevents_allocation)
from kschedfw.plugins.dynamicresources.structured.slices import Device, Slice
from kschedfw.plugins.dynamicresources.structured.types import (ALLOCATION_RESULTS_MAX_SIZE, AllocatedState,
                                                                AllocationTimeout, AllocatorError, DeviceID,
                                                                FailedAllocationOnNode)

Constraint = MatchAttributeConstraint | DistinctAttributeConstraint
RequestKey = tuple[int, int, int]  # claim index, request index, subrequest index


@functools.cache
def _shared_cel_cache() -> cel.Cache:
    """The compile cache of allocators given none: made on first use, so the CEL engine is only
    imported when a selector is compiled."""
    return cel.Cache()


class _MaxSizeExceeded(Exception):
    """More devices than one claim's allocation may hold (upstream errAllocationResultMaxSizeExceeded)."""


def claim_ref(claim: Mapping[str, Any]) -> str:
    """``namespace/name`` as klog.KObj prints a claim (just the name without namespace)."""
    meta = claim.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else name


class _RequestData:
    __slots__ = ("request", "parent", "cls", "num_devices", "selected_sub_request", "all_devices")

    def __init__(self, request: Request, parent: Request | None) -> None:
        self.request = request
        self.parent = parent
        self.cls: Mapping[str, Any] | None = None
        self.num_devices = 0
        self.selected_sub_request = 0
        self.all_devices: list[_Candidate] = []

    def request_name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent else self.request.name


class _Candidate:
    __slots__ = ("id", "device", "slice", "pool")

    def __init__(self, device_id: DeviceID, device: Device, slice_: Slice, pool: Pool) -> None:
        self.id, self.device, self.slice, self.pool = device_id, device, slice_, pool


class _DeviceResult:
    __slots__ = ("request", "parent", "id", "device", "slice", "admin_access", "share_id", "consumed")

    def __init__(self, request: str, parent: str, device_id: DeviceID, device: Device, slice_: Slice,
                 admin_access: bool, share_id: str, consumed: dict[str, Amount]) -> None:
        self.request, self.parent, self.id = request, parent, device_id
        self.device, self.slice, self.admin_access = device, slice_, admin_access
        self.share_id, self.consumed = share_id, consumed

    def request_name(self) -> str:
        return f"{self.parent}/{self.request}" if self.parent else self.request


class Allocator:
    """Allocates a pod's unallocated claims; reusable for every node of one scheduling cycle.

    ``slices`` are ResourceSlice dicts or :class:`~.slices.Slice` objects; passing the same
    ``Slice`` objects to the allocators of later cycles reuses their parsed form and CEL results.
    """

    def __init__(self, claims_to_allocate: list[Mapping[str, Any]], allocated_state: AllocatedState,
                 classes: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
                 slices: Iterable[Mapping[str, Any] | Slice], features: Features | None = None,
                 cel_cache: cel.Cache | None = None) -> None:
        self.claims = list(claims_to_allocate)
        self.allocated_state = allocated_state
        if isinstance(classes, Mapping):
            self.classes = dict(classes)
        else:
            self.classes = {(c.get("metadata") or {}).get("name", ""): c for c in classes}
        self.features = features or Features()
        self.cel_cache = cel_cache or _shared_cel_cache()
        self.all_slices = [s if isinstance(s, Slice) else Slice(s) for s in slices]
        self.slices_on_node: dict[str, list[Slice]] = {}
        self.slices_shared: list[Slice] = []
        for s in self.all_slices:
            if not s.node_name or s.shared_counters:
                self.slices_shared.append(s)
            else:
                self.slices_on_node.setdefault(s.node_name, []).append(s)
        # counters left in each pool by allocated devices; computed on first use
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.num_allocate_one_invocations = 0

    def allocate(self, node: Any, claims: list[Mapping[str, Any]] | None = None,
                 deadline: float | None = None) -> list[dict[str, Any]] | None:
        """Allocation results for ``node`` (``.name``, ``.labels``), or None if the claims do not fit;
        ``claims`` stand in for :attr:`claims` on this node (a claim whose requests depend on it).
        Past ``deadline`` (a ``time.monotonic()`` value) the search stops with
        :class:`AllocationTimeout`, as upstream's allocator stops when its context is done."""
        return _Allocation(self, node, claims, deadline).run()


class _Allocation:
    """State of one ``allocate`` call."""

    def __init__(self, allocator: Allocator, node: Any, claims: list[Mapping[str, Any]] | None = None,
                 deadline: float | None = None) -> None:
        self.a = allocator
        self.deadline = deadline
        self.features = allocator.features
        self.node = node
        self.claims = allocator.claims if claims is None else claims
        self.request_data: dict[RequestKey, _RequestData] = {}
        self.constraints: list[list[Constraint]] = []
        self.matches: dict[tuple[DeviceID, RequestKey], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        # capacity consumed by the allocations of this attempt on shareable devices
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.result: list[list[_DeviceResult]] = [[] for _ in self.claims]
        self.pools: list[Pool] = []

    # --- setup ---------------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]] | None:
        a = self.a
        slices_for_node = a.slices_on_node.get(self.node.name, []) + a.slices_shared
        self.pools = gather_pools(slices_for_node, self.node, self.features, a.all_slices)
        for claim_index, claim in enumerate(self.claims):
            self._prepare_claim(claim_index, claim)
        try:
            done = self._allocate_one((0, 0, 0, 0), False, (0, 0, 0))
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(p.is_invalid for p in self.pools):
                raise FailedAllocationOnNode("invalid resource pools were encountered")
            return None
        return [self._claim_result(i, claim) for i, claim in enumerate(self.claims)]

    def _prepare_claim(self, claim_index: int, claim: Mapping[str, Any]) -> None:
        devices = (claim.get("spec") or {}).get("devices") or {}
        ref = claim_ref(claim)
        min_devices = 0
        for request_index, request in enumerate(devices.get("requests") or ()):
            subs = sub_requests(request)
            if not self.features.prioritized_list and subs:
                raise AllocatorError(f"claim {ref}, request {request.get('name', '')}: has subrequests, "
                                     "but the DRAPrioritizedList feature is disabled")
            if not self.features.consumable_capacity:
                if (request.get("exactly") or {}).get("capacity") is not None:
                    raise AllocatorError(f"claim {ref}, request {request.get('name', '')}: has capacity requests, "
                                         "but the DRAConsumableCapacity feature is disabled")
                for sub in subs:
                    if sub.capacity is not None:
                        raise AllocatorError(f"claim {ref}, subrequest {sub.name}: has capacity requests, "
                                             "but the DRAConsumableCapacity feature is disabled")
            if subs:
                parent = exact_request(request)
                parent.name = request.get("name", "")
                fewest = None
                for sub_index, sub in enumerate(subs):
                    data = self._validate_request(sub, parent, (claim_index, request_index, sub_index))
                    self.request_data[(claim_index, request_index, sub_index)] = data
                    fewest = data.num_devices if fewest is None else min(fewest, data.num_devices)
                min_devices += fewest or 0
            else:
                data = self._validate_request(exact_request(request), None, (claim_index, request_index, 0))
                self.request_data[(claim_index, request_index, 0)] = data
                min_devices += data.num_devices
        if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocatorError(f"claim {ref}: number of requested devices {min_devices} exceeds the claim "
                                 f"limit of {ALLOCATION_RESULTS_MAX_SIZE}")
        constraints: list[Constraint] = []
        for i, c in enumerate(devices.get("constraints") or ()):
            names = list(c.get("requests") or ())
            if c.get("matchAttribute"):
                constraints.append(MatchAttributeConstraint(names, c["matchAttribute"]))
            elif c.get("distinctAttribute"):
                constraints.append(DistinctAttributeConstraint(names, c["distinctAttribute"]))
            else:
                raise AllocatorError(f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
        self.constraints.append(constraints)

    def _validate_request(self, request: Request, parent: Request | None, key: RequestKey) -> _RequestData:
        ref = claim_ref(self.claims[key[0]])
        data = _RequestData(request, parent)
        for i, selector in enumerate(request.selectors):
            if not (selector.get("cel") or None):
                raise AllocatorError(f"claim {ref}, request {request.name}, selector #{i}: CEL expression empty "
                                     "(unsupported selector type?)")
        if not self.features.admin_access and request.has_admin_access:
            raise AllocatorError(f"claim {ref}, request {request.name}: admin access is requested, "
                                 "but the feature is disabled")
        if not request.class_name:
            raise AllocatorError(f"claim {ref}, request {request.name}: missing device class name "
                                 "(unsupported request type?)")
        cls = self.a.classes.get(request.class_name)
        if cls is None:
            raise AllocatorError(f"claim {ref}, request {request.name}: could not retrieve device class "
                                 f'{request.class_name}: deviceclass.resource.k8s.io "{request.class_name}" '
                                 "not found")
        data.cls = cls
        if request.allocation_mode == EXACT_COUNT:
            data.num_devices = request.count
        elif request.allocation_mode == ALL:
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocatorError(f"claim {ref}, request {request.name}: asks for all devices, but resource "
                                         f"pool {pool.pool_id} is currently being updated")
                if pool.is_invalid:
                    raise AllocatorError(f"claim {ref}, request {request.name}: asks for all devices, but resource "
                                         f"pool {pool.pool_id} is currently invalid")
                for s in pool.slices_targeting_node:
                    for device in s.devices:
                        if not self._is_selectable(key, data, s, device):
                            continue
                        device_id = DeviceID(s.driver, s.pool, device.name)
                        if self.features.consumable_capacity and not self._capacity_fits(request, device_id, device):
                            continue
                        data.all_devices.append(_Candidate(device_id, device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocatorError(f"claim {ref}, request {request.name}: unsupported count mode "
                                 f"{request.allocation_mode}")
        return data

    # --- search --------------------------------------------------------------------------------

    def _allocate_one(self, r: tuple[int, int, int, int], allocate_sub_request: bool,
                      start: tuple[int, int, int]) -> bool:
        self.a.num_allocate_one_invocations += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")
        claim_index, request_index, sub_index, device_index = r
        if claim_index >= len(self.claims):
            return True
        claim = self.claims[claim_index]
        requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
        if request_index >= len(requests):
            try:
                return self._allocate_one((claim_index + 1, 0, 0, 0), False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False

        key = (claim_index, request_index, sub_index)
        data = self.request_data[key]
        if not allocate_sub_request and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (claim_index, request_index, sub) in self.request_data:
                try:
                    success = self._allocate_one((claim_index, request_index, sub, device_index), True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    data.selected_sub_request = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False

        request = data.request
        do_all = request.allocation_mode == ALL
        if do_all and not data.all_devices:
            return False
        if device_index >= data.num_devices:
            return self._allocate_one((claim_index, request_index + 1, 0, 0), False, (0, 0, 0))
        if len(self.result[claim_index]) + data.num_devices - device_index > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()

        if do_all:
            candidate = data.all_devices[device_index]
            ok, undo = self._allocate_device(r, candidate, True)
            if not ok:
                return False
            try:
                done = self._allocate_one((claim_index, request_index, sub_index, device_index + 1),
                                          allocate_sub_request, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        pools = self.pools
        for pool_index in range(start[0], len(pools)):
            pool = pools[pool_index]
            if pool.is_incomplete or pool.is_invalid:
                continue
            slice_start = start[1] if pool_index == start[0] else 0
            for slice_index in range(slice_start, len(pool.slices_targeting_node)):
                s = pool.slices_targeting_node[slice_index]
                device_start = start[2] if pool_index == start[0] and slice_index == start[1] else 0
                for dev_index in range(device_start, len(s.devices)):
                    device = s.devices[dev_index]
                    device_id = DeviceID(pool.driver, pool.pool, device.name)
                    if request.admin_access:
                        if claim_index in self.allocating.get(device_id, ()):
                            continue
                    elif self._device_in_use(device_id):
                        continue
                    if not self._is_selectable(key, data, s, device):
                        continue
                    if self.features.consumable_capacity and not self._capacity_fits(request, device_id, device):
                        continue
                    ok, undo = self._allocate_device(r, _Candidate(device_id, device, s, pool), False)
                    if not ok:
                        continue
                    try:
                        done = self._allocate_one((claim_index, request_index, sub_index, device_index + 1),
                                                  allocate_sub_request, (pool_index, slice_index, dev_index + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _device_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated_state.allocated_devices or bool(self.allocating.get(device_id))

    def _capacity_fits(self, request: Request, device_id: DeviceID, device: Device) -> bool:
        """upstream CmpRequestOverCapacity; a request for a capacity the device lacks does not fit."""
        current = self.a.allocated_state.aggregated_capacity.get(device_id, {})
        if (request.capacity_requests is None and device.capacity_without_policy and not current
                and device_id not in self.allocating_capacity):
            return True  # each capacity is consumed whole, once: it fits
        try:
            return fits(current, request.capacity_requests, device.capacity, self.allocating_capacity.get(device_id, {}))
        except KeyError:
            return False

    def _device_capacity_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated_state.aggregated_capacity or device_id in self.allocating_capacity

    def _is_selectable(self, key: RequestKey, data: _RequestData, s: Slice, device: Device) -> bool:
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        device_id = DeviceID(s.driver, s.pool, device.name)
        cached = self.matches.get((device_id, key))
        if cached is not None:
            return cached
        match = True
        if data.cls is not None:
            match = self._selectors_match(key, device, data.cls, ((data.cls.get("spec") or {}).get("selectors") or ()))
        if match:
            match = self._selectors_match(key, device, None, data.request.selectors)
        if match and s.per_device_node_selection:
            match = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
        self.matches[(device_id, key)] = match
        return match

    def _selectors_match(self, key: RequestKey, device: Device, cls: Mapping[str, Any] | None,
                         selectors: Iterable[Mapping[str, Any]]) -> bool:
        owner = (f"class {(cls.get('metadata') or {}).get('name', '')}" if cls is not None
                 else f"claim {claim_ref(self.claims[key[0]])}")
        for i, selector in enumerate(selectors):
            expression = (selector.get("cel") or {}).get("expression", "")
            compiled = self.a.cel_cache.get_or_compile(expression)
            if compiled.error is not None:
                raise AllocatorError(f"{owner}: selector #{i}: CEL compile error: {compiled.error}")
            outcome = device.cel_results.get(expression)
            if outcome is None:
                try:
                    outcome = cel.device_matches(compiled, device.cel_data())
                except cel.CELRuntimeError as err:
                    outcome = str(err)
                device.cel_results[expression] = outcome
            if isinstance(outcome, str):
                raise AllocatorError(f"{owner}: selector #{i}: CEL runtime error: {outcome}")
            if not outcome:
                return False
        return True

    def _allocate_device(self, r: tuple[int, int, int, int], candidate: _Candidate,
                         must: bool) -> tuple[bool, Callable[[], None]]:
        claim_index = r[0]
        data = self.request_data[(r[0], r[1], r[2])]
        request = data.request
        device, device_id = candidate.device, candidate.id
        multiple = self.features.consumable_capacity and device.allow_multiple_allocations
        if not multiple and request.admin_access and claim_index in self.allocating.get(device_id, ()):
            return False, _noop
        if not request.admin_access and self._device_in_use(device_id):
            return False, _noop
        if not self.features.partitionable_devices and device.consumes_counters:
            return False, _noop
        # As upstream, counters taken here are not given back when a later check rejects the device.
        skip_counters = multiple and self._device_capacity_in_use(device_id)
        if not skip_counters and device.consumes_counters and not self._check_available_counters(candidate):
            return False, _noop
        if data.parent is None:
            base_name, sub_name, parent_name = request.name, "", ""
        else:
            base_name, sub_name, parent_name = data.parent.name, request.name, data.parent.name
        if self.features.device_taints and taint_prevents_allocation(device.taints, request):
            return False, _noop
        constraints = self.constraints[claim_index]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base_name, sub_name, device.attributes, device_id):
                if must:
                    raise AllocatorError(f"claim {claim_ref(self.claims[claim_index])}, request {request.name}: cannot "
                                         f"add device {device_id} because a claim constraint would not be satisfied")
                for earlier in constraints[:i]:
                    earlier.remove(base_name, sub_name)
                return False, _noop
        claims_using = self.allocating.setdefault(device_id, set())
        if not multiple:
            claims_using.add(claim_index)
        consumed: dict[str, Amount] = {}
        share_id = ""
        if self.features.consumable_capacity:
            if not self._capacity_fits(request, device_id, device):
                return False, _noop
            if multiple:
                consumed = consumed_from_request(request.capacity_requests, device.capacity)
                share_id = str(uuid.uuid4())
                allocating = self.allocating_capacity.setdefault(device_id, {})
                for name, (value, _) in consumed.items():
                    allocating[name] = allocating.get(name, Fraction(0)) + value
        results = self.result[claim_index]
        results.append(_DeviceResult(request.name, parent_name, device_id, device, candidate.slice,
                                     request.admin_access, share_id, consumed))
        before = len(results) - 1

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base_name, sub_name)
            self.allocating[device_id].discard(claim_index)
            if multiple:
                if consumed:
                    allocating = self.allocating_capacity.get(device_id)
                    if allocating is not None:
                        for name, (value, _) in consumed.items():
                            if name in allocating:
                                allocating[name] -= value
                        if all(v == 0 for v in allocating.values()):
                            del self.allocating_capacity[device_id]
            elif self.features.partitionable_devices and device.consumes_counters:
                self._release_counters(candidate)
            del results[before:]

        return True, undo

    # --- counters (partitionable devices) -----------------------------------------------------

    def _check_available_counters(self, candidate: _Candidate) -> bool:
        pool = candidate.pool
        available = self.a.available_counters.get(pool.pool)
        if available is None:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            state = self.a.allocated_state
            for s in pool.slices_targeting_node + pool.slices_not_targeting_node:
                for d in s.devices:
                    if not state.is_allocated(DeviceID(s.driver, s.pool, d.name)):
                        continue
                    for set_name, counters in d.consumes_counters:
                        counter_set = available.get(set_name, {})
                        for name, amount in counters.items():
                            if name in counter_set:
                                counter_set[name] -= amount
            self.a.available_counters[pool.pool] = available
        consumed = self.consumed_counters.setdefault(pool.pool, {})
        for set_name, counters in candidate.device.consumes_counters:
            consumed_set = consumed.setdefault(set_name, {})
            for name, amount in counters.items():
                consumed_set[name] = consumed_set.get(name, Fraction(0)) + amount
        for set_name, counters in available.items():
            consumed_set = consumed.get(set_name, {})
            for name, amount in counters.items():
                if amount < consumed_set.get(name, 0):
                    self._release_counters(candidate)
                    return False
        return True

    def _release_counters(self, candidate: _Candidate) -> None:
        consumed = self.consumed_counters.get(candidate.pool.pool, {})
        for set_name, counters in candidate.device.consumes_counters:
            consumed_set = consumed.setdefault(set_name, {})
            for name, amount in counters.items():
                consumed_set[name] = consumed_set.get(name, Fraction(0)) - amount

    # --- result --------------------------------------------------------------------------------

    def _claim_result(self, claim_index: int, claim: Mapping[str, Any]) -> dict[str, Any]:
        devices = (claim.get("spec") or {}).get("devices") or {}
        requests = list(devices.get("requests") or ())
        results = []
        for d in self.result[claim_index]:
            entry: dict[str, Any] = {"request": d.request_name(), "driver": d.id.driver, "pool": d.id.pool,
                                     "device": d.id.device}
            if d.admin_access:
                entry["adminAccess"] = True
            tolerations = _lookup_request(requests, d).tolerations
            if tolerations:
                entry["tolerations"] = [dict(t) for t in tolerations]
            if d.share_id:
                entry["shareID"] = d.share_id
            if d.consumed:
                entry["consumedCapacity"] = {name: text for name, (_, text) in d.consumed.items()}
            if self.features.device_binding_and_status:
                if d.device.binding_conditions:
                    entry["bindingConditions"] = list(d.device.binding_conditions)
                if d.device.binding_failure_conditions:
                    entry["bindingFailureConditions"] = list(d.device.binding_failure_conditions)
            results.append(entry)
        config: list[dict[str, Any]] = []
        class_configs: dict[str, tuple[int, int]] = {}
        for request_index in range(len(requests)):
            data = self.request_data[(claim_index, request_index, 0)]
            if data.parent is not None:
                data = self.request_data[(claim_index, request_index, data.selected_sub_request)]
            cls = data.cls
            if cls is None:
                continue
            class_name = (cls.get("metadata") or {}).get("name", "")
            if class_name in class_configs:
                start, end = class_configs[class_name]
                for i in range(start, end):
                    config[i]["requests"].append(data.request_name())
                continue
            start = len(config)
            for c in (cls.get("spec") or {}).get("config") or ():
                config.append({"source": "FromClass", "requests": [data.request_name()], **_device_configuration(c)})
            class_configs[class_name] = (start, len(config))
        for c in devices.get("config") or ():
            names = list(c.get("requests") or ())
            entry = {"source": "FromClaim", **({"requests": names} if names else {}), **_device_configuration(c)}
            if not names:
                config.append(entry)
                continue
            for request_index, request in enumerate(requests):
                if request.get("name") in names:
                    config.append(dict(entry))
                    continue
                data = self.request_data[(claim_index, request_index, 0)]
                if data.parent is None:
                    continue
                chosen = (request.get("firstAvailable") or ())[data.selected_sub_request]
                if f"{request.get('name', '')}/{chosen.get('name', '')}" in names:
                    config.append(dict(entry))
        out: dict[str, Any] = {"devices": {"results": results}}
        if config:
            out["devices"]["config"] = config
        selector = _node_selector(self.result[claim_index], self.node.name)
        if selector is not None:
            out["nodeSelector"] = selector
        return out


def _noop() -> None:
    return None


def _lookup_request(requests: list[Mapping[str, Any]], d: _DeviceResult) -> Request:
    name = d.parent or d.request
    for request in requests:
        if request.get("name") != name:
            continue
        if not d.parent:
            return exact_request(request)
        for sub in sub_requests(request):
            if sub.name == d.request:
                return sub
    return Request(d.request, None, sub_request=True)


def _device_configuration(config: Mapping[str, Any]) -> dict[str, Any]:
    """The DeviceConfiguration members of a class or claim config entry (today only ``opaque``)."""
    return {k: v for k, v in config.items() if k not in ("requests", "source")}


def _node_selector(results: list[_DeviceResult], node_name: str) -> dict[str, Any] | None:
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for d in results:
        if d.slice.per_device_node_selection:
            name, raw = d.device.node_name, d.device.raw.get("nodeSelector")
        else:
            name, raw = d.slice.node_name, (d.slice.raw.get("spec") or {}).get("nodeSelector")
        if name or d.device.binds_to_node:
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        if raw is not None:
            terms = raw.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise AllocatorError(f"create NodeSelector: unsupported ResourceSlice.NodeSelector with "
                                     f"{len(terms)} terms")
            if terms:
                _add_requirements(terms[0].get("matchFields") or (), fields)
                _add_requirements(terms[0].get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirements(new: Iterable[Mapping[str, Any]], into: list[dict[str, Any]]) -> None:
    for requirement in new:
        values = set(requirement.get("values") or ())
        if not any(r.get("key") == requirement.get("key") and r.get("operator") == requirement.get("operator")
                   and set(r.get("values") or ()) == values for r in into):
            into.append(dict(requirement))
