"""Opportunistic batching (gate OpportunisticBatching, beta and on in v1.36; upstream runtime/batch.go).

Consecutive pods with the same signature (every PreFilter/Filter/PreScore/Score plugin's
``sign_pod``) reuse the previous cycle's scored nodes, best first: the next pod is given the
next node as a *hint*, only that node is filtered and nothing is scored. The reuse is only
sound when pods go one per node, so a batch is used only while the node chosen last time no
longer fits the new pod, and only while it is younger than :data:`MAX_BATCH_AGE` on the
scheduler's clock. One :class:`OpportunisticBatch` lives in each profile's Framework.
"""

from __future__ import annotations

import collections
import random
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.framework.instrumented import Instrumentation
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import NodeInfo

__all__ = ["OpportunisticBatch", "BatchMetrics", "SortedScoredNodes", "MAX_BATCH_AGE",
           "PodSignature"]

#: A batch older than this (seconds) is thrown away (upstream maxBatchAge, 500 ms).
MAX_BATCH_AGE = 0.5

#: A pod's signature: equal signatures mean equal Filter and Score results on equal nodes.
#: None: the pod cannot be signed (some plugin refused, or the profile cannot batch).
PodSignature = Any

# upstream metrics label values (pkg/scheduler/metrics)
ATTEMPT_NO_HINT = "no_hint"
ATTEMPT_HINT_USED = "hint_used"
ATTEMPT_HINT_NOT_USED = "hint_not_used"
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"
FLUSH_EMPTY_LIST = "empty_list"
FLUSH_EXPIRED = "expired"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"


class BatchMetrics:
    """Upstream's batching counters, keyed by their label values:
    ``scheduler_batch_attempts_total{profile, result}`` and
    ``scheduler_batch_cache_flushed_total{profile, reason}``."""

    ATTEMPTS = "scheduler_batch_attempts_total"
    CACHE_FLUSHED = "scheduler_batch_cache_flushed_total"

    def __init__(self) -> None:
        self.attempts: collections.Counter[tuple[str, str]] = collections.Counter()
        self.cache_flushed: collections.Counter[tuple[str, str]] = collections.Counter()

    def counters(self) -> dict[str, dict[tuple[str, str], int]]:
        """Metric name -> {(profile, result or reason): count}."""
        return {self.ATTEMPTS: dict(self.attempts), self.CACHE_FLUSHED: dict(self.cache_flushed)}


class SortedScoredNodes:
    """The scored nodes of a cycle other than the chosen one, best first (upstream's heap of
    NodePluginScores ordered by total, ties by a random draw).

    Sorted on the first pop only: most batches are never used (the next pod has another
    signature, or still fits where the last one went), so a cycle pays nothing for its list."""

    __slots__ = ("_totals", "_chosen", "_rng", "_names", "_len")

    def __init__(self, totals: list[tuple[str, int]], chosen: str, rng: random.Random) -> None:
        self._totals: list[tuple[str, int]] | None = totals
        self._chosen = chosen
        self._rng = rng
        self._names: list[str] = []  # worst first, once sorted
        self._len = len(totals) - 1 if chosen else len(totals)  # ``chosen`` is one of ``totals``

    @classmethod
    def of(cls, names_best_first: list[str]) -> "SortedScoredNodes":
        """A list already in order (tests, tools)."""
        out = cls([], "", random.Random(0))
        out._totals, out._names, out._len = None, list(reversed(names_best_first)), len(names_best_first)
        return out

    def _sort(self) -> None:
        rng, chosen, totals = self._rng, self._chosen, self._totals
        assert totals is not None
        draws = [(total, rng.random(), name) for name, total in totals if name != chosen]
        draws.sort()
        self._names = [name for _, _, name in draws]
        self._totals = None

    def pop(self) -> str:
        if self._totals is not None:
            self._sort()
        self._len -= 1
        return self._names.pop()

    def __len__(self) -> int:
        return self._len


class _BatchState:
    __slots__ = ("signature", "sorted_nodes", "creation_time")

    def __init__(self, signature: PodSignature, sorted_nodes: SortedScoredNodes, creation_time: float) -> None:
        self.signature = signature
        self.sorted_nodes = sorted_nodes
        self.creation_time = creation_time


