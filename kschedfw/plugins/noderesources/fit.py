"""NodeResourcesFit: does the node have room for the pod's requests? (upstream ``noderesources/fit.go``)

PreFilter computes the pod's request once (containers summed, init containers as the peak of
their phase, sidecars counted throughout, pod-level requests and overhead included). Filter
checks, per node, the pod count and every requested resource against ``allocatable - requested``
and reports *all* shortages in upstream's order: ``Too many pods``, ``Insufficient cpu``,
``Insufficient memory``, ``Insufficient ephemeral-storage``, then ``Insufficient <name>`` for each
extended/hugepages resource. A shortage is UnschedulableAndUnresolvable when the pod asks for
more than the node's whole allocatable (evicting pods would not help), else Unschedulable.

PreScore/Score rank feasible nodes with the configured ``scoringStrategy`` (LeastAllocated,
MostAllocated or RequestedToCapacityRatio) over ``scoringStrategy.resources``. Every strategy
scores the incoming pod by its container requests, leaving its pod-level requests out, as upstream
v1.36 does (see ``resource_allocation``).

Args (already defaulted): ``ignoredResources`` (extended resources not checked),
``ignoredResourceGroups`` (extended resource name prefixes before ``/`` not checked),
``scoringStrategy: {type, resources: [{name, weight}], requestedToCapacityRatio: {shape:
[{utilization, score}]}}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import attrs

from kschedfw import hookimpl
from kschedfw.api import Node, Pod
from kschedfw.api.resources import is_extended_resource
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint,
                                 EventResource, QueueingHint)
from kschedfw.fwk.signers import requests_dra_backed_resource
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.status import new_rejection as _new_rejection  # the hot-path constructor
from kschedfw.fwk.node_reuse import Memo, NodeMemo, cluster_size, memo_score, memo_scores
from kschedfw.fwk.types import NodeInfo, SignFragment
from kschedfw.plugins.dynamicresources.extended import DeviceClassResolver, is_dra_extended_resource_name
from kschedfw.plugins.dynamicresources.manager import manager_for
from kschedfw.plugins.noderesources.least_allocated import least_allocated_cpu_memory, least_resource_scorer
from kschedfw.plugins.noderesources.most_allocated import most_resource_scorer
from kschedfw.plugins.noderesources.requested_to_capacity_ratio import (
    parse_shape, requested_to_capacity_ratio_scorer)
from kschedfw.plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES, PreScoreState, ResourceAllocationScorer, is_scalar_resource_name,
    parse_resource_specs)
from kschedfw.plugins.noderesources.args import FIT_ARGS

if TYPE_CHECKING:
    from kschedfw.fwk.cycle_state import CycleState, PodGroupCycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.podgroup import PodGroupAssignments, PodGroupInfo
    from kschedfw.fwk.types import PreFilterResult

__all__ = [
    "NodeResourcesFit", "PodResourceRequest", "InsufficientResource", "compute_pod_resource_request",
    "fits", "fits_request", "is_fit", "have_any_requested_resources_increased", "get_scorer",
    "NAME", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY", "RESOURCES_SIGNER_NAME",
    "LEAST_ALLOCATED", "MOST_ALLOCATED", "REQUESTED_TO_CAPACITY_RATIO",
]

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
RESOURCES_SIGNER_NAME = "v1.Pod.Spec.ContainerRequestsAndOverheads()"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


# --------------------------------------------------------------------------- the pod's request

@attrs.frozen(slots=True)
class PodResourceRequest:
    """The pod's request as Filter checks it (upstream ``preFilterState`` / ``framework.Resource``).

    ``scalar_resources`` holds extended, prefixed-native and hugepages resources, zero amounts
    included, in the order the pod spec names them.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalar_resources: Mapping[str, int] = attrs.field(factory=dict)

    def is_zero(self) -> bool:
        return (self.milli_cpu == 0 and self.memory == 0 and self.ephemeral_storage == 0
                and not self.scalar_resources)

    def clone(self) -> "PodResourceRequest":
        return self  # never mutated


