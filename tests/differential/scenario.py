"""What the fuzzer generates and replays: one cluster, one scheduler configuration, pods in order.

The generator (``generate.py``) makes these from a seed; the harness plays them through the shipped
kube-scheduler and kschedfw; the shrinker makes smaller ones that still differ; a reproduction is
written as a v1 List (``to_list``) beside the configuration, which ``kschedfw simulate`` and the
fuzzer's replay mode both read."""

from __future__ import annotations

from typing import Any, Literal

import attrs

Kind = Literal["default", "variants", "dra", "gang"]

#: Namespaces a scenario may use. A real API server without a controller manager never finishes
#: deleting a namespace, so the harness creates these once, relabels them per scenario (from the
#: Namespace objects in ``objects``), and empties them between scenarios instead of deleting them.
NAMESPACES = ("fuzz-a", "fuzz-b", "fuzz-c")


@attrs.frozen(kw_only=True)
class Scenario:
    seed: int
    kind: Kind
    #: a KubeSchedulerConfiguration (apiVersion, kind, profiles); no clientConnection or leaderElection
    config: dict[str, Any]
    #: every object but pods, in creation order (Namespace, PriorityClass, RuntimeClass, Node,
    #: PodDisruptionBudget, ReplicaSet, Service, ...), each a full manifest
    objects: tuple[dict[str, Any], ...]
    #: pods in arrival order, each naming one of ``config``'s profiles in ``spec.schedulerName``
    pods: tuple[dict[str, Any], ...]

    def to_list(self) -> dict[str, Any]:
        """The cluster as ``kubectl get -o yaml`` would return it: a v1 List, objects then pods."""
        return {"apiVersion": "v1", "kind": "List", "items": [*self.objects, *self.pods]}
