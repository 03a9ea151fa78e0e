"""What the GPU policy Score plugins share: args, the profile's node states, a score per
(node state, pod shape) kept on the state, and the whole-list form."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import Status, hookimpl
from kschedfw.api.field import FieldError

from kschedfw_gpushare.args import raise_invalid, check_methods, schema
from kschedfw_gpushare.nodestate import NodeGpu, state_for
from kschedfw_gpushare.resources import PodShape, pod_shape

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo
    from kschedfw.api import Pod

def go_quo(a: int, b: int) -> int:
    """Integer division truncated toward zero, as Go divides."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_div(a: float, b: float) -> float:
    """Float division as Go does it: ±Inf or NaN for a zero divisor instead of an exception."""
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def model_mismatch(node: NodeGpu, shape: PodShape) -> Status:
    """The simulator's error for a node Open-Gpu-Share's Filter would have removed."""
    return Status.as_status(f"Node ({node.name}) {node.model or 'without GPU'} does not match GPU type "
                               f"request of pod {shape.model}")


class GpuScore:
    """Base of the policy plugins: subclasses define ``name`` and ``node_score``."""

    name = ""
    args_schema: dict[str, Any] = schema()

    @staticmethod
    def validate_args(args: Mapping[str, Any]) -> list[FieldError]:
        return check_methods(args)

    def __init__(self, args: Mapping[str, Any] | None = None, handle: "Handle | None" = None) -> None:
        args = dict(args or {})
        raise_invalid(self.validate_args(args))
        self.args = args
        self.state = state_for(handle)

    def node_score(self, shape: PodShape, node: NodeGpu) -> Any:
        raise NotImplementedError

    def _memo_score(self, shape: PodShape, node: NodeGpu) -> Any:
        key = (self.name, shape)
        found = node.memo.get(key)
        if found is None:
            found = node.memo[key] = self.node_score(shape, node)
        return found

    @hookimpl
    def score(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> Any:
        return self._memo_score(pod_shape(pod), self.state.node(node_info))

    def score_nodes(self, state: "CycleState", pod: "Pod", nodes: "list[NodeInfo]") -> list:
        shape = pod_shape(pod)
        key = (self.name, shape)
        cache = self.state.nodes
        refresh = self.state.refresh
        node_score = self.node_score
        out: list = []
        append = out.append
        for info in nodes:
            kept = cache.get(info)
            node = kept[1] if kept is not None and kept[0] == info.generation else refresh(info)
            found = node.memo.get(key)
            if found is None:
                found = node.memo[key] = node_score(shape, node)
            append(found)
        return out