class OpportunisticBatch:
    """One profile's batch: the last cycle's outcome and the remaining sorted nodes."""

    def __init__(self, profile_name: str, now: Callable[[], float], metrics: BatchMetrics | None = None,
                 rng: random.Random | None = None) -> None:
        self.profile_name = profile_name
        self.now = now
        self.metrics = metrics if metrics is not None else BatchMetrics()
        #: breaks score ties in the stored order; separate from the scheduler's own randomness so
        #: that turning the gate on does not move any tie-break of an unbatched pod
        self.rng = rng if rng is not None else random.Random(0)
        self.state: _BatchState | None = None
        self.last_cycle = -1
        self.last_chosen_node = ""
        self.last_succeeded = False
        #: pods placed on their hint (upstream batchedPods, for tests)
        self.batched_pods = 0
        #: upstream's batching latencies, once instrumented (see :meth:`instrument`)
        self._clock: Callable[[], float] | None = None
        self._observe_hint: Callable[[bool, float], None] | None = None
        self._observe_store: Callable[[float], None] | None = None

    def instrument(self, instrumentation: "Instrumentation") -> None:
        """Time getting a hint (by whether there was one) and storing a cycle's results."""
        self._clock = instrumentation.now
        self._observe_hint = instrumentation.node_hint_observer(self.profile_name)
        self._observe_store = instrumentation.store_results_observer(self.profile_name)

    def get_node_hint(self, pod: "Pod", signature: PodSignature, state: "CycleState", cycle: int,
                      get_node: Callable[[str], "NodeInfo | None"],
                      run_filter: Callable[["CycleState", "Pod", "NodeInfo"], "Status | None"]) -> str:
        """The next node of a compatible batch ('' when there is none). ``run_filter`` runs the
        profile's Filter plugins (without nominated pods) on the node chosen last time."""
        if self._clock is None or self._observe_hint is None:
            return self._node_hint(pod, signature, state, cycle, get_node, run_filter)
        start = self._clock()
        hint = self._node_hint(pod, signature, state, cycle, get_node, run_filter)
        self._observe_hint(bool(hint), self._clock() - start)
        return hint

    def _node_hint(self, pod: "Pod", signature: PodSignature, state: "CycleState", cycle: int,
                   get_node: Callable[[str], "NodeInfo | None"],
                   run_filter: Callable[["CycleState", "Pod", "NodeInfo"], "Status | None"]) -> str:
        if not self._compatible(pod, signature, state, cycle, get_node, run_filter):
            self.metrics.attempts[(self.profile_name, ATTEMPT_NO_HINT)] += 1
            return ""
        assert self.state is not None
        return self.state.sorted_nodes.pop()

    def store_schedule_results(self, signature: PodSignature, hinted_node: str, chosen_node: str,
                               other_nodes: SortedScoredNodes | None, cycle: int) -> None:
        """After a successful SchedulePod: remember the cycle and, unless the hint was used,
        make the other nodes (best first) the new batch, or drop the batch."""
        if self._clock is None or self._observe_store is None:
            self._store(signature, hinted_node, chosen_node, other_nodes, cycle)
            return
        start = self._clock()
        self._store(signature, hinted_node, chosen_node, other_nodes, cycle)
        self._observe_store(self._clock() - start)

    def _store(self, signature: PodSignature, hinted_node: str, chosen_node: str,
               other_nodes: SortedScoredNodes | None, cycle: int) -> None:
        self.last_cycle = cycle
        self.last_chosen_node = chosen_node
        self.last_succeeded = True
        if hinted_node == chosen_node:
            self.metrics.attempts[(self.profile_name, ATTEMPT_HINT_USED)] += 1
            self.batched_pods += 1
            return
        if hinted_node:
            self.metrics.attempts[(self.profile_name, ATTEMPT_HINT_NOT_USED)] += 1
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _BatchState(signature, other_nodes, self.now())
            return
        reason = FLUSH_EMPTY_LIST if other_nodes is None or len(other_nodes) == 0 else FLUSH_POD_NOT_BATCHABLE
        self._flushed(reason)
        self.state = None

    def _flushed(self, reason: str) -> None:
        """Count why the batch cannot be used. As upstream, only StoreScheduleResults drops it."""
        self.metrics.cache_flushed[(self.profile_name, reason)] += 1

    def _compatible(self, pod: "Pod", signature: PodSignature, state: "CycleState", cycle: int,
                    get_node: Callable[[str], "NodeInfo | None"],
                    run_filter: Callable[["CycleState", "Pod", "NodeInfo"], "Status | None"]) -> bool:
        batch = self.state
        if batch is None or len(batch.sorted_nodes) == 0:
            return False
        if cycle != self.last_cycle + 1:  # another pod (maybe another profile's) came between
            self._flushed(FLUSH_POD_SKIPPED)
            return False
        if not self.last_succeeded:
            self._flushed(FLUSH_POD_FAILED)
            return False
        if signature is None or signature != batch.signature:
            self._flushed(FLUSH_POD_INCOMPATIBLE)
            return False
        if self.now() > batch.creation_time + MAX_BATCH_AGE:
            self._flushed(FLUSH_EXPIRED)
            return False
        # The stored order is only right if the pod no longer fits where the last one went
        # (one pod per node); if it still fits, that node might be best again.
        last = get_node(self.last_chosen_node)
        if last is None or last.node is None:
            self._flushed(FLUSH_NODE_MISSING)
            return False
        status = run_filter(state, pod, last)
        if status is None or not status.is_rejected():
            self._flushed(FLUSH_NODE_NOT_FULL)
            return False
        return True
