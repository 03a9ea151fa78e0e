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
        lines.append("each request alone has enough free devices; together (constraints, devices shared "
                     "between requests) they do not fit")
    return lines
