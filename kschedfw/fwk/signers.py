"""Signature fragments shared by several plugins' ``sign_pod`` (upstream kube-scheduler/framework/signers.go).

Two pods written differently but meaning the same must sign the same, as upstream's do: these
normalize what a pod spec may list in any order.
"""

from __future__ import annotations

from typing import Any, Mapping

from kschedfw.api.accessors import name_of, spec_of

__all__ = ["TOLERATIONS_SIGNER_NAME", "HOST_PORTS_SIGNER_NAME", "tolerations_signature", "host_ports_signature",
           "node_affinity_signature", "requests_dra_backed_resource"]

TOLERATIONS_SIGNER_NAME = "v1.Pod.Spec.Tolerations"
HOST_PORTS_SIGNER_NAME = "v1.Pod.Spec.HostPorts()"


def tolerations_signature(pod: Any) -> tuple[Any, ...]:
    """The tolerations ordered by key, then value (upstream TolerationsSigner; stable)."""
    return tuple(sorted(pod.tolerations, key=lambda t: (t.key, t.value)))


def host_ports_signature(pod: Any) -> list[int]:
    """The distinct non-zero host ports of every container and init container, sorted
    (upstream HostPortsSigner: protocol and host IP are not part of it)."""
    return sorted({port.host_port for c in (*pod.containers, *pod.init_containers)
                   for port in c.ports if port.host_port})


def _requirements_signature(requirements: Any) -> tuple[Any, ...]:
    return tuple(sorted((r.key, r.operator, tuple(sorted(r.values))) for r in requirements))


def _term_signature(term: Any) -> tuple[Any, ...]:
    return (_requirements_signature(term.match_expressions), _requirements_signature(term.match_fields))


def node_affinity_signature(pod: Any) -> tuple[Any, ...] | None:
    """The node affinity with values, requirements and terms each in a canonical order (upstream
    NodeAffinitySigner); None without node affinity."""
    affinity = pod.affinity
    na = affinity.node_affinity if affinity is not None else None
    if na is None:
        return None
    required = tuple(sorted(_term_signature(t) for t in na.required.terms)) if na.required is not None else ()
    preferred = tuple(sorted((p.weight, _term_signature(p.preference)) for p in na.preferred))
    return (required, preferred)


#: The extended resource name a DeviceClass always serves (besides its spec.extendedResourceName).
IMPLICIT_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def requests_dra_backed_resource(scalar_requests: Mapping[str, int], lister: Any) -> bool:
    """Whether a non-zero extended-resource request is served by a DeviceClass (upstream Fit and
    BalancedAllocation then refuse to sign: "signature disabled when dra extended resources are
    used in the cluster")."""
    wanted = [name for name, amount in scalar_requests.items() if amount]
    if not wanted or lister is None:
        return False
    served: set[str] = set()
    for device_class in lister.list("DeviceClass"):
        explicit = spec_of(device_class).get("extendedResourceName")
        if explicit:
            served.add(str(explicit))
        served.add(IMPLICIT_DEVICE_CLASS_PREFIX + name_of(device_class))
    return any(name in served for name in wanted)
