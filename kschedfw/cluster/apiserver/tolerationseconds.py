"""DefaultTolerationSeconds admission: every pod tolerates a not-ready or unreachable node for 300 s.

Upstream's plugin (``plugin/pkg/admission/defaulttolerationseconds``) adds
``node.kubernetes.io/not-ready:NoExecute`` and ``node.kubernetes.io/unreachable:NoExecute``
tolerations (``Exists``, ``tolerationSeconds: 300``, kube-apiserver's
``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``) to a
pod that has no toleration for that key (or without a key) with effect NoExecute (or without an
effect). The scheduler sees them: such a pod tolerates a node tainted NoExecute by the node
lifecycle controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedfw.api import Toleration

if TYPE_CHECKING:
    from kschedfw.api import Pod

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300

_ADDED = {key: (Toleration(key, "Exists", "", "NoExecute", DEFAULT_SECONDS),
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": DEFAULT_SECONDS})
          for key in (NOT_READY, UNREACHABLE)}


def _tolerates(t: Toleration, key: str) -> bool:
    return t.key in (key, "") and t.effect in ("NoExecute", "")


def add_default_tolerations(pod: "Pod") -> "Pod":
    """The pod with the tolerations it lacks for not-ready and unreachable nodes."""
    missing = [key for key in (NOT_READY, UNREACHABLE) if not any(_tolerates(t, key) for t in pod.tolerations)]
    if not missing:
        return pod
    tolerations = (*pod.tolerations, *(_ADDED[key][0] for key in missing))
    if not pod.raw:  # a pod built in code, without a manifest
        return pod._evolve_keep_caches(tolerations=tolerations)
    raw_spec = pod.raw.get("spec")
    spec: dict[str, Any] = dict(raw_spec) if isinstance(raw_spec, dict) else {}
    # each pod its own mappings: a mapping shared by two manifests is written by --write-out as
    # a YAML anchor and aliases, through PyYAML's slow representer
    spec["tolerations"] = [*(spec.get("tolerations") or ()), *(dict(_ADDED[key][1]) for key in missing)]
    return pod._evolve_keep_caches(tolerations=tolerations, raw={**pod.raw, "spec": spec})
