"""Names the allocator shares with its callers (upstream ``structured/schedulerapi``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Mapping, NamedTuple

import attrs

# upstream resourceapi.AllocationResultsMaxSize: devices in one claim's allocation
ALLOCATION_RESULTS_MAX_SIZE = 32


class DeviceID(NamedTuple):
    """One device: driver, pool and device name (upstream ``DeviceID``, printed driver/pool/device)."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@attrs.frozen(kw_only=True, slots=True)
class AllocatedState:
    """Devices already taken: by allocated claims (whoever allocated them) and by this scheduler's
    in-flight allocations (upstream ``AllocatedState.AllocatedDevices``)."""

    allocated_devices: frozenset[DeviceID] = frozenset()
    # devices that allow multiple allocations: (device, share ID) of each allocation ...
    allocated_shared_device_ids: frozenset[tuple[DeviceID, str]] = frozenset()
    # ... and the capacity those allocations consume together
    aggregated_capacity: Mapping[DeviceID, Mapping[str, Fraction]] = attrs.Factory(dict)

    def is_allocated(self, device_id: DeviceID) -> bool:
        """upstream IsDeviceAllocated: taken whole, or shared by at least one allocation."""
        return (device_id in self.allocated_devices
                or any(shared == device_id for shared, _ in self.allocated_shared_device_ids)
                or device_id in self.aggregated_capacity)


class AllocatorError(Exception):
    """Allocation cannot proceed: bad input such as an unknown class or a failing CEL selector
    (upstream: a non-nil error from ``Allocate``). The scheduler reports it instead of trying
    other nodes."""


class AllocationTimeout(AllocatorError):
    """The search ran past its deadline (upstream: the Filter context's ``DeadlineExceeded``)."""


class FailedAllocationOnNode(AllocatorError):
    """Allocation failed on this node only (upstream: wraps ``ErrFailedAllocationOnNode``)."""
