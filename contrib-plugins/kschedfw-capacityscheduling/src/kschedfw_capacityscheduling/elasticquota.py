"""ElasticQuota bookkeeping (upstream ``pkg/capacityscheduling/elasticquota.go``).

One :class:`ElasticQuotaInfo` per namespace holds the quota's ``min`` and ``max`` and what the
namespace's pods use. Amounts are :class:`Resource` vectors in the scheduler's units (cpu in
millicores, everything else in whole units), with upstream's comparison rules:

* a quota without ``max`` has cpu, memory and ephemeral-storage bounded by MaxInt64; one with a
  ``max`` that omits a resource allows 0 of it (as upstream);
* a quota without ``min`` has cpu, memory and ephemeral-storage minimums of 0;
* an extended resource (``nvidia.com/gpu``) absent from ``max`` is unlimited, absent from ``min``
  is 0; only the extended resources of the left-hand side are compared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

import attrs

from kschedfw.api import resource_amount

if TYPE_CHECKING:
    from kschedfw.api import Pod

__all__ = [
    "UPPER_BOUND_OF_MAX", "LOWER_BOUND_OF_MIN", "Resource", "ElasticQuotaInfo", "ElasticQuotaInfos",
    "compute_pod_resource_request", "is_scalar_resource_name", "resource_list",
]

UPPER_BOUND_OF_MAX = (1 << 63) - 1
LOWER_BOUND_OF_MIN = 0


def is_scalar_resource_name(name: str) -> bool:
    """Upstream ``IsScalarResourceName``: extended, prefixed native, hugepages, attachable volumes."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "/" not in name:
        return False
    if "kubernetes.io/" in name:
        return True
    return not name.startswith("requests.")


@attrs.define(eq=True)
class Resource:
    """Upstream ``framework.Resource``."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = attrs.Factory(dict)

    @classmethod
    def from_list(cls, amounts: Mapping[str, int] | None) -> "Resource":
        r = cls()
        r.add(amounts or {})
        return r

    def add(self, amounts: Mapping[str, int]) -> None:
        """Add a resource list (canonical amounts: cpu in millicores)."""
        for name, amount in amounts.items():
            if name == "cpu":
                self.milli_cpu += amount
            elif name == "memory":
                self.memory += amount
            elif name == "pods":
                self.allowed_pod_number += amount
            elif name == "ephemeral-storage":
                self.ephemeral_storage += amount
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + amount

    def add_resource(self, other: "Resource") -> None:
        self.add(resource_list(other))

    def set_max_resource(self, amounts: Mapping[str, int]) -> None:
        for name, amount in amounts.items():
            if name == "memory":
                self.memory = max(self.memory, amount)
            elif name == "cpu":
                self.milli_cpu = max(self.milli_cpu, amount)
            elif name == "ephemeral-storage":
                self.ephemeral_storage = max(self.ephemeral_storage, amount)
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = max(self.scalar_resources.get(name, 0), amount)

    def clone(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar_resources))


def resource_list(r: Resource) -> dict[str, int]:
    """Upstream ``util.ResourceList``: cpu, memory, pods, ephemeral-storage and the scalars."""
    out = {"cpu": r.milli_cpu, "memory": r.memory, "pods": r.allowed_pod_number,
           "ephemeral-storage": r.ephemeral_storage}
    out.update(r.scalar_resources)
    return out


def parse_quota_resources(raw: Any) -> dict[str, int] | None:
    """``spec.min`` / ``spec.max`` of an ElasticQuota -> canonical amounts (None when absent)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError(f"expected a resource list, got {type(raw).__name__}")
    return {str(name): resource_amount(str(name), value) for name, value in raw.items()}


def _bound_list(bound: int) -> dict[str, int]:
    """Upstream ``makeResourceListForBound``: cpu (millicores), memory and ephemeral-storage."""
    return {"cpu": bound, "memory": bound, "ephemeral-storage": bound}


def compute_pod_resource_request(pod: "Pod") -> Resource:
    """Upstream ``computePodResourceRequest``: the sum of the containers' requests, raised to each
    init container's requests, plus the pod overhead."""
    result = Resource()
    for container in pod.containers:
        result.add(container.requests)
    for container in pod.init_containers:
        result.set_max_resource(container.requests)
    if pod.overhead:
        result.add(pod.overhead)
    return result


def _cmp2(x1: Resource, x2: Resource, y: Resource, bound: int) -> bool:
    """Is ``x1 + x2`` above ``y`` for any resource? (extended resources: those of ``x1``)."""
    if x1.milli_cpu + x2.milli_cpu > y.milli_cpu:
        return True
    if x1.memory + x2.memory > y.memory:
        return True
    if x1.ephemeral_storage + x2.ephemeral_storage > y.ephemeral_storage:
        return True
    if x1.allowed_pod_number + x2.allowed_pod_number > y.allowed_pod_number:
        return True
    for name, amount in x1.scalar_resources.items():
        limit = y.scalar_resources.get(name, bound)
        if amount + x2.scalar_resources.get(name, 0) > limit:
            return True
    return False


