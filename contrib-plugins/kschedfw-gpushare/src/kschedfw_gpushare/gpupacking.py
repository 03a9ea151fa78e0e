"""GpuPacking: fill used GPUs first, then used nodes, then free nodes. A pod that fits on partly
used GPUs scores 50-100 (less idle milli left on them, higher); one that needs free GPUs of a
node already in use, 33-50 (fewer free GPUs taken, higher); on a node with no GPU allocated,
``max(33 - free, free)`` (25 for 8 GPUs). CPU-only pods score 0 everywhere.
"""

from __future__ import annotations

from kschedfw import Status

from kschedfw_gpushare.nodestate import NodeGpu
from kschedfw_gpushare.resources import MILLI, PodShape, model_matches
from kschedfw_gpushare.scoring import GpuScore, model_mismatch


def packing_score(node: NodeGpu, shape: PodShape) -> int | None:
    """The score, or None when the node's devices cannot hold the pod."""
    free = node.free
    if free == node.count:
        return max(33 - free, free)
    need = shape.gpus
    taken = []
    free_taken = 0
    for i in sorted(range(node.count), key=node.idle.__getitem__):
        if need == 0:
            break
        if shape.milli <= node.idle[i]:
            need -= 1
            taken.append(i)
            if node.idle[i] == MILLI:
                free_taken += 1
    if need != 0:
        return None
    if free_taken > 0:
        return max(50 - free_taken, 33)
    idle_percent = sum(node.idle[i] * 100 // MILLI for i in taken)
    return max(100 - idle_percent // 10, 50)


class GpuPackingScore(GpuScore):
    """Score plugin: pack GPUs, then nodes."""

    name = "GpuPackingScore"

    def node_score(self, shape: PodShape, node: NodeGpu) -> object:
        if shape.milli <= 0:
            return 0
        if not model_matches(node.model, shape.model):
            return model_mismatch(node, shape)
        score = packing_score(node, shape)
        if score is None:
            return Status.as_status(f"failed to schedule pod on node({node.name}): its GPUs cannot hold it")
        return score