def compute_pod_resource_request(pod: Pod) -> PodResourceRequest:
    """The pod's request: containers summed, init containers at their phase peak, sidecars
    throughout, pod-level requests for cpu/memory/hugepages, plus overhead."""
    requests = pod.request()
    scalars = {name: amount for name, amount in requests.items() if is_scalar_resource_name(name)}
    return PodResourceRequest(requests.get("cpu", 0), requests.get("memory", 0),
                              requests.get("ephemeral-storage", 0), scalars)


class _PreFilterState:
    """PreFilter's output: the request plus the scalar resources this plugin checks, and those of
    them a DeviceClass backs (DRAExtendedResource: left to DynamicResources on a node that does
    not advertise them); ``checks``: what Filter compares, once per pod (see :func:`_checks`)."""

    __slots__ = ("request", "checked_scalars", "dra_backed", "checks")

    def __init__(self, request: PodResourceRequest, checked_scalars: tuple[tuple[str, int], ...],
                 dra_backed: frozenset[str] = frozenset()) -> None:
        self.request = request
        self.checked_scalars = checked_scalars
        self.dra_backed = dra_backed
        self.checks = _checks(request, checked_scalars)

    def clone(self) -> "_PreFilterState":
        return self  # never mutated


def _checked_scalars(request: PodResourceRequest, ignored_resources: frozenset[str],
                     ignored_groups: frozenset[str]) -> tuple[tuple[str, int], ...]:
    """Scalar resources Filter compares: non-zero and not ignored by the args."""
    out = []
    for name, amount in request.scalar_resources.items():
        if amount == 0:
            continue
        if is_extended_resource(name):
            if name in ignored_resources:
                continue
            if ignored_groups and name.split("/", 1)[0] in ignored_groups:
                continue
        out.append((name, amount))
    return tuple(out)


# --------------------------------------------------------------------------- the check

#: what Filter compares against a node: ``(milli_cpu, memory, ephemeral_storage, checked scalars)``
FitRequestKey = tuple[int, int, int, tuple[tuple[str, int], ...]]


def fit_request_key(state: CycleState) -> FitRequestKey | None:
    """What Filter compares against a node, from the PreFilter state: ``(milli_cpu, memory,
    ephemeral_storage, checked scalar resources)``; None without it, or when a DeviceClass
    backs a requested resource (the verdict then depends on the classes too)."""
    fit_state = state.get(PRE_FILTER_STATE_KEY)
    request = getattr(fit_state, "request", None)
    scalars = getattr(fit_state, "checked_scalars", None)
    if request is None or scalars is None or getattr(fit_state, "dra_backed", None):
        return None
    return request.milli_cpu, request.memory, request.ephemeral_storage, scalars


