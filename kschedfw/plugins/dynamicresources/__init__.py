"""DynamicResources: ResourceClaims (DRA) of a pod (upstream ``plugins/dynamicresources``).

What is ported:

* Pods without ``spec.resourceClaims`` and without extended resources backed by a DeviceClass
  cost next to nothing, as upstream: PreEnqueue passes, PreFilter records an empty state and
  returns Skip, Filter is not reached, Score returns 0, Reserve/Unreserve/PreBind do nothing,
  PreBindPreFlight returns Skip and PostFilter answers Unschedulable ``no new claims to
  deallocate`` (which appears in every FitError of the default profile).
* Claim lookup with upstream's texts: PreEnqueue and PreFilter reject a pod whose claims do not
  exist yet (``could not find ResourceClaim "<ns>/<name>"``), were not generated yet, are being
  deleted or are not owned by the pod; missing DeviceClasses are reported as upstream.
* Claims that are already allocated: Filter checks the allocation's node selector (``resourceclaim
  not available on the node``); PostFilter asks for deallocation of such a claim through
  ``handle.client.update_resource_claim_status(claim_dict)`` when the client offers it; PreBind
  adds the pod to ``status.reservedFor`` the same way.

Not ported yet: the structured-parameters allocator. A pod with a claim that still needs
devices (or with an extended resource that only a DeviceClass provides on a node) is rejected
with UnschedulableAndUnresolvable ``kschedfw: allocating devices for ResourceClaim <ns>/<name>
is not supported yet`` (resp. ``... for extended resource <name> ...``) instead of being placed.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import kschedfw
from kschedfw import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint,
                      Status)
from kschedfw.api.resources import is_extended_resource
from kschedfw.api.selectors import parse_node_selector
from kschedfw.config.pluginargs import IN_TREE_ARGS
from kschedfw.config.k8svalidation import parse_duration
from kschedfw.fwk.interface import ResourceClaimStatusWriter
from kschedfw.fwk.types import MAX_NODE_SCORE, PreBindPreFlightResult
from kschedfw.plugins.helper import default_normalize_score, default_normalize_values
from kschedfw.api.accessors import (controller_ref, is_being_deleted, name_of, namespace_of, raw_of, spec_of,
                                    status_of, uid_of)

if TYPE_CHECKING:
    from kschedfw.api import NodeSelector, Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import (NodeInfo, NodeScore, NodeToStatus, PostFilterResult, PreFilterResult,
                                    SignFragment)

NAME = "DynamicResources"
STATE_KEY = NAME
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"

MSG_NO_NEW_CLAIMS = "no new claims to deallocate"
MSG_NOT_AVAILABLE = "resourceclaim not available on the node"


class _ClaimError(Exception):
    """A reason that makes the pod unschedulable (upstream: errors of foreachPodResourceClaim)."""


def is_dra_extended_resource_name(name: str) -> bool:
    return is_extended_resource(name) or name.startswith(RESOURCE_DEVICE_CLASS_PREFIX)


class _StateData:
    """Claims of the pod for this cycle (empty: nothing to do). Shared across clones."""

    __slots__ = ("claims", "available_on_nodes", "unavailable_claims", "extended_resources",
                 "dra_backed")

    def __init__(self) -> None:
        self.claims: list[Any] = []  # ResourceClaims as listed (untyped objects)
        self.available_on_nodes: list[NodeSelector | None] = []
        self.unavailable_claims: set[int] = set()
        self.extended_resources: dict[str, int] = {}
        self.dra_backed: frozenset[str] = frozenset()

    def empty(self) -> bool:
        return not self.claims and not self.extended_resources

    def clone(self) -> "_StateData":
        return self


class DynamicResources:
    """ResourceClaims of pods. Args: ``filterTimeout`` (default 10s), ``bindingTimeout``."""

    name = NAME
    args_schema = IN_TREE_ARGS[NAME].schema
    validate_args = staticmethod(IN_TREE_ARGS[NAME].validate)

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        args = args or {}
        self.handle = handle
        self.filter_timeout_seconds = self._seconds(args.get("filterTimeout"), 0.0)
        self.binding_timeout_seconds = self._seconds(args.get("bindingTimeout"), 600.0)

    @staticmethod
    def _seconds(value: Any, default: float) -> float:
        if value is None:
            return default
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return parse_duration(str(value)) / 1e9

    def _claim_status_writer(self) -> Callable[[dict[str, Any]], Any] | None:
        """The client's ResourceClaim status write, if the backend offers one."""
        client = self.handle.client
        return client.update_resource_claim_status if isinstance(client, ResourceClaimStatusWriter) else None

    # ------------------------------------------------------------------ claims
    def _foreach_pod_resource_claim(self, pod: Pod) -> list[tuple[str, Any]]:
        """(pod claim name, ResourceClaim) for each claim of the pod; raises _ClaimError."""
        out: list[tuple[str, Any]] = []
        if not pod.resource_claims:
            return out
        statuses = (raw_of(pod).get("status") or {}).get("resourceClaimStatuses") or ()
        for pod_claim in pod.resource_claims:
            claim_name, must_check_owner = self._claim_name(pod, pod_claim, statuses)
            if claim_name is None:
                continue        # intentionally not generated: nothing to do for it
            claim = self.handle.lister.get("ResourceClaim", claim_name, pod.namespace)
            if claim is None:
                raise _ClaimError(f'could not find ResourceClaim "{pod.namespace}/{claim_name}"')
            if is_being_deleted(claim):
                raise _ClaimError(f'resourceclaim "{name_of(claim)}" is being deleted')
            if must_check_owner:
                ref = controller_ref(claim)
                if namespace_of(claim) != pod.namespace:
                    raise _ClaimError(
                        f"ResourceClaim {namespace_of(claim)}/{name_of(claim)} is not in the same "
                        f"namespace as Pod {pod.namespace}/{pod.name}")
                if ref is None or str(ref.get("uid") or "") != pod.uid:
                    raise _ClaimError(
                        f"ResourceClaim {namespace_of(claim)}/{name_of(claim)} was not created for "
                        f"Pod {pod.namespace}/{pod.name} (Pod is not owner)")
            out.append((str(pod_claim.get("name") or ""), claim))
        return out

    @staticmethod
    def _claim_name(pod: Pod, pod_claim: Mapping[str, Any], statuses: Iterable[Any]) -> tuple[str | None, bool]:
        if pod_claim.get("resourceClaimName"):
            return str(pod_claim["resourceClaimName"]), False
        if pod_claim.get("resourceClaimTemplateName"):
            for status in statuses:
                if isinstance(status, dict) and status.get("name") == pod_claim.get("name"):
                    name = status.get("resourceClaimName")
                    return (str(name) if name else None), True
            raise _ClaimError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
        raise _ClaimError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim '
                          f'"{pod_claim.get("name", "")}": none of the supported fields are set')

    def _dra_extended_resources(self, pod: Pod) -> tuple[dict[str, int], frozenset[str]]:
        """(requested extended resources, those a DeviceClass maps) when at least one is mapped
        (DRAExtendedResource); ({}, {}) otherwise."""
        candidates = {name: amount for name, amount in pod.request().items()
                      if amount and is_dra_extended_resource_name(name)}
        if not candidates:
            return {}, frozenset()
        mapped: set[str] = set()
        for device_class in self.handle.lister.list("DeviceClass"):
            explicit = spec_of(device_class).get("extendedResourceName")
            if explicit:
                mapped.add(str(explicit))
            mapped.add(RESOURCE_DEVICE_CLASS_PREFIX + name_of(device_class))
        backed = frozenset(name for name in candidates if name in mapped)
        if not backed:
            return {}, frozenset()
        return candidates, backed

    # ------------------------------------------------------------------ queue
    @kschedfw.hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.resource_claims:
            return None
        try:
            self._foreach_pod_resource_claim(pod)
        except _ClaimError as exc:
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
        try:
            claims = self._foreach_pod_resource_claim(pod)
        except _ClaimError as exc:
            return None, Status.unresolvable(str(exc))
        extended, backed = self._dra_extended_resources(pod)
        if not claims and not extended:
            return None, Status.skip()
        selectors: list[NodeSelector | None] = []
        to_allocate: list[Any] = []
        for _pod_claim_name, claim in claims:
            allocation = status_of(claim).get("allocation")
            selector = None
            if allocation is None:
                status = self._check_device_classes(claim)
                if status is not None:
                    return None, status
                to_allocate.append(claim)
            elif isinstance(allocation, dict) and allocation.get("nodeSelector") is not None:
                try:
                    selector = parse_node_selector(allocation["nodeSelector"],
                                                   "status.allocation.nodeSelector")
                except Exception as exc:
                    return None, Status.as_status(str(exc))
            selectors.append(selector)
        # Recorded as upstream does once PreFilter got this far (PostFilter then reports
        # "still not schedulable" rather than "no new claims to deallocate").
        data.claims = [claim for _, claim in claims]
        data.available_on_nodes = selectors
        data.extended_resources = extended
        data.dra_backed = backed
        if to_allocate:
            claim = to_allocate[0]
            return None, Status.unresolvable(
                f"kschedfw: allocating devices for ResourceClaim "
                f"{namespace_of(claim)}/{name_of(claim)} is not supported yet")
        return None, None

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
                    f"resource claim {namespace_of(claim)}/{name_of(claim)}, request {req_name}: "
                    "unknown request type")
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
        allocatable = node_info.allocatable
        for name in data.extended_resources:
            have = allocatable.get(name)
            if name in data.dra_backed and not have:
                return Status.unresolvable(
                    f"kschedfw: allocating devices for extended resource {name} is not supported yet")
            if have is None:
                return Status.unresolvable("cannot fit resource")
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        unavailable = [i for i, selector in enumerate(data.available_on_nodes)
                       if selector is not None and not selector.matches(node.labels, node.name)]
        if unavailable:
            data.unavailable_claims.update(unavailable)
            return Status.unresolvable(MSG_NOT_AVAILABLE)
        return None

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
            claim = data.claims[index]
            reserved = status_of(claim).get("reservedFor") or []
            if update is not None and (not reserved or (
                    len(reserved) == 1 and str(reserved[0].get("uid") or "") == pod.uid)):
                new = copy.deepcopy(raw_of(claim))
                status = new.setdefault("status", {})
                for key in ("reservedFor", "allocation", "devices"):
                    status.pop(key, None)
                try:
                    update(new)
                except Exception as exc:
                    return None, Status.as_status(str(exc))
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    # ------------------------------------------------------------------ score
    @kschedfw.hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        # Only prioritized-list subrequests score; the allocator that produces them is not ported.
        return 0

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`score` for each node at once (hookspecs.WholeListScore)."""
        return [0] * len(nodes)

    @kschedfw.hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, False, values)

    # ------------------------------------------------------------------ reserve / bind
    @kschedfw.hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data = state.get(STATE_KEY)
        if data is None:
            return Status.as_status("not found")
        # Allocated claims are reserved for the pod in PreBind, as upstream.
        return None

    @kschedfw.hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

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
        if update is None:
            return None
        for claim in data.claims:
            reserved = status_of(claim).get("reservedFor") or []
            if any(str(r.get("uid") or "") == pod.uid for r in reserved if isinstance(r, dict)):
                continue
            new = copy.deepcopy(raw_of(claim))
            status = new.setdefault("status", {})
            status["reservedFor"] = list(reserved) + [
                {"resource": "pods", "name": pod.name, "uid": pod.uid}]
            try:
                update(new)
            except Exception as exc:
                return Status.as_status(str(exc))
        return None

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
            claims = self._foreach_pod_resource_claim(pod)
        except _ClaimError:
            return QueueingHint.QueueSkip
        uses_claim = any(uid_of(claim) == uid_of(new_obj) for _, claim in claims)
        if old_obj is not None and status_of(old_obj).get("allocation") is not None and \
                status_of(new_obj).get("allocation") is None:
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
            self._foreach_pod_resource_claim(new_obj)
        except _ClaimError:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


__all__ = ["DynamicResources", "MSG_NO_NEW_CLAIMS", "MSG_NOT_AVAILABLE"]
