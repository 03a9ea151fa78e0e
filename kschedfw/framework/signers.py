"""Signature fragments shared by several plugins' ``sign_pod`` (upstream kube-scheduler/framework/signers.go).

Two pods written differently but meaning the same must sign the same, as upstream's do: these
normalize what a pod spec may list in any order.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TOLERATIONS_SIGNER_NAME", "HOST_PORTS_SIGNER_NAME", "tolerations_signature", "host_ports_signature"]

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
