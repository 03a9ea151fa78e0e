"""What the plugin needs of the cluster's DRA objects across cycles (upstream ``dra_manager.go`` and
``allocateddevices.go``): the devices allocated claims use, the allocations this scheduler made in
Reserve that PreBind has not written yet (in flight), the claims PreBind wrote that the lister
does not show yet (assumed, as upstream's assume cache), and ResourceSlices in the allocator's
parsed form.

One manager serves every profile of a scheduler (upstream's SharedDRAManager): it is kept per
lister, so two profiles never hand out one device while both allocations are in flight.
"""

from __future__ import annotations

import weakref
from itertools import compress
from operator import is_, is_not
from fractions import Fraction
from typing import Any, Iterable, Mapping

from kschedfw.api.accessors import raw_of, status_of, uid_of
from kschedfw.plugins.dynamicresources.extended import DeviceClassResolver
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


def _changes(before: list[Any], claims: Iterable[Any]) -> tuple[dict[int, Any], set[int]]:
    """What differs between the claims listed last time (``before``, replaced in place by the
    new list) and now, by object identity: (the claims to look at, by id; the ids that may be
    gone). The lister keeps its order and replaces a changed claim where it was, so a listing
    of the same length is compared position by position in C (one cycle changes a claim or
    two of thousands); any other listing is looked at whole."""
    now = claims if isinstance(claims, list) else list(claims)
    if len(now) == len(before):
        changed = list(compress(range(len(now)), map(is_not, now, before)))
        looked = {id(now[i]): now[i] for i in changed}
        gone = {id(before[i]) for i in changed}
    else:
        looked = {id(claim): claim for claim in now}
        gone = {id(claim) for claim in before}
    before[:] = now
    return looked, gone