@attrs.frozen(slots=True)
class InsufficientResource:
    """One resource the node lacks for the pod (upstream ``InsufficientResource``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


#: one resource Filter compares: ``(name, requested amount, the reason when it does not fit)``
Check = tuple[str, int, str]


def _checks(request: PodResourceRequest, checked_scalars: tuple[tuple[str, int], ...]) -> tuple[Check, ...]:
    """The requested (non-zero) resources Filter compares, in upstream's order: cpu, memory,
    ephemeral-storage, then the checked scalar resources."""
    return tuple((name, amount, f"Insufficient {name}")
                 for name, amount in (("cpu", request.milli_cpu), ("memory", request.memory),
                                      ("ephemeral-storage", request.ephemeral_storage), *checked_scalars)
                 if amount > 0)


def _fits(request: PodResourceRequest, checked_scalars: tuple[tuple[str, int], ...],
          node_info: NodeInfo, dra_backed: frozenset[str] = frozenset()) -> list[InsufficientResource]:
    """What the node lacks for the pod, in upstream's order: pods, then each of :func:`_checks`;
    a resource in ``dra_backed`` that the node does not advertise is DynamicResources' to check
    (upstream shouldDelegateResourceToDRA)."""
    out: list[InsufficientResource] = []
    node = node_info.node
    alloc = node.allocatable if node is not None else {}
    allowed_pods = alloc.get("pods", 0)
    num_pods = len(node_info.pods)
    if num_pods + 1 > allowed_pods:
        out.append(InsufficientResource("pods", "Too many pods", 1, num_pods, allowed_pods))
    used = node_info.requested
    for name, amount, reason in _checks(request, checked_scalars):
        cap = alloc.get(name, 0)
        if dra_backed and cap <= 0 and name in dra_backed:
            continue
        in_use = used.get(name, 0)
        if amount > cap - in_use:
            out.append(InsufficientResource(name, reason, amount, in_use, cap, amount > cap))
    return out


#: Filter's verdict on a node that does not fit: the rejection's code and reasons
Verdict = tuple[Code, tuple[str, ...]]

_NO_ALLOCATABLE: Mapping[str, int] = {}


def _verdict(checks: tuple[Check, ...], node_info: NodeInfo,
             dra_backed: frozenset[str] = frozenset()) -> Verdict | None:
    """Filter's verdict to remember per node: None when the pod fits, else the rejection's code
    and reasons (a Status is built afresh from it for every caller). The reasons of
    :func:`_fits` without building its list (HOT PATH: once per node a memo does not answer)."""
    node = node_info.node
    alloc = node.allocatable if node is not None else _NO_ALLOCATABLE
    reasons: list[str] | None = None
    unresolvable = False
    if len(node_info.pods) + 1 > alloc.get("pods", 0):
        reasons = ["Too many pods"]
    if checks:
        used = node_info.requested
        for name, amount, reason in checks:
            cap = alloc.get(name, 0)
            if amount > cap - used.get(name, 0):
                if dra_backed and cap <= 0 and name in dra_backed:
                    continue
                if reasons is None:
                    reasons = [reason]
                else:
                    reasons.append(reason)
                if amount > cap:
                    unresolvable = True
    if reasons is None:
        return None
    return (Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable), tuple(reasons)


#: stands in for the PreFilter state until the first PreFilter (never read: no cycle matches it)
_NO_PRE_FILTER_STATE = _PreFilterState(PodResourceRequest(), ())


def _status_of(verdict: Verdict | None) -> Status | None:
    """A new Status for a verdict: ``Status.unschedulable(*reasons)`` (or unresolvable) without
    the classmethod call and the unpacking (HOT PATH: once per full node per pod)."""
    return None if verdict is None else _new_rejection(Status, verdict[0], verdict[1])


def fits_request(request: PodResourceRequest, node_info: NodeInfo,
                 ignored_resources: Iterable[str] = (),
                 ignored_resource_groups: Iterable[str] = (),
                 resolver: DeviceClassResolver | None = None) -> list[InsufficientResource]:
    """Every resource ``node_info`` lacks for ``request``, in upstream's order (upstream
    fitsRequest); ``resolver``: the DeviceClasses backing extended resources (DRAExtendedResource)."""
    checked = _checked_scalars(request, frozenset(ignored_resources),
                               frozenset(ignored_resource_groups))
    return _fits(request, checked, node_info, _dra_backed(checked, resolver))


def fits(pod: Pod, node_info: NodeInfo, resolver: DeviceClassResolver | None = None) -> list[InsufficientResource]:
    """What ``node_info`` lacks to host ``pod`` (upstream ``Fits``, no ignored resources)."""
    return fits_request(compute_pod_resource_request(pod), node_info, resolver=resolver)


def is_fit(pod: Pod, node: Node | None, resolver: DeviceClassResolver | None = None) -> bool:
    """Would the pod fit on an empty ``node``? False for no node (upstream ``isFit``)."""
    if node is None:
        return False
    return not fits(pod, NodeInfo(node=node), resolver)


def _dra_backed(checked_scalars: tuple[tuple[str, int], ...], resolver: DeviceClassResolver | None) -> frozenset[str]:
    """The checked resources a DeviceClass backs (none without a resolver: the gate is off)."""
    if not resolver:
        return frozenset()
    return frozenset(name for name, _ in checked_scalars
                     if is_dra_extended_resource_name(name) and resolver.get(name) is not None)


def have_any_requested_resources_increased(pod: Pod, original: Node, modified: Node,
                                           resolver: DeviceClassResolver | None = None) -> bool:
    """Did the node's allocatable grow for the pod count or a resource the pod requests, or does
    the node leave a requested resource to a DeviceClass?"""
    before, after = original.allocatable, modified.allocatable
    if after.get("pods", 0) > before.get("pods", 0):
        return True
    request = compute_pod_resource_request(pod)
    if request.is_zero():
        return False
    for name, amount in (("cpu", request.milli_cpu), ("memory", request.memory),
                         ("ephemeral-storage", request.ephemeral_storage)):
        if amount > 0 and after.get(name, 0) > before.get(name, 0):
            return True
    for name, amount in request.scalar_resources.items():
        if amount != 0 and after.get(name, 0) > before.get(name, 0):
            return True
        if amount != 0 and resolver and after.get(name, 0) <= 0 and resolver.get(name) is not None:
            return True
    return False


# --------------------------------------------------------------------------- scoring strategies

def get_scorer(strategy: Mapping[str, Any] | None) -> ResourceAllocationScorer:
    """The scorer for a ``scoringStrategy`` args mapping (upstream getScorer)."""
    if strategy is None:
        raise ValueError("scoring strategy not specified")
    kind = strategy.get("type") or LEAST_ALLOCATED
    resources = parse_resource_specs(strategy.get("resources"))
    weights = [w for _, w in resources]
    if kind == LEAST_ALLOCATED:
        fn = least_resource_scorer(weights)
    elif kind == MOST_ALLOCATED:
        fn = most_resource_scorer(weights)
    elif kind == REQUESTED_TO_CAPACITY_RATIO:
        params = strategy.get("requestedToCapacityRatio") or {}
        fn = requested_to_capacity_ratio_scorer(weights, parse_shape(params.get("shape")))
    else:
        raise ValueError(f"scoring strategy {kind} is not supported")
    return ResourceAllocationScorer(str(kind), fn, resources)


def _defaulted_strategy(args: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream SetDefaults_NodeResourcesFitArgs for the scoring strategy (idempotent)."""
    strategy = dict(args.get("scoringStrategy") or {"type": LEAST_ALLOCATED})
    if not strategy.get("resources"):
        strategy["resources"] = [{"name": n, "weight": w} for n, w in DEFAULT_RESOURCES]
    return strategy


