"""BestFit: the node left with the least free cpu and GPU after the pod, each scaled by the
largest node and weighed equally: ``int(100 * (1 - (0.5 cpu_after / 128000 + 0.5 gpu_after /
8000)))``, then scaled over the feasible nodes by integer min-max (which keeps the order)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from kschedfw import MAX_NODE_SCORE, MIN_NODE_SCORE, Status, hookimpl

from kschedfw_gpushare.nodestate import NodeGpu
from kschedfw_gpushare.resources import MAX_SPEC_CPU, MAX_SPEC_GPU, PodShape, model_matches
from kschedfw_gpushare.scoring import GpuScore, model_mismatch

if TYPE_CHECKING:
    from kschedfw import CycleState, NodeScore
    from kschedfw.api import Pod


def best_fit_score(node: NodeGpu, shape: PodShape) -> int | None:
    """The raw score, or None when the node has less free than the pod asks for."""
    free = (float(node.cpu_left), float(node.idle_total))
    request = (float(shape.cpu), float(shape.total_milli))
    score = 0.0
    for f, r, scale in ((free[0], request[0], float(MAX_SPEC_CPU)), (free[1], request[1], float(MAX_SPEC_GPU))):
        if f < r:
            return None
        score += (f - r) / scale * 0.5
    return int((1.0 - score) * float(MAX_NODE_SCORE))


def min_max(values: Sequence[int]) -> list[int]:
    """The simulator's integer min-max onto [0, 100]; all 0 when every value is the same."""
    if not values:
        return []
    lowest, highest = min(values), max(values)
    spread = highest - lowest
    if spread == 0:
        return [MIN_NODE_SCORE] * len(values)
    return [(v - lowest) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // spread + MIN_NODE_SCORE for v in values]


class BestFitScore(GpuScore):
    """Score plugin: the tightest node."""

    name = "BestFitScore"

    def node_score(self, shape: PodShape, node: NodeGpu) -> object:
        if not model_matches(node.model, shape.model):
            return model_mismatch(node, shape)
        score = best_fit_score(node, shape)
        if score is None:
            return Status.as_status(f"the score between node({node.name}) and the pod is negative, "
                                       "should not happen")
        return score

    @hookimpl
    def normalize_score(self, state: "CycleState", pod: "Pod", scores: "list[NodeScore]") -> Status | None:
        for item, value in zip(scores, min_max([s.score for s in scores])):
            item.score = value
        return None

    def normalize_score_values(self, state: "CycleState", pod: "Pod", values: list[int]) -> list[int]:
        return min_max(values)
