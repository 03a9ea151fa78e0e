"""TaintToleration: node taints against pod tolerations.

Filter rejects nodes with an untolerated NoSchedule/NoExecute taint; Score counts untolerated
PreferNoSchedule taints, and NormalizeScore turns fewer such taints into a higher score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from kschedfw import hookimpl
from kschedfw.api import Node, Pod, Taint, Toleration
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.signers import TOLERATIONS_SIGNER_NAME, tolerations_signature
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import MAX_NODE_SCORE, SignFragment
from kschedfw.plugins.helper import (PREFER_NO_SCHEDULE, as_objects, default_normalize_score,
                                     default_normalize_values, first_untolerated_schedule_taint, tolerates)

if TYPE_CHECKING:
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, NodeScore

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


class _PreScoreState:
    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations_prefer_no_schedule = tolerations

    def clone(self) -> "_PreScoreState":
        return self


def _prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations with effect PreferNoSchedule or no effect (which means every effect)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


class TaintToleration:
    name = NAME

    # TaintTolerationComparisonOperators: whether Gt/Lt tolerations count.
    enable_comparison_operators = False  # TaintTolerationComparisonOperators: alpha, off in v1.36

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.enable_comparison_operators = (handle is not None and
                                            handle.feature_gates.enabled("TaintTolerationComparisonOperators"))
        # The CycleState of the last PreScore and the state it wrote there (Score's fast path).
        self._cycle: tuple[CycleState | None, _PreScoreState] = (None, _PreScoreState(()))

    # ------------------------------------------------------------------ helpers

    def _untolerated_no_schedule_taint(self, taints: Iterable[Taint], tolerations: Iterable[Toleration]
                                       ) -> Taint | None:
        """The first NoSchedule/NoExecute taint no toleration tolerates, or None."""
        return first_untolerated_schedule_taint(taints, tolerations, self.enable_comparison_operators)

    def _count_intolerable_prefer_no_schedule(self, taints: Iterable[Taint],
                                              tolerations: Iterable[Toleration]) -> int:
        gate = self.enable_comparison_operators
        count = 0
        for taint in taints:
            if taint.effect != PREFER_NO_SCHEDULE:
                continue
            for toleration in tolerations:
                if tolerates(toleration, taint, gate):
                    break
            else:
                count += 1
        return count

    # ------------------------------------------------------------------ queueing

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                                 self.is_schedulable_after_pod_toleration_change),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original, modified = as_objects(old_obj, new_obj, Node)
        if modified is None:
            return QueueingHint.QueueSkip
        tolerations = pod.tolerations
        was_untolerated = True
        if original is not None:
            was_untolerated = self._untolerated_no_schedule_taint(original.taints, tolerations) is not None
        is_untolerated = self._untolerated_no_schedule_taint(modified.taints, tolerations) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        _, modified = as_objects(old_obj, new_obj, Pod)
        if modified is not None and modified.uid == pod.uid:
            # The rejected pod itself got a new toleration.
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # ------------------------------------------------------------------ scheduling

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return [SignFragment(TOLERATIONS_SIGNER_NAME, tolerations_signature(pod))], None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        taints = node.taints
        if not taints:
            return None
        if self._untolerated_no_schedule_taint(taints, pod.tolerations) is None:
            return None
        return Status.unresolvable(ERR_REASON_UNTOLERATED)

    def filter_verdict_key(self, state: CycleState, pod: Pod) -> tuple[Toleration, ...]:
        """Filter reads the Node and the pod's tolerations only (see hookspecs.FilterVerdictKey)."""
        return pod.tolerations

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """:meth:`filter` for each node at once (hookspecs.WholeListFilter)."""
        out: list[Status | None] = [None] * len(nodes)
        tolerations = pod.tolerations
        untolerated = self._untolerated_no_schedule_taint
        for i, ni in enumerate(nodes):
            node = ni.node
            assert node is not None  # Filter sees only NodeInfos with a node
            taints = node.taints
            if taints and untolerated(taints, tolerations) is not None:
                out[i] = Status.unresolvable(ERR_REASON_UNTOLERATED)
        return out

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        pre_score_state = _PreScoreState(_prefer_no_schedule_tolerations(pod.tolerations))
        state.write(PRE_SCORE_STATE_KEY, pre_score_state)
        self._cycle = (state, pre_score_state)
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        node = node_info.node
        assert node is not None  # Score sees only NodeInfos with a node
        cycle_state, s = self._cycle
        if state is cycle_state:  # HOT PATH: this cycle's PreScore state, without a lookup
            taints = node.taints
            if not taints:
                return 0
            return self._count_intolerable_prefer_no_schedule(taints, s.tolerations_prefer_no_schedule)
        written = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(written, _PreScoreState):
            if written is None:
                return Status.as_status(
                    f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
            return Status.as_status(f"{written!r} convert to tainttoleration.preScoreState error")
        s = written
        taints = node.taints
        if not taints:
            return 0
        return self._count_intolerable_prefer_no_schedule(taints, s.tolerations_prefer_no_schedule)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int] | None:
        """:meth:`score` for each node at once (hookspecs.WholeListScore); this cycle's only."""
        cycle_state, s = self._cycle
        if state is not cycle_state:
            return None
        prefer = s.tolerations_prefer_no_schedule
        count = self._count_intolerable_prefer_no_schedule
        return [count(taints, prefer) if (node := ni.node) is not None and (taints := node.taints) else 0
                for ni in nodes]

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, True, values)