# --------------------------------------------------------------------------- the plugin

class NodeResourcesFit:
    """Filters nodes without room for the pod's requests and scores by the scoring strategy."""

    name = NAME
    args_spec = FIT_ARGS
    args_schema = FIT_ARGS.schema
    validate_args = staticmethod(FIT_ARGS.validate)

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = args or {}
        self.handle = handle
        self.ignored_resources = frozenset(args.get("ignoredResources") or ())
        self.ignored_resource_groups = frozenset(args.get("ignoredResourceGroups") or ())
        self.scorer = get_scorer(_defaulted_strategy(args))
        # Feature gates as in a default v1.36 scheduler (instance attributes so tests can flip them).
        self.enable_in_place_pod_vertical_scaling = True
        self.enable_scheduling_queue_hint = True
        gates = getattr(handle, "feature_gates", None)
        self.enable_dra_extended_resource = gates is None or gates.enabled("DRAExtendedResource")
        # Per-node results remembered for pods with the same request (the Handle's memos, see
        # fwk.node_reuse): the cycle's CycleState, the memo PreFilter / PreScore chose for it,
        # and PreScore's per-node scorer.
        self._fit_memos: NodeMemo[Verdict | None] = handle.node_memo() if handle is not None else NodeMemo()
        self._filter_cycle: tuple[CycleState | None, _PreFilterState, Memo[Verdict | None]] = (
            None, _NO_PRE_FILTER_STATE, {})
        self._score_memos: NodeMemo[int] = handle.node_memo() if handle is not None else NodeMemo()
        self._score_cycle: tuple[CycleState | None, Callable[[NodeInfo], int] | None, Memo[int]] = (
            None, None, {})

    # -- PreFilter / Filter
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        request = compute_pod_resource_request(pod)
        checked = _checked_scalars(request, self.ignored_resources, self.ignored_resource_groups)
        dra_backed = _dra_backed(checked, self._resolver()) if checked else frozenset()
        pre_filter_state = _PreFilterState(request, checked, dra_backed)
        state.write(PRE_FILTER_STATE_KEY, pre_filter_state)
        # Filter's verdict depends on these and the NodeInfo only (is_zero is a shortcut).
        key = (request.milli_cpu, request.memory, request.ephemeral_storage, checked, dra_backed)
        memo = self._fit_memos.for_key(key, cluster_size(self.handle, nodes))
        self._filter_cycle = (state, pre_filter_state, memo)
        return None, None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        cycle_state, s, memo = self._filter_cycle
        verdict_memo: Memo[Verdict | None] | None = memo
        if state is cycle_state:
            # HOT PATH: an unchanged node gives the same request the same verdict (the rule of
            # fwk.node_reuse, inlined).
            hit = memo.get(node_info)
            if hit is not None and hit[0] == node_info.generation and hit[1] is node_info.node:
                return _status_of(hit[2])
        else:
            verdict_memo = None
            s = state.get(PRE_FILTER_STATE_KEY)
            if s is None:
                return Status.as_status(
                    f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        verdict = _verdict(s.checks, node_info, s.dra_backed)
        if verdict_memo is not None and node_info.node is not None:
            verdict_memo[node_info] = (node_info.generation, node_info.node, verdict)
        return _status_of(verdict)

    def filter_verdict_key(self, state: CycleState, pod: Pod) -> FitRequestKey | None:
        """Filter reads the NodeInfo's pod count and requested resources and the request its
        PreFilter stored (see hookspecs.FilterVerdictKey); None without that state."""
        return fit_request_key(state)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None] | None:
        """:meth:`filter` for each node at once (hookspecs.WholeListFilter): this cycle's memo of
        verdicts (fits, or the rejection's code and reasons), without a call per node. An
        unchanged full node costs a dict hit and a fresh Status (the framework sets
        ``Status.plugin`` on what it gets, so a remembered Status is never handed out)."""
        cycle_state, s, memo = self._filter_cycle
        if state is not cycle_state:
            return None
        get = memo.get
        checks, dra_backed = s.checks, s.dra_backed
        new_rejection, status_cls = _new_rejection, Status
        out: list[Status | None] = [None] * len(nodes)
        for i, ni in enumerate(nodes):
            hit = get(ni)
            node = ni.node
            # (the rule of fwk.node_reuse, inlined: once per node)
            if hit is not None and hit[1] is node and hit[0] == ni.generation:
                verdict = hit[2]
            else:
                verdict = _verdict(checks, ni, dra_backed)
                if node is not None:
                    memo[ni] = (ni.generation, node, verdict)
            if verdict is not None:
                out[i] = new_rejection(status_cls, verdict[0], verdict[1])
        return out

    def _resolver(self) -> DeviceClassResolver | None:
        """Which DeviceClass backs which extended resource (None: DRAExtendedResource is off or
        there is no lister)."""
        lister = getattr(self.handle, "lister", None)
        if not self.enable_dra_extended_resource or lister is None:
            return None
        return manager_for(lister).class_resolver(lister.list("DeviceClass"))

    # -- PreScore / Score
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        pod_requests = self.scorer.pod_requests(pod)
        fast = None
        if self.scorer.name == LEAST_ALLOCATED and self.scorer.names == ("cpu", "memory"):
            fast = least_allocated_cpu_memory(self.scorer.weights, *pod_requests)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(pod_requests, fast))
        if fast is not None:
            memo = self._score_memos.for_key(tuple(pod_requests), cluster_size(self.handle, nodes))
            self._score_cycle = (state, fast, memo)
        else:
            self._score_cycle = (None, None, {})
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        cycle_state, fast, memo = self._score_cycle
        if state is cycle_state:
            assert fast is not None  # PreScore keeps a cycle only with its fast scorer
            # the score of an unchanged node for the same requests (fwk.node_reuse)
            value = memo_score(memo, fast, node_info)
            if value is not None:
                return value
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is not None and s.fast is not None and node_info.node is not None:
            return s.fast(node_info)
        pod_requests = s.pod_requests if s is not None else self.scorer.pod_requests(pod)
        return self.scorer.score(node_info, pod_requests)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                    ) -> list[int | Status] | None:
        """:meth:`score` for each node at once (hookspecs.WholeListScore): this cycle's memo
        without a call per node."""
        cycle_state, fast, memo = self._score_cycle
        if state is not cycle_state or fast is None:
            return None
        return memo_scores(memo, fast, nodes, lambda ni: self.score(state, pod, ni))

    @hookimpl
    def score_placement(self, state: PodGroupCycleState, pod_group: PodGroupInfo,
                        placement: PodGroupAssignments) -> int | Status:
        """PlacementScore: MostAllocated, whatever the Score strategy, over the placement as one
        node: the proposed pods' requests plus what its nodes hold, against their summed
        allocatable (upstream scorePlacement). A scalar resource counts once a pod asks for it."""
        scorer = get_scorer({"type": MOST_ALLOCATED,
                             "resources": [{"name": n, "weight": w} for n, w in self.scorer.resources]})
        n = len(scorer.names)
        requested = [0] * n
        for assignment in placement.proposed_assignments:
            for i, request in enumerate(scorer.pod_requests(assignment.pod)):
                requested[i] += request
        allocated = [0] * n
        allocatable = [0] * n
        for node_info in placement.nodes:
            # ``requested`` grows node by node, as upstream's: only its zeros matter here.
            _, node_allocated, node_allocatable = scorer.node_vectors(node_info, requested)
            for i in range(n):
                allocatable[i] += node_allocatable[i]
                allocated[i] += node_allocated[i]
                requested[i] += node_allocated[i]
        return scorer.scorer(requested, allocated, allocatable)

    # -- batching signature
    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        request = compute_pod_resource_request(pod)
        if self.enable_dra_extended_resource and requests_dra_backed_resource(
                request.scalar_resources, getattr(self.handle, "lister", None)):
            return None, Status.unschedulable("signature disabled when dra extended resources are used in the cluster")
        value = (request.milli_cpu, request.memory, request.ephemeral_storage,
                 tuple(sorted(request.scalar_resources.items())))
        return [SignFragment(RESOURCES_SIGNER_NAME, value)], None

    # -- requeueing
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.Delete
        if self.enable_in_place_pod_vertical_scaling:
            # An in-place scale-down of another pod may free room.
            pod_actions |= ActionType.UpdatePodScaleDown
        # Without queueing hints, Node/Add can be missed by the pre-check, so label and taint
        # updates are registered too (upstream issue 109437).
        node_actions = (ActionType.Add | ActionType.UpdateNodeAllocatable
                        | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel)
        if self.enable_scheduling_queue_hint:
            node_actions = ActionType.Add | ActionType.UpdateNodeAllocatable
        events = [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, pod_actions),
                                 self.is_schedulable_after_pod_event),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_actions),
                                 self.is_schedulable_after_node_change),
        ]
        if self.enable_dra_extended_resource:
            # A DeviceClass may start backing an extended resource the pod waits for.
            events.append(ClusterEventWithHint(
                ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update),
                self.is_schedulable_after_device_class_event))
        return events

    def is_schedulable_after_pod_event(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A pod was deleted or scaled down: could that free room for ``pod``?"""
        original, modified = _as(Pod, old_obj, new_obj)
        if modified is None:
            if original is None:
                raise TypeError("pod event without an object")
            if not original.node_name and not original.nominated_node_name:
                # An unscheduled pod held nothing.
                return QueueingHint.QueueSkip
            return QueueingHint.Queue
        if not self.enable_in_place_pod_vertical_scaling:
            return QueueingHint.QueueSkip
        if original is None or not _is_schedulable_after_pod_scale_down(pod, original, modified):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A node was added or its allocatable changed: may ``pod`` fit now?"""
        original, modified = _as(Node, old_obj, new_obj)
        resolver = self._resolver()
        if not is_fit(pod, modified, resolver):
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.Queue
        if not have_any_requested_resources_increased(pod, original, modified, resolver):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_device_class_event(self, pod: Pod, old_obj: Any,
                                                new_obj: Any) -> QueueingHint:
        """A DeviceClass was added or changed its extended resource name: does the pod request it?"""
        for obj in (old_obj, new_obj):
            if obj is not None and _device_class_parts(obj) is None:
                raise TypeError(f"expected a DeviceClass, got {type(obj).__name__}")
        if new_obj is None:
            raise TypeError("expected a DeviceClass, got None")
        new_name, new_ern = _device_class_parts(new_obj)  # type: ignore[misc]
        requests = pod.request()
        if old_obj is not None:
            _, old_ern = _device_class_parts(old_obj)  # type: ignore[misc]
            if (old_ern or "") == (new_ern or ""):
                return QueueingHint.QueueSkip
        elif f"deviceclass.resource.kubernetes.io/{new_name}" in requests:
            # Only an added class can newly provide the implicit name; names never change.
            return QueueingHint.Queue
        if new_ern is not None and new_ern in requests:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _as(kind: type, old_obj: Any, new_obj: Any) -> tuple[Any, Any]:
    """Upstream ``schedutil.As``: both objects (or None) must be of ``kind``."""
    for obj in (old_obj, new_obj):
        if obj is not None and not isinstance(obj, kind):
            raise TypeError(f"expected a {kind.__name__}, got {type(obj).__name__}")
    return old_obj, new_obj


def _is_schedulable_after_pod_scale_down(target: Pod, original: Pod, modified: Pod) -> bool:
    """The target pod itself scaled down, or a scheduled pod shrank a resource the target requests."""
    if modified.uid == target.uid:
        return True
    if not modified.node_name:
        return False
    before = compute_pod_resource_request(original)
    after = compute_pod_resource_request(modified)
    for name, amount in target.request().items():
        if amount == 0:
            continue
        if name == "cpu":
            if before.milli_cpu > after.milli_cpu:
                return True
        elif name == "memory":
            if before.memory > after.memory:
                return True
        elif name == "ephemeral-storage":
            if before.ephemeral_storage > after.ephemeral_storage:
                return True
        elif is_scalar_resource_name(name):
            if before.scalar_resources.get(name, 0) > after.scalar_resources.get(name, 0):
                return True
    return False


def _device_class_parts(obj: Any) -> tuple[str, str | None] | None:
    """``(name, spec.extendedResourceName)`` of a DeviceClass given as an object or a manifest."""
    if isinstance(obj, dict):
        if obj.get("kind", "DeviceClass") != "DeviceClass":
            return None
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        return meta.get("name", ""), spec.get("extendedResourceName")
    kind = getattr(obj, "kind", None)
    if kind != "DeviceClass":
        return None
    spec = getattr(obj, "spec", None) or {}
    return getattr(obj, "name", ""), spec.get("extendedResourceName")
