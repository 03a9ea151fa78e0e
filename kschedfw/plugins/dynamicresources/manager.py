"""What the plugin needs of the cluster's DRA objects across cycles (upstream ``dra_manager.go`` and
``allocateddevices.go``): the devices allocated claims use, the allocations this scheduler made in
Reserve that PreBind has not written yet (in flight), and ResourceSlices in the allocator's parsed
form.

One manager serves every profile of a scheduler (upstream's SharedDRAManager): it is kept per
lister, so two profiles never hand out one device while both allocations are in flight.
"""

from __future__ import annotations

import weakref
from fractions import Fraction
from typing import Any, Iterable, Mapping

from kschedfw.api.accessors import raw_of, status_of, uid_of
from kschedfw.plugins.dynamicresources.structured import AllocatedState, DeviceID, Slice
from kschedfw.plugins.dynamicresources.structured.capacity import amount

_Devices = tuple[tuple[DeviceID, ...], tuple[tuple[DeviceID, str], ...], tuple[tuple[DeviceID, str, Fraction], ...]]
_NO_DEVICES: _Devices = ((), (), ())


def allocated_devices(allocation: Mapping[str, Any] | None) -> _Devices:
    """(dedicated devices, (device, share ID) of shared ones, capacity they consume) of one
    allocation; admin access does not take a device (upstream foreachAllocatedDevice)."""
    if not allocation:
        return _NO_DEVICES
    dedicated: list[DeviceID] = []
    shared: list[tuple[DeviceID, str]] = []
    consumed: list[tuple[DeviceID, str, Fraction]] = []
    for result in (allocation.get("devices") or {}).get("results") or ():
        if result.get("adminAccess"):
            continue
        device = DeviceID(result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
        if result.get("shareID") is not None:
            shared.append((device, str(result["shareID"])))
            for name, quantity in (result.get("consumedCapacity") or {}).items():
                consumed.append((device, name, amount(quantity)[0]))
            continue
        dedicated.append(device)
    return tuple(dedicated), tuple(shared), tuple(consumed)


class DRAManager:
    """Allocated devices, in-flight allocations and parsed slices of one cluster."""

    def __init__(self) -> None:
        # claim uid -> the claim as Reserve assumed it, allocation included (upstream inFlightAllocations)
        self.in_flight: dict[str, dict[str, Any]] = {}
        # claim uid -> (listed object, its devices): recomputed only when the object changes
        self._claim_devices: dict[str, tuple[Any, _Devices]] = {}
        # slice uid or name -> (listed object, parsed Slice): the Slice keeps its CEL results
        self._slices: dict[str, tuple[Any, Slice]] = {}

    # ------------------------------------------------------------------ claims
    def pending_allocation(self, claim_uid: str) -> Mapping[str, Any] | None:
        claim = self.in_flight.get(claim_uid)
        return None if claim is None else status_of(claim).get("allocation")

    def signal_pending_allocation(self, claim_uid: str, claim: dict[str, Any]) -> None:
        self.in_flight[claim_uid] = claim

    def remove_pending_allocation(self, claim_uid: str) -> bool:
        return self.in_flight.pop(claim_uid, None) is not None

    def allocated_state(self, claims: Iterable[Any]) -> AllocatedState:
        """Devices taken by the listed claims' allocations and by in-flight ones (upstream
        GatherAllocatedState)."""
        dedicated: set[DeviceID] = set()
        shared: set[tuple[DeviceID, str]] = set()
        capacity: dict[DeviceID, dict[str, Fraction]] = {}
        seen: set[str] = set()
        cache = self._claim_devices
        for claim in claims:
            uid = uid_of(claim)
            seen.add(uid)
            if uid in self.in_flight:
                continue
            entry = cache.get(uid)
            if entry is None or entry[0] is not claim:
                entry = (claim, allocated_devices(status_of(claim).get("allocation")))
                cache[uid] = entry
            _add(entry[1], dedicated, shared, capacity)
        for uid in [uid for uid in cache if uid not in seen]:
            del cache[uid]
        for claim in self.in_flight.values():
            _add(allocated_devices(status_of(claim).get("allocation")), dedicated, shared, capacity)
        return AllocatedState(allocated_devices=frozenset(dedicated), allocated_shared_device_ids=frozenset(shared),
                              aggregated_capacity=capacity)

    # ------------------------------------------------------------------ slices
    def slices(self, listed: Iterable[Any]) -> list[Slice]:
        """The allocator's form of the listed ResourceSlices, parsed once per object."""
        out: list[Slice] = []
        cache = self._slices
        fresh: dict[str, tuple[Any, Slice]] = {}
        for obj in listed:
            key = uid_of(obj) or str((raw_of(obj).get("metadata") or {}).get("name") or "")
            entry = cache.get(key)
            if entry is None or entry[0] is not obj:
                entry = (obj, Slice(raw_of(obj)))
            fresh[key] = entry
            out.append(entry[1])
        self._slices = fresh
        return out


def _add(devices: _Devices, dedicated: set[DeviceID], shared: set[tuple[DeviceID, str]],
         capacity: dict[DeviceID, dict[str, Fraction]]) -> None:
    dedicated.update(devices[0])
    shared.update(devices[1])
    for device, name, value in devices[2]:
        per_device = capacity.setdefault(device, {})
        per_device[name] = per_device.get(name, Fraction(0)) + value


_MANAGERS: "weakref.WeakKeyDictionary[Any, DRAManager]" = weakref.WeakKeyDictionary()


def manager_for(lister: Any) -> DRAManager:
    """The manager of the cluster ``lister`` reads (one per lister, shared by the profiles)."""
    try:
        manager = _MANAGERS.get(lister)
    except TypeError:  # a lister that cannot be weakly referenced: a manager of its own
        return DRAManager()
    if manager is None:
        manager = DRAManager()
        _MANAGERS[lister] = manager
    return manager
