"""Which optional allocator behaviour is on (upstream ``structured/internal.Features``).

kube-scheduler v1.36 derives these from feature gates (``pkg/features/kube_features.go``); the
defaults below are v1.36's, so the allocator is upstream's ``incubating`` variant, the one
``NewAllocator`` picks when DRAConsumableCapacity or DRADeviceBindingConditions is on:

========================  ==================================  =============================
allocator feature         gate(s), v1.36 default              this port
========================  ==================================  =============================
admin_access              DRAAdminAccess: GA, on              in
prioritized_list          DRAPrioritizedList: GA, on          in (``firstAvailable``)
device_taints             DRADeviceTaints: beta, on           in (taints on devices;
                                                              DeviceTaintRules are beta, off)
partitionable_devices     DRAPartitionableDevices: beta, on   in (shared counters,
                                                              per-device node selection)
device_binding_and_status DRADeviceBindingConditions +        in (binding conditions in the
                          DRAResourceClaimDeviceStatus: on    result, such pools tried last)
consumable_capacity       DRAConsumableCapacity: beta, on     in (shared devices, capacity
                                                              requests and request policies)
list_type_attributes      DRAListTypeAttributes: alpha, off   out (list values are rejected as
                                                              upstream does with the gate off)
========================  ==================================  =============================
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True, slots=True)
class Features:
    """Allocator features; the defaults are kube-scheduler v1.36's."""

    admin_access: bool = True
    prioritized_list: bool = True
    device_taints: bool = True
    partitionable_devices: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
