"""Resource pools a node can use (upstream ``pools_incubating.go``).

Only the newest generation of a pool counts; a pool is incomplete while fewer slices of that
generation exist than ``resourceSliceCount`` says, and invalid when device names repeat or
counters are inconsistent. Pools are tried in (driver, pool) order, slices in name order, pools
with binding conditions last: the first fit wins, so this order decides which devices are chosen.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable

import attrs

from kschedfw.api.selectors import NodeSelector
from kschedfw.plugins.dynamicresources.structured.features import Features
from kschedfw.plugins.dynamicresources.structured.slices import Slice


@attrs.define(slots=True)
class Pool:
    driver: str
    pool: str
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    slices_targeting_node: list[Slice] = attrs.Factory(list)
    slices_not_targeting_node: list[Slice] = attrs.Factory(list)
    counter_sets: dict[str, dict[str, Fraction]] = attrs.Factory(dict)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def node_matches(node: Any, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """Whether a slice or device with these node fields is reachable from ``node``."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(node.labels, node.name)
    return False


def gather_pools(slices_for_node: Iterable[Slice], node: Any, features: Features,
                 all_slices: list[Slice]) -> list[Pool]:
    pools: dict[tuple[str, str], list[Slice]] = {}
    for s in slices_for_node:
        if not features.partitionable_devices and (s.per_device_node_selection is not None or s.shared_counters):
            continue
        if s.shared_counters:
            relevant = True
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        elif s.per_device_node_selection:
            relevant = any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices)
        else:
            continue  # some future way of node selection: ignored
        if relevant:
            _add_slice(pools, s)

    result: list[Pool] = []
    with_binding_conditions: list[Pool] = []
    for (driver, pool_name), pool_slices in pools.items():
        generation, count = pool_slices[0].generation, pool_slices[0].slice_count
        all_for_pool: list[Slice] | None = None
        if len(pool_slices) != count:
            obsolete, all_for_pool = _check_slices_in_pool(all_slices, driver, pool_name, generation)
            if obsolete:
                continue
            if len(all_for_pool) != count:
                result.append(Pool(driver, pool_name, is_incomplete=True))
                continue
        pool = _build_pool(driver, pool_name, pool_slices, features, all_for_pool)
        (with_binding_conditions if _has_binding_conditions(pool) else result).append(pool)
    result.sort(key=lambda p: (p.driver, p.pool))
    with_binding_conditions.sort(key=lambda p: (p.driver, p.pool))
    return result + with_binding_conditions


def _add_slice(pools: dict[tuple[str, str], list[Slice]], s: Slice) -> None:
    key = (s.driver, s.pool)
    current = pools.get(key)
    if current is None or s.generation > current[0].generation:
        pools[key] = [s]
    elif s.generation == current[0].generation:
        current.append(s)


def _check_slices_in_pool(all_slices: list[Slice], driver: str, pool: str,
                          generation: int) -> tuple[bool, list[Slice]]:
    """(a newer generation exists, all slices of this generation)."""
    same: list[Slice] = []
    for s in all_slices:
        if s.driver != driver or s.pool != pool:
            continue
        if s.generation == generation:
            same.append(s)
        elif s.generation > generation:
            return True, []
    return False, same


def _build_pool(driver: str, pool_name: str, pool_slices: list[Slice], features: Features,
                all_for_pool: list[Slice] | None) -> Pool:
    """A pool is a function of its slices: built once per set of Slice objects (and features), the
    result kept on the first slice, so allocators that share Slice objects share their pools."""
    key = (features, tuple(pool_slices), tuple(all_for_pool) if all_for_pool is not None else None)
    built = pool_slices[0].pools_built
    pool = built.get(key)
    if pool is None:
        pool = built[key] = _new_pool(driver, pool_name, list(pool_slices), features, all_for_pool)
    return pool


def _new_pool(driver: str, pool_name: str, pool_slices: list[Slice], features: Features,
              all_for_pool: list[Slice] | None) -> Pool:
    pool_slices.sort(key=lambda s: s.name)
    if features.partitionable_devices:
        device_slices = [s for s in pool_slices if not s.shared_counters]
        counter_slices = [s for s in pool_slices if s.shared_counters]
    else:
        device_slices, counter_slices = pool_slices, []

    def invalid(reason: str) -> Pool:
        return Pool(driver, pool_name, is_invalid=True, invalid_reason=reason)

    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                return invalid(f"duplicate device name {d.name}")
            seen.add(d.name)
    if not features.partitionable_devices:
        return Pool(driver, pool_name, slices_targeting_node=device_slices)

    counter_sets: dict[str, dict[str, Fraction]] = {}
    for s in counter_slices:
        for name, counters in s.shared_counters:
            if name in counter_sets:
                return invalid(f"duplicate counter set name {name}")
            counter_sets[name] = counters
    reason = _check_counter_consumption(counter_sets, pool_slices)
    if reason:
        return invalid(reason)
    if all_for_pool is None or len(pool_slices) == len(all_for_pool):
        return Pool(driver, pool_name, slices_targeting_node=device_slices, counter_sets=counter_sets)
    names = {s.name for s in pool_slices}
    not_targeting = [s for s in all_for_pool if s.name not in names]
    reason = _check_counter_consumption(counter_sets, not_targeting)
    if reason:
        return invalid(reason)
    return Pool(driver, pool_name, slices_targeting_node=device_slices, slices_not_targeting_node=not_targeting,
                counter_sets=counter_sets)


def _check_counter_consumption(counter_sets: dict[str, dict[str, Fraction]], slices: list[Slice]) -> str:
    for s in slices:
        for d in s.devices:
            for set_name, counters in d.consumes_counters:
                counter_set = counter_sets.get(set_name)
                if counter_set is None:
                    return f"counter set {set_name} not found"
                for counter in counters:
                    if counter not in counter_set:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions is not None for s in pool.slices_targeting_node for d in s.devices)
