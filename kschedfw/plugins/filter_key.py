"""In-tree Filter plugins whose verdict on a node follows from the NodeInfo and a few pod fields.

Two users rely on it: preemption's dry run (the plugins in :data:`NODE_ONLY_FILTERS` cannot change
their verdict when victims leave a node) and Filter's nominated-pods pass (a NodeInfo with the
nominated pods added gives the same statuses to every pod with the same :func:`filter_key`).

- :data:`NODE_ONLY_FILTERS` read the Node and the pod, never the pods on the node, and write
  nothing to the CycleState: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
  VolumeZone.
- NodeResourcesFit reads the NodeInfo's pod count and requested resources and the request its
  PreFilter stored.

Out-of-tree plugins are never assumed to be either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable

from kschedfw.plugins.nodeaffinity import NodeAffinity
from kschedfw.plugins.nodename import NodeName
from kschedfw.plugins.noderesources.fit import PRE_FILTER_STATE_KEY as FIT_STATE_KEY
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.nodeunschedulable import NodeUnschedulable
from kschedfw.plugins.tainttoleration import TaintToleration
from kschedfw.plugins.volumezone import VolumeZone

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.framework.cycle_state import CycleState

__all__ = ["NODE_ONLY_FILTERS", "filter_key", "fit_request_key"]

#: Filter plugins whose verdict reads the Node and the pod only (see the module docstring).
NODE_ONLY_FILTERS: frozenset[type] = frozenset({NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
                                                VolumeZone})


def fit_request_key(state: "CycleState") -> tuple | None:
    """What NodeResourcesFit's Filter compares against a node, from its PreFilter state:
    ``(milli_cpu, memory, ephemeral_storage, checked scalar resources)``; None without it."""
    fit_state = state.get(FIT_STATE_KEY)
    request = getattr(fit_state, "request", None)
    scalars = getattr(fit_state, "checked_scalars", None)
    if request is None or scalars is None:
        return None
    return request.milli_cpu, request.memory, request.ephemeral_storage, scalars


def _node_affinity_part(pod: "Pod", state: "CycleState") -> Hashable:
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    return tuple(sorted(pod.node_selector.items())), affinity


_POD_PARTS: dict[type, Callable[["Pod", "CycleState"], Hashable]] = {
    NodeUnschedulable: lambda pod, state: pod.tolerations,
    TaintToleration: lambda pod, state: pod.tolerations,
    NodeName: lambda pod, state: pod.node_name,
    NodeAffinity: _node_affinity_part,
}


def filter_key(plan: Iterable[tuple[str, Callable]], state: "CycleState", pod: "Pod") -> Hashable | None:
    """A key such that two pods with equal keys get the same status from ``plan`` (this cycle's
    Filter plugins, in order) on the same NodeInfo; None when a plugin of the plan may read
    anything else (VolumeZone reads PersistentVolumes; other plugins, the pods of other nodes)."""
    parts: list[Any] = []
    for name, fn in plan:
        kind = type(getattr(fn, "__self__", None))
        if kind is NodeResourcesFit:
            part: Hashable = fit_request_key(state)
            if part is None:
                return None
        else:
            pod_part = _POD_PARTS.get(kind)
            if pod_part is None:
                return None
            part = pod_part(pod, state)
        parts.append((name, part))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key
