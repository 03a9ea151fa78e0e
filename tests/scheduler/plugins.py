"""Test plugins that exercise one framework path each."""

from __future__ import annotations

from kschedfw import Status, hookimpl
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort

BASE = [PrioritySort, DefaultBinder]
CALLS: list[str] = []


class CpuFit:
    """A minimal resource filter: pods fit while the node's cpu is not used up."""

    name = "CpuFit"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        free = node_info.allocatable.get("cpu", 0) - node_info.requested.get("cpu", 0)
        if pod.request().get("cpu", 0) > free:
            return Status.unschedulable("Insufficient cpu")
        return None


class Quorum:
    """Permit: hold pods until ``size`` of them wait, then let them all go (a tiny gang)."""

    name = "Quorum"
    size = 3
    timeout = 10.0

    def __init__(self, args, handle):
        self.handle = handle

    @hookimpl
    def permit(self, state, pod, node_name):
        waiting = []
        self.handle.iterate_over_waiting_pods(waiting.append)
        if len(waiting) + 1 >= self.size:
            for wp in waiting:
                wp.allow(self.name)
            return None, 0.0
        return Status.wait(), self.timeout

    @hookimpl
    def unreserve(self, state, pod, node_name):
        CALLS.append(f"Quorum.unreserve {pod.name}")


class RejectingReserve:
    name = "RejectingReserve"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def reserve(self, state, pod, node_name):
        CALLS.append(f"RejectingReserve.reserve {pod.name}")
        return Status.unschedulable("no room in the ledger")

    @hookimpl
    def unreserve(self, state, pod, node_name):
        CALLS.append(f"RejectingReserve.unreserve {pod.name}")


class RecordingReserve:
    name = "RecordingReserve"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def reserve(self, state, pod, node_name):
        CALLS.append(f"RecordingReserve.reserve {pod.name}")

    @hookimpl
    def unreserve(self, state, pod, node_name):
        CALLS.append(f"RecordingReserve.unreserve {pod.name}")


class FailingPreBind:
    name = "FailingPreBind"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return Status.as_status("volume attach timed out")


class RaisingFilter:
    name = "RaisingFilter"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        if pod.labels.get("explode"):
            raise RuntimeError("plugin bug")
        return None


class SkippingBinder:
    name = "SkippingBinder"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def bind(self, state, pod, node_name):
        CALLS.append(f"SkippingBinder.bind {pod.name}")
        return Status.skip()


class Gatekeeper:
    """Permit: the first pod waits; the second one rejects it through the waiting-pods handle."""

    name = "Gatekeeper"

    def __init__(self, args, handle):
        self.handle = handle

    @hookimpl
    def permit(self, state, pod, node_name):
        if pod.labels.get("role") == "judge":
            self.handle.iterate_over_waiting_pods(lambda wp: wp.reject(self.name, "refused by the judge"))
            return None, 0.0
        return Status.wait(), 60.0

    @hookimpl
    def unreserve(self, state, pod, node_name):
        CALLS.append(f"Gatekeeper.unreserve {pod.name}")


class FailingBinder:
    name = "FailingBinder"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def bind(self, state, pod, node_name):
        return Status.as_status("API server unavailable")


class RejectingPreBind:
    name = "RejectingPreBind"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return Status.unschedulable("volume not attachable on this node")


class ManyReasons:
    """Rejects every node with its own reason (long FitError messages)."""

    name = "ManyReasons"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable(f"node {node_info.name} is not in the mood today, try again later please")
