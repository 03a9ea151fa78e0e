"""DynamicResources: ResourceClaims (DRA) of a pod (upstream ``plugins/dynamicresources``).

* Pods without ``spec.resourceClaims`` and without extended resources backed by a DeviceClass
  cost next to nothing, as upstream: PreEnqueue passes, PreFilter records an empty state and
  returns Skip, Filter is not reached, Score returns 0, Reserve/Unreserve/PreBind do nothing,
  PreBindPreFlight returns Skip and PostFilter answers Unschedulable ``no new claims to
  deallocate`` (which appears in every FitError of the default profile).
* PreEnqueue and PreFilter find the pod's claims (:mod:`.claims`) with upstream's texts. PreFilter
  checks the DeviceClasses of claims that need devices and builds the structured allocator
  (:mod:`.structured`) once per cycle over the ResourceSlices, with the devices that allocated
  claims and this scheduler's in-flight allocations take (:mod:`.manager`).
* Filter checks an allocated claim's node selector and its devices' binding conditions
  (:mod:`.binding`; ``resourceclaim not available on the node``) and runs the allocator on the
  node (``cannot allocate all claims``), keeping its result per node; Score rates the
  ``firstAvailable`` choices (:mod:`.scoring`).
* Reserve records the node's allocations as in flight, so the next pods do not take the same
  devices before PreBind writes them; Unreserve drops them. PreBind writes the allocation (with
  the ``resource.kubernetes.io/delete-protection`` finalizer and ``allocationTimestamp``) and
  ``reservedFor`` through ``handle.client.update_resource_claim_status(claim)``, and the claim
  as written counts until the lister shows it (upstream's assume cache); PostFilter asks for the
  deallocation of an allocated claim that no node can use the same way.
* Extended resources backed by a DeviceClass (DRAExtendedResource, beta and on in v1.36;
  :mod:`.extended`): a pod requesting one gets upstream's special claim, last among its claims.
  Filter gives it one ``exactly`` request per container and resource the node does not advertise
  (a node that does is NodeResourcesFit's, for the device plugin) and allocates it with the rest;
  Reserve keeps it in flight; PreBind creates it (``<pod>-extended-resources-``, owned by the pod)
  through ``handle.client.create_resource_claim``, writes its allocation like any claim's, then the
  pod's ``status.extendedResourceClaimStatus``; a special claim left from an earlier attempt is
  deleted in PostFilter and Unreserve (``ResourceClaimWriter``).
* Fast path (``Handle.fast_paths``), when every device is node-local and dedicated: the allocator
  is kept while slices and classes stay, the devices in use are counted from the claims that
  changed, and a node's allocation is reused for the next pod asking the same while none of the
  node's devices was taken or freed (the plain path recomputes everything; both agree). Not for a
  pod with extended resources backed by a DeviceClass (its claim differs per node).
* ``filterTimeout`` (DRASchedulerFilterTimeout, beta, on; default 10s, 0 turns it off) bounds one
  Filter call's search: past it, Filter returns the Error ``node <name>: timed out trying to
  allocate devices`` and the pod retries after backoff, as upstream.
* Devices with binding conditions (DRADeviceBindingConditions): Reserve marks the cycle
  (``BINDING_MAY_WAIT_KEY``) and PreBind, after writing the claims, re-reads them every 5 s through
  ``Handle.wait_for`` until every condition is true; a failure condition or ``bindingTimeout``
  (default 10m) is an Error, and the next attempt's PreFilter deallocates such a claim. On the
  embedded cluster the wait runs on the simulated clock while other pods are scheduled.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

import kschedfw
from kschedfw import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint,
                      Status)
from kschedfw.api import parse_object
from kschedfw.api.accessors import name_of, namespace_of, raw_of, spec_of, status_of, uid_of
from kschedfw.api.selectors import parse_node_selector
from kschedfw.api.timestamps import rfc3339
from kschedfw.api.validation import parse_duration
from kschedfw.fwk.cycle_state import BINDING_MAY_WAIT_KEY
from kschedfw.fwk.interface import ResourceClaimStatusWriter, ResourceClaimWriter
from kschedfw.fwk.types import MAX_NODE_SCORE, PreBindPreFlightResult
from kschedfw.plugins.dynamicresources.binding import (BindingFailed, BindingTimeout, has_binding_conditions,
                                                       ready_for_binding, timed_out)
from kschedfw.plugins.dynamicresources.claims import (ClaimError, can_be_reserved, claim_key, is_allocated,
                                                      is_reserved_for_pod, pod_resource_claims, reserved_for)
from kschedfw.plugins.dynamicresources import extended
from kschedfw.plugins.dynamicresources.extended import DeviceClassResolver
from kschedfw.plugins.dynamicresources.manager import ClaimsView, manager_for
from kschedfw.plugins.dynamicresources.scoring import ScoreError, compute_score
from kschedfw.plugins.dynamicresources.structured import (AllocationTimeout, Allocator, AllocatorError,
                                                          FailedAllocationOnNode, Features)
from kschedfw.plugins.dynamicresources.structured.diagnosis import unsatisfied_requests
from kschedfw.plugins.helper import default_normalize_score, default_normalize_values
from kschedfw.plugins.dynamicresources.args import ARGS

if TYPE_CHECKING:
    from kschedfw.api import NodeSelector, Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import (NodeInfo, NodeScore, NodeToStatus, PostFilterResult, PreFilterResult,
                                    SignFragment)

NAME = "DynamicResources"
STATE_KEY = NAME
# upstream resourceapi.Finalizer: set on a claim the scheduler allocates
CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"

MSG_NO_NEW_CLAIMS = "no new claims to deallocate"
#: how often PreBind re-reads claims waiting for binding conditions (upstream: 5 s)
BINDING_POLL_SECONDS = 5.0
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"


class _StateData:
    """Claims of the pod for this cycle (empty: nothing to do). Shared across clones."""

    __slots__ = ("claims", "available_on_nodes", "allocations", "to_allocate", "allocator", "node_allocations",
                 "unavailable_claims", "lock", "memo", "pending_by_node", "prioritized", "has_selectors",
                 "not_ready", "extended_index", "extended_requests", "extended_uid", "resolver", "node_extended",
                 "error_node")

    def __init__(self) -> None:
        self.claims: list[Any] = []  # ResourceClaims as listed, replaced by what PreBind wrote
        self.available_on_nodes: list[NodeSelector | None] = []
        # per claim: the allocation Reserve picked for it (None: nothing to allocate)
        self.allocations: list[dict[str, Any] | None] = []
        self.to_allocate: list[int] = []  # indices of the claims the allocator allocates
        self.allocator: Allocator | None = None
        # node name -> the allocator's results on it, one per claim in to_allocate
        self.node_allocations: dict[str, list[dict[str, Any]]] = {}
        self.unavailable_claims: set[int] = set()
        # DRAExtendedResource: the index of the special claim in claims (the last; -1: none), the
        # pod's requests of extended resources a DeviceClass may back, the special claim's uid as
        # PreFilter found it, the class mapping, and per node the claim as that node needs it
        # with the container request mappings (see extended)
        self.extended_index = -1
        self.extended_requests: dict[str, int] = {}
        self.extended_uid = ""
        self.resolver: DeviceClassResolver | None = None
        self.node_extended: dict[str, tuple[dict[str, Any], list[dict[str, str]]]] = {}
        self.lock = threading.Lock()  # Filter may run in parallel
        # node name -> (what its taken devices were, allocator results) for pods asking what
        # this one asks (None: no memo); see DynamicResources._allocate
        self.memo: dict[str, tuple[Any, list[dict[str, Any]] | None]] | None = None
        self.pending_by_node: dict[str, frozenset[Any]] = {}
        self.has_selectors = False  # whether an allocated claim is limited to some nodes
        # allocated claims whose devices failed binding or timed out waiting for it: no node helps
        self.not_ready: list[int] = []
        self.prioritized = False  # whether a claim has firstAvailable requests (else Score is 0)
        self.error_node: Any = None  # the node whose allocation raised an AllocatorError, for --explain

    def empty(self) -> bool:
        return not self.claims

    def clone(self) -> "_StateData":
        return self


class DynamicResources:
    """ResourceClaims of pods. Args: ``filterTimeout`` (default 10s), ``bindingTimeout``."""

    name = NAME
    args_spec = ARGS
    args_schema = ARGS.schema
    validate_args = staticmethod(ARGS.validate)

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        args = args or {}
        self.handle = handle
        gates = handle.feature_gates
        # upstream applies filterTimeout only with DRASchedulerFilterTimeout (beta, on); 0 turns it off
        self.filter_timeout_seconds = (self._seconds(args.get("filterTimeout"), 0.0)
                                       if gates.enabled("DRASchedulerFilterTimeout") else 0.0)
        self.binding_timeout_seconds = self._seconds(args.get("bindingTimeout"), 600.0)
        # PreBind waits for devices' binding conditions only with both gates (beta, on in v1.36)
        self.binding_conditions = (gates.enabled("DRADeviceBindingConditions")
                                   and gates.enabled("DRAResourceClaimDeviceStatus"))
        # upstream AllocatorFeatures: the allocator's optional behaviour follows the gates
        self.allocator_features = Features(device_taints=gates.enabled("DRADeviceTaints"),
                                           device_binding_and_status=self.binding_conditions)
        self.enable_extended_resource = gates.enabled("DRAExtendedResource")
        self.manager = manager_for(handle.lister)
        self.claims = ClaimsView(handle.lister, self.manager)
        self.fast_paths = handle.fast_paths
        # memo key -> node name -> (the node's taken devices, allocator results): see _allocate;
        # the last few keys (say the two templates a workload alternates)
        self.memo: dict[Any, dict[str, tuple[Any, list[dict[str, Any]] | None]]] = {}
        # the allocator of the last cycle and the slices and classes version it was built for
        self._allocator: tuple[int, Allocator] | None = None
        # the pod and state of the last PreFilter, for explain_rejection during that cycle
        self._last_cycle: tuple[str, _StateData] | None = None

    @staticmethod
    def _seconds(value: Any, default: float) -> float:
        if value is None:
            return default
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return parse_duration(str(value)) / 1e9

    def _claim_status_writer(self) -> Callable[[Any], Any] | None:
        """The client's ResourceClaim status write, if the backend offers one."""
        client = self.handle.client
        return client.update_resource_claim_status if isinstance(client, ResourceClaimStatusWriter) else None

    def _write_status(self, update: Callable[[Any], Any], raw: dict[str, Any]) -> Any:
        """Write a claim's status; the stored claim (or what was sent, if the client answers nothing)."""
        sent = parse_object(raw)
        written = update(sent)
        return written if written is not None else sent

    def _claim_writer(self) -> ResourceClaimWriter | None:
        """The client's ResourceClaim create and delete and pod status write, if it offers them."""
        client = self.handle.client
        return client if isinstance(client, ResourceClaimWriter) else None

    def _extended_claim(self, pod: Pod, data: _StateData) -> Any | None:
        """The special claim for the pod's extended resources that a DeviceClass backs: the one an
        earlier attempt created, else a new one in memory; None when no such resource is
        requested (upstream preFilterExtendedResources)."""
        requests = extended.dra_scalar_requests(pod)
        if not requests:
            return None
        resolver = self.manager.class_resolver(self.handle.lister.list("DeviceClass"))
        if not extended.backs_any(resolver, requests):
            return None
        data.extended_requests = requests
        data.resolver = resolver
        found = extended.find_extended_resource_claim(pod, self.claims.list("ResourceClaim", pod.namespace))
        return found if found is not None else extended.in_memory_claim(pod)

    # ------------------------------------------------------------------ queue
    @kschedfw.hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.resource_claims:
            return None
        try:
            pod_resource_claims(self.claims, pod)
        except ClaimError as exc:
            return Status.unresolvable(str(exc))
        return None

    @kschedfw.hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment], Status | None]:
        if pod.resource_claims:
            return [], Status.unschedulable("pods with dra resource claims are not signable")
        return [], None

    # ------------------------------------------------------------------ prefilter
    @kschedfw.hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        data = _StateData()
        state.write(STATE_KEY, data)
        self._last_cycle = (pod.uid, data)
        try:
            claims = [claim for _, claim in pod_resource_claims(self.claims, pod)]
        except ClaimError as exc:
            return None, Status.unresolvable(str(exc))
        special = self._extended_claim(pod, data) if self.enable_extended_resource else None
        if special is not None:
            data.extended_index = len(claims)
            data.extended_uid = uid_of(special)
            claims.append(special)
        if not claims:
            return None, Status.skip()
        selectors: list[NodeSelector | None] = []
        to_allocate: list[int] = []
        for index, claim in enumerate(claims):
            allocation = status_of(claim).get("allocation")
            selector = None
            if allocation is not None:
                if not can_be_reserved(claim) and not is_reserved_for_pod(pod, claim):
                    return None, Status.unresolvable("resourceclaim in use")
                if isinstance(allocation, dict) and allocation.get("nodeSelector") is not None:
                    try:
                        selector = parse_node_selector(allocation["nodeSelector"],
                                                       "status.allocation.nodeSelector")
                    except Exception as exc:
                        return None, Status.as_status(str(exc))
            else:
                if self.manager.pending_allocation(uid_of(claim)) is not None:
                    return None, Status.unresolvable(
                        f"resource claim {claim_key(claim)} is in the process of being allocated")
                # the special claim gets its requests per node in Filter
                status = self._check_device_classes(claim) if index != data.extended_index else None
                if status is not None:
                    return None, status
                to_allocate.append(index)
            selectors.append(selector)
        if to_allocate:
            lister = self.handle.lister
            manager = self.manager
            classes = manager.classes(lister.list("DeviceClass"))
            try:
                slices = manager.slices(lister.list("ResourceSlice"))
            except ValueError as exc:  # a slice the API server would have refused
                return None, Status.as_status(str(exc))
            allocated = manager.allocated_state(lister.list("ResourceClaim"))
            data.allocator = self._new_allocator([raw_of(claims[i]) for i in to_allocate], allocated, classes, slices)
            if self.fast_paths and manager.node_local_only and data.extended_index < 0:
                specs = (json.dumps(spec_of(claims[i]), sort_keys=True, default=str) for i in to_allocate)
                data.memo = self._memo_for((manager.version, *specs))
                data.pending_by_node = manager.pending_by_node
        # Recorded as upstream does once PreFilter got this far (PostFilter then reports
        # "still not schedulable" rather than "no new claims to deallocate").
        data.claims = claims
        data.available_on_nodes = selectors
        data.not_ready = self._not_ready_for_binding(claims) if self.binding_conditions else []
        data.has_selectors = bool(data.not_ready) or any(selector is not None for selector in selectors)
        data.allocations = [None] * len(claims)
        data.to_allocate = to_allocate
        data.prioritized = any(request.get("firstAvailable") for claim in claims
                               for request in (spec_of(claim).get("devices") or {}).get("requests") or ())
        return None, None

    def _new_allocator(self, claims: list[Mapping[str, Any]], allocated: Any, classes: list[Any],
                       slices: list[Any]) -> Allocator:
        """The allocator for this cycle. On the fast path the last one is reused while the slices
        and classes are the same: its parsed slices stay, the claims and taken devices are new
        (with node-local dedicated devices it keeps nothing else between allocations)."""
        version = self.manager.version
        if self.fast_paths and self.manager.node_local_only and self._allocator is not None \
                and self._allocator[0] == version:
            allocator = self._allocator[1]
            allocator.claims = claims
            allocator.allocated_state = allocated
            allocator.available_counters = {}
            return allocator
        allocator = Allocator(claims, allocated, [raw_of(c) for c in classes], slices, self.allocator_features)
        self._allocator = (version, allocator)
        return allocator

    def _not_ready_for_binding(self, claims: list[Any]) -> list[int]:
        """Allocated claims whose devices failed their binding conditions or waited for them
        past ``bindingTimeout`` (upstream checks this per node in Filter; the answer is the same
        for every node)."""
        out = []
        now = self.handle.clock.now_datetime()
        for index, claim in enumerate(claims):
            if not is_allocated(claim):
                continue
            try:
                ready = ready_for_binding(claim)
            except BindingFailed:
                out.append(index)
                continue
            if not ready and timed_out(claim, self.binding_timeout_seconds, now):
                out.append(index)
        return out

    def _check_device_classes(self, claim: Any) -> Status | None:
        for request in (spec_of(claim).get("devices") or {}).get("requests") or ():
            if not isinstance(request, dict):
                continue
            req_name = str(request.get("name") or "")
            if isinstance(request.get("exactly"), dict):
                status = self._validate_device_class(request["exactly"].get("deviceClassName"),
                                                     req_name)
            elif request.get("firstAvailable"):
                status = None
                for sub in request["firstAvailable"]:
                    sub = sub if isinstance(sub, dict) else {}
                    status = self._validate_device_class(sub.get("deviceClassName"),
                                                         f"{req_name}/{sub.get('name', '')}")
                    if status is not None:
                        break
            else:
                status = Status.unresolvable(
                    f"resource claim {claim_key(claim)}, request {req_name}: unknown request type")
            if status is not None:
                return status
        return None

    def _validate_device_class(self, class_name: Any, request_name: str) -> Status | None:
        if not class_name:
            return Status.as_status(f"request {request_name}: unsupported request type")
        if self.handle.lister.get("DeviceClass", str(class_name), "") is None:
            return Status.unresolvable(
                f"request {request_name}: device class {class_name} does not exist")
        return None

    # ------------------------------------------------------------------ filter
    @kschedfw.hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        if data.empty():
            return None
        node_claims = None
        if data.extended_index >= 0:  # DRAExtendedResource
            assert data.resolver is not None
            status, node_claim, mappings = extended.filter_node(
                data.claims[data.extended_index], data.extended_requests, data.resolver, node_info, pod,
                data.extended_index == 0)
            if status is not None:
                return status
            if node_claim is None and data.extended_index == 0:
                return None  # every resource comes from a device plugin here
            if node_claim is not None:
                with data.lock:
                    data.node_extended[node_info.name] = (node_claim, mappings)
                node_claims = [node_claim if i == data.extended_index else raw_of(data.claims[i])
                               for i in data.to_allocate]
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        unavailable = [i for i, selector in enumerate(data.available_on_nodes)
                       if selector is not None and not selector.matches(node.labels, node.name)
                       ] + data.not_ready if data.has_selectors else None
        results = None
        if data.allocator is not None:
            try:
                results = self._allocate(data, node, node_claims)
            except AllocationTimeout:
                # an Error, not a rejection: the pod retries after backoff instead of waiting
                # for a cluster event (upstream: the slices of this node may be the cause)
                return Status.as_status(f"node {node.name}: timed out trying to allocate devices")
            except FailedAllocationOnNode as exc:
                return Status.unresolvable(str(exc))
            except AllocatorError as exc:
                data.error_node = node
                return Status.as_status(str(exc))
            if results is None or len(results) != len(data.to_allocate):
                return Status.unresolvable(MSG_CANNOT_ALLOCATE)
        if unavailable:
            with data.lock:
                data.unavailable_claims.update(unavailable)
            return Status.unresolvable(MSG_NOT_AVAILABLE)
        if results is not None:
            with data.lock:
                data.node_allocations[node.name] = results
        return None

    def explain_rejection(self, pod: Pod, node: Any) -> list[str]:
        """For ``--explain``, during the cycle that rejected ``node``: which request of the pod's
        claims the node cannot satisfy, and with which selector (empty when not this cycle's pod
        or nothing was being allocated)."""
        last = self._last_cycle
        if last is None or last[0] != pod.uid or last[1].allocator is None:
            return []
        data = last[1]
        assert data.allocator is not None
        node_claim = data.node_extended.get(node.name)
        claims = None if node_claim is None else [node_claim[0] if i == data.extended_index else raw_of(data.claims[i])
                                                  for i in data.to_allocate]
        return unsatisfied_requests(data.allocator, node, claims)

    def explain_error(self, pod: Pod) -> list[str]:
        """For ``--explain``, after the cycle whose Filter stopped at this plugin's allocator
        error: what on that node the error is about (a claim constraint that cannot hold, for one)."""
        last = self._last_cycle
        if last is None or last[0] != pod.uid or last[1].allocator is None or last[1].error_node is None:
            return []
        node = last[1].error_node
        return [f"on node {node.name}: {line}" for line in self.explain_rejection(pod, node)]

    def _memo_for(self, key: tuple[Any, ...]) -> dict[str, tuple[Any, list[dict[str, Any]] | None]]:
        """The per-node results for pods asking the same as ``key`` (slices and classes version,
        claim specs); the last few keys are kept (say the two templates a workload alternates)."""
        memo = self.memo.pop(key, None)
        if memo is None:
            memo = {}
        self.memo[key] = memo  # most recently used last
        while len(self.memo) > 4:
            del self.memo[next(iter(self.memo))]
        return memo

    def _allocate(self, data: _StateData, node: Any, claims: list[Any] | None = None) -> list[dict[str, Any]] | None:
        """The allocator's results on ``node``. With only node-local dedicated devices they
        depend on the claims' specs, the slices and classes, and which of the node's devices
        are taken, so the next pod asking the same reuses them on every node where none of
        that changed (one node per cycle, as a rule): the node's generation (bumped when a
        listed claim takes or frees one of its devices) and its in-flight devices tell."""
        assert data.allocator is not None
        deadline = time.monotonic() + self.filter_timeout_seconds if self.filter_timeout_seconds > 0 else None
        memo = data.memo
        if memo is None:
            return data.allocator.allocate(node, claims, deadline)
        name = node.name
        node_taken = (self.manager.node_generation.get(name, 0), data.pending_by_node.get(name))
        hit = memo.get(name)
        if hit is not None and hit[0] == node_taken:
            return hit[1]
        results = data.allocator.allocate(node, deadline=deadline)
        memo[name] = (node_taken, results)
        return results

    # ------------------------------------------------------------------ postfilter
    @kschedfw.hookimpl
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
                    ) -> tuple[PostFilterResult | None, Status | None]:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return None, Status.as_status("not found")
        if data.empty():
            return None, Status.unschedulable(MSG_NO_NEW_CLAIMS)
        update = self._claim_status_writer()
        for index in sorted(data.unavailable_claims):
            if index == data.extended_index:
                continue  # deleted below when it exists
            claim = data.claims[index]
            reserved = reserved_for(claim)
            if update is not None and (not reserved or (
                    len(reserved) == 1 and str(reserved[0].get("uid") or "") == pod.uid)):
                new = copy.deepcopy(raw_of(claim))
                status = new.setdefault("status", {})
                for key in ("reservedFor", "allocation", "devices"):
                    status.pop(key, None)
                try:
                    self._write_status(update, new)
                except Exception as exc:
                    return None, Status.as_status(str(exc))
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        if data.extended_index >= 0 and not extended.is_special_claim_name(name_of(data.claims[data.extended_index])):
            # left from an earlier attempt: delete it, the next attempt starts afresh
            writer = self._claim_writer()
            if writer is not None:
                try:
                    writer.delete_resource_claim(data.claims[data.extended_index])
                except Exception as exc:
                    return None, Status.as_status(str(exc))
                return None, Status.unschedulable("deletion of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    # ------------------------------------------------------------------ score
    @kschedfw.hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        if data.empty() or not data.prioritized:
            return 0
        allocations = data.node_allocations.get(node_info.name)
        if allocations is None:
            return 0
        try:
            return compute_score(data.claims, allocations)
        except ScoreError as exc:
            return Status.as_status(str(exc))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int | Status]:
        """:meth:`score` for each node at once (hookspecs.WholeListScore)."""
        data: _StateData | None = state.get(STATE_KEY)
        if data is not None and (data.empty() or not data.prioritized or not data.node_allocations):
            return [0] * len(nodes)
        return [self.score(state, pod, n) for n in nodes]

    @kschedfw.hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, False, values)

    # ------------------------------------------------------------------ reserve / bind
    @kschedfw.hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        if data.empty():
            return None
        if not data.to_allocate:
            # Allocated claims are reserved for the pod in PreBind, as upstream, where PreBind
            # may still wait for their devices' binding conditions.
            self._mark_binding_may_wait(state, data)
            return None
        results = data.node_allocations.get(node_name)
        if not results:
            if data.to_allocate == [data.extended_index]:
                return None  # only the special claim, and a device plugin serves the node
            return Status.as_status("claim allocation not found for node")
        if len(results) != len(data.to_allocate):
            return Status.as_status(f"internal error, have {len(results)} allocations, "
                                    f"{len(data.to_allocate)} claims to allocate, want {len(data.to_allocate)} claims")
        for index, allocation in zip(data.to_allocate, results):
            data.allocations[index] = allocation
            node_claim = data.node_extended.get(node_name) if index == data.extended_index else None
            assumed = copy.deepcopy(raw_of(data.claims[index]) if node_claim is None else node_claim[0])
            _add_finalizer(assumed)
            assumed.setdefault("status", {})["allocation"] = allocation
            self.manager.signal_pending_allocation(uid_of(data.claims[index]), assumed)
        self._mark_binding_may_wait(state, data)
        return None

    def _mark_binding_may_wait(self, state: CycleState, data: _StateData) -> None:
        """Tell the scheduler that PreBind will wait for binding conditions (it then runs the
        binding cycle where waiting is possible)."""
        if self._waits_for_binding_conditions(data):
            state.write(BINDING_MAY_WAIT_KEY, True)

    def _waits_for_binding_conditions(self, data: _StateData) -> bool:
        """Whether PreBind will wait for devices' binding conditions (both gates on, as upstream)."""
        if not self.binding_conditions:
            return False
        return any(has_binding_conditions(data.allocations[i] if data.allocations[i] is not None
                                          else status_of(claim).get("allocation"))
                   for i, claim in enumerate(data.claims))

    @kschedfw.hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None or data.empty():
            return None
        update = self._claim_status_writer()
        for index, claim in enumerate(data.claims):
            if index == data.extended_index:
                self._unreserve_extended_claim(data)
                continue
            self.manager.remove_pending_allocation(uid_of(claim))
            if update is None or not is_allocated(claim) or not is_reserved_for_pod(pod, claim):
                continue
            listed = self.handle.lister.get("ResourceClaim", name_of(claim), namespace_of(claim))
            if listed is None or uid_of(listed) != uid_of(claim):
                continue
            current = self.manager.claim(listed)
            new = copy.deepcopy(raw_of(current))
            status = new.setdefault("status", {})
            status["reservedFor"] = [r for r in reserved_for(current) if str(r.get("uid") or "") != pod.uid]
            if not status["reservedFor"]:
                del status["reservedFor"]
            try:
                data.claims[index] = self._write_status(update, new)
            except Exception:
                continue  # as upstream: retried with the pod's next attempt
            self.manager.assume_written(uid_of(claim), listed, data.claims[index])
        return None

    def _unreserve_extended_claim(self, data: _StateData) -> None:
        """The special claim is no longer in flight and, if it exists in the API server (PreBind
        created it, or an earlier attempt did), it is deleted (upstream unreserveExtendedResourceClaim)."""
        self.manager.remove_pending_allocation(data.extended_uid)
        claim = data.claims[data.extended_index]
        if extended.is_special_claim_name(name_of(claim)):
            return
        self.manager.assumed.pop(uid_of(claim), None)
        writer = self._claim_writer()
        if writer is not None:
            try:
                writer.delete_resource_claim(claim)
            except Exception:
                pass  # as upstream: logged; the pod's next attempt finds and deletes it

    @kschedfw.hookimpl
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str
                            ) -> tuple[PreBindPreFlightResult | None, Status | None]:
        result = PreBindPreFlightResult(allow_parallel=True)
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return result, Status.as_status("not found")
        if data.empty():
            return result, Status.skip()
        return result, None

    @kschedfw.hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data: _StateData | None = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        if data.empty():
            return None
        update = self._claim_status_writer()
        for index, claim in enumerate(data.claims):
            if is_reserved_for_pod(pod, claim):
                continue
            if index == data.extended_index:
                status = self._bind_extended_claim(update, data, pod, node_name)
                if status is not None:
                    return status
                continue
            try:
                written = self._bind_claim(update, data, index, pod)
            except Exception as exc:
                return Status.as_status(str(exc))
            if written is not None:
                data.claims[index] = written
        if not state.get(BINDING_MAY_WAIT_KEY) or not self._waits_for_binding_conditions(data):
            return None
        return self._wait_for_binding_conditions(data, pod, node_name)

    def _wait_for_binding_conditions(self, data: _StateData, pod: Pod, node_name: str) -> Status | None:
        """Upstream PreBind's wait: the claims are re-read every 5 s until every device's binding
        conditions are true, or a failure condition is true, or ``bindingTimeout`` passed; a
        failure or timeout is an Error, so the pod is unreserved and tried again (and the next
        PreFilter deallocates a claim that failed or timed out)."""
        self.handle.event_recorder.record_event(pod, "Normal", "BindingConditionsPending",
                                                f"waiting for binding conditions for device on node {node_name}")

        def ready() -> bool:
            now = self.handle.clock.now_datetime()
            for index, claim in enumerate(data.claims):
                listed = self.handle.lister.get("ResourceClaim", name_of(claim), namespace_of(claim))
                if listed is not None and uid_of(listed) == uid_of(claim):
                    data.claims[index] = claim = self.manager.claim(listed)
                if not ready_for_binding(claim):
                    if timed_out(claim, self.binding_timeout_seconds, now):
                        raise BindingTimeout(f"device binding timeout: claim={name_of(claim)}")
                    return False
            return True

        try:
            if self.handle.wait_for(ready, BINDING_POLL_SECONDS, self.binding_timeout_seconds):
                return None
            raise BindingTimeout("device binding timeout: context deadline exceeded")
        except (BindingFailed, BindingTimeout) as exc:
            return Status.as_status(str(exc))

    def _bind_extended_claim(self, update: Callable[[Any], Any] | None, data: _StateData, pod: Pod,
                             node_name: str) -> Status | None:
        """PreBind of the special claim: create it (when still in memory), write its allocation and
        ``reservedFor`` as for any claim, then the pod's ``status.extendedResourceClaimStatus``
        (upstream bindClaim for the extended resource claim)."""
        index = data.extended_index
        claim = data.claims[index]
        if data.allocations[index] is None and not extended.has_requests(claim):
            return None  # a device plugin serves the extended resources on this node
        writer = self._claim_writer()
        node_claim = data.node_extended.get(node_name)
        try:
            if update is None or writer is None:
                return None  # no API to write to: nothing is created or recorded
            if extended.is_special_claim_name(name_of(claim)):
                if node_claim is None:
                    raise RuntimeError(f"extended resource claim not found for node {node_name}")
                data.claims[index] = claim = self._create_extended_claim(writer, node_claim[0])
            written = self._bind_claim(update, data, index, pod, assume_unlisted=True)
            if written is not None:
                data.claims[index] = claim = written
            mappings = node_claim[1] if node_claim is not None else []
            if not mappings:
                raise RuntimeError(f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
                                   "ExtendedResourceClaimStatus")
            try:
                writer.set_extended_resource_claim_status(pod, {"requestMappings": [
                    {"containerName": m["containerName"], "resourceName": m["resourceName"],
                     "requestName": m["requestName"]} for m in mappings], "resourceClaimName": name_of(claim)})
            except Exception as exc:
                raise RuntimeError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {exc}") from exc
        except Exception as exc:
            return Status.as_status(str(exc))
        finally:
            self.manager.remove_pending_allocation(data.extended_uid)
        return None

    @staticmethod
    def _create_extended_claim(writer: ResourceClaimWriter, node_claim: Mapping[str, Any]) -> Any:
        """POST the special claim as Filter shaped it for the node, without name, uid and status."""
        raw = copy.deepcopy(dict(node_claim))
        meta = raw["metadata"] = dict(raw.get("metadata") or {})
        meta.pop("name", None)
        meta.pop("uid", None)
        raw.pop("status", None)
        try:
            return writer.create_resource_claim(parse_object(raw))
        except Exception as exc:
            raise RuntimeError(f"create claim for extended resources {meta.get('namespace', '')}/: {exc}") from exc

    def _bind_claim(self, update: Callable[[Any], Any] | None, data: _StateData, index: int, pod: Pod,
                    assume_unlisted: bool = False) -> Any:
        """Write the claim's allocation (if Reserve made one) and the pod in ``reservedFor``
        (upstream bindClaim); the pending allocation ends either way. ``assume_unlisted``: the
        claim was just created, so what is written counts even before the lister shows it."""
        claim = data.claims[index]
        allocation = data.allocations[index]
        try:
            if update is None:
                return None
            listed = self.handle.lister.get("ResourceClaim", name_of(claim), namespace_of(claim))
            if listed is None or uid_of(listed) != uid_of(claim):
                listed = None
            current = claim if listed is None else self.manager.claim(listed)
            new = copy.deepcopy(raw_of(current))
            if (new.get("metadata") or {}).get("deletionTimestamp"):
                raise RuntimeError(f"claim {claim_key(claim)} got deleted in the meantime")
            status = new.setdefault("status", {})
            if allocation is not None:
                if status.get("allocation") is not None:
                    raise RuntimeError(f"claim {claim_key(claim)} got allocated elsewhere in the meantime")
                _add_finalizer(new)
                status["allocation"] = copy.deepcopy(allocation)
            status["reservedFor"] = reserved_for(current) + [{"resource": "pods", "name": pod.name, "uid": pod.uid}]
            if self.binding_conditions:  # upstream stamps the allocation only with both gates on
                if status.get("allocation") is None:
                    raise RuntimeError(f"claim {claim_key(claim)} got deallocated elsewhere in the meantime")
                status["allocation"].setdefault("allocationTimestamp", rfc3339(self.handle.clock.now_datetime()))
            try:
                written = self._write_status(update, new)
            except Exception as exc:
                what = "allocation and reservation" if allocation is not None else "reservation"
                raise RuntimeError(f"add {what} to claim {claim_key(claim)}: {exc}") from exc
            if listed is not None or assume_unlisted:
                self.manager.assume_written(uid_of(claim), listed, written)
            return written
        finally:
            if allocation is not None:
                self.manager.remove_pending_allocation(uid_of(claim))

    # ------------------------------------------------------------------ events
    @kschedfw.hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Queueing hints are GA: Node Add|UpdateNodeLabel|UpdateNodeAllocatable.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add
                                              | ActionType.UpdateNodeLabel
                                              | ActionType.UpdateNodeAllocatable)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceClaim,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod,
                                              ActionType.UpdatePodGeneratedResourceClaim),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass,
                                              ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice,
                                              ActionType.Add | ActionType.Update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if new_obj is None:
            return QueueingHint.QueueSkip   # deletes are not registered
        try:
            claims = pod_resource_claims(self.claims, pod)
        except ClaimError:
            return QueueingHint.QueueSkip
        uses_claim = any(uid_of(claim) == uid_of(new_obj) for _, claim in claims)
        if old_obj is not None and is_allocated(old_obj) and not is_allocated(new_obj):
            return QueueingHint.Queue   # a deallocation frees devices for other pods too
        if not uses_claim:
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        if status_of(old_obj) == status_of(new_obj):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if pod.uid != new_obj.uid:
            return QueueingHint.QueueSkip
        try:
            pod_resource_claims(self.claims, new_obj)
        except ClaimError:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


def _add_finalizer(raw: dict[str, Any]) -> None:
    meta = raw.setdefault("metadata", {})
    finalizers = list(meta.get("finalizers") or ())
    if CLAIM_FINALIZER not in finalizers:
        meta["finalizers"] = finalizers + [CLAIM_FINALIZER]


__all__ = ["DynamicResources", "MSG_NO_NEW_CLAIMS", "MSG_NOT_AVAILABLE", "MSG_CANNOT_ALLOCATE"]