def _cmp(x: Resource, y: Resource, bound: int) -> bool:
    return _cmp2(x, Resource(), y, bound)


@attrs.define(eq=False)
class ElasticQuotaInfo:
    """One namespace's quota: ``min``, ``max``, ``used`` and the uids of the pods counted in ``used``."""

    namespace: str
    min: Resource | None
    max: Resource | None
    used: Resource = attrs.Factory(Resource)
    pods: set[str] = attrs.Factory(set)

    @classmethod
    def new(cls, namespace: str, min_: Mapping[str, int] | None, max_: Mapping[str, int] | None,
            used: Mapping[str, int] | None = None) -> "ElasticQuotaInfo":
        """Upstream ``newElasticQuotaInfo``: a missing min/max gets the default bounds."""
        if min_ is None:
            min_ = _bound_list(LOWER_BOUND_OF_MIN)
        if max_ is None:
            max_ = _bound_list(UPPER_BOUND_OF_MAX)
        return cls(namespace, Resource.from_list(min_), Resource.from_list(max_), Resource.from_list(used))

    @classmethod
    def from_object(cls, eq: Any) -> "ElasticQuotaInfo":
        """From an ElasticQuota object (``kschedfw.api.GenericObject``)."""
        spec = eq.spec
        return cls.new(eq.namespace, parse_quota_resources(spec.get("min")), parse_quota_resources(spec.get("max")))

    # ------------------------------------------------------------------ usage
    def reserve_resource(self, request: Resource) -> None:
        u = self.used
        u.memory += request.memory
        u.milli_cpu += request.milli_cpu
        u.ephemeral_storage += request.ephemeral_storage
        u.allowed_pod_number += request.allowed_pod_number
        for name, amount in request.scalar_resources.items():
            u.scalar_resources[name] = u.scalar_resources.get(name, 0) + amount

    def unreserve_resource(self, request: Resource) -> None:
        u = self.used
        u.memory -= request.memory
        u.milli_cpu -= request.milli_cpu
        u.ephemeral_storage -= request.ephemeral_storage
        u.allowed_pod_number -= request.allowed_pod_number
        for name, amount in request.scalar_resources.items():
            u.scalar_resources[name] = u.scalar_resources.get(name, 0) - amount

    def add_pod_if_not_present(self, pod: "Pod") -> None:
        key = _pod_key(pod)
        if key in self.pods:
            return
        self.pods.add(key)
        self.reserve_resource(compute_pod_resource_request(pod))

    def delete_pod_if_present(self, pod: "Pod") -> None:
        key = _pod_key(pod)
        if key not in self.pods:
            return
        self.pods.discard(key)
        self.unreserve_resource(compute_pod_resource_request(pod))

    # ------------------------------------------------------------------ comparisons
    def used_over_min_with(self, request: Resource) -> bool:
        if self.min is None:
            return True
        return _cmp2(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Resource) -> bool:
        if self.max is None:
            return False
        return _cmp2(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        if self.min is None:
            return True
        return _cmp(self.used, self.min, LOWER_BOUND_OF_MIN)

    def clone(self) -> "ElasticQuotaInfo":
        return ElasticQuotaInfo(self.namespace, self.min.clone() if self.min is not None else None,
                                self.max.clone() if self.max is not None else None, self.used.clone(),
                                set(self.pods))


class ElasticQuotaInfos(dict):
    """namespace -> ElasticQuotaInfo."""

    def clone(self) -> "ElasticQuotaInfos":
        return ElasticQuotaInfos({ns: info.clone() for ns, info in self.items()})

    def aggregated_used_over_min_with(self, request: Resource) -> bool:
        """Would the quotas' total use plus ``request`` exceed the sum of their minimums?"""
        used = Resource()
        minimum = Resource()
        for info in self.values():
            used.add(resource_list(info.used))
            if info.min is not None:
                minimum.add(resource_list(info.min))
        used.add(resource_list(request))
        return _cmp(used, minimum, LOWER_BOUND_OF_MIN)


class MissingUID(ValueError):
    pass


def _pod_key(pod: "Pod") -> str:
    """Upstream ``framework.GetPodKey``: the pod's uid."""
    if not pod.uid:
        raise MissingUID("cannot get cache key for pod with empty UID")
    return pod.uid


def infos_from(objects: Iterable[Any]) -> ElasticQuotaInfos:
    """ElasticQuotaInfos for ElasticQuota objects, the first per namespace."""
    out = ElasticQuotaInfos()
    for eq in objects:
        if eq.namespace not in out:
            out[eq.namespace] = ElasticQuotaInfo.from_object(eq)
    return out
