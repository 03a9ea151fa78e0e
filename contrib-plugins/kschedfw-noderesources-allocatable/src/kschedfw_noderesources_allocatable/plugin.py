"""NodeResourcesAllocatable: prefer nodes with the least (or most) allocatable resources.

Port of scheduler-plugins ``pkg/noderesources`` (``allocatable.go`` and its
``resource_allocation.go``). The raw score of a node is the weighted mean of its allocatable
amounts of the configured resources, negated in ``Least`` mode; NormalizeScore maps the raw
scores of a cycle linearly onto [0, 100]. What the pod or the node's pods request plays no part.

Units are the scheduler's: cpu in millicores, memory and everything else in whole units, so the
default weights (cpu 1<<20, memory 1) make one millicore weigh as much as one MiB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import MAX_NODE_SCORE, MIN_NODE_SCORE, Status, hookimpl
from kschedfw.api.field import INVALID, FieldError

if TYPE_CHECKING:
    from kschedfw import CycleState, Handle, NodeInfo, NodeScore
    from kschedfw.api import Pod

NAME = "NodeResourcesAllocatable"
LEAST = "Least"
MOST = "Most"
SUPPORTED_MODES = (LEAST, MOST)

#: Upstream ``defaultNodeResourcesAllocatableResourcesToWeightMap``.
DEFAULT_RESOURCES: tuple[dict[str, Any], ...] = ({"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1})

ARGS_SCHEMA: dict[str, Any] = {
    "$comment": "NodeResourcesAllocatableArgs (scheduler-plugins apis/config/v1)",
    "type": "object",
    "properties": {
        "resources": {
            "type": "array",
            "description": "Resources to score with their weights (weights must be positive). "
                           "An empty list means the default.",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "weight": {"type": "integer"},
                },
                "additionalProperties": False,
            },
            "default": [dict(r) for r in DEFAULT_RESOURCES],
        },
        "mode": {
            "type": "string",
            "description": 'Least (favour nodes with less allocatable) or Most; "" means Least.',
            "default": LEAST,
        },
    },
    "additionalProperties": False,
}


def _resources(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    resources = args.get("resources")
    if not resources:  # upstream defaulting: an empty list gets the default set
        return [dict(r) for r in DEFAULT_RESOURCES]
    return [dict(r) if isinstance(r, Mapping) else {} for r in resources]


def _mode(args: Mapping[str, Any]) -> str:
    return args.get("mode") or LEAST


def validate_args(args: Mapping[str, Any]) -> list[FieldError]:
    """Upstream ``ValidateNodeResourcesAllocatableArgs`` (paths relative to the args)."""
    errors: list[FieldError] = []
    if args.get("resources"):
        for i, resource in enumerate(_resources(args)):
            weight = resource.get("weight", 0)
            if weight is None:
                weight = 0
            if weight <= 0:
                errors.append(FieldError(
                    ("resources", i, "weight"), INVALID,
                    f"resource weight of {resource.get('name', '')} should be a positive value, got :{weight}",
                    weight))
    mode = _mode(args)
    if mode not in SUPPORTED_MODES:
        errors.append(FieldError(("mode",), INVALID, "invalid support ModeType", mode))
    return errors


def _trunc_div(a: int, b: int) -> int:
    """Go's integer ``/``: rounds toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _is_scalar_resource_name(name: str) -> bool:
    """Upstream ``IsScalarResourceName``: extended, prefixed native, hugepages, attachable volumes."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "/" not in name:
        return False
    if "kubernetes.io/" in name:
        return True  # a prefixed native resource
    return not name.startswith("requests.")  # an extended resource


def allocatable_of(node_info: "NodeInfo", resource: str) -> int:
    """The node's allocatable amount of ``resource`` as upstream reads it (0 if not tracked)."""
    allocatable = node_info.allocatable
    if resource in ("cpu", "memory", "ephemeral-storage") or _is_scalar_resource_name(resource):
        return int(allocatable.get(resource, 0))
    return 0


class NodeResourcesAllocatable:
    """Score plugin: favour nodes by their allocatable resources (mode Least or Most)."""

    name = NAME
    args_schema = ARGS_SCHEMA
    validate_args = staticmethod(validate_args)

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle | None = None) -> None:
        args = dict(args or {})
        errors = validate_args(args)
        if errors:
            raise ValueError(_aggregate([str(e) for e in errors]))
        weights: dict[str, int] = {}
        for resource in _resources(args):
            weights[str(resource.get("name", ""))] = int(resource["weight"])
        self.resource_to_weight = weights
        self.mode = _mode(args)
        self.handle = handle

    # ------------------------------------------------------------------ scoring
    def _resource_score(self, capacity: int) -> int:
        if self.mode == LEAST:
            return -capacity
        if self.mode == MOST:
            return capacity
        return 0

    def raw_score(self, node_info: "NodeInfo") -> int:
        """Weighted mean of the node's allocatable resources (negative in Least mode)."""
        node_score = weight_sum = 0
        for resource, weight in self.resource_to_weight.items():
            node_score += self._resource_score(allocatable_of(node_info, resource)) * weight
            weight_sum += weight
        return _trunc_div(node_score, weight_sum)

    @hookimpl
    def score(self, state: "CycleState", pod: "Pod", node_info: "NodeInfo") -> int | Status:
        if node_info.node is None:
            return Status.as_status("node not found")
        if not self.resource_to_weight:
            return Status.as_status("resources not found")
        return self.raw_score(node_info)

    @hookimpl
    def normalize_score(self, state: "CycleState", pod: "Pod", scores: list["NodeScore"]) -> Status | None:
        """Map [lowest, highest] linearly onto [MinNodeScore, MaxNodeScore]; all equal -> min."""
        if not scores:
            return None
        highest = max(s.score for s in scores)
        lowest = min(s.score for s in scores)
        old_range = highest - lowest
        new_range = MAX_NODE_SCORE - MIN_NODE_SCORE
        for s in scores:
            if old_range == 0:
                s.score = MIN_NODE_SCORE
            else:
                s.score = (s.score - lowest) * new_range // old_range + MIN_NODE_SCORE
        return None


def _aggregate(messages: list[str]) -> str:
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
