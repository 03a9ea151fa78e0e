"""ResourceSlices as the allocator reads them, parsed once (node selectors, counters, quantities).

A :class:`Slice` also remembers, per device, what each CEL selector answered: selectors are pure
functions of the device, so a caller that keeps its ``Slice`` objects while the ResourceSlice is
unchanged (and passes them to every :class:`~.allocator.Allocator`) evaluates each selector once
per device instead of once per device, node and pod."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from kschedfw.api.quantity import parse_quantity
from kschedfw.api.selectors import NodeSelector, parse_node_selector
from kschedfw.plugins.dynamicresources import cel
from kschedfw.plugins.dynamicresources.structured.capacity import Capacity


def _counters(raw: Mapping[str, Any] | None) -> dict[str, Fraction]:
    return {name: Fraction(parse_quantity((c or {}).get("value", 0))) for name, c in (raw or {}).items()}


def _selector(raw: Any, field: str) -> NodeSelector | None:
    return parse_node_selector(raw, field) if raw is not None else None


class Device:
    """One entry of ``spec.devices``; ``raw`` is the API dict."""

    __slots__ = ("name", "raw", "driver", "attributes", "capacity", "allow_multiple_allocations", "capacity_without_policy",
                 "consumes_counters", "taints", "binding_conditions",
                 "binding_failure_conditions", "binds_to_node", "node_name", "all_nodes", "node_selector",
                 "cel_results", "_cel_data")

    def __init__(self, raw: Mapping[str, Any], driver: str, field: str) -> None:
        self.raw = raw
        self.name: str = raw.get("name", "")
        self.driver = driver
        self.attributes: Mapping[str, Mapping[str, Any]] = raw.get("attributes") or {}
        self.capacity = {name: Capacity(c or {}) for name, c in (raw.get("capacity") or {}).items()}
        self.allow_multiple_allocations = bool(raw.get("allowMultipleAllocations") or False)
        self.capacity_without_policy = not any(c.has_policy for c in self.capacity.values())
        self.consumes_counters: list[tuple[str, dict[str, Fraction]]] = [
            (c.get("counterSet", ""), _counters(c.get("counters"))) for c in raw.get("consumesCounters") or ()]
        self.taints: list[Mapping[str, Any]] = list(raw.get("taints") or ())
        self.binding_conditions: list[str] | None = raw.get("bindingConditions")
        self.binding_failure_conditions: list[str] | None = raw.get("bindingFailureConditions")
        self.binds_to_node = bool(raw.get("bindsToNode") or False)
        self.node_name: str = raw.get("nodeName") or ""
        self.all_nodes = bool(raw.get("allNodes") or False)
        self.node_selector = _selector(raw.get("nodeSelector"), f"{field}.nodeSelector")
        # expression -> matches, or the runtime error's text
        self.cel_results: dict[str, bool | str] = {}
        self._cel_data: dict[str, Any] | None = None

    def cel_data(self) -> dict[str, Any]:
        """The CEL ``device`` variable, built on first use."""
        if self._cel_data is None:
            self._cel_data = cel.device_data(self.driver, self.raw)
        return self._cel_data


class Slice:
    """One ResourceSlice; ``raw`` is the API dict."""

    __slots__ = ("raw", "name", "driver", "pool", "generation", "slice_count", "node_name", "all_nodes",
                 "node_selector", "per_device_node_selection", "shared_counters", "devices", "pools_built")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        spec = raw.get("spec") or {}
        pool = spec.get("pool") or {}
        self.raw = raw
        self.name: str = (raw.get("metadata") or {}).get("name", "")
        self.driver: str = spec.get("driver", "")
        self.pool: str = pool.get("name", "")
        self.generation = int(pool.get("generation") or 0)
        self.slice_count = int(pool.get("resourceSliceCount") or 0)
        self.node_name: str = spec.get("nodeName") or ""
        self.all_nodes = bool(spec.get("allNodes") or False)
        self.node_selector = _selector(spec.get("nodeSelector"), "spec.nodeSelector")
        self.per_device_node_selection: bool | None = spec.get("perDeviceNodeSelection")
        self.shared_counters: list[tuple[str, dict[str, Fraction]]] = [
            (c.get("name", ""), _counters(c.get("counters"))) for c in spec.get("sharedCounters") or ()]
        self.devices = [Device(d, self.driver, f"spec.devices[{i}]") for i, d in enumerate(spec.get("devices") or ())]
        # pools built from this slice and others, by what they were built from (see pools.build_pool)
        self.pools_built: dict[Any, Any] = {}
