"""The scheduling cycle's algorithm: find the nodes that fit, score them, pick one (upstream SchedulePod).

One implementation for every caller: the :class:`~kschedfw.scheduler.Scheduler` runs it for real,
`explain` and the test harness run it as a *dry run* (every node, no sampling, no PostFilter, no
change to the scheduler's round-robin start or tie-breaking randomness). A
:class:`~kschedfw.framework.recorder.CycleRecorder` given to :meth:`ScheduleAlgorithm.schedule_pod`
receives every fact of the cycle; without one the cycle pays one ``if`` per phase. A real cycle
given the pod's signature and the scheduling cycle number also uses and feeds the profile's
opportunistic batch (:mod:`kschedfw.framework.batch`): a hinted node is tried alone, like a
nominated one, and a scored cycle leaves its other nodes, best first, for the next pod.
"""

from __future__ import annotations

import logging
import random
from itertools import compress
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Callable, Sequence

import attrs

from kschedfw.extenders.cycle import (extender_scores, find_nodes_that_pass_extenders, has_extender_filters,
                                     has_prioritizing_extenders, prioritize_with_extenders)
from kschedfw.extenders.wire import MAX_EXTENDER_PRIORITY
from kschedfw.framework.batch import SortedScoredNodes
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.fit_error import ERR_NO_NODES_AVAILABLE, Diagnosis, FitError
from kschedfw.framework.instrumented import extension_point
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import MAX_NODE_SCORE, NodeInfo, NominatingInfo, NominatingMode

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.extenders.http_extender import HTTPExtender
    from kschedfw.framework.batch import OpportunisticBatch, PodSignature
    from kschedfw.framework.recorder import CycleRecorder
    from kschedfw.framework.runtime import Framework
    from kschedfw.queue.nominator import Nominator

log = logging.getLogger(__name__)

__all__ = ["ScheduleAlgorithm", "ScheduleResult", "num_feasible_nodes_to_find", "CLEAR_NOMINATION",
           "fit_status", "TIES"]

_name = attrgetter("name")
_first, _second = itemgetter(0), itemgetter(1)
_plugin_and_code = attrgetter("plugin", "code")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

#: How a cycle breaks a tie between nodes with the best total: "random" (upstream: uniformly, from
#: the seeded randomness) or "name" (a kschedfw extension, not upstream: the smallest node name,
#: as simulators that order their nodes by name do).
TIES = ("random", "name")

