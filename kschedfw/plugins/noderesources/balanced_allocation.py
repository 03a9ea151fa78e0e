"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage stays balanced
(upstream ``noderesources/balanced_allocation.go``).

For each configured resource (args ``resources``, default cpu and memory) the fraction
``requested / allocatable`` (capped at 1) is computed from the pods' *real* requests; the node's
balance is ``int((1 - std) * 100)`` where ``std`` is the standard deviation of the fractions
(``|f1 - f2| / 2`` for two). Since v1.36 the score rewards the change the pod brings:
``50 + (50 + balance_with_pod - balance_without_pod) / 2`` (so 75 means "no change"). Extended
resources count only when the pod requests them. Best-effort pods are skipped at PreScore.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping

from kschedfw import hookimpl
from kschedfw.fwk.signers import requests_dra_backed_resource
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import MAX_NODE_SCORE, SignFragment
from kschedfw.fwk.node_reuse import Memo, NodeMemo, cluster_size, memo_score, memo_scores
from kschedfw.plugins.noderesources.fit import RESOURCES_SIGNER_NAME, compute_pod_resource_request
from kschedfw.plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES, PreScoreState, ResourceAllocationScorer, parse_resource_specs, trunc_div)
from kschedfw.plugins.noderesources.args import BALANCED_ALLOCATION_ARGS

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo

#: node name -> (NodeInfo, its generation, balance without the incoming pod)
WithoutPodCache = dict[str, tuple["NodeInfo", int, int]]

__all__ = ["NodeResourcesBalancedAllocation", "NAME", "PRE_SCORE_STATE_KEY",
           "balanced_resource_scorer", "balanced_resource_score"]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def _balance(fractions: list[float]) -> int:
    """``int((1 - std) * 100)`` for usage fractions already capped at 1."""
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / n
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / n)
    else:
        std = 0.0
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_score(requested: list[int], allocatable: list[int]) -> int:
    """``int((1 - std) * 100)`` over the usage fractions of the resources the node offers.

    ``std`` is ``|f1 - f2| / 2`` for two fractions, the population standard deviation for more,
    0 for fewer; each fraction ``requested / allocatable`` is capped at 1.
    """
    fractions = []
    for capacity, req in zip(allocatable, requested):
        if capacity == 0:
            continue
        fraction = req / capacity
        fractions.append(1.0 if fraction > 1 else fraction)
    return _balance(fractions)


def balanced_resource_scorer(requested: list[int], allocated: list[int],
                             allocatable: list[int]) -> int:
    """Score the improvement in balance the pod brings, in [50, 100]."""
    with_pod: list[float] = []
    without_pod: list[float] = []
    for capacity, req, used in zip(allocatable, requested, allocated):
        if capacity == 0:
            continue
        fraction = req / capacity
        with_pod.append(1.0 if fraction > 1 else fraction)
        fraction = used / capacity
        without_pod.append(1.0 if fraction > 1 else fraction)
    half = MAX_NODE_SCORE // 2
    return half + trunc_div(half + _balance(with_pod) - _balance(without_pod), 2)


