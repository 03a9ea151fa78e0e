"""MostAllocated scoring strategy of NodeResourcesFit (upstream ``most_allocated.go``).

Favours fuller nodes (bin packing): per resource ``min(requested, capacity) * 100 / capacity``,
then the weight-averaged sum with integer division.
"""

from __future__ import annotations

from typing import Sequence

from kschedfw.fwk.types import MAX_NODE_SCORE
from kschedfw.plugins.noderesources.resource_allocation import ScorerFn

__all__ = ["most_resource_scorer"]


def most_resource_scorer(weights: Sequence[int]) -> ScorerFn:
    """``scorer(requested, allocated, allocatable)`` for the configured resource weights."""
    weights = tuple(weights)

    def scorer(requested: list[int], _allocated: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for capacity, req, w in zip(allocatable, requested, weights):
            if capacity == 0:
                continue
            if req > capacity:
                req = capacity
            node_score += req * MAX_NODE_SCORE // capacity * w
            weight_sum += w
        if weight_sum == 0:
            return 0
        return node_score // weight_sum

    return scorer
