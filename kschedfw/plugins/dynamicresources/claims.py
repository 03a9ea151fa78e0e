"""The ResourceClaims of a pod as the scheduler finds them (upstream ``foreachPodResourceClaim`` and
``k8s.io/dynamic-resource-allocation/resourceclaim``), with upstream's messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from kschedfw.api.accessors import (controller_ref, is_being_deleted, name_of, namespace_of, raw_of, status_of,
                                    uid_of)

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import ObjectLister

# upstream resourceapi.ResourceClaimReservedForMaxSize
RESERVED_FOR_MAX_SIZE = 256


class ClaimError(Exception):
    """A reason that makes the pod unschedulable (upstream: errors of foreachPodResourceClaim)."""


def claim_key(claim: Any) -> str:
    """``namespace/name`` as klog.KObj prints a claim."""
    return f"{namespace_of(claim)}/{name_of(claim)}"


def pod_resource_claims(lister: ObjectLister, pod: Pod) -> list[tuple[str, Any]]:
    """(pod claim name, ResourceClaim) for each claim of the pod; raises ClaimError."""
    out: list[tuple[str, Any]] = []
    if not pod.resource_claims:
        return out
    statuses = (raw_of(pod).get("status") or {}).get("resourceClaimStatuses") or ()
    for pod_claim in pod.resource_claims:
        claim_name, must_check_owner = _claim_name(pod, pod_claim, statuses)
        if claim_name is None:
            continue        # intentionally not generated: nothing to do for it
        claim = lister.get("ResourceClaim", claim_name, pod.namespace)
        if claim is None:
            raise ClaimError(f'could not find ResourceClaim "{pod.namespace}/{claim_name}"')
        if is_being_deleted(claim):
            raise ClaimError(f'resourceclaim "{name_of(claim)}" is being deleted')
        if must_check_owner:
            ref = controller_ref(claim)
            if namespace_of(claim) != pod.namespace:
                raise ClaimError(f"ResourceClaim {claim_key(claim)} is not in the same namespace as "
                                 f"Pod {pod.namespace}/{pod.name}")
            if ref is None or str(ref.get("uid") or "") != pod.uid:
                raise ClaimError(f"ResourceClaim {claim_key(claim)} was not created for "
                                 f"Pod {pod.namespace}/{pod.name} (Pod is not owner)")
        out.append((str(pod_claim.get("name") or ""), claim))
    return out


def _claim_name(pod: Pod, pod_claim: Mapping[str, Any], statuses: Iterable[Any]) -> tuple[str | None, bool]:
    if pod_claim.get("resourceClaimName"):
        return str(pod_claim["resourceClaimName"]), False
    if pod_claim.get("resourceClaimTemplateName"):
        for status in statuses:
            if isinstance(status, dict) and status.get("name") == pod_claim.get("name"):
                name = status.get("resourceClaimName")
                return (str(name) if name else None), True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim '
                     f'"{pod_claim.get("name", "")}": none of the supported fields are set')


def reserved_for(claim: Any) -> list[dict[str, Any]]:
    return [r for r in status_of(claim).get("reservedFor") or () if isinstance(r, dict)]


def is_reserved_for_pod(pod: Pod, claim: Any) -> bool:
    return any(str(r.get("uid") or "") == pod.uid for r in reserved_for(claim))


def can_be_reserved(claim: Any) -> bool:
    return len(reserved_for(claim)) < RESERVED_FOR_MAX_SIZE


def is_allocated(claim: Any) -> bool:
    return status_of(claim).get("allocation") is not None


__all__ = ["ClaimError", "claim_key", "pod_resource_claims", "reserved_for", "is_reserved_for_pod",
           "can_be_reserved", "is_allocated", "uid_of"]
