"""Why the allocator found no allocation on a node, request by request, for ``--explain``.

Upstream says only ``cannot allocate all claims``; this counts, for each request (and each
``firstAvailable`` sub-request) of the claims being allocated, the node's devices that its class
selects, that its own selectors select as well, and that are free, so the request that cannot be
met (and the selector that left too few devices) is named. It walks the same pools and uses the
same selector results as the allocation did, so it sees the devices the Filter call saw.
"""

from __future__ import annotations

from typing import Any

from kschedfw.plugins.dynamicresources.structured.allocator import Allocator, _Allocation, claim_ref
from kschedfw.plugins.dynamicresources.structured.constraints import lookup_attribute
from kschedfw.plugins.dynamicresources.structured.pools import gather_pools
from kschedfw.plugins.dynamicresources.structured.requests import ALL
from kschedfw.plugins.dynamicresources.structured.types import AllocatorError, DeviceID


def unsatisfied_requests(allocator: Allocator, node: Any, claims: list[Any] | None = None) -> list[str]:
    """One line per request that ``node`` cannot satisfy even alone; when each could be, one line
    saying they do not fit together (``claims`` as for ``Allocator.allocate``)."""
    attempt = _Allocation(allocator, node, claims)
    slices = allocator.slices_on_node.get(node.name, []) + allocator.slices_shared
    attempt.pools = gather_pools(slices, node, allocator.features, allocator.all_slices)
    try:
        for claim_index, claim in enumerate(attempt.claims):
            attempt._prepare_claim(claim_index, claim)
    except AllocatorError as exc:
        return [str(exc)]
    lines = []
    for key, data in attempt.request_data.items():
        request = data.request
        on_node = of_class = selected = free = 0
        try:
            for pool in attempt.pools:
                if pool.is_incomplete or pool.is_invalid:
                    continue
                for s in pool.slices_targeting_node:
                    for device in s.devices:
                        on_node += 1
                        cls = data.cls or {}
                        if not attempt._selectors_match(key, device, cls, (cls.get("spec") or {}).get("selectors") or ()):
                            continue
                        of_class += 1
                        if not attempt._is_selectable(key, data, s, device):
                            continue
                        selected += 1
                        if request.admin_access or not attempt._device_in_use(DeviceID(pool.driver, pool.pool, device.name)):
                            free += 1
        except AllocatorError as exc:
            lines.append(str(exc))
            continue
        needed = data.num_devices if request.allocation_mode != ALL else max(selected, 1)
        if free >= needed and not (request.allocation_mode == ALL and free < selected):
            continue
        selectors = " && ".join(f"`{(sel.get('cel') or {}).get('expression', '')}`" for sel in request.selectors)
        wants = "all devices" if request.allocation_mode == ALL else f"{needed} device(s)"
        lines.append(f"claim {claim_ref(attempt.claims[key[0]])}, request {data.request_name()}: wants {wants} "
                     f"of class {request.class_name}" + (f" matching {selectors}" if selectors else "")
                     + f"; the node has {on_node} device(s), {of_class} of the class, "
                     + (f"{selected} matching, " if selectors else "") + f"{free} free")
    if not lines:
        lines = blocking_constraints(allocator, attempt, node)
    if not lines:
        lines.append("each request alone has enough free devices; together (devices shared between "
                     "requests) they do not fit")
    return lines


def blocking_constraints(allocator: Allocator, attempt: _Allocation, node: Any) -> list[str]:
    """One line per claim constraint (``matchAttribute``, ``distinctAttribute``) without which
    the claims would fit on ``node`` (or, when no single one is to blame, each constraint of a
    claim that fits without all of them), naming its requests and attribute and the values the
    free devices of those requests have."""
    claims = list(attempt.claims)
    lines = []
    for claim_index, claim in enumerate(claims):
        constraints = list(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or ())
        if not constraints:
            continue
        every = set(range(len(constraints)))
        blockers = [i for i in every if _fits_without(allocator, node, claims, claim_index, {i})]
        if not blockers and _fits_without(allocator, node, claims, claim_index, every):
            blockers = sorted(every)
        for i in blockers:
            try:
                lines.append(_describe_constraint(attempt, claim_index, i, constraints[i]))
            except AllocatorError as exc:  # a selector that fails to evaluate
                lines.append(str(exc))
    return lines


def _fits_without(allocator: Allocator, node: Any, claims: list[Any], claim_index: int, dropped: set[int]) -> bool:
    claim = claims[claim_index]
    spec = claim.get("spec") or {}
    devices = spec.get("devices") or {}
    kept = [c for i, c in enumerate(devices.get("constraints") or ()) if i not in dropped]
    changed = {**claim, "spec": {**spec, "devices": {**devices, "constraints": kept}}}
    try:
        return _Allocation(allocator, node, [changed if i == claim_index else c for i, c in enumerate(claims)]
                           ).run() is not None
    except AllocatorError:
        return False


def _describe_constraint(attempt: _Allocation, claim_index: int, index: int, constraint: Any) -> str:
    """upstream's words (a claim constraint would not be satisfied; attribute not set) with the
    constraint's requests and attribute, and the values of the free devices they select."""
    kind = "matchAttribute" if constraint.get("matchAttribute") else "distinctAttribute"
    attribute = str(constraint.get(kind) or "")
    names = set(constraint.get("requests") or ())
    values: dict[str, list[str]] = {}
    unset: list[str] = []
    seen: set[DeviceID] = set()
    for key, data in attempt.request_data.items():
        if key[0] != claim_index:
            continue
        parent = data.parent.name if data.parent is not None else data.request.name
        if names and parent not in names and data.request_name() not in names:
            continue
        for pool in attempt.pools:
            if pool.is_incomplete or pool.is_invalid:
                continue
            for s in pool.slices_targeting_node:
                for device in s.devices:
                    device_id = DeviceID(pool.driver, pool.pool, device.name)
                    if device_id in seen or not attempt._is_selectable(key, data, s, device):
                        continue
                    if not data.request.admin_access and attempt._device_in_use(device_id):
                        continue
                    seen.add(device_id)
                    attr = lookup_attribute(device.attributes, device_id, attribute)
                    kinds = [k for k in ("string", "int", "bool", "version") if (attr or {}).get(k) is not None]
                    if not kinds:
                        unset.append(device.name)
                        continue
                    value = attr[kinds[0]]  # type: ignore[index]
                    shown = f'"{value}"' if kinds[0] in ("string", "version") else str(value).lower()
                    values.setdefault(f"{kinds[0]} {shown}", []).append(device.name)
    over = "requests " + ", ".join(sorted(names)) if names else "all requests"
    found = ", ".join(f"{value} ({', '.join(devices)})" for value, devices in values.items())
    text = (f"claim {claim_ref(attempt.claims[claim_index])}, constraint #{index} ({kind} {attribute}, {over}): "
            "a claim constraint would not be satisfied; the free devices these requests select have "
            + (f"values {found}" if found else "no value"))
    if unset:
        text += f"; attribute not set on {', '.join(unset)}"
    return text
