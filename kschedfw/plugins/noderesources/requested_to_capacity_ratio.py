"""RequestedToCapacityRatio scoring strategy of NodeResourcesFit (upstream
``requested_to_capacity_ratio.go`` and ``helper/shape_score.go``).

The user gives a piecewise-linear shape of ``(utilization, score)`` points with scores in 0-10;
they are scaled to 0-100. Each resource's utilization (``requested * 100 / capacity``, 100 when
over capacity) is mapped through the shape; resources scoring 0 are left out of the weighted
mean, which is rounded half away from zero.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from kschedfw.fwk.types import MAX_NODE_SCORE
from kschedfw.plugins.noderesources.resource_allocation import ScorerFn, trunc_div

__all__ = ["MAX_CUSTOM_PRIORITY_SCORE", "MAX_UTILIZATION", "build_broken_linear_function",
           "requested_to_capacity_ratio_scorer", "parse_shape"]

# The top of the score scale users write shapes in (upstream ``config.MaxCustomPriorityScore``).
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


def parse_shape(shape: Iterable[Any] | None) -> tuple[tuple[int, int], ...]:
    """``[{utilization: 0, score: 10}, ...]`` -> ``((0, 10), ...)`` (as written, not scaled)."""
    out = []
    for point in shape or ():
        if isinstance(point, dict):
            out.append((int(point.get("utilization", 0)), int(point.get("score", 0))))
        else:
            out.append((int(point[0]), int(point[1])))
    return tuple(out)


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """``f(p)`` made of linear segments through the ``(utilization, score)`` points.

    Below the first point it is the first score, above the last the last score; between two
    points it interpolates with integer arithmetic truncating toward zero, as upstream does.
    """
    points = tuple((int(u), int(s)) for u, s in shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return points[0][1]
                pu, ps = points[i - 1]
                return ps + trunc_div((s - ps) * (p - pu), u - pu)
        return points[-1][1]

    return f


def requested_to_capacity_ratio_scorer(weights: Sequence[int], shape: Sequence[tuple[int, int]]
                                       ) -> ScorerFn:
    """``scorer(requested, allocated, allocatable)`` for the weights and a user shape (0-10 scores)."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = build_broken_linear_function([(u, s * scale) for u, s in shape])
    weights = tuple(weights)
    # Utilization is an integer in [0, 100]: tabulate the shape once.
    table = tuple(raw(p) for p in range(MAX_UTILIZATION + 1))

    def scorer(requested: list[int], _allocated: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for capacity, req, w in zip(allocatable, requested, weights):
            if capacity == 0:
                continue
            if req > capacity:
                resource_score = table[MAX_UTILIZATION]
            else:
                resource_score = table[req * MAX_UTILIZATION // capacity]
            if resource_score > 0:
                node_score += resource_score * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        # math.Round(node_score / weight_sum): half away from zero (both are non-negative).
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return scorer
