"""What every node-resources scorer shares (upstream ``noderesources/resource_allocation.go``).

A :class:`ResourceAllocationScorer` holds the configured ``resources`` (``[{name, weight}]``) and
a strategy function ``scorer(requested, allocated, allocatable) -> int`` that receives, per
configured resource and in configuration order:

* ``allocatable[i]``: what the node offers (0 means "leave this resource out");
* ``allocated[i]``: what the pods already on the node request;
* ``requested[i]``: ``allocated[i]`` plus the incoming pod's request.

NodeResourcesFit's strategies count cpu and memory with the scoring defaults (100m / 200Mi for a
container that requests nothing, via ``NodeInfo.non_zero_requested``); BalancedAllocation uses the
real requests (``use_requested``). An extended resource the pod does not request, and any resource
the node does not offer, are left out of the score.

Only BalancedAllocation reads the incoming pod's pod-level requests (``spec.resources``,
``pod_level``): upstream v1.36 builds NodeResourcesFit's scorers (``nodeResourceStrategyTypeMap`` in
``fit.go``) without ``enablePodLevelResources``, so ``calculatePodResourceRequest`` skips them
and Fit scores the pod by its containers (init and sidecar containers at their peak, 100m / 200Mi
for each container naming no cpu / memory request) plus its overhead. The pods already on the node
count with their pod-level requests in both (``NodeInfo``), as does Filter. kschedfw mirrors this
because it is what kube-scheduler does in clusters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from kschedfw.fwk.status import Status

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.types import NodeInfo

__all__ = [
    "ResourceAllocationScorer", "ScorerFn", "DEFAULT_RESOURCES", "is_scalar_resource_name",
    "parse_resource_specs", "trunc_div",
]

ScorerFn = Callable[[list[int], list[int], list[int]], int]

# The resources every strategy scores when the args name none (upstream ``defaultResourceSpec``).
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))

# How a configured resource is read from a NodeInfo.
_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _UNTRACKED = range(5)


def is_scalar_resource_name(name: str) -> bool:
    """Resources the scheduler tracks beyond cpu, memory, ephemeral-storage and pods.

    Upstream ``IsScalarResourceName``: extended resources (``example.com/gpu``), prefixed native
    resources (``kubernetes.io/...``), ``hugepages-*`` and ``attachable-volumes-*``.
    """
    if "/" in name:
        return "kubernetes.io/" in name or not name.startswith("requests.")
    return name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as Go's ``/`` on int64."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def parse_resource_specs(specs: Iterable[Any] | None) -> tuple[tuple[str, int], ...]:
    """``[{name: cpu, weight: 1}, ...]`` from plugin args -> ``(("cpu", 1), ...)``.

    A missing or zero weight counts as 1, as upstream's defaulting does.
    """
    out = []
    for spec in specs or ():
        if isinstance(spec, dict):
            name, weight = spec.get("name", ""), spec.get("weight") or 1
        else:
            name, weight = spec[0], spec[1] or 1
        out.append((str(name), int(weight)))
    return tuple(out)


def _kind(name: str) -> int:
    if name == "cpu":
        return _CPU
    if name == "memory":
        return _MEMORY
    if name == "ephemeral-storage":
        return _EPHEMERAL
    if is_scalar_resource_name(name):
        return _SCALAR
    return _UNTRACKED


class ResourceAllocationScorer:
    """Computes per-resource (requested, allocated, allocatable) for a node and scores it."""

    __slots__ = ("name", "resources", "names", "weights", "use_requested", "pod_level", "scorer", "_plan")

    def __init__(self, name: str, scorer: ScorerFn, resources: Sequence[tuple[str, int]],
                 *, use_requested: bool = False, pod_level: bool = False) -> None:
        self.name = name
        self.resources = tuple(resources)
        self.names = tuple(r[0] for r in self.resources)
        self.weights = tuple(r[1] for r in self.resources)
        self.use_requested = use_requested
        self.pod_level = pod_level
        self.scorer = scorer
        # Per scored resource: (index, name, read the scoring-counted requests (cpu, memory)
        # rather than the real ones, skip unless the pod requests it (extended resources)).
        plan = []
        for i, resource in enumerate(self.names):
            kind = _kind(resource)
            if kind != _UNTRACKED:  # e.g. "pods": never scored
                plan.append((i, resource, kind in (_CPU, _MEMORY), kind == _SCALAR))
        self._plan = tuple(plan)

    # -- the pod side (once per cycle, in PreScore)
    def pod_requests(self, pod: "Pod") -> list[int]:
        """The pod's request for each configured resource (upstream calculatePodResourceRequestList).

        With ``use_requested`` off, a container without a cpu or memory request counts 100m /
        200Mi. Overhead is included; pod-level requests only with ``pod_level`` (upstream
        ``enablePodLevelResources``, off for NodeResourcesFit: see the module docstring).
        """
        requests = pod.request(non_zero=not self.use_requested, pod_level=self.pod_level)
        return [requests.get(name, 0) for name in self.names]

    @staticmethod
    def is_best_effort(pod_requests: Sequence[int]) -> bool:
        """True when the pod requests none of the configured resources."""
        for r in pod_requests:
            if r != 0:
                return False
        return True

    # -- the node side (per node, in Score)
    def node_vectors(self, node_info: "NodeInfo",
                     pod_requests: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
        """``(requested, allocated, allocatable)`` per configured resource for this node.

        Upstream calculateNodeAllocatableRequest: an entry stays 0 when the resource is an
        extended one the pod does not request, or the node has none of it. cpu and memory count
        ``NodeInfo.non_zero_requested`` (``requested`` with ``use_requested``); every other
        resource the real ``requested``.
        """
        n = len(self.names)
        requested = [0] * n
        allocated = [0] * n
        allocatable = [0] * n
        node = node_info.node
        node_alloc = node.allocatable if node is not None else {}
        real = node_info.requested
        counted = real if self.use_requested else node_info.non_zero_requested
        for i, name, use_counted, needs_request in self._plan:
            pod_req = pod_requests[i]
            if needs_request and pod_req == 0:
                continue
            alloc = node_alloc.get(name, 0)
            if alloc == 0:
                continue
            used = (counted if use_counted else real).get(name, 0)
            allocatable[i] = alloc
            allocated[i] = used
            requested[i] = used + pod_req
        return requested, allocated, allocatable

    def score(self, node_info: "NodeInfo", pod_requests: Sequence[int]) -> int | Status:
        """The strategy's score for this node; Error ``resources not found`` when none configured."""
        if not self.names:
            return Status.as_status("resources not found")
        requested, allocated, allocatable = self.node_vectors(node_info, pod_requests)
        return self.scorer(requested, allocated, allocatable)


class PreScoreState:
    """The pod's requests per configured resource, computed once per cycle in PreScore, and a
    specialised per-node scorer for the default configuration (cpu and memory), if it applies."""

    __slots__ = ("pod_requests", "fast")

    def __init__(self, pod_requests: list[int],
                 fast: "Callable[[NodeInfo], int] | None" = None) -> None:
        self.pod_requests = pod_requests
        self.fast = fast

    def clone(self) -> "PreScoreState":
        return self  # never mutated
