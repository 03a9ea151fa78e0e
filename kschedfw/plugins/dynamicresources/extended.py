"""Extended resources backed by a DeviceClass (DRAExtendedResource, beta and on in v1.36; upstream
``extendeddynamicresources.go`` and ``deviceclass/extendedresourcecache``).

A container may request an extended resource (``example.com/gpu: 1``) that no device plugin
advertises on a node but that a DeviceClass provides: explicitly through
``spec.extendedResourceName``, or implicitly as ``deviceclass.resource.kubernetes.io/<class>``.
The scheduler then allocates devices of that class through one ResourceClaim per pod that it
writes itself (the special claim): PreFilter starts it in memory, without requests, under the
name ``<extended-resources>`` (no real claim can be named so); Filter gives it, per node, one
``exactly`` request per container and resource that the node does not advertise in allocatable;
PreBind creates it (``generateName`` ``<pod>-extended-resources-``, owned by the pod, annotated
``resource.kubernetes.io/extended-resource-claim: "true"``) and writes the pod's
``status.extendedResourceClaimStatus``. A special claim left from an earlier attempt makes every
node fail (``cannot schedule extended resource claim``) and is deleted in PostFilter or
Unreserve, so the next attempt starts afresh.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from kschedfw.api import parse_object
from kschedfw.api.accessors import annotations_of, metadata_of, name_of, raw_of, spec_of
from kschedfw.api.resources import is_extended_resource
from kschedfw.fwk.status import Status

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.api.pod import Container
    from kschedfw.fwk.types import NodeInfo

#: the implicit extended resource name of every DeviceClass is this prefix and the class name
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
#: upstream resourceapi.ExtendedResourceClaimAnnotation
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: the special claim's name until PreBind creates it (not a valid object name on purpose)
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"

MSG_CANNOT_SCHEDULE = "cannot schedule extended resource claim"
MSG_CANNOT_FIT = "cannot fit resource"

_UID_NAMESPACE = uuid.UUID("3a8e2f0c-5b7d-4e61-9c2a-7f4d1b6e8a90")
_EPOCH = _dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc)


def is_dra_extended_resource_name(name: str) -> bool:
    """Whether a DeviceClass may back ``name`` (upstream schedutil.IsDRAExtendedResourceName)."""
    return is_extended_resource(name) or name.startswith(RESOURCE_DEVICE_CLASS_PREFIX)


def is_special_claim_name(name: str) -> bool:
    return name == SPECIAL_CLAIM_IN_MEM_NAME


class DeviceClassResolver:
    """Extended resource name -> the DeviceClass backing it, as upstream's ExtendedResourceCache
    has it once the informer added the classes in the order the API server lists them (by name).

    When two classes name the same ``extendedResourceName``, the newer one (creationTimestamp)
    wins and, at equal times, the lower name; a class losing that way does not get its implicit
    name either (upstream skips the class altogether)."""

    __slots__ = ("_by_resource",)

    def __init__(self, classes: Iterable[Any]) -> None:
        by_resource: dict[str, Any] = {}
        for device_class in sorted(classes, key=name_of):
            explicit = spec_of(device_class).get("extendedResourceName")
            if explicit:
                current = by_resource.get(str(explicit))
                if current is not None:
                    new_time, old_time = _created(device_class), _created(current)
                    if new_time < old_time or (new_time == old_time and name_of(device_class) >= name_of(current)):
                        continue
                by_resource[str(explicit)] = device_class
            by_resource[RESOURCE_DEVICE_CLASS_PREFIX + name_of(device_class)] = device_class
        self._by_resource = by_resource

    def get(self, resource_name: str) -> Any | None:
        """The DeviceClass backing ``resource_name``, or None."""
        return self._by_resource.get(resource_name)

    def __bool__(self) -> bool:
        return bool(self._by_resource)


def _created(obj: Any) -> _dt.datetime:
    stamp = metadata_of(obj).get("creationTimestamp")
    if not stamp:
        return _EPOCH
    if isinstance(stamp, _dt.datetime):
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=_dt.timezone.utc)
    parsed = _dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=_dt.timezone.utc)


def dra_scalar_requests(pod: Pod) -> dict[str, int]:
    """The pod's non-zero requests of extended resources a DeviceClass may back."""
    return {name: amount for name, amount in pod.request().items()
            if amount and is_dra_extended_resource_name(name)}


def backs_any(resolver: DeviceClassResolver, resource_names: Iterable[str]) -> bool:
    """Whether a DeviceClass backs one of the resources (upstream hasDeviceClassMappedExtendedResource)."""
    return bool(resolver) and any(resolver.get(name) is not None for name in resource_names)


def find_extended_resource_claim(pod: Pod, claims: Iterable[Any]) -> Any | None:
    """The special claim an earlier attempt created for ``pod``: annotated as such and
    controlled by the pod (same name and uid)."""
    for claim in claims:
        if annotations_of(claim).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        for ref in metadata_of(claim).get("ownerReferences") or ():
            if ref.get("name") == pod.name and ref.get("controller") and str(ref.get("uid") or "") == pod.uid:
                return claim
    return None


