"""The plugin author's contract, as upstream's ``k8s.io/kube-scheduler/framework`` (imported there
as ``fwk``): the hook specifications, the Protocols a plugin is handed (Handle and its facets,
Backend), Status, CycleState, the per-pod and per-node types, cluster events and what a change
stands for, signers, FitError, preemption's Victims. It imports nothing of kschedfw but ``api``;
the engine that runs plugins (``kschedfw.framework``) imports it, never the other way round.

Everything here is also importable from ``kschedfw`` itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # what a type checker sees of the names imported on first use below
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
    from kschedfw.fwk.fit_error import FitError
    from kschedfw.fwk.interface import (Backend, Client, Clock, Conflict, EventRecorder, Handle, NotFound,
                                        ObjectLister, Plugin, PluginFactory, PreemptionMetrics, SharedLister,
                                        Subscriber, WaitingPodHandle, WatchEvent)
    from kschedfw.fwk.markers import hookimpl
    from kschedfw.fwk.pod_info import AffinityTerm, PodTerms, WeightedAffinityTerm, pod_terms
    from kschedfw.fwk.status import Code, Status
    from kschedfw.fwk.types import (MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodeScore, NodeToStatus,
                                    NominatingInfo, NominatingMode, PostFilterResult, PreFilterResult,
                                    QueuedPodInfo)
    from kschedfw.fwk.victims import Candidate, Victims

#: contract name -> the module defining it (imported on first use, so ``kschedfw validate``
#: starts fast); ``kschedfw`` re-exports every one
EXPORTS: dict[str, str] = {
    "hookimpl": "kschedfw.fwk.markers",
    "Code": "kschedfw.fwk.status",
    "Status": "kschedfw.fwk.status",
    "CycleState": "kschedfw.fwk.cycle_state",
    "ActionType": "kschedfw.fwk.events",
    "ClusterEvent": "kschedfw.fwk.events",
    "ClusterEventWithHint": "kschedfw.fwk.events",
    "EventResource": "kschedfw.fwk.events",
    "QueueingHint": "kschedfw.fwk.events",
    "MAX_NODE_SCORE": "kschedfw.fwk.types",
    "MIN_NODE_SCORE": "kschedfw.fwk.types",
    "NodeInfo": "kschedfw.fwk.types",
    "NodeScore": "kschedfw.fwk.types",
    "NodeToStatus": "kschedfw.fwk.types",
    "NominatingInfo": "kschedfw.fwk.types",
    "NominatingMode": "kschedfw.fwk.types",
    "PostFilterResult": "kschedfw.fwk.types",
    "PreFilterResult": "kschedfw.fwk.types",
    "QueuedPodInfo": "kschedfw.fwk.types",
    "Handle": "kschedfw.fwk.interface",
    "Backend": "kschedfw.fwk.interface",
    "ObjectLister": "kschedfw.fwk.interface",
    "Subscriber": "kschedfw.fwk.interface",
    "Client": "kschedfw.fwk.interface",
    "EventRecorder": "kschedfw.fwk.interface",
    "Clock": "kschedfw.fwk.interface",
    "WatchEvent": "kschedfw.fwk.interface",
    "NotFound": "kschedfw.fwk.interface",
    "Conflict": "kschedfw.fwk.interface",
    "Plugin": "kschedfw.fwk.interface",
    "PluginFactory": "kschedfw.fwk.interface",
    "SharedLister": "kschedfw.fwk.interface",
    "WaitingPodHandle": "kschedfw.fwk.interface",
    "PreemptionMetrics": "kschedfw.fwk.interface",
    "AffinityTerm": "kschedfw.fwk.pod_info",
    "WeightedAffinityTerm": "kschedfw.fwk.pod_info",
    "PodTerms": "kschedfw.fwk.pod_info",
    "pod_terms": "kschedfw.fwk.pod_info",
    "Victims": "kschedfw.fwk.victims",
    "Candidate": "kschedfw.fwk.victims",
    "FitError": "kschedfw.fwk.fit_error",
}

__all__ = [
    "ActionType", "AffinityTerm", "Backend", "Candidate", "Client", "Clock", "ClusterEvent",
    "ClusterEventWithHint", "Code", "Conflict", "CycleState", "EventRecorder", "EventResource", "FitError",
    "Handle", "MAX_NODE_SCORE", "MIN_NODE_SCORE", "NodeInfo", "NodeScore", "NodeToStatus", "NominatingInfo",
    "NominatingMode", "NotFound", "ObjectLister", "Plugin", "PluginFactory", "PodTerms", "PostFilterResult",
    "PreFilterResult", "PreemptionMetrics", "QueuedPodInfo", "QueueingHint", "SharedLister", "Status",
    "Subscriber", "Victims", "WaitingPodHandle", "WatchEvent", "WeightedAffinityTerm", "hookimpl", "pod_terms",
]


def lazy_exports(exports: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``exports[name]`` on first use and keeps the value
    in the module's ``namespace`` (its ``globals()``), so later lookups cost nothing."""
    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module), name)
        return value
    return __getattr__


__getattr__ = lazy_exports(EXPORTS, globals())