class DRAManager:
    """Allocated devices, in-flight allocations and parsed slices of one cluster."""

    def __init__(self) -> None:
        # claim uid -> the claim as Reserve assumed it, allocation included (upstream inFlightAllocations)
        self.in_flight: dict[str, dict[str, Any]] = {}
        # claim uid -> (the listed claim a write replaced, the claim written): until the lister
        # shows another object for it (upstream AssumeClaimAfterAPICall)
        self.assumed: dict[str, tuple[Any, Any]] = {}
        # the claims listed last time, by object identity, with their devices; counted below
        self._listed: dict[int, tuple[Any, _Devices]] = {}
        self._listed_by_uid: dict[str, tuple[Any, _Devices]] = {}
        # the claims as listed last time, in the lister's order (see _changes)
        self._listed_order: list[Any] = []
        self._dedicated: dict[DeviceID, int] = {}
        self._shared: dict[tuple[DeviceID, str], int] = {}
        # the two as frozensets, kept until a listed claim takes or frees a device (None: stale)
        self._taken: tuple[frozenset[DeviceID], frozenset[tuple[DeviceID, str]]] | None = None
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # the slices listed last time, by object identity, parsed (a Slice keeps its CEL results)
        self._slices: dict[int, tuple[Any, Slice]] = {}
        self._slice_list: list[Slice] = []
        self._slices_listed: list[Any] = []  # the listing they were parsed from, in its order
        #: bumped whenever a ResourceSlice or DeviceClass is added, changed or removed
        self.version = 0
        self._classes: list[Any] = []
        # the DeviceClasses listed last time and the extended resource names they back
        self._resolver: tuple[list[Any], DeviceClassResolver] = ([], DeviceClassResolver(()))
        # device -> the node whose slice publishes it (see node_local_only)
        self._device_node: dict[DeviceID, str] = {}
        #: node name -> a count bumped whenever a listed claim takes or frees one of its devices
        self.node_generation: dict[str, int] = {}
        #: node name -> its devices taken by in-flight or assumed claims, as of allocated_state
        self.pending_by_node: dict[str, frozenset[DeviceID]] = {}
        #: whether every device is node-local and dedicated: each slice names its node, nothing
        #: consumes counters or is shared; an allocation on a node then depends only on the
        #: claims, the slices and classes, and which of the node's own devices are taken
        self.node_local_only = True

    # ------------------------------------------------------------------ claims
    def pending_allocation(self, claim_uid: str) -> Mapping[str, Any] | None:
        claim = self.in_flight.get(claim_uid)
        return None if claim is None else status_of(claim).get("allocation")

    def signal_pending_allocation(self, claim_uid: str, claim: dict[str, Any]) -> None:
        self.in_flight[claim_uid] = claim

    def remove_pending_allocation(self, claim_uid: str) -> bool:
        return self.in_flight.pop(claim_uid, None) is not None

    def assume_written(self, claim_uid: str, before: Any, written: Any) -> None:
        """``written`` stands for the claim until the lister has something else than ``before``."""
        self.assumed[claim_uid] = (before, written)

    def claim(self, listed: Any) -> Any:
        """The claim as this scheduler last wrote it, while the lister still has the older one."""
        uid = uid_of(listed)
        entry = self.assumed.get(uid)
        if entry is None:
            return listed
        if entry[0] is not listed:
            del self.assumed[uid]
            return listed
        return entry[1]

    def allocated_state(self, claims: Iterable[Any]) -> AllocatedState:
        """Devices taken by the listed claims' allocations and by in-flight ones (upstream
        GatherAllocatedState). Only the claims that changed since the last call are looked at
        (as upstream's allocatedDevices follows the claim informer)."""
        listed, gone = _changes(self._listed_order, claims)
        known = self._listed
        for key in gone - listed.keys():
            obj, devices = known.pop(key)
            self._listed_by_uid.pop(uid_of(obj), None)
            self._count(devices, -1)
        for key in listed.keys() - known.keys():
            obj = listed[key]
            devices = allocated_devices(status_of(obj).get("allocation"))
            known[key] = (obj, devices)
            self._listed_by_uid[uid_of(obj)] = (obj, devices)
            self._count(devices, 1)
        capacity = {device: dict(amounts) for device, amounts in self._capacity.items()}
        by_uid = self._listed_by_uid
        pending = [claim for uid, claim in self.in_flight.items()
                   if by_uid.get(uid, (None, _NO_DEVICES))[1] == _NO_DEVICES]  # else written meanwhile
        for uid, (before, written) in list(self.assumed.items()):
            listed_entry = by_uid.get(uid, (None, _NO_DEVICES))
            if listed_entry[0] is not before:
                del self.assumed[uid]  # the lister caught up
            elif uid not in self.in_flight and listed_entry[1] == _NO_DEVICES:
                pending.append(written)  # allocated by the write the lister does not show yet
        pending_by_node: dict[str, set[DeviceID]] = {}
        for claim in pending:
            for device in allocated_devices(status_of(claim).get("allocation"))[0]:
                node = self._device_node.get(device)
                if node is not None:
                    pending_by_node.setdefault(node, set()).add(device)
        self.pending_by_node = {node: frozenset(devices) for node, devices in pending_by_node.items()}
        if not pending:
            if self._taken is None:
                self._taken = (frozenset(self._dedicated), frozenset(self._shared))
            return AllocatedState(allocated_devices=self._taken[0],
                                  allocated_shared_device_ids=self._taken[1], aggregated_capacity=capacity)
        dedicated = set(self._dedicated)
        shared = set(self._shared)
        for claim in pending:
            _add(allocated_devices(status_of(claim).get("allocation")), dedicated, shared, capacity)
        return AllocatedState(allocated_devices=frozenset(dedicated), allocated_shared_device_ids=frozenset(shared),
                              aggregated_capacity=capacity)

    def _count(self, devices: _Devices, delta: int) -> None:
        if devices[0] or devices[1]:
            self._taken = None
        device_node, generation = self._device_node, self.node_generation
        for device in devices[0]:
            _bump(self._dedicated, device, delta)
            node = device_node.get(device)
            if node is not None:
                generation[node] = generation.get(node, 0) + 1
        for share in devices[1]:
            _bump(self._shared, share, delta)
        for device, name, value in devices[2]:
            amounts = self._capacity.setdefault(device, {})
            amounts[name] = amounts.get(name, Fraction(0)) + delta * value
            if not amounts[name]:
                del amounts[name]
            if not amounts:
                del self._capacity[device]

    # ------------------------------------------------------------------ slices
    def slices(self, listed: Iterable[Any]) -> list[Slice]:
        """The allocator's form of the listed ResourceSlices, parsed once per object."""
        objs = listed if isinstance(listed, list) else list(listed)
        before, self._slices_listed = self._slices_listed, objs
        if len(objs) == len(before) and all(map(is_, objs, before)):
            return self._slice_list  # the same objects as last time (one C pass: once per pod)
        current = {id(obj): obj for obj in objs}
        known = self._slices
        if current.keys() != known.keys():
            self._slices = {key: known[key] if key in known else (obj, Slice(raw_of(obj)))
                            for key, obj in current.items()}
            self._slice_list = [entry[1] for entry in self._slices.values()]
            self._index_devices()
        return self._slice_list

    def classes(self, listed: Iterable[Any]) -> list[Any]:
        """The listed DeviceClasses; a change bumps :attr:`version`."""
        current = list(listed)
        if len(current) != len(self._classes) or any(a is not b for a, b in zip(current, self._classes)):
            self._classes = current
            self.version += 1
        return self._classes

    def class_resolver(self, listed: Iterable[Any]) -> DeviceClassResolver:
        """Which DeviceClass backs which extended resource, for the listed classes (DRAExtendedResource);
        built again only when the list changed."""
        current = list(listed)
        known = self._resolver[0]
        if len(current) != len(known) or any(a is not b for a, b in zip(current, known)):
            self._resolver = (current, DeviceClassResolver(current))
        return self._resolver[1]

    def _index_devices(self) -> None:
        device_node: dict[DeviceID, str] = {}
        node_local_only = True
        for s in self._slice_list:
            if not s.node_name or s.shared_counters or any(
                    d.allow_multiple_allocations or d.consumes_counters for d in s.devices):
                node_local_only = False
                break
            device_node.update((DeviceID(s.driver, s.pool, d.name), s.node_name) for d in s.devices)
        self.node_local_only = node_local_only
        self._device_node = device_node if node_local_only else {}
        # taken devices were counted against the old index: the generations start afresh
        self.node_generation = {}
        self.version += 1


def _bump(counts: dict[Any, int], key: Any, delta: int) -> None:
    count = counts.get(key, 0) + delta
    if count:
        counts[key] = count
    else:
        del counts[key]


class ClaimsView:
    """A lister whose ResourceClaims are the ones this scheduler wrote while the lister lags."""

    def __init__(self, lister: Any, manager: DRAManager) -> None:
        self.lister, self.manager = lister, manager

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        obj = self.lister.get(kind, name, namespace)
        return self.manager.claim(obj) if kind == "ResourceClaim" and obj is not None else obj

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return list(self.lister.list(kind, namespace))


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
