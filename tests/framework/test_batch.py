"""OpportunisticBatch on its own: upstream's TestBatchBasic (framework/runtime/batch_test.go, v1.36)
and the rules of batchStateCompatible / StoreScheduleResults, each with its flush reason."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw.framework.batch import MAX_BATCH_AGE, OpportunisticBatch, SortedScoredNodes
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.status import Status
from kschedfw.testing import make_node, make_pod
from kschedfw.testing.builders import make_cluster

BLOCKING = "b"  # upstream: a pod whose UID starts with 'b' blocks other such pods on its node


def blocking_filter(state: Any, pod: Any, node_info: Any) -> Status | None:
    """Upstream's batchTest Filter: one 'b' pod per node, 'a' pods anywhere."""
    if pod.uid.startswith(BLOCKING) and any(p.uid.startswith(BLOCKING) for p in node_info.pods):
        return Status.unschedulable("unsched")
    return None


def nodes(names: list[str]) -> SortedScoredNodes:
    """Best first, as upstream's testSortedScoredNodes."""
    return SortedScoredNodes.of(names)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def lister_with(chosen: str, first_pod: Any):
    """The node chosen for the first pod, holding it (upstream: NewNodeInfo(pod) on that node)."""
    snapshot = make_cluster([make_node(chosen)], [first_pod.with_node(chosen)])
    return snapshot.get


CASES = {
    # name: first uid, first sig, first stored?, first chosen, first others, skip a cycle?,
    #       second uid, second sig, second chosen, expected hint, expected remaining batch
    "a second pod with the same signature gets a hint":
        ("b-1", "sig", True, "n3", ["n1"], False, "b-2", "sig", "n1", "n1", None),
    "a second pod with a different signature doesn't get a hint":
        ("a-1", "sig", True, "n3", ["n1"], False, "a-2", "sig2", "n1", "", None),
    "a second pod doesn't get a hint if it's not 1-pod-per-node":
        ("a-1", "sig", True, "n3", ["n1"], False, "a-2", "sig", "n1", "", None),
    "pod doesn't get hint if previous pod didn't scheduled":
        ("b-1", "sig", False, "n3", ["n1"], False, "b-2", "sig", "n1", "", None),
    "empty list": ("b-1", "sig", True, "n3", [], False, "b-2", "sig", "n4", "", None),
    "nil list": ("b-1", "sig", True, "n3", None, False, "b-2", "sig", "n4", "", None),
    "pod doesn't get hint because the previous pod is to a different profile":
        ("b-1", "sig", True, "n3", ["n1"], True, "b-2", "sig", "n1", "", None),
    "pod uses batch from preceding pod and leaves remaining batch to next pod":
        ("b-1", "sig", True, "n3", ["n1", "n2"], False, "b-2", "sig", "n1", "n1", ["n2"]),
}


@pytest.mark.parametrize("name", CASES)
def test_batch_basic(name: str) -> None:
    (first_uid, first_sig, stored, first_chosen, first_others, skip, second_uid, second_sig,
     second_chosen, want_hint, want_remaining) = CASES[name]
    batch = OpportunisticBatch("default-scheduler", Clock().now)
    state = CycleState()
    first = make_pod("pod", uid=first_uid)
    get_node = lister_with(first_chosen, first)
    hint = batch.get_node_hint(first, first_sig, state, 1, get_node, blocking_filter)
    assert hint == ""
    if stored:
        batch.store_schedule_results(first_sig, hint, first_chosen,
                                     nodes(first_others) if first_others is not None else None, 1)
    cycle = 3 if skip else 2
    second = make_pod("pod2", uid=second_uid)
    hint = batch.get_node_hint(second, second_sig, state, cycle, get_node, blocking_filter)
    assert hint == want_hint
    batch.store_schedule_results(second_sig, hint, second_chosen, None, cycle)
    remaining = batch.state.sorted_nodes if batch.state is not None else None
    if want_remaining is None:
        assert remaining is None or len(remaining) == 0
    else:
        assert batch.state is not None and batch.state.signature == second_sig
        assert [remaining.pop() for _ in range(len(remaining))] == want_remaining


def _stored_batch(clock: Clock) -> tuple[OpportunisticBatch, Any]:
    batch = OpportunisticBatch("p", clock.now)
    first = make_pod("pod", uid="b-1")
    batch.store_schedule_results("sig", "", "n3", nodes(["n1", "n2"]), 1)
    return batch, lister_with("n3", first)