class NodeResourcesBalancedAllocation:
    """Scores nodes by how balanced their resource usage is with the pod placed there."""

    name = NAME
    args_spec = BALANCED_ALLOCATION_ARGS
    args_schema = BALANCED_ALLOCATION_ARGS.schema
    validate_args = staticmethod(BALANCED_ALLOCATION_ARGS.validate)

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = args or {}
        self.handle = handle
        self.enable_dra_extended_resource = True  # v1.36 default (DRAExtendedResource)
        resources = parse_resource_specs(args.get("resources")) or DEFAULT_RESOURCES
        self.scorer = ResourceAllocationScorer(NAME, balanced_resource_scorer, resources,
                                               use_requested=True, pod_level=True)
        self._without_pod: WithoutPodCache = {}
        # Scores remembered per node for pods with the same requests (the Handle's memos, see
        # fwk.node_reuse): the cycle's CycleState, PreScore's per-node scorer and the memo
        # chosen for the requests.
        self._memos: NodeMemo[int] = handle.node_memo() if handle is not None else NodeMemo()
        self._cycle: tuple[CycleState | None, Callable[[NodeInfo], int] | None, Memo[int]] = (None, None, {})

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        pod_requests = self.scorer.pod_requests(pod)
        if self.scorer.is_best_effort(pod_requests):
            # Scoring best-effort pods by balance piles them onto the same node (kubernetes/kubernetes#129138).
            return Status.skip()
        fast = None
        if self.scorer.names == ("cpu", "memory"):
            cpu, memory = pod_requests
            fast = balanced_cpu_memory(cpu, memory, self._without_pod)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(pod_requests, fast))
        if fast is not None:
            self._cycle = (state, fast, self._memos.for_key(tuple(pod_requests),
                                                           cluster_size(self.handle, nodes)))
        else:
            self._cycle = (None, None, {})
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        cycle_state, fast, memo = self._cycle
        if state is cycle_state:
            assert fast is not None  # PreScore keeps a cycle only with its fast scorer
            # the score of an unchanged node for the same requests (fwk.node_reuse)
            value = memo_score(memo, fast, node_info)
            if value is not None:
                return value
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is not None:
            if s.fast is not None and node_info.node is not None:
                return s.fast(node_info)
            pod_requests = s.pod_requests
        else:
            pod_requests = self.scorer.pod_requests(pod)
            if self.scorer.is_best_effort(pod_requests):
                return 0
        return self.scorer.score(node_info, pod_requests)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                    ) -> list[int | Status] | None:
        """:meth:`score` for each node at once (hookspecs.WholeListScore): this cycle's memo
        without a call per node."""
        cycle_state, fast, memo = self._cycle
        if state is not cycle_state or fast is None:
            return None
        return memo_scores(memo, fast, nodes, lambda ni: self.score(state, pod, ni))

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        request = compute_pod_resource_request(pod)
        if self.enable_dra_extended_resource and requests_dra_backed_resource(
                request.scalar_resources, getattr(self.handle, "lister", None)):
            return None, Status.unschedulable("signature disabled when dra extended resources are used in the cluster")
        value = (request.milli_cpu, request.memory, request.ephemeral_storage,
                 tuple(sorted(request.scalar_resources.items())))
        return [SignFragment(RESOURCES_SIGNER_NAME, value)], None


def balanced_cpu_memory(pod_cpu: int, pod_memory: int,
                        without_cache: WithoutPodCache) -> Callable[[NodeInfo], int]:
    """``balanced_resource_scorer`` for exactly ``[cpu, memory]`` (the default), reading
    NodeInfo directly; same result as the general path. A node's balance without the pod only
    changes with the node, so ``without_cache`` keeps it per NodeInfo and generation."""
    half = MAX_NODE_SCORE // 2

    def score(node_info: NodeInfo) -> int:
        node = node_info.node
        assert node is not None  # Score sees only NodeInfos with a node
        allocatable = node.allocatable
        used = node_info.requested
        cpu_capacity = allocatable.get("cpu", 0)
        memory_capacity = allocatable.get("memory", 0)
        cpu = used.get("cpu", 0)
        memory = used.get("memory", 0)
        key = node.name
        cached = without_cache.get(key)
        if cached is not None and cached[0] is node_info and cached[1] == node_info.generation:
            without = cached[2]
        else:
            without = _balance2(cpu, memory, cpu_capacity, memory_capacity)
            without_cache[key] = (node_info, node_info.generation, without)
        with_pod = _balance2(cpu + pod_cpu, memory + pod_memory, cpu_capacity, memory_capacity)
        return half + trunc_div(half + with_pod - without, 2)

    return score


def _balance2(cpu: int, memory: int, cpu_capacity: int, memory_capacity: int) -> int:
    """``_balance`` of the cpu and memory usage fractions, for the resources the node offers."""
    if cpu_capacity and memory_capacity:
        f_cpu = cpu / cpu_capacity
        f_memory = memory / memory_capacity
        if f_cpu > 1:
            f_cpu = 1.0
        if f_memory > 1:
            f_memory = 1.0
        return int((1 - abs((f_cpu - f_memory) / 2)) * float(MAX_NODE_SCORE))
    return MAX_NODE_SCORE  # one fraction or none: no deviation
