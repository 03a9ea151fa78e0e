"""DotProductScore: the Tetris-style alignment of the node's free vector and the pod's request,
[cpu, gpu milli], scaled by the largest node (``normMethod: max``), the node (``node``) or the
pod (``pod``, then squashed by tanh). The score is ``int(100 * (1 - dot / 2))``: the simulator
prefers the *smallest* product, so fuller nodes. ``dimExtMethod: merge`` takes the node's GPUs
as one dimension; ``share`` and ``divide`` score each shared device and the free devices as
separate virtual nodes (``divide`` gives each its part of the cpu) and keep the best.
"""

from __future__ import annotations

import math

from kschedfw_gpushare.nodestate import NodeGpu
from kschedfw_gpushare.resources import MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI, PodShape
from kschedfw_gpushare.scoring import GpuScore, go_div


def _normalised(vec: tuple[float, float], norm: tuple[float, float]) -> tuple[float, float]:
    return (vec[0] / norm[0] if norm[0] > 0 else 0.0, vec[1] / norm[1] if norm[1] > 0 else 0.0)


def virtual_nodes(node: NodeGpu, shape: PodShape, dim: str) -> list[tuple[float, float]]:
    """The node's [cpu, gpu] vectors under ``dim``; none when its cpu is short."""
    cpu_left = node.cpu_left
    if cpu_left < shape.cpu:
        return []
    total = node.idle_total
    if dim == "merge":
        return [(float(cpu_left), float(total))]
    request = shape.total_milli
    out = []
    if request < MILLI:
        for g in node.idle:
            if g >= MILLI or g < request:
                continue
            cpu = float(cpu_left) if dim == "share" else go_div(float(cpu_left * g), float(total))
            out.append((cpu, float(g)))
    free_milli = node.free * MILLI
    if request <= free_milli:
        cpu = float(cpu_left) if dim == "share" else go_div(float(cpu_left * free_milli), float(total))
        out.append((cpu, float(free_milli)))
    return out


def dot_product_score(node: NodeGpu, shape: PodShape, dim: str, norm: str) -> int:
    pod = (float(shape.cpu), float(shape.total_milli))
    if norm == "node":
        scale = (float(node.cpu_capacity), float(node.count * MILLI))
    elif norm == "pod":
        scale = pod
    else:
        scale = (float(MAX_SPEC_CPU), float(MAX_SPEC_GPU))
    best = -1.0
    for vec in virtual_nodes(node, shape, dim):
        n, p = _normalised(vec, scale), _normalised(pod, scale)
        current = 0.0
        current += n[0] * p[0]
        current += n[1] * p[1]
        if current == -1:
            continue
        current /= 2.0
        if norm == "pod":
            current = math.tanh(current / 10)
        current = 1 - current
        if best < current:
            best = current
    if best == -1:
        return 0
    return int(100.0 * best)


class DotProductScore(GpuScore):
    """Score plugin: the smallest alignment of free resources and request."""

    name = "DotProductScore"

    def node_score(self, shape: PodShape, node: NodeGpu) -> int:
        return dot_product_score(node, shape, self.args.get("dimExtMethod") or "merge",
                                 self.args.get("normMethod") or "max")
