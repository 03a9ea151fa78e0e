"""The preemption evaluator (upstream ``framework/preemption/preemption.go``).

:class:`Evaluator` runs the generic algorithm — eligibility, candidate nodes, dry runs, choice of
a node, actuation — and asks a *preemption interface* (DefaultPreemption, or any plugin with the
same methods) for the policy parts:

``get_offset_and_num_candidates(num_nodes) -> (offset, count)``,
``candidates_to_victims_map(candidates) -> {node: Victims}``,
``pod_eligible_to_preempt_others(pod, nominated_node_status) -> (bool, reason)``,
``select_victims_on_node(state, pod, node_info, pdbs) -> (victims, num_pdb_violations, status)``
(``state`` and ``node_info`` are copies), and
``ordered_score_funcs(nodes_to_victims) -> list of node -> int`` (None/empty: the default order).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, TypeVar

from kschedfw.fwk.fit_error import Diagnosis, fit_error_message
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeToStatus, PostFilterResult
from kschedfw.preemption.executor import Executor, aggregate_errors
from kschedfw.preemption.extenders import call_extenders_for_preemption
from kschedfw.fwk.victims import Candidate, Victims
from kschedfw.preemption.types import CandidateList, get_earliest_pod_start_time, now_datetime, unix_nano

if TYPE_CHECKING:
    import datetime as _dt

    from kschedfw.api import Pod, PodDisruptionBudget
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo

log = logging.getLogger(__name__)

MAX_INT32 = (1 << 31) - 1
MIN_INT64 = -(1 << 63)
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"

_T = TypeVar("_T")


class PreemptionInterface(Protocol):
    """The policy parts a preemption plugin gives the :class:`Evaluator` (upstream
    ``preemption.Interface``; see the module docstring). It may also offer ``victim_selector``
    (see :meth:`Evaluator.dry_run_preemption`)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> Mapping[str, Victims]: ...

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None
                                       ) -> tuple[bool, str]: ...

    def select_victims_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo,
                               pdbs: list[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]: ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]
                            ) -> Sequence[Callable[[str], int]] | None: ...


def pick_one_node_for_preemption(nodes_to_victims: Mapping[str, Victims],
                                 score_funcs: Sequence[Callable[[str], int]] | None = None,
                                 now: "_dt.datetime | None" = None) -> str:
    """Choose the node whose eviction hurts least; each criterion keeps the best-scoring nodes and
    the first criterion that leaves one node decides. Without ``score_funcs``:

    1. fewest PDB violations; 2. lowest highest-victim priority; 3. smallest sum of victim
    priorities (each shifted by 2^31 so negative priorities add up sensibly); 4. fewest victims;
    5. latest earliest-start-time among the highest-priority victims; 6. the first node left.
    Victims are expected most important first.
    """
    if not nodes_to_victims:
        return ""
    if score_funcs:
        return _pick_by_stages(list(nodes_to_victims), [_scoring_all(score) for score in score_funcs])
    when = now if now is not None else now_datetime(None)
    # The default criteria read the victims only: score candidates by index into these lists.
    names = list(nodes_to_victims)
    victims = list(nodes_to_victims.values())

    def latest_start_time(i: int) -> int:
        earliest = get_earliest_pod_start_time(victims[i], when)
        if earliest is None:
            log.error("unexpected nil earliestStartTime for node %s", names[i])
            return MIN_INT64
        return unix_nano(earliest)

    def latest_start_times(indices: list[int]) -> list[Any]:
        # the aware datetimes order as their Unix nanoseconds do: compare them as they are
        earliest = [get_earliest_pod_start_time(victims[i], when) for i in indices]
        if None in earliest:
            return [latest_start_time(i) for i in indices]
        return earliest

    stages: list[Callable[[list[int]], list[Any]]] = [
        lambda indices: [-victims[i].num_pdb_violations for i in indices],
        lambda indices: [-victims[i].pods[0].effective_priority for i in indices],
        lambda indices: [-sum(p.effective_priority + MAX_INT32 + 1 for p in victims[i].pods) for i in indices],
        lambda indices: [-len(victims[i].pods) for i in indices],
        latest_start_times,
    ]
    return names[_pick_by_stages(list(range(len(names))), stages)]


def _scoring_all(score: Callable[[str], int]) -> Callable[[list[str]], list[int]]:
    return lambda nodes: [score(n) for n in nodes]


def _pick_by_stages(candidates: list[_T], stages: Sequence[Callable[[list[_T]], list[Any]]]) -> _T:
    """Each stage scores the candidates left and keeps those with the highest score; the first
    stage that leaves one decides, else the first candidate left."""
    for score_all in stages:
        values = score_all(candidates)
        best = max(values)
        kept = [c for c, v in zip(candidates, values) if v == best]
        if len(kept) == 1:
            return kept[0]
        candidates = kept
    return candidates[0]