#: A failed attempt's nominating info that clears any nominatedNodeName.
CLEAR_NOMINATION = NominatingInfo("", NominatingMode.Override)


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (upstream numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    p = percentage or 0
    if p == 0:
        p = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    if p >= 100:
        return num_all_nodes
    num = num_all_nodes * p // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@attrs.define
class ScheduleResult:
    """Where the pod goes, how many nodes were evaluated and found feasible, and (on failure)
    the nomination PostFilter asked for."""

    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: NominatingInfo | None = None


def fit_status(fit_error: FitError) -> Status:
    return Status(Code.Unschedulable, error=fit_error)


class ScheduleAlgorithm:
    """Upstream's schedulePod with the state it keeps between cycles: the round-robin start
    index (``nextStartNodeIndex``) and the seeded randomness that breaks score ties (or, with
    ``ties="name"``, not upstream, the smallest node name among the best)."""

    def __init__(self, *, percentage_of_nodes_to_score: int | None = None, rng: random.Random | None = None,
                 nominator: "Nominator | None" = None, extenders: "Sequence[HTTPExtender]" = (),
                 ties: str = "random") -> None:
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.rng = rng if rng is not None else random.Random(0)
        self.nominator = nominator
        #: the configuration's HTTP extenders, asked after the Filter plugins and beside Score
        self.extenders = tuple(extenders)
        # with a filtering or prioritizing extender, Filter may not stop at the first feasible node
        self._extenders_need_many = has_extender_filters(self.extenders) or \
            has_prioritizing_extenders(self.extenders)
        self.next_start_node_index = 0
        if ties not in TIES:
            raise ValueError(f"ties: {ties!r} is not one of {', '.join(TIES)}")
        self.ties = ties
        # upstream disables signatures (so batching) for a scheduler with extenders; ties by
        # name do without it too, since a batch orders tied nodes by its own random draws
        self._batching = not self.extenders and ties == "random"
        # chosen once: the default path pays nothing for the option
        self._select: Callable[[list[str], list[int], bool], str] = (
            _select_by_name if ties == "name" else self._select_at_random)
        #: a replay's: the node another scheduler chose for the pod, taken when it is among the
        #: best (a tie that scheduler's seed broke; not upstream). Set, it turns batching off.
        self.tie_breaker: Callable[["Pod"], str] | None = None

    def schedule_pod(self, fwk: "Framework", state: CycleState, pod: "Pod",
                     recorder: "CycleRecorder | None" = None, *, dry_run: bool = False,
                     signature: "PodSignature" = None, cycle: int | None = None
                     ) -> tuple[ScheduleResult, Status | None]:
        """Find feasible nodes, score them, pick one. ``dry_run``: every node is filtered (no
        sampling, no nominated-node shortcut, no batching), PostFilter does not run, and neither
        the start index nor the tie-breaking randomness moves (ties go to the first best node, or
        with ``ties="name"`` to the smallest name, as in a real cycle).
        ``signature`` and ``cycle`` (the queue's signature of the pod and the scheduling cycle)
        let a real cycle use and feed the profile's opportunistic batch (``fwk.batch``)."""
        batch = (fwk.batch if not dry_run and cycle is not None and self._batching and self.tie_breaker is None
                 else None)
        result, status = self._schedule_pod(fwk, state, pod, recorder, dry_run, batch, signature, cycle or 0)
        if recorder is not None:
            recorder.result(result.evaluated_nodes, result.feasible_nodes, result.suggested_host, status)
        return result, status

    def _schedule_pod(self, fwk: "Framework", state: CycleState, pod: "Pod",
                      recorder: "CycleRecorder | None", dry_run: bool, batch: "OpportunisticBatch | None",
                      signature: "PodSignature", cycle: int) -> tuple[ScheduleResult, Status | None]:
        snapshot = fwk.handle.snapshot
        if snapshot.num_nodes_in_placement() == 0:
            return ScheduleResult(nominating_info=CLEAR_NOMINATION), Status.unresolvable(ERR_NO_NODES_AVAILABLE)
        feasible, diagnosis, status, hint = self._find_nodes_that_fit(fwk, state, pod, recorder, dry_run,
                                                                      batch, signature, cycle)
        if status is not None:
            return ScheduleResult(nominating_info=CLEAR_NOMINATION), status
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if not feasible:
            fit_error = FitError(pod.key, snapshot.num_nodes_in_placement(), diagnosis)
            nominating = None
            if not dry_run and fwk.has_post_filter_plugins():
                result, pf_status = fwk.run_post_filter_plugins(state, pod, diagnosis.node_to_status)
                diagnosis.post_filter_msg = pf_status.message()
                diagnosis.post_filter_status, diagnosis.post_filter_result = pf_status, result
                if result is not None:
                    nominating = result.nominating_info
            return ScheduleResult(evaluated_nodes=evaluated, nominating_info=nominating), fit_status(fit_error)
        if len(feasible) == 1:
            if batch is not None:
                batch.store_schedule_results(signature, hint, feasible[0].name, None, cycle)
            return ScheduleResult(feasible[0].name, evaluated, 1), None
        names, totals, status = self._prioritize(fwk, state, pod, feasible, recorder)
        if status is not None:
            return ScheduleResult(evaluated_nodes=evaluated, feasible_nodes=len(feasible),
                                  nominating_info=CLEAR_NOMINATION), status
        host = self._select(names, totals, not dry_run)
        if self.tie_breaker is not None and not dry_run:
            host = _preferred_among_best(self.tie_breaker(pod), host, names, totals)
        if batch is not None:
            batch.store_schedule_results(signature, hint, host,
                                         SortedScoredNodes(list(zip(names, totals)), host, batch.rng), cycle)
        return ScheduleResult(host, evaluated, len(feasible)), None

    def _find_nodes_that_fit(self, fwk: "Framework", state: CycleState, pod: "Pod",
                             recorder: "CycleRecorder | None", dry_run: bool, batch: "OpportunisticBatch | None",
                             signature: "PodSignature", cycle: int
                             ) -> tuple[list[NodeInfo], Diagnosis, Status | None, str]:
        """Upstream findNodesThatFitPod: (feasible nodes, diagnosis, error status, node hint);
        with an error status the feasible nodes are those found before it, for the recorder only."""
        snapshot = fwk.handle.snapshot
        # a pod-group cycle's placement narrows the candidates; PreFilter still sees every node
        all_nodes = snapshot.nodes_in_placement()
        diagnosis = Diagnosis()
        pre_result, status, plugins = fwk.run_pre_filter_plugins(state, pod, snapshot.node_infos())
        if recorder is not None:
            recorder.pre_filter(pre_result, status, () if status is not None else tuple(sorted(plugins)))
        if status is not None and not status.is_success():
            if not status.is_rejected():
                return [], diagnosis, status, ""
            diagnosis.node_to_status.absent_nodes_status = status
            if status.code is Code.Pending:
                diagnosis.pending_plugins |= plugins
            else:
                diagnosis.unschedulable_plugins |= plugins
            diagnosis.pre_filter_msg = status.message()
            if recorder is not None:
                recorder.filtered([], [], diagnosis)
            return [], diagnosis, None, ""
        hint = ""
        if batch is not None:
            # asked even when the pod has a nominated node, as upstream (the hint is then spent)
            hint = batch.get_node_hint(pod, signature, state, cycle, snapshot.get, fwk.run_filter_plugins)
        target = "" if dry_run else pod.nominated_node_name or hint
        if target:
            # the nominated node (set by preemption), else the batch's hint, is tried alone first
            # a nominated node outside the placement is skipped, as one the cluster lacks
            nominated = snapshot.get_in_placement(target)
            if nominated is not None and nominated.node is not None:
                st = fwk.run_filter_plugins_with_nominated_pods(state, pod, nominated)
                passed = st is None or st.is_success()
                if passed and self.extenders:
                    # the extenders' verdicts on the node go into the diagnosis themselves
                    kept, st = find_nodes_that_pass_extenders(self.extenders, pod, [nominated],
                                                              diagnosis.node_to_status)
                    passed = st is None and bool(kept)
                if passed:
                    if recorder is not None:
                        recorder.filtered([nominated.name], [nominated.name], diagnosis)
                    return [nominated], diagnosis, None, hint
                if st is not None and st.is_rejected():
                    # kept in the diagnosis (and counted as processed), as upstream
                    self._record_rejection(diagnosis, nominated.name, st)
                elif st is not None:  # upstream logs the error and searches every node
                    log.warning("evaluating %s on its nominated node %s failed: %s", pod.key, target, st.message())
        nodes = all_nodes
        if pre_result is not None and not pre_result.all_nodes():
            nodes = snapshot.named_in_placement(pre_result.node_names or frozenset())
            # the plugins that narrowed the nodes are what a cluster event must change
            diagnosis.unschedulable_plugins |= plugins
            narrowing = sorted(plugins)
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UnschedulableAndUnresolvable, (f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}]",),
                plugin=narrowing[0] if narrowing else "")
        feasible, status = self._find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes, len(all_nodes),
                                                              dry_run)
        if status is None and self.extenders:
            feasible, status = find_nodes_that_pass_extenders(self.extenders, pod, feasible, diagnosis.node_to_status,
                                                              unschedulable_plugins=diagnosis.unschedulable_plugins)
        if recorder is not None:  # also when Filter stopped at an error: what it had seen by then
            recorder.filtered([ni.name for ni in nodes], [ni.name for ni in feasible], diagnosis)
        return feasible, diagnosis, status, hint

    @staticmethod
    def _record_rejection(diagnosis: Diagnosis, node_name: str, status: Status) -> None:
        diagnosis.node_to_status.set(node_name, status)
        if status.code is Code.Pending:
            diagnosis.pending_plugins.add(status.plugin)
        else:
            diagnosis.unschedulable_plugins.add(status.plugin)

    # upstream observes the Filter extension point once per cycle, around all nodes' filtering
    @extension_point("Filter", 1, framework_arg=True)
    def _find_nodes_that_pass_filters(self, fwk: "Framework", state: CycleState, pod: "Pod",
                                      diagnosis: Diagnosis, nodes: list[NodeInfo], num_all: int,
                                      dry_run: bool) -> tuple[list[NodeInfo], Status | None]:
        n = len(nodes)
        if n == 0:
            return [], None
        if dry_run:
            to_find, index = n, 0
        else:
            percentage = fwk.percentage_of_nodes_to_score
            if percentage is None:
                percentage = self.percentage_of_nodes_to_score
            to_find = num_feasible_nodes_to_find(percentage, n) \
                if fwk.has_score_plugins() or self._extenders_need_many else 1
            index = self.next_start_node_index
        start = index % n
        feasible: list[NodeInfo] = []
        if not fwk.has_filter_plugins():
            for i in range(to_find):
                feasible.append(nodes[(start + i) % n])
            if not dry_run:
                self.next_start_node_index = (index + len(feasible)) % max(num_all, 1)
            return feasible, None
        nominator = self.nominator
        nominated_nodes = nominator.nominated_node_names() if nominator is not None and len(nominator) else ()
        feasible, rejected, failure = fwk.filter_nodes(state, pod, nodes, start, to_find, nominated_nodes)
        node_to_status = diagnosis.node_to_status
        if rejected:
            # C-level passes: with hard spread constraints most visited nodes are rejected
            statuses = list(map(_second, rejected))
            node_to_status.update(zip(map(_name, map(_first, rejected)), statuses))
            for plugin, code in set(map(_plugin_and_code, statuses)):
                if code is Code.Pending:
                    diagnosis.pending_plugins.add(plugin)
                else:
                    diagnosis.unschedulable_plugins.add(plugin)
        if not dry_run:
            # upstream counts the feasible nodes and every node with a status (a nominated or
            # hinted node that failed just before included)
            processed = len(feasible) + len(node_to_status)
            self.next_start_node_index = (index + processed) % max(num_all, 1)
        if failure is not None:  # the nodes that passed before it, for a recorder
            return feasible, failure
        return feasible, None

    def prioritize_nodes(self, fwk: "Framework", state: CycleState, pod: "Pod", nodes: list[NodeInfo],
                         recorder: "CycleRecorder | None" = None) -> tuple[list[tuple[str, int]], Status | None]:
        """PreScore then Score over ``nodes``, plus the extenders' scaled, weighted priorities:
        (name, total) in ``nodes`` order."""
        names, totals, status = self._prioritize(fwk, state, pod, nodes, recorder)
        if status is not None:
            return [], status
        return list(zip(names, totals)), None

    def _prioritize(self, fwk: "Framework", state: CycleState, pod: "Pod", nodes: list[NodeInfo],
                    recorder: "CycleRecorder | None") -> tuple[list[str], list[int], Status | None]:
        """:meth:`prioritize_nodes` as (names, totals): the names are looked up once per cycle."""
        names = list(map(_name, nodes))
        if not fwk.has_score_plugins() and not self.extenders:
            return names, [1] * len(nodes), None
        totals = [0] * len(nodes)
        if fwk.has_score_plugins():
            status = fwk.run_pre_score_plugins(state, pod, nodes)
            if status is not None:
                return [], [], status
            if recorder is not None:
                recorder.pre_scored(frozenset(state.skip_score_plugins or ()))
            totals, status = fwk.run_score_plugins_totals(state, pod, nodes, recorder, names=names)
            if status is not None:
                return [], [], status
        if self.extenders:
            if recorder is None:
                extra = extender_scores(self.extenders, pod, nodes)
                totals = [total + extra.get(name, 0) for name, total in zip(names, totals)]
            else:
                totals = self._add_recorded_extender_scores(pod, nodes, names, totals, recorder)
        return names, totals, None

    def _add_recorded_extender_scores(self, pod: "Pod", nodes: list[NodeInfo], names: list[str], totals: list[int],
                                      recorder: "CycleRecorder") -> list[int]:
        """The totals with the extenders' priorities added, each extender's given to the recorder
        as a score named ``extender <name>`` (raw 0..10, scaled to 0..100, weighted) and the
        totals again with them: the ones the cycle picks by."""
        parts = prioritize_with_extenders(self.extenders, pod, nodes)
        if not parts:
            return totals
        weights = {e.name: e.weight for e in self.extenders}
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        by_extender: dict[str, dict[str, int]] = {}
        for node, node_scores in parts.items():
            for extender, score in node_scores:
                by_extender.setdefault(extender, {})[node] = score
        for extender, scores in by_extender.items():
            weighted = [scores.get(name, 0) for name in names]
            weight = weights.get(extender) or 0
            raw = [w // (weight * scale) if weight else 0 for w in weighted]
            recorder.scores(f"extender {extender}", names, raw, [r * scale for r in raw], weighted)
        totals = [total + sum(s for _, s in parts.get(name, ())) for name, total in zip(names, totals)]
        recorder.totals(names, totals)
        return totals

    def _select_at_random(self, names: list[str], totals: list[int], random_ties: bool) -> str:
        best = max(totals)
        if not random_ties or totals.count(best) == 1:
            return names[totals.index(best)]
        return self.rng.choice(list(compress(names, map(best.__eq__, totals))))


def _preferred_among_best(preferred: str, host: str, names: list[str], totals: list[int]) -> str:
    """``preferred`` if it scored as high as ``host`` (the best), else ``host``."""
    if not preferred or preferred == host or preferred not in names:
        return host
    return preferred if totals[names.index(preferred)] == totals[names.index(host)] else host


def _select_by_name(names: list[str], totals: list[int], random_ties: bool) -> str:
    """``ties="name"``: the smallest name among the best totals (the same in a dry run)."""
    best = max(totals)
    if totals.count(best) == 1:
        return names[totals.index(best)]
    return min(compress(names, map(best.__eq__, totals)))
