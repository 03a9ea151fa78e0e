"""The DRA ops of scheduler_perf: the test driver's ResourceSlices and claims allocated up front.

Upstream's harness (``test/integration/scheduler_perf/dra.go``) publishes, for ``createResourceDriver``,
one ResourceSlice per matching node, named after the node, its pool the node's, with
``maxClaimsPerNode`` devices ``instance-<i>`` (attributes model A100, family GPU, driverVersion
1.2.3, ``dra.example.com/numa`` = i; 1Gi of memory). ``allocResourceClaims`` allocates every
unallocated claim one at a time with the structured allocator, trying the nodes in a random order
and storing each allocation before the next claim, so later claims see the devices taken.
Here the order comes from a seeded generator (upstream's is unseeded), so a run is reproducible.
"""

from __future__ import annotations

import copy
import fnmatch
import random
from typing import Any, Iterable, Mapping

import attrs

from kschedfw.api import parse_object
from kschedfw.api.accessors import raw_of, status_of
from kschedfw.plugins.dynamicresources.manager import DRAManager
from kschedfw.plugins.dynamicresources.structured import Allocator, Features, Slice

__all__ = ["driver_slices", "matching_nodes", "allocate_claims", "AllocationFailed"]


class AllocationFailed(Exception):
    """A claim fits on no node (upstream: "Could not allocate claim i out of n")."""


def matching_nodes(pattern: str, names: Iterable[str]) -> list[str]:
    """Node names matching the glob ``pattern`` (Go ``filepath.Match``: ``*``, ``?``, ``[...]``), in
    the API server's list order (by name)."""
    return [n for n in sorted(names) if fnmatch.fnmatchcase(n, pattern)]


def driver_slice(driver: str, node_name: str, capacity: int) -> dict[str, Any]:
    """The manifest of the test driver's ResourceSlice for ``node_name`` (upstream resourceSlice)."""
    devices = [{"name": f"instance-{i}",
                "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                               "driverVersion": {"version": "1.2.3"},
                               "dra.example.com/numa": {"int": i}},
                "capacity": {"memory": {"value": "1Gi"}}} for i in range(capacity)]
    spec: dict[str, Any] = {"driver": driver, "nodeName": node_name,
                            "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1}}
    if devices:
        spec["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": node_name}, "spec": spec}


def driver_slices(driver: str, node_names: Iterable[str], capacity: int) -> list[Any]:
    return [parse_object(driver_slice(driver, name, capacity)) for name in node_names]


def allocator_features(gates: Mapping[str, bool]) -> Features:
    """The allocator features upstream's allocResourceClaims turns on from the gates (binding
    conditions are not among them): a gate the workload names, else v1.36's default."""
    defaults = Features()

    def gate(name: str, default: bool) -> bool:
        return bool(gates.get(name, default))

    return Features(prioritized_list=gate("DRAPrioritizedList", defaults.prioritized_list),
                    admin_access=gate("DRAAdminAccess", defaults.admin_access),
                    device_taints=gate("DRADeviceTaints", defaults.device_taints),
                    partitionable_devices=gate("DRAPartitionableDevices", defaults.partitionable_devices),
                    consumable_capacity=gate("DRAConsumableCapacity", defaults.consumable_capacity),
                    device_binding_and_status=False)


def allocate_claims(cluster: Any, namespace: str, gates: Mapping[str, bool], rng: random.Random) -> int:
    """Allocate the unallocated ResourceClaims of ``namespace`` (every namespace when empty) in the
    API server's list order; returns how many were allocated. Raises :class:`AllocationFailed`."""
    claims = sorted(cluster.list("ResourceClaim", namespace or None), key=lambda c: (c.namespace, c.name))
    nodes = sorted(cluster.list("Node"), key=lambda n: n.name)
    classes = [raw_of(c) for c in cluster.list("DeviceClass")]
    slices = [Slice(raw_of(s)) for s in cluster.list("ResourceSlice")]
    features = allocator_features(gates)
    manager = DRAManager()
    done = 0
    for i, listed in enumerate(claims):
        if status_of(listed).get("allocation") is not None:
            continue
        allocated = manager.allocated_state(cluster.list("ResourceClaim"))
        claim = raw_of(listed)
        allocator = Allocator([claim], allocated, classes, slices, features)
        rng.shuffle(nodes)
        for node in nodes:
            result = allocator.allocate(node)
            if result is not None:
                new = copy.deepcopy(claim)
                new["status"] = {**(new.get("status") or {}), "allocation": result[0]}
                cluster.update_resource_claim_status(attrs.evolve(listed, raw=new))
                done += 1
                break
        else:
            raise AllocationFailed(f"could not allocate claim {i} out of {len(claims)} "
                                   f"({listed.namespace}/{listed.name})")
    return done
