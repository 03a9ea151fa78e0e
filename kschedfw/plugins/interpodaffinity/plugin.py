"""The InterPodAffinity plugin: required pod (anti-)affinity as a filter, preferred as a score.

Extension points: PreFilter (+AddPod/RemovePod), Filter, PreScore, Score (+NormalizeScore),
EnqueueExtensions and Sign. Args (``InterPodAffinityArgs``): ``hardPodAffinityWeight`` (default 1,
the score an existing pod's *required* affinity term gives to nodes in its domain when it selects
the incoming pod) and ``ignorePreferredTermsOfExistingPods`` (default false: skip scoring when
the incoming pod has no preferred terms of its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import hookimpl
from kschedfw.fwk.interface import snapshot_label_index, snapshot_term_index
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint,
                                 EventResource, QueueingHint)
from kschedfw.fwk.pod_info import (AffinityTerm, WeightedAffinityTerm, has_pod_affinity,
                                   pod_matches_all_affinity_terms, pod_terms)
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import SignFragment

from kschedfw.plugins.interpodaffinity import filtering, scoring
from kschedfw.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, PRE_FILTER_STATE_KEY, PreFilterState)
from kschedfw.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from kschedfw.plugins.interpodaffinity.args import ARGS

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.interface import PodAffinityTermIndex, PodLabelIndex
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, NodeScore, PreFilterResult

__all__ = ["InterPodAffinity", "NAME", "DEFAULT_HARD_POD_AFFINITY_WEIGHT", "LABELS_SIGNER_NAME"]

NAME = "InterPodAffinity"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
LABELS_SIGNER_NAME = "v1.Pod.Labels"


# Filter's rejections by filtering.failed_check's result (0 is "passes").
_REJECTIONS: tuple[tuple[Code, tuple[str, ...]], ...] = (
    (Code.Success, ()),
    (Code.UnschedulableAndUnresolvable, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,)),
    (Code.Unschedulable, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,)),
    (Code.Unschedulable, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,)))


def _not_found(key: str) -> Status:
    return Status.as_status(f'error reading "{key}" from cycleState: not found')


def _has_preferred_terms(pod: Pod) -> bool:
    affinity = pod.affinity
    if affinity is None:
        return False
    pa, paa = affinity.pod_affinity, affinity.pod_anti_affinity
    return bool((pa is not None and pa.preferred) or (paa is not None and paa.preferred))


class InterPodAffinity:
    """Pods placed with or away from other pods, per topology domain (upstream InterPodAffinity)."""

    name = NAME
    args_spec = ARGS
    args_schema = ARGS.schema
    validate_args = staticmethod(ARGS.validate)

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        args = args or {}
        self.hard_pod_affinity_weight = int(args.get("hardPodAffinityWeight",
                                                     DEFAULT_HARD_POD_AFFINITY_WEIGHT))
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False))
        self._handle = handle

    # ------------------------------------------------------------------ cluster helpers

    def _namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        """Labels of the pod's namespace; None (no labels) when it cannot be found."""
        try:
            ns = self._handle.lister.get("Namespace", namespace)
        except Exception:  # noqa: BLE001 - upstream logs and assumes no labels
            return None
        return getattr(ns, "labels", None) if ns is not None else None

    def _unroll_namespaces(self, terms: tuple[AffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
        """Resolve non-empty namespace selectors of the incoming pod's terms into names."""
        if not any(t.namespace_selector is not None and not t.all_namespaces for t in terms):
            return terms
        namespaces = self._handle.lister.list("Namespace")
        return tuple(t.with_namespaces_from_selector(namespaces) for t in terms)

    def _unroll_weighted(self, terms: tuple[WeightedAffinityTerm, ...]
                         ) -> tuple[WeightedAffinityTerm, ...]:
        if not any(w.term.namespace_selector is not None and not w.term.all_namespaces for w in terms):
            return terms
        namespaces = self._handle.lister.list("Namespace")
        return tuple(WeightedAffinityTerm(w.weight, w.term.with_namespaces_from_selector(namespaces))
                     for w in terms)

    def _nodes_with(self, attr: str, nodes: list[NodeInfo]) -> list[NodeInfo]:
        """Snapshot nodes hosting pods with affinity / required anti-affinity.

        Falls back to the ``nodes`` argument when the handle has no snapshot (tests, tools).
        """
        snapshot = self._handle.snapshot
        if snapshot is not None and len(snapshot):
            if attr == "pods_with_required_anti_affinity":
                return snapshot.have_pods_with_required_anti_affinity()
            return snapshot.have_pods_with_affinity()
        return [ni for ni in nodes if getattr(ni, attr)]

    def _label_index(self, nodes: list[NodeInfo]) -> PodLabelIndex | None:
        """The cache's pod label index when ``nodes`` are all of the snapshot's nodes, else None."""
        snapshot = self._handle.snapshot
        if snapshot is None or nodes is not snapshot.node_infos() or not self._handle.fast_paths:
            return None
        return snapshot_label_index(snapshot)

    def _term_index(self) -> PodAffinityTermIndex | None:
        """The cache's index of assigned pods' affinity terms (None: walk the pods)."""
        snapshot = self._handle.snapshot
        if snapshot is None or not self._handle.fast_paths:
            return None
        return snapshot_term_index(snapshot)

    def _all_nodes(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
        snapshot = self._handle.snapshot
        if snapshot is not None and len(snapshot):
            return snapshot.node_infos()
        return nodes

    # ------------------------------------------------------------------ PreFilter / Filter

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        terms = pod_terms(pod)
        term_index = self._term_index()
        # Which nodes host pods with required anti-affinity (only the walk needs the list; the
        # index says as well whether there are any).
        anti_nodes = (self._nodes_with("pods_with_required_anti_affinity", nodes)
                      if term_index is None else ())
        if terms.error is not None:
            return None, Status.unresolvable(f"parsing pod: {terms.error}")
        required, required_anti = terms.required_affinity, terms.required_anti_affinity
        if not required and not required_anti and (
                not anti_nodes if term_index is None else not term_index.required_anti_affinity):
            return None, Status.skip()
        try:
            required = self._unroll_namespaces(required)
            required_anti = self._unroll_namespaces(required_anti)
        except Exception as exc:  # noqa: BLE001 - a lister failure is an Error status
            return None, Status.as_status(exc)
        ns_labels = self._namespace_labels(pod.namespace)
        s = PreFilterState(pod, required, required_anti, ns_labels)
        if term_index is not None:
            s.existing_anti_affinity_counts = filtering.indexed_existing_anti_affinity_counts(
                pod, ns_labels, term_index, self._handle.snapshot.node_infos())
        else:
            s.existing_anti_affinity_counts = filtering.existing_anti_affinity_counts(
                pod, ns_labels, anti_nodes)
        s.affinity_counts, s.anti_affinity_counts = filtering.incoming_affinity_anti_affinity_counts(
            required, required_anti, nodes, self._label_index(nodes))
        if not s.existing_anti_affinity_counts and not required and not required_anti:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    @hookimpl
    def pre_filter_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod,
                           node_info: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _not_found(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_to_add, node_info.node, 1)
        return None

    @hookimpl
    def pre_filter_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod,
                              node_info: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _not_found(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_to_remove, node_info.node, -1)
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _not_found(PRE_FILTER_STATE_KEY)
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        # HOT PATH (every candidate node): the three checks in one call.
        failed = filtering.failed_check(s, node.labels)
        if failed:
            code, reasons = _REJECTIONS[failed]
            return Status(code, reasons)
        return None

    # ------------------------------------------------------------------ PreScore / Score

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        has_constraints = _has_preferred_terms(pod)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        terms = pod_terms(pod)
        if terms.error is not None:
            return Status.as_status(f"failed to parse pod: {terms.error}")
        try:
            preferred = self._unroll_weighted(terms.preferred_affinity)
        except Exception as exc:  # noqa: BLE001
            return Status.as_status(f"updating PreferredAffinityTerms: {exc}")
        try:
            preferred_anti = self._unroll_weighted(terms.preferred_anti_affinity)
        except Exception as exc:  # noqa: BLE001
            return Status.as_status(f"updating PreferredAntiAffinityTerms: {exc}")
        ns_labels = self._namespace_labels(pod.namespace)
        topology_score: scoring.ScoreMap = {}
        hard_weight = self.hard_pod_affinity_weight
        memo: scoring.SelectsMemo = {}
        # Two parts: the incoming pod's preferred terms over every node's pods (from the label
        # index when it can answer), and the existing pods' terms (from the term index, else a
        # walk over the nodes hosting pods with affinity).
        term_index = self._term_index()
        all_nodes = self._all_nodes(nodes)
        own_terms_walked = has_constraints and not scoring.add_indexed_preferred(
            topology_score, preferred, preferred_anti, self._label_index(all_nodes), all_nodes)
        if own_terms_walked:
            candidates = all_nodes
        elif term_index is None:
            candidates = self._nodes_with("pods_with_affinity", nodes)
        else:
            candidates = []
        for node_info in candidates:
            scoring.process_node(topology_score, node_info, pod, preferred, preferred_anti,
                                 ns_labels, hard_weight, own_terms_walked, memo,
                                 existing=term_index is None)
        if term_index is not None:
            scoring.add_indexed_existing(topology_score, pod, ns_labels, hard_weight, term_index,
                                         memo, all_nodes)
        if not topology_score:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.as_status(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        assert node is not None  # Score sees only NodeInfos with a node
        return scoring.score_node(s, node.labels)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.as_status(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        scoring.normalize(s, scores)
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int] | None:
        """:meth:`normalize_score` over plain ints (hookspecs.WholeListNormalizeScore); None,
        for the NodeScore path to report it, without PreScore's state."""
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        return scoring.normalize_values(s, values)

    # ------------------------------------------------------------------ Sign

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Pods with pod (anti-)affinity depend on other pods' placement: never batched."""
        if has_pod_affinity(pod):
            return None, Status.unschedulable("pods with InterPodAffinity are not signable")
        # With the option set only pods with affinity matter, so the labels do not either.
        if self.ignore_preferred_terms_of_existing_pods:
            return [], None
        return [SignFragment(LABELS_SIGNER_NAME, pod.labels)], None

    # ------------------------------------------------------------------ queueing

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Add: a pod matching the affinity may appear. Delete: a pod whose anti-affinity (or
            # that the pod's anti-affinity) rejected may go. UpdatePodLabel: either, by relabelling.
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod,
                             ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
                self.is_schedulable_after_pod_change),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a pod change can satisfy the pod's affinity or lift an anti-affinity."""
        original, modified = old_obj, new_obj
        if modified is not None and original is not None and pod.uid == modified.uid:
            # Only label updates are registered: the pod's own new labels may escape someone's
            # anti-affinity.
            return QueueingHint.Queue
        # A pod neither bound nor nominated does not count (NodeName/nominated changes come as
        # add/delete events).
        if ((modified is not None and not modified.node_name and not modified.nominated_node_name)
                or (original is not None and not original.node_name
                    and not original.nominated_node_name)):
            return QueueingHint.QueueSkip
        terms = pod_terms(pod)
        if terms.error is not None:
            return QueueingHint.Queue
        affinity, anti = terms.required_affinity, terms.required_anti_affinity
        if modified is not None and original is not None:
            if (not pod_matches_all_affinity_terms(affinity, original)
                    and pod_matches_all_affinity_terms(affinity, modified)):
                return QueueingHint.Queue
            if (pod_matches_all_affinity_terms(anti, original)
                    and not pod_matches_all_affinity_terms(anti, modified)):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            if pod_matches_all_affinity_terms(affinity, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        # Deleted.
        if pod_matches_all_affinity_terms(anti, original):
            return QueueingHint.Queue
        original_terms = pod_terms(original)
        if original_terms.error is not None:
            return QueueingHint.Queue
        if pod_matches_all_affinity_terms(original_terms.required_anti_affinity, pod):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a node gains or changes an affinity topology key, or loses / changes an
        anti-affinity one; any added node helps a pod with anti-affinity."""
        original, modified = old_obj, new_obj
        terms = pod_terms(pod)
        if terms.error is not None:
            return QueueingHint.Queue
        new_labels = modified.labels if modified is not None else {}
        for term in terms.required_affinity:
            key = term.topology_key
            if original is None:
                if key in new_labels:
                    return QueueingHint.Queue
                continue
            old_labels = original.labels
            if key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
                return QueueingHint.Queue
        for term in terms.required_anti_affinity:
            if original is None:
                return QueueingHint.Queue
            key = term.topology_key
            old_labels = original.labels
            if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip
