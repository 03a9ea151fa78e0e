"""kschedfw: the Kubernetes scheduler framework for Python plugins.

Write a plugin as a class with a ``name`` and ``@kschedfw.hookimpl`` methods named after the
extension points in :mod:`kschedfw.hookspecs`; it is built with its args and a :class:`Handle`
(everything it may use of the scheduler and the cluster, see :mod:`kschedfw.framework.interface`).
Register it in your package::

    [project.entry-points."kschedfw.plugins"]
    MyPlugin = "my_package.plugin:MyPlugin"

enable it in a KubeSchedulerConfiguration profile, and check the file with
``kschedfw validate config.yaml``. ``kschedfw plugins`` lists what is installed.

The names below are imported on first use, so ``kschedfw validate`` starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "hookimpl": "kschedfw.markers",
    "Code": "kschedfw.framework.status",
    "Status": "kschedfw.framework.status",
    "CycleState": "kschedfw.framework.cycle_state",
    "ActionType": "kschedfw.framework.events",
    "ClusterEvent": "kschedfw.framework.events",
    "ClusterEventWithHint": "kschedfw.framework.events",
    "EventResource": "kschedfw.framework.events",
    "QueueingHint": "kschedfw.framework.events",
    "MAX_NODE_SCORE": "kschedfw.framework.types",
    "MIN_NODE_SCORE": "kschedfw.framework.types",
    "NodeInfo": "kschedfw.framework.types",
    "NodeScore": "kschedfw.framework.types",
    "NodeToStatus": "kschedfw.framework.types",
    "NominatingInfo": "kschedfw.framework.types",
    "NominatingMode": "kschedfw.framework.types",
    "PostFilterResult": "kschedfw.framework.types",
    "PreFilterResult": "kschedfw.framework.types",
    "QueuedPodInfo": "kschedfw.framework.types",
    "Handle": "kschedfw.framework.interface",
    "Backend": "kschedfw.framework.interface",
    "ObjectLister": "kschedfw.framework.interface",
    "Subscriber": "kschedfw.framework.interface",
    "Client": "kschedfw.framework.interface",
    "EventRecorder": "kschedfw.framework.interface",
    "Clock": "kschedfw.framework.interface",
    "WatchEvent": "kschedfw.framework.interface",
    "NotFound": "kschedfw.framework.interface",
    "Conflict": "kschedfw.framework.interface",
    "Plugin": "kschedfw.framework.interface",
    "PluginFactory": "kschedfw.framework.interface",
    "SharedLister": "kschedfw.framework.interface",
    "WaitingPodHandle": "kschedfw.framework.interface",
    "PreemptionMetrics": "kschedfw.framework.interface",
    "AffinityTerm": "kschedfw.framework.pod_info",
    "WeightedAffinityTerm": "kschedfw.framework.pod_info",
    "PodTerms": "kschedfw.framework.pod_info",
    "pod_terms": "kschedfw.framework.pod_info",
    "Victims": "kschedfw.framework.victims",
    "Candidate": "kschedfw.framework.victims",
    "FeatureGates": "kschedfw.features",
}

__all__ = [
    "MAX_NODE_SCORE", "MIN_NODE_SCORE", "ActionType", "ClusterEvent", "ClusterEventWithHint", "Code",
    "CycleState", "EventResource", "NodeInfo", "NodeScore", "NodeToStatus", "NominatingInfo",
    "NominatingMode", "PostFilterResult", "PreFilterResult", "QueuedPodInfo", "QueueingHint", "Status",
    "hookimpl",
    # the contract (kschedfw.framework.interface) and the gate values a Handle carries
    "Backend", "Client", "Clock", "Conflict", "EventRecorder", "FeatureGates", "Handle", "NotFound",
    "ObjectLister", "Plugin", "PluginFactory", "PreemptionMetrics", "SharedLister", "Subscriber",
    "WaitingPodHandle", "WatchEvent",
    # per-pod info (a pod's compiled affinity terms) and what preemption and extenders exchange
    "AffinityTerm", "Candidate", "PodTerms", "Victims", "WeightedAffinityTerm", "pod_terms",
]

if TYPE_CHECKING:
    from kschedfw.features import FeatureGates
    from kschedfw.framework.cycle_state import CycleState
    from kschedfw.framework.events import (ActionType, ClusterEvent, ClusterEventWithHint,
                                           EventResource, QueueingHint)
    from kschedfw.framework.interface import (Backend, Client, Clock, Conflict, EventRecorder, Handle,
                                              NotFound, ObjectLister, Plugin, PluginFactory, PreemptionMetrics,
                                              SharedLister, Subscriber, WaitingPodHandle, WatchEvent)
    from kschedfw.framework.pod_info import AffinityTerm, PodTerms, WeightedAffinityTerm, pod_terms
    from kschedfw.framework.victims import Candidate, Victims
    from kschedfw.framework.status import Code, Status
    from kschedfw.framework.types import (MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodeScore,
                                          NodeToStatus, NominatingInfo, NominatingMode,
                                          PostFilterResult, PreFilterResult, QueuedPodInfo)
    from kschedfw.markers import hookimpl


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kschedfw' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
