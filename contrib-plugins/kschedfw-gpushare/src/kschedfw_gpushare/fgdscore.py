"""FGDScore: Fragmentation Gradient Descent. A node scores how little the pod would raise its
fragmentation F (:mod:`~kschedfw_gpushare.frag`): ``int(100 * sigmoid((F_before - F_after) /
1000))``, truncated as the simulator truncates (its ties between nodes and devices depend on
it). A GPU-sharing pod is tried on every device that can hold it and keeps the best (ties: the
lowest index), which is also the device Open-Gpu-Share gives it with ``gpuSelMethod: FGDScore``.
No normalisation (the simulator has none).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from kschedfw import MAX_NODE_SCORE, Status, hookimpl
from kschedfw.api.field import FieldError

from kschedfw_gpushare.args import raise_invalid, TYPICAL_PODS, check_methods, check_typical_pods, schema
from kschedfw_gpushare.devices import exclusive
from kschedfw_gpushare.frag import Workload, shared_workload, typical_pod_list
from kschedfw_gpushare.nodestate import NodeGpu, state_for
from kschedfw_gpushare.resources import PodShape, model_matches, pod_shape

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo
    from kschedfw.api import Pod

NAME = "FGDScore"
ARGS_SCHEMA = schema(typicalPods=TYPICAL_PODS)
_MEMO_LIMIT = 500_000


def validate_args(args: Mapping[str, Any]) -> list[FieldError]:
    return check_methods(args) + check_typical_pods(args, required=True)


def _sigmoid_score(delta: float) -> int:
    return int(1.0 / (1.0 + math.exp(-delta / 1000)) * MAX_NODE_SCORE)


def _after_sub(idle: Sequence[int], shape: PodShape) -> list[int]:
    """The idle milli after placing a pod the simulator's ``Sub`` way: each GPU on the
    device with the least idle milli that holds it (stable by index)."""
    out = list(idle)
    need = shape.gpus
    if need == 0:
        return out
    for i in sorted(range(len(out)), key=out.__getitem__):
        if shape.milli <= out[i]:
            out[i] -= shape.milli
            need -= 1
            if need <= 0:
                break
    return out


def share_scores(workload: Workload, node: NodeGpu, shape: PodShape) -> dict[int, int]:
    """A sharing pod's score on each device, by the device's idle milli (devices with the same
    idle milli leave the same node behind, so they score the same)."""
    before = workload.frag(node.cpu_left, node.idle, node.model)
    cpu_after = node.cpu_left - shape.cpu
    idle = list(node.idle)
    scores: dict[int, int] = {}
    for i, g in enumerate(node.idle):
        if g >= shape.milli and g not in scores:
            idle[i] = g - shape.milli
            scores[g] = _sigmoid_score(before - workload.frag(cpu_after, idle, node.model))
            idle[i] = g
    return scores


def _first_device(idle: Sequence[int], winners: frozenset[int]) -> tuple[int, ...] | None:
    for i, g in enumerate(idle):
        if g in winners:
            return (i,)
    return None


def _whole_score(workload: Workload, node: NodeGpu, shape: PodShape) -> int:
    before = workload.frag(node.cpu_left, node.idle, node.model)
    if node.cpu_left < shape.cpu or node.count < shape.gpus:
        after = before  # the simulator scores the unchanged node when Sub fails
    else:
        after = workload.frag(node.cpu_left - shape.cpu, _after_sub(node.idle, shape), node.model)
    return _sigmoid_score(before - after)


def _choice(workload: Workload, node: NodeGpu, shape: PodShape) -> tuple[int, frozenset[int]]:
    """(score, the idle milli values of the best devices) for a sharing pod; (score, empty)
    otherwise. Depends only on the node's cpu left, idle multiset and model."""
    if not shape.is_share:
        return _whole_score(workload, node, shape), frozenset()
    scores = share_scores(workload, node, shape)
    if not scores:
        return 0, frozenset()
    best = max(scores.values())
    return best, frozenset(g for g, s in scores.items() if s == best)


def _devices(node: NodeGpu, shape: PodShape, winners: frozenset[int]) -> tuple[int, ...] | None:
    if shape.is_share:
        return _first_device(node.idle, winners)  # the strict > of the device loop: lowest index
    return exclusive(node.idle, shape.total_milli)


def fgd_choice(workload: Workload, node: NodeGpu, shape: PodShape) -> tuple[int, tuple[int, ...] | None]:
    """(score, devices) of the pod on the node; devices None when none can hold it."""
    score, winners = _choice(workload, node, shape)
    return score, _devices(node, shape, winners)


_CHOICES: dict[tuple[Any, ...], tuple[int, frozenset[int]]] = {}


def memo_fgd_choice(workload: Workload, node: NodeGpu, shape: PodShape) -> tuple[int, tuple[int, ...] | None]:
    """:func:`fgd_choice`, kept on the node state and across nodes with the same idle multiset and
    model whose cpu left before and after the pod is in the same bands (F reads no more) and
    that are alike short of cpu or not (a whole-GPU pod then scores the node as unchanged)."""
    local = node.memo.get((workload.serial, shape))
    if local is not None:
        return local
    key = (workload.serial, workload.cpu_band(node.cpu_left), workload.cpu_band(node.cpu_left - shape.cpu),
           node.cpu_left < shape.cpu, tuple(sorted(node.idle)), node.model, shape)
    found = _CHOICES.get(key)
    if found is None:
        if len(_CHOICES) >= _MEMO_LIMIT:
            _CHOICES.clear()
        found = _CHOICES[key] = _choice(workload, node, shape)
    result = node.memo[(workload.serial, shape)] = (found[0], _devices(node, shape, found[1]))
    return result


def workload_from(args: Mapping[str, Any]) -> Workload:
    return shared_workload(typical_pod_list(args.get("typicalPods") or ()))


class FGDScore:
    """Score plugin: the (node, device) that raises fragmentation least."""

    name = NAME
    args_schema = ARGS_SCHEMA
    validate_args = staticmethod(validate_args)

    def __init__(self, args: Mapping[str, Any] | None = None, handle: "Handle | None" = None) -> None:
        args = dict(args or {})
        raise_invalid(validate_args(args))
        self.workload = workload_from(args)
        self.state = state_for(handle)

    @hookimpl
    def score(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> "int | Status":
        return self._score(pod_shape(pod), pod, self.state.node(node_info))

    def score_nodes(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> list:
        if not pod.request():
            return [MAX_NODE_SCORE] * len(nodes)
        shape = pod_shape(pod)
        key = (self.workload.serial, shape)
        cache = self.state.nodes
        refresh = self.state.refresh
        out: list = []
        append = out.append
        for info in nodes:
            kept = cache.get(info)
            node = kept[1] if kept is not None and kept[0] == info.generation else refresh(info)
            found = node.memo.get(key)
            append(found[0] if found is not None else self._score(shape, pod, node))
        return out

    def _score(self, shape: PodShape, pod: "Pod", node: NodeGpu) -> "int | Status":
        if not pod.request():
            return MAX_NODE_SCORE
        if not model_matches(node.model, shape.model):
            return Status.as_status(f"Node ({node.name}) {node.model or 'without GPU'} does not match "
                                       f"GPU type request of pod {shape.model}")
        return memo_fgd_choice(self.workload, node, shape)[0]
