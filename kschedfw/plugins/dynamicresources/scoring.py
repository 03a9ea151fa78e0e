"""Score: the node whose allocation uses earlier ``firstAvailable`` subrequests wins (upstream
``computeScore``; DRAPrioritizedList is GA in v1.36)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from kschedfw.api.accessors import spec_of, status_of

# upstream resourceapi.FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8


class ScoreError(Exception):
    """Fewer allocations than claims that needed one (upstream returns this as an error)."""


def compute_score(claims: Iterable[Any], allocations: Sequence[Mapping[str, Any]]) -> int:
    """Per claim and ``firstAvailable`` request, ``8 - index`` of the subrequest that got devices;
    allocated claims count with their recorded allocation, the others with ``allocations`` in
    order."""
    score = 0
    next_allocation = 0
    for claim in claims:
        allocation = status_of(claim).get("allocation")
        if allocation is None:
            if next_allocation >= len(allocations):
                raise ScoreError(f"number of allocations {len(allocations)} is smaller than number of claims "
                                 "needing allocation")
            allocation = allocations[next_allocation]
            next_allocation += 1
        chosen = {str(r.get("request") or "") for r in (allocation.get("devices") or {}).get("results") or ()
                  if "/" in str(r.get("request") or "")}
        for request in (spec_of(claim).get("devices") or {}).get("requests") or ():
            if request.get("exactly") is not None:
                continue
            for index, sub in enumerate(request.get("firstAvailable") or ()):
                if f"{request.get('name', '')}/{sub.get('name', '')}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - index
    return score
