"""What each node holds after a run: its pods and cpu/memory requested against allocatable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kschedfw.simulation import SimulationResult

#: the resources the report draws bars for, in the cache's canonical units
RESOURCES = ("cpu", "memory")


def node_usage(result: "SimulationResult") -> list[dict[str, Any]]:
    """One entry per node in the scheduler's node order: ``{"node", "pods": [keys],
    "cpu": {"requested", "allocatable"}, "memory": {...}}`` (cpu in millicores, memory in bytes),
    from the scheduler's cache, which is what its plugins saw."""
    scheduler = result.scheduler
    scheduler.cache.update_snapshot()
    infos = next(iter(scheduler.frameworks.values())).handle.snapshot.node_infos() if scheduler.frameworks else []
    out = []
    for ni in infos:
        entry: dict[str, Any] = {"node": ni.name, "pods": sorted(p.key for p in ni.pods)}
        for resource in RESOURCES:
            entry[resource] = {"requested": ni.requested.get(resource, 0),
                               "allocatable": ni.allocatable.get(resource, 0)}
        out.append(entry)
    return out
