"""PodTopologySpread: spread matching pods evenly over topology domains (zones, nodes, ...).

A pod's ``topologySpreadConstraints`` decide: ``DoNotSchedule`` ones are enforced by Filter,
``ScheduleAnyway`` ones are preferences for Score. A pod without constraints gets the default
ones from the args: ``defaultingType: System`` spreads over hostname (maxSkew 3) and zone
(maxSkew 5), softly; ``List`` uses ``defaultConstraints``. Default constraints select the pods
that share the pod's Services, ReplicationController, ReplicaSet or StatefulSet, and are
dropped when there are none.

Args read: ``defaultConstraints`` (list of ``{maxSkew, topologyKey, whenUnsatisfiable, ...}``)
and ``defaultingType`` (``System`` | ``List``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from kschedfw import hookimpl
from kschedfw.api import Node, Pod, TopologySpreadConstraint
from kschedfw.fwk.interface import snapshot_label_index
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.status import Status
from kschedfw.plugins.helper import as_objects
from kschedfw.plugins.podtopologyspread.common import (DO_NOT_SCHEDULE, HONOR, LABEL_HOSTNAME,
                                                       LABEL_TOPOLOGY_ZONE, NAME, SCHEDULE_ANYWAY,
                                                       Constraint, default_selector,
                                                       filter_constraints,
                                                       node_labels_match_constraints,
                                                       pod_labels_match_constraints)
from kschedfw.plugins.podtopologyspread.filtering import Filtering
from kschedfw.plugins.podtopologyspread.scoring import Scoring
from kschedfw.plugins.podtopologyspread.args import ARGS

if TYPE_CHECKING:
    from kschedfw.fwk.interface import PodLabelIndex
    from kschedfw.fwk import interface
    from kschedfw.fwk.types import NodeInfo, SignFragment

__all__ = ["PodTopologySpread", "SYSTEM_DEFAULT_CONSTRAINTS", "SYSTEM_DEFAULTING", "LIST_DEFAULTING"]

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE,
                             when_unsatisfiable=SCHEDULE_ANYWAY),
)


def _constraint_from_args(d: dict[str, Any]) -> TopologySpreadConstraint:
    """One ``defaultConstraints`` entry (already validated: no label selector) as an API object."""
    min_domains = d.get("minDomains")
    return TopologySpreadConstraint(
        max_skew=int(d.get("maxSkew", 0)),
        topology_key=str(d.get("topologyKey", "")),
        when_unsatisfiable=str(d.get("whenUnsatisfiable", "")),
        label_selector=None,
        min_domains=int(min_domains) if min_domains is not None else None,
        node_affinity_policy=d.get("nodeAffinityPolicy"),
        node_taints_policy=d.get("nodeTaintsPolicy"),
        match_label_keys=tuple(d.get("matchLabelKeys") or ()),
    )


def _involved_in_topology_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    """Can ``incoming`` change the spreading seen by ``pod_with_spreading``?"""
    if incoming.uid == pod_with_spreading.uid:
        return True
    if not incoming.node_name and not incoming.nominated_node_name:
        return False
    return incoming.namespace == pod_with_spreading.namespace


def _has_constraint_with_node_taints_policy_honor(constraints: list[Constraint]) -> bool:
    return any(c.node_taints_policy == HONOR for c in constraints)


def _topology_key_labels_changed(old_labels: Mapping[str, str], new_labels: Mapping[str, str],
                                 constraints: list[Constraint]) -> bool:
    for c in constraints:
        if old_labels.get(c.topology_key, "") != new_labels.get(c.topology_key, ""):
            return True
    return False


class PodTopologySpread(Filtering, Scoring):
    """Upstream's PodTopologySpread (PreFilter, Filter, PreScore, Score, NormalizeScore)."""

    name = NAME
    args_spec = ARGS
    args_schema = ARGS.schema
    validate_args = staticmethod(ARGS.validate)

    # Feature gates as in a default v1.36 scheduler: NodeInclusionPolicyInPodTopologySpread (GA)
    # and MatchLabelKeysInPodTopologySpread (beta, on). Gt/Lt tolerations follow TaintToleration.
    enable_node_inclusion_policy = True
    enable_match_label_keys = True
    enable_taint_toleration_comparison_operators = False  # alpha gate, off in v1.36

    def __init__(self, args: dict[str, Any] | None, handle: interface.Handle) -> None:
        args = args or {}
        self.handle = handle
        self.enable_taint_toleration_comparison_operators = self.handle.feature_gates.enabled(
            "TaintTolerationComparisonOperators")
        self.system_defaulted = args.get("defaultingType", SYSTEM_DEFAULTING) == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            self.default_constraints = tuple(
                _constraint_from_args(c) for c in (args.get("defaultConstraints") or ()))

    # ------------------------------------------------------------------ constraints

    def _filter(self, constraints: Sequence[TopologySpreadConstraint], pod_labels: Mapping[str, str],
                action: str) -> list[Constraint]:
        return filter_constraints(constraints, pod_labels, action,
                                  enable_match_label_keys=self.enable_match_label_keys,
                                  enable_node_inclusion_policy=self.enable_node_inclusion_policy)

    def _build_default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """Default constraints for ``action`` with the selector derived from the pod's owners.

        Empty when no default constraint has that action or nothing selects the pod.
        """
        constraints = self._filter(self.default_constraints, pod.labels, action)
        if not constraints:
            return []
        selector = default_selector(pod, self.handle.lister)
        if selector.empty:
            return []
        return [c.with_selector(selector) for c in constraints]

    def _get_constraints(self, pod: Pod) -> list[Constraint]:
        """The pod's hard constraints, or the hard default constraints when it has none."""
        if pod.topology_spread_constraints:
            return self._filter(pod.topology_spread_constraints, pod.labels, DO_NOT_SCHEDULE)
        return self._build_default_constraints(pod, DO_NOT_SCHEDULE)

    def _label_index(self, nodes: Sequence[NodeInfo]) -> PodLabelIndex | None:
        """The cache's pod label index when ``nodes`` are all of the snapshot's nodes (and the
        fast paths are on), else None: then every node's pods are walked."""
        snapshot = self.handle.snapshot
        if snapshot is None or nodes is not snapshot.node_infos() or not self.handle.fast_paths:
            return None
        return snapshot_label_index(snapshot)

    # ------------------------------------------------------------------ signing

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        # Spreading depends on pods across the whole topology, not on the pod and node alone.
        if pod.topology_spread_constraints:
            return [], Status.unschedulable("pods with topology constraints are not signable")
        if self.default_constraints:
            return [], Status.unschedulable("pods with default topology constraints are not signable")
        return [], None

    # ------------------------------------------------------------------ queueing

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # An assigned pod added, relabelled or deleted changes the counts; a new toleration
            # on the pod itself matters when a constraint honours node taints.
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel
                             | ActionType.UpdatePodToleration | ActionType.Delete),
                self.is_schedulable_after_pod_change),
            # Nodes appearing, leaving or changing topology labels or taints change the domains.
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.Delete
                             | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint),
                self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original, modified = as_objects(old_obj, new_obj, Pod)
        if (modified is not None and not _involved_in_topology_spreading(modified, pod)) or (
                original is not None and not _involved_in_topology_spreading(original, pod)):
            return QueueingHint.QueueSkip

        constraints = self._get_constraints(pod)

        if modified is not None and original is not None:
            if (pod.uid == modified.uid and modified.tolerations != original.tolerations
                    and _has_constraint_with_node_taints_policy_honor(constraints)):
                return QueueingHint.Queue
            if modified.labels == original.labels:
                return QueueingHint.QueueSkip
            for c in constraints:
                if c.selector.matches(original.labels) != c.selector.matches(modified.labels):
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip

        if modified is not None:
            if pod_labels_match_constraints(constraints, modified.labels):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip

        assert original is not None  # a deletion: the old pod is what is left
        if pod_labels_match_constraints(constraints, original.labels):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original, modified = as_objects(old_obj, new_obj, Node)
        constraints = self._get_constraints(pod)

        original_matching = original is not None and node_labels_match_constraints(
            original.labels, constraints)
        modified_matching = modified is not None and node_labels_match_constraints(
            modified.labels, constraints)

        if original is not None and modified is not None:
            if original_matching != modified_matching:
                return QueueingHint.Queue
            if modified_matching and (
                    _topology_key_labels_changed(original.labels, modified.labels, constraints)
                    or original.taints != modified.taints):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip

        if modified is not None:
            return QueueingHint.Queue if modified_matching else QueueingHint.QueueSkip

        return QueueingHint.Queue if original_matching else QueueingHint.QueueSkip