def in_memory_claim(pod: Pod) -> Any:
    """The special claim before PreBind creates it: no requests, a uid of its own for the
    in-flight bookkeeping (derived from the pod's, so a simulation is reproducible)."""
    return parse_object({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": SPECIAL_CLAIM_IN_MEM_NAME, "namespace": pod.namespace,
                     "uid": str(uuid.uuid5(_UID_NAMESPACE, pod.uid or f"{pod.namespace}/{pod.name}")),
                     "generateName": f"{pod.name}-extended-resources-",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                          "controller": True}],
                     "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}},
        "spec": {}})


def has_requests(claim: Any) -> bool:
    return (spec_of(claim).get("devices") or {}).get("requests") is not None


def filter_node(claim: Any, scalar_requests: Mapping[str, int], resolver: DeviceClassResolver,
                node_info: NodeInfo, pod: Pod, no_user_claim: bool
                ) -> tuple[Status | None, dict[str, Any] | None, list[dict[str, str]]]:
    """(rejection, the special claim as this node needs it, container request mappings) (upstream
    filterExtendedResources): the claim is None when nothing needs allocating here (every
    resource comes from a device plugin and the pod has no claims of its own, or the claim is
    allocated already)."""
    if has_requests(claim):
        return Status.unresolvable(MSG_CANNOT_SCHEDULE), None, []
    allocatable = node_info.allocatable
    extended: dict[str, int] = {}
    for name, amount in scalar_requests.items():
        have = allocatable.get(name)
        if resolver.get(name) is not None and not have:
            extended[name] = amount
        elif have is None:
            return Status.unresolvable(MSG_CANNOT_FIT), None, []
    if no_user_claim and not extended:
        return None, None, []
    if (raw_of(claim).get("status") or {}).get("allocation") is not None:
        return None, None, []
    requests, mappings = requests_and_mappings(pod, extended, resolver)
    node_claim = dict(raw_of(claim))
    node_claim["spec"] = {"devices": {"requests": requests}}
    return None, node_claim, mappings


# ---------------------------------------------------------------------------------- requests

def _long_and_short_lived(pod: Pod) -> tuple[list[Container], list[int], list[int]]:
    """Init containers then containers, with the indices of the long-lived ones (containers and
    sidecars) and of the short-lived ones (init containers that run to completion)."""
    containers = [*pod.init_containers, *pod.containers]
    num_init = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= num_init or c.is_sidecar]
    short_lived = [i for i, c in enumerate(containers) if i < num_init and not c.is_sidecar]
    return containers, long_lived, short_lived


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: Iterable[dict[str, Any] | None]
                       ) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """The device request ``container`` needs for ``resource`` beyond what ``reusable`` requests
    (of later long-lived containers) already cover, and its mappings; the request is named
    ``container-<index>-request-<position of the resource among the container's sorted requests>``."""
    wanted = container.requests.get(resource, 0)
    if not wanted:
        return None, []
    mappings: list[dict[str, str]] = []
    covered = 0
    for request in reusable:
        if request is None:
            continue
        covered += request["exactly"]["count"]
        mappings.append({"containerName": container.name, "resourceName": resource, "requestName": request["name"]})
        if covered >= wanted:
            return None, mappings
    position = sorted(container.requests).index(resource)
    name = f"container-{index}-request-{position}"
    mappings.append({"containerName": container.name, "resourceName": resource, "requestName": name})
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                      "count": wanted - covered}}, mappings


def requests_and_mappings(pod: Pod, extended: Mapping[str, int], resolver: DeviceClassResolver
                          ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The special claim's device requests (sorted by name) and the container -> request mappings
    for the resources in ``extended`` (upstream createRequestsAndMappings): long-lived containers
    each get their own request; init containers that run to completion first reuse the requests
    of the long-lived containers after them and share one request, the largest, for the rest."""
    containers, long_lived, short_lived = _long_and_short_lived(pod)
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(extended):
        device_class = resolver.get(resource)
        if device_class is None:
            continue
        class_name = name_of(device_class)
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            request, found = _container_request(i, containers[i], resource, class_name, ())
            long_requests[i] = request
            long_mappings.extend(found)
        largest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            request, found = _container_request(i, containers[i], resource, class_name, long_requests[i:])
            if request is not None:
                short_names.add(request["name"])
                if largest is None or largest["exactly"]["count"] < request["exactly"]["count"]:
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest["name"])
            for mapping in short_mappings:
                if mapping["requestName"] in short_names:
                    mapping["requestName"] = largest["name"]
        if largest is not None:
            requests.append(largest)
        requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda r: r["name"])
    return requests, mappings


__all__ = ["DeviceClassResolver", "EXTENDED_RESOURCE_CLAIM_ANNOTATION", "MSG_CANNOT_SCHEDULE", "MSG_CANNOT_FIT",
           "RESOURCE_DEVICE_CLASS_PREFIX", "SPECIAL_CLAIM_IN_MEM_NAME", "backs_any", "dra_scalar_requests", "filter_node",
           "find_extended_resource_claim", "has_requests", "in_memory_claim", "is_dra_extended_resource_name",
           "is_special_claim_name", "requests_and_mappings"]
