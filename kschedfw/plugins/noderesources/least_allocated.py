"""LeastAllocated scoring strategy of NodeResourcesFit (upstream ``least_allocated.go``).

Favours nodes with more free capacity: per resource ``(capacity - requested) * 100 / capacity``
(0 when the request exceeds the capacity), then the weight-averaged sum with integer division.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from kschedfw.fwk.types import MAX_NODE_SCORE
from kschedfw.plugins.noderesources.resource_allocation import ScorerFn

if TYPE_CHECKING:
    from kschedfw.fwk.types import NodeInfo

__all__ = ["least_resource_scorer"]


def least_resource_scorer(weights: Sequence[int]) -> ScorerFn:
    """``scorer(requested, allocated, allocatable)`` for the configured resource weights."""
    weights = tuple(weights)

    def scorer(requested: list[int], _allocated: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for capacity, req, w in zip(allocatable, requested, weights):
            if capacity == 0:
                continue
            if req <= capacity:
                node_score += (capacity - req) * MAX_NODE_SCORE // capacity * w
            weight_sum += w
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer


def least_allocated_cpu_memory(weights: Sequence[int], pod_cpu: int, pod_memory: int
                               ) -> Callable[[NodeInfo], int]:
    """``least_resource_scorer`` for exactly ``[cpu, memory]``, reading NodeInfo directly.

    The default profile scores every feasible node with this, so it skips building the
    per-resource vectors; the result is the same integer as the general path.
    """
    w_cpu, w_memory = weights

    def score(node_info: NodeInfo) -> int:
        node = node_info.node
        assert node is not None  # Score sees only NodeInfos with a node
        allocatable = node.allocatable
        counted = node_info.non_zero_requested
        total = weight_sum = 0
        capacity = allocatable.get("cpu", 0)
        if capacity:
            requested = counted.get("cpu", 0) + pod_cpu
            if requested <= capacity:
                total += (capacity - requested) * MAX_NODE_SCORE // capacity * w_cpu
            weight_sum += w_cpu
        capacity = allocatable.get("memory", 0)
        if capacity:
            requested = counted.get("memory", 0) + pod_memory
            if requested <= capacity:
                total += (capacity - requested) * MAX_NODE_SCORE // capacity * w_memory
            weight_sum += w_memory
        return total // weight_sum if weight_sum else 0

    return score
