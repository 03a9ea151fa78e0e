"""The plugin author's contract, as upstream's ``k8s.io/kube-scheduler/framework`` (imported there
as ``fwk``): the hook specifications, the Protocols a plugin is handed (Handle and its facets,
Backend), Status, CycleState, the per-pod and per-node types, cluster events and what a change
stands for, signers, FitError, preemption's Victims, the feature gates, how a plugin declares its
args and the FieldError its validation returns. It imports nothing of kschedfw but ``api``; the
engine that runs plugins (``kschedfw.framework``) imports it, never the other way round.

Everything here is also importable from ``kschedfw`` itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # what a type checker sees of the names imported on first use below
    from kschedfw.api.field import FieldError
    from kschedfw.fwk.cycle_state import (BINDING_MAY_WAIT_KEY, CycleState, PODS_TO_ACTIVATE_KEY, PodGroupCycleState,
                                          PodsToActivate, StateNotFound)
    from kschedfw.fwk.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
    from kschedfw.fwk.features import FeatureGates
    from kschedfw.fwk.fit_error import FitError
    from kschedfw.fwk.interface import (Backend, BackgroundApiCalls, Client, Clock, Conflict, EventRecorder,
                                        Extender, ExtenderError, FeatureGateReader, FilterFunction, Handle,
                                        IndexedSharedLister, Nominator, NotFound, ObjectLister,
                                        PersistentVolumeClaimBinder, Plugin, PluginFactory, PodAffinityTermIndex,
                                        PodAnnotationWriter, PodLabelIndex, PreemptionMetrics,
                                        ResourceClaimStatusWriter, ResourceClaimWriter, SharedLister, Subscriber,
                                        WaitingPodHandle, WatchEvent, snapshot_label_index, snapshot_term_index)
    from kschedfw.fwk.markers import hookimpl
    from kschedfw.fwk.node_reuse import Memo, NodeMemo, NodeStamp, memo_score, memo_scores
    from kschedfw.fwk.podgroup import (MAX_SCORE, MIN_SCORE, GeneratePlacementsResult, Placement, PlacementScore,
                                       PodGroupAssignments, PodGroupInfo, PodGroupManager, PodGroupState,
                                       PodGroupStateLister, ProposedAssignment)
    from kschedfw.fwk.pod_info import AffinityTerm, PodTerms, WeightedAffinityTerm, pod_terms
    from kschedfw.fwk.status import Code, Status
    from kschedfw.fwk.types import (MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodeScore, NodeToStatus,
                                    NominatingInfo, NominatingMode, PostFilterResult, PreBindPreFlightResult,
                                    PreFilterResult, QueuedPodInfo, SignFragment)
    from kschedfw.fwk.victims import Candidate, Victims

#: contract name -> the module defining it (imported on first use, so ``kschedfw validate``
#: starts fast); ``kschedfw`` re-exports every one
EXPORTS: dict[str, str] = {
    "hookimpl": "kschedfw.fwk.markers",
    "Code": "kschedfw.fwk.status",
    "Status": "kschedfw.fwk.status",
    "CycleState": "kschedfw.fwk.cycle_state",
    "StateNotFound": "kschedfw.fwk.cycle_state",
    "PodsToActivate": "kschedfw.fwk.cycle_state",
    "PODS_TO_ACTIVATE_KEY": "kschedfw.fwk.cycle_state",
    "BINDING_MAY_WAIT_KEY": "kschedfw.fwk.cycle_state",
    "PodGroupCycleState": "kschedfw.fwk.cycle_state",
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
    "SignFragment": "kschedfw.fwk.types",
    "PreBindPreFlightResult": "kschedfw.fwk.types",
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
    "FeatureGateReader": "kschedfw.fwk.interface",
    "Nominator": "kschedfw.fwk.interface",
    "Extender": "kschedfw.fwk.interface",
    "ExtenderError": "kschedfw.fwk.interface",
    "FilterFunction": "kschedfw.fwk.interface",
    "PersistentVolumeClaimBinder": "kschedfw.fwk.interface",
    "ResourceClaimStatusWriter": "kschedfw.fwk.interface",
    "ResourceClaimWriter": "kschedfw.fwk.interface",
    "PodAnnotationWriter": "kschedfw.fwk.interface",
    "BackgroundApiCalls": "kschedfw.fwk.interface",
    "PodLabelIndex": "kschedfw.fwk.interface",
    "PodAffinityTermIndex": "kschedfw.fwk.interface",
    "IndexedSharedLister": "kschedfw.fwk.interface",
    "snapshot_label_index": "kschedfw.fwk.interface",
    "snapshot_term_index": "kschedfw.fwk.interface",
    "FeatureGates": "kschedfw.fwk.features",
    "FieldError": "kschedfw.api.field",
    "AffinityTerm": "kschedfw.fwk.pod_info",
    "WeightedAffinityTerm": "kschedfw.fwk.pod_info",
    "PodTerms": "kschedfw.fwk.pod_info",
    "pod_terms": "kschedfw.fwk.pod_info",
    "Victims": "kschedfw.fwk.victims",
    "Candidate": "kschedfw.fwk.victims",
    "FitError": "kschedfw.fwk.fit_error",
    "NodeStamp": "kschedfw.fwk.node_reuse",
    "NodeMemo": "kschedfw.fwk.node_reuse",
    "Memo": "kschedfw.fwk.node_reuse",
    "memo_score": "kschedfw.fwk.node_reuse",
    "memo_scores": "kschedfw.fwk.node_reuse",
    "MAX_SCORE": "kschedfw.fwk.podgroup",
    "MIN_SCORE": "kschedfw.fwk.podgroup",
    "GeneratePlacementsResult": "kschedfw.fwk.podgroup",
    "Placement": "kschedfw.fwk.podgroup",
    "PlacementScore": "kschedfw.fwk.podgroup",
    "PodGroupAssignments": "kschedfw.fwk.podgroup",
    "PodGroupInfo": "kschedfw.fwk.podgroup",
    "PodGroupManager": "kschedfw.fwk.podgroup",
    "PodGroupState": "kschedfw.fwk.podgroup",
    "PodGroupStateLister": "kschedfw.fwk.podgroup",
    "ProposedAssignment": "kschedfw.fwk.podgroup",
}

#: the contract, each name once (``kschedfw`` exports the same list)
__all__ = [
    "ActionType", "AffinityTerm", "BINDING_MAY_WAIT_KEY", "Backend", "BackgroundApiCalls", "Candidate",
    "Client", "Clock", "ClusterEvent", "ClusterEventWithHint", "Code", "Conflict", "CycleState",
    "EventRecorder", "EventResource", "Extender", "ExtenderError", "FeatureGateReader", "FeatureGates",
    "FieldError", "FilterFunction", "FitError", "GeneratePlacementsResult", "Handle", "IndexedSharedLister",
    "MAX_NODE_SCORE", "MAX_SCORE", "MIN_NODE_SCORE", "MIN_SCORE", "Memo", "NodeInfo", "NodeMemo", "NodeScore",
    "NodeStamp", "NodeToStatus", "NominatingInfo", "NominatingMode", "Nominator", "NotFound", "ObjectLister",
    "PODS_TO_ACTIVATE_KEY", "PersistentVolumeClaimBinder", "Placement", "PlacementScore", "Plugin", "PluginFactory",
    "PodAffinityTermIndex", "PodAnnotationWriter", "PodGroupAssignments", "PodGroupCycleState", "PodGroupInfo",
    "PodGroupManager", "PodGroupState", "PodGroupStateLister", "PodLabelIndex", "PodTerms", "PodsToActivate",
    "PostFilterResult", "PreBindPreFlightResult", "PreFilterResult", "PreemptionMetrics", "ProposedAssignment",
    "QueuedPodInfo", "QueueingHint", "ResourceClaimStatusWriter", "ResourceClaimWriter", "SharedLister",
    "SignFragment", "StateNotFound", "Status", "Subscriber", "Victims", "WaitingPodHandle", "WatchEvent",
    "WeightedAffinityTerm", "hookimpl", "memo_score", "memo_scores", "pod_terms", "snapshot_label_index",
    "snapshot_term_index",
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