def _flushes(batch: OpportunisticBatch) -> dict[str, int]:
    return {reason: n for (_, reason), n in batch.metrics.cache_flushed.items()}


@pytest.mark.parametrize(("reason", "pod_uid", "signature", "cycle", "age", "last_node_there"), [
    ("pod_skipped", "b-2", "sig", 3, 0.0, True),
    ("pod_incompatible", "b-2", "other", 2, 0.0, True),
    ("pod_incompatible", "b-2", None, 2, 0.0, True),
    ("expired", "b-2", "sig", 2, MAX_BATCH_AGE + 0.001, True),
    ("node_missing", "b-2", "sig", 2, 0.0, False),
    ("node_not_full", "a-2", "sig", 2, 0.0, True),
])
def test_no_hint_reasons(reason: str, pod_uid: str, signature: Any, cycle: int, age: float,
                         last_node_there: bool) -> None:
    """batchStateCompatible's checks in upstream order, each counted under its reason; the batch
    itself stays until the next StoreScheduleResults (upstream only counts here)."""
    clock = Clock()
    batch, get_node = _stored_batch(clock)
    clock.t += age
    lookup = get_node if last_node_there else (lambda name: None)
    assert batch.get_node_hint(make_pod("pod2", uid=pod_uid), signature, CycleState(), cycle, lookup,
                               blocking_filter) == ""
    assert _flushes(batch) == {reason: 1}
    assert batch.metrics.attempts[("p", "no_hint")] == 1
    assert batch.state is not None and len(batch.state.sorted_nodes) == 2


def test_a_batch_exactly_max_age_old_is_still_used() -> None:
    """Upstream: expired when now is after creation + 500ms."""
    clock = Clock()
    batch, get_node = _stored_batch(clock)
    clock.t += MAX_BATCH_AGE
    assert batch.get_node_hint(make_pod("pod2", uid="b-2"), "sig", CycleState(), 2, get_node, blocking_filter) == "n1"


def test_an_error_on_the_last_node_is_not_a_rejection() -> None:
    """Upstream checks IsRejected: an Error from Filter on the last chosen node means 'not full'."""
    batch, get_node = _stored_batch(Clock())
    hint = batch.get_node_hint(make_pod("pod2", uid="b-2"), "sig", CycleState(), 2, get_node,
                               lambda state, pod, ni: Status.as_status("boom"))
    assert hint == "" and _flushes(batch) == {"node_not_full": 1}


def test_store_results_reasons() -> None:
    """A hint not taken is counted; an unsignable pod or an empty list drops the batch."""
    batch = OpportunisticBatch("p", Clock().now)
    batch.store_schedule_results("sig", "n1", "n2", nodes(["n3"]), 1)
    assert batch.metrics.attempts[("p", "hint_not_used")] == 1
    assert batch.state is not None and batch.state.signature == "sig"
    batch.store_schedule_results(None, "", "n2", nodes(["n3"]), 2)
    assert batch.state is None
    batch.store_schedule_results("sig", "", "n2", None, 3)
    assert _flushes(batch) == {"pod_not_batchable": 1, "empty_list": 1}
    batch.store_schedule_results("sig", "n2", "n2", None, 4)  # the hint used: nothing stored or dropped
    assert batch.batched_pods == 1 and batch.last_cycle == 4


def test_sorted_scored_nodes_best_first_ties_in_random_order() -> None:
    import random
    totals = [("a", 5), ("b", 9), ("c", 5), ("d", 1), ("e", 5), ("chosen", 9)]
    orders = set()
    for seed in range(20):
        s = SortedScoredNodes(totals, "chosen", random.Random(seed))
        assert len(s) == 5
        order = [s.pop() for _ in range(len(s))]
        assert order[0] == "b" and order[-1] == "d" and sorted(order[1:4]) == ["a", "c", "e"]
        orders.add(tuple(order))
    assert len(orders) > 1


def test_an_unused_list_is_never_sorted() -> None:
    class NoDraws:
        def random(self) -> float:
            raise AssertionError("sorted although never popped")
    s = SortedScoredNodes([("a", 1), ("b", 2)], "b", NoDraws())  # type: ignore[arg-type]
    assert len(s) == 1
