"""kschedfw: the Kubernetes scheduler framework for Python plugins.

Write a plugin as a class with a ``name`` and ``@kschedfw.hookimpl`` methods named after the
extension points in :mod:`kschedfw.fwk.hookspecs`; it is built with its args and a :class:`Handle`
(everything it may use of the scheduler and the cluster, see :mod:`kschedfw.fwk.interface`).
Register it in your package::

    [project.entry-points."kschedfw.plugins"]
    MyPlugin = "my_package.plugin:MyPlugin"

enable it in a KubeSchedulerConfiguration profile, and check the file with
``kschedfw validate config.yaml``. ``kschedfw plugins`` lists what is installed.

The names below are imported on first use, so ``kschedfw validate`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedfw.fwk import EXPORTS as CONTRACT
from kschedfw.fwk import lazy_exports

_EXPORTS = {**CONTRACT, "FeatureGates": "kschedfw.features"}

__all__ = [
    "MAX_NODE_SCORE", "MIN_NODE_SCORE", "ActionType", "ClusterEvent", "ClusterEventWithHint", "Code",
    "CycleState", "EventResource", "NodeInfo", "NodeScore", "NodeToStatus", "NominatingInfo",
    "NominatingMode", "PostFilterResult", "PreFilterResult", "QueuedPodInfo", "QueueingHint", "Status",
    "hookimpl",
    # the contract (kschedfw.fwk.interface) and the gate values a Handle carries
    "Backend", "Client", "Clock", "Conflict", "EventRecorder", "FeatureGates", "Handle", "NotFound",
    "ObjectLister", "Plugin", "PluginFactory", "PreemptionMetrics", "SharedLister", "Subscriber",
    "WaitingPodHandle", "WatchEvent",
    # per-pod info (a pod's compiled affinity terms) and what preemption and extenders exchange
    "AffinityTerm", "Candidate", "PodTerms", "Victims", "WeightedAffinityTerm", "pod_terms",
    # why a pod did not fit
    "FitError",
]

if TYPE_CHECKING:
    from kschedfw.features import FeatureGates
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.fit_error import FitError
    from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint,
                                     EventResource, QueueingHint)
    from kschedfw.fwk.interface import (Backend, Client, Clock, Conflict, EventRecorder, Handle,
                                        NotFound, ObjectLister, Plugin, PluginFactory, PreemptionMetrics,
                                        SharedLister, Subscriber, WaitingPodHandle, WatchEvent)
    from kschedfw.fwk.pod_info import AffinityTerm, PodTerms, WeightedAffinityTerm, pod_terms
    from kschedfw.fwk.victims import Candidate, Victims
    from kschedfw.fwk.status import Code, Status
    from kschedfw.fwk.types import (MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodeScore,
                                    NodeToStatus, NominatingInfo, NominatingMode,
                                    PostFilterResult, PreFilterResult, QueuedPodInfo)
    from kschedfw.fwk.markers import hookimpl


__getattr__ = lazy_exports(_EXPORTS, globals())
