"""Upstream's structured-parameters allocator for DRA (``k8s.io/dynamic-resource-allocation/structured``)."""

from kschedfw.plugins.dynamicresources.structured.allocator import Allocator
from kschedfw.plugins.dynamicresources.structured.features import Features
from kschedfw.plugins.dynamicresources.structured.slices import Slice
from kschedfw.plugins.dynamicresources.structured.types import (AllocatedState, AllocationTimeout, AllocatorError,
                                                                DeviceID, FailedAllocationOnNode)

__all__ = ["Allocator", "AllocatedState", "AllocationTimeout", "AllocatorError", "DeviceID", "FailedAllocationOnNode",
           "Features", "Slice"]