class Evaluator:
    """Runs preemption for a pod with a given preemption interface (see the module docstring)."""

    def __init__(self, plugin_name: str, handle: Handle, interface: PreemptionInterface,
                 executor: Executor) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.executor = executor

    # ------------------------------------------------------------------ listers
    def _latest_pod(self, pod: "Pod") -> tuple["Pod | None", str]:
        current: Pod | None = self.handle.lister.get("Pod", pod.name, pod.namespace)
        if current is None:
            if self.handle.client is None:
                return pod, ""  # no cluster behind the handle (unit tests): use what we were given
            return None, f'pod "{pod.name}" not found'
        return current, ""

    def _pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.handle.lister.list("PodDisruptionBudget"))

    # ------------------------------------------------------------------ the algorithm
    def preempt(self, state: "CycleState", pod: "Pod", m: NodeToStatus
                ) -> tuple[PostFilterResult | None, Status]:
        """Returns ``(result, status)``:

        * ``(None, Error)``: a transient failure; the nomination is left as it is.
        * ``(None, Unschedulable)``: not eligible (e.g. still waiting for earlier victims).
        * ``(nominate(""), Unschedulable)``: preemption cannot help; clears the nomination.
        * ``(nominate(node), Success)``: victims are being evicted from ``node``.
        """
        # 0) the latest version of the preemptor
        latest, error = self._latest_pod(pod)
        if latest is None:
            log.error("could not get the updated preemptor pod object %s: %s", pod.key, error)
            return None, Status.as_status(error)
        pod = latest

        # 1) is it allowed to preempt?
        nominated_status = m.get(pod.nominated_node_name)
        ok, message = self.interface.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            log.debug("pod %s is not eligible for preemption: %s", pod.key, message)
            return None, Status.unschedulable(message)

        # 2) candidates
        all_nodes = list(self.handle.snapshot.node_infos())
        candidates, node_to_status, error = self.find_candidates(state, all_nodes, pod, m)
        if error and not candidates:
            return None, Status.as_status(error)
        if not candidates:
            statuses = node_to_status if node_to_status is not None else NodeToStatus()
            statuses.absent_nodes_status = Status.unresolvable(PREEMPTION_NOT_HELPFUL)
            message = fit_error_message(len(all_nodes), Diagnosis(node_to_status=statuses))
            return PostFilterResult.nominate("", statuses), Status.unschedulable(message)

        # 3) the extenders that support preemption narrow the candidates and their victims
        if self.handle.extenders:
            candidates, status = call_extenders_for_preemption(
                self.handle.extenders, pod, candidates, self.handle.snapshot,
                self.interface.candidates_to_victims_map)
            if status is not None:
                return PostFilterResult.nominate(""), status

        # 4) the best candidate
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status.unschedulable("no candidate node for preemption")

        # 5) actuation (upstream observes the victims as the candidate's preparation starts)
        metrics = self.handle.metrics
        if metrics is not None:
            metrics.preemption_victims_chosen(len(best.victims.pods))
        status = self.executor.actuate_pod_preemption(best.name, best.victims, pod, self.plugin_name)
        if status is not None and not status.is_success():
            return None, status
        return PostFilterResult.nominate(best.name), Status.success()

    def find_candidates(self, state: "CycleState", all_nodes: list["NodeInfo"], pod: "Pod", m: NodeToStatus
                        ) -> tuple[list[Candidate], NodeToStatus | None, str]:
        """Dry-run preemption on the nodes whose status is exactly Unschedulable."""
        if not all_nodes:
            return [], None, "no nodes available"
        # upstream nodesWherePreemptionMightHelp: the nodes Filter found plain Unschedulable
        statuses, absent = dict(m.items()), m.absent_nodes_status
        unschedulable = Code.Unschedulable
        potential = [ni for ni in all_nodes if statuses.get(ni.name, absent).code is unschedulable]
        if not potential:
            log.debug("preemption will not help schedule pod %s on any node", pod.key)
            return [], NodeToStatus(), ""
        pdbs = self._pdbs()
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates, m)

    def dry_run_preemption(self, state: "CycleState", pod: "Pod", potential_nodes: list["NodeInfo"],
                           pdbs: list[PodDisruptionBudget], offset: int, num_candidates: int,
                           filter_statuses: NodeToStatus | None = None
                           ) -> tuple[list[Candidate], NodeToStatus, str]:
        """Simulate preemption node by node from ``offset`` (wrapping around), each on a copy of
        the state and the node. Stops once there is at least one candidate that violates no PDB
        and ``num_candidates`` in all; each list keeps at most ``num_candidates``. Candidates that
        violate no PDB come first. Returns the candidates, the statuses of the nodes that are not
        candidates, and the errors met (joined).

        An interface with ``victim_selector(state, pod, pdbs, filter_statuses)`` may return a
        function giving ``select_victims_on_node``'s result for a node without the copies."""
        non_violating = CandidateList(num_candidates)
        violating = CandidateList(num_candidates)
        node_statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential_nodes)
        selector = getattr(self.interface, "victim_selector", None)
        select = selector(state, pod, pdbs, filter_statuses) if callable(selector) else None
        start = offset % n if n else 0
        order = potential_nodes[start:] + potential_nodes[:start] if start else potential_nodes
        for original in order:  # HOT PATH: a few hundred nodes per preemptor
            if select is not None:
                node_info = original
                victims, num_violations, status = select(original)
            else:
                node_info = original.clone()
                victims, num_violations, status = self.interface.select_victims_on_node(
                    state.clone(), pod, node_info, pdbs)
            success = status is None or status.is_success()
            if success and victims:
                candidate = Candidate(node_info.name, Victims(list(victims), num_violations))
                if num_violations == 0:
                    non_violating.add(candidate)
                else:
                    violating.add(candidate)
                nvc = non_violating.size()
                if nvc > 0 and nvc + violating.size() >= num_candidates:
                    break
                continue
            if success:
                status = Status.as_status(f'expected at least one victim pod on node "{node_info.name}"')
            if status.code is Code.Error:
                errors.append(status.message())
            node_statuses.set(node_info.name, status)
        return non_violating.get() + violating.get(), node_statuses, aggregate_errors(errors)

    def select_candidate(self, candidates: list[Candidate]) -> Candidate | None:
        """The best candidate (see :func:`pick_one_node_for_preemption`)."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node = pick_one_node_for_preemption(victims_map, score_funcs, now_datetime(self.handle))
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        log.error("unexpected case: no candidate was selected among %s", [c.name for c in candidates])
        return candidates[0]
