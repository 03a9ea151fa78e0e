"""GpuClustering: keep pods of one GPU class together. A pod's class is ``share-gpu`` (part of
one GPU) or ``<k>-gpu`` (k whole GPUs); CPU-only pods score 0 everywhere. A node scores 75-100
when it hosts only the pod's class, 50-75 when that class among others, 25-50 when it hosts no
GPU pod, 0-25 otherwise; within a band, the more GPU used, the higher (integer arithmetic).
"""

from __future__ import annotations

from kschedfw_gpushare.nodestate import NO_GPU_TAG, NodeGpu, affinity_tag
from kschedfw_gpushare.resources import MAX_SPEC_GPU, PodShape, model_matches
from kschedfw_gpushare.scoring import GpuScore, go_quo, model_mismatch


def clustering_score(node: NodeGpu, shape: PodShape) -> int:
    tag = affinity_tag(shape.milli, shape.gpus)
    if tag == NO_GPU_TAG:
        return 0
    fill = go_quo(25 * (MAX_SPEC_GPU - node.idle_total), MAX_SPEC_GPU)
    if node.affinity.get(tag, 0) > 0:
        return fill + (75 if len(node.affinity) == 1 else 50)
    return fill + (25 if not node.affinity else 0)


class GpuClusteringScore(GpuScore):
    """Score plugin: the node whose GPU pods are most like this one."""

    name = "GpuClusteringScore"

    def node_score(self, shape: PodShape, node: NodeGpu) -> object:
        if not model_matches(node.model, shape.model):
            return model_mismatch(node, shape)
        return clustering_score(node, shape)
