"""Ports of upstream backoff_queue_test.go, unschedulable_pods_test.go and the nominator tests
of scheduling_queue_test.go; plus the keyed heap."""

from __future__ import annotations

import math

import pytest

from kschedfw.clock import SimulatedClock
from kschedfw.fwk.types import NominatingInfo, NominatingMode, QueuedPodInfo
from kschedfw.queue._heap import KeyedHeap, key_entry_factory, less_entry_factory
from kschedfw.queue.backoff_queue import BackoffQueue
from kschedfw.queue.nominator import Nominator
from kschedfw.queue.unschedulable_pods import UnschedulablePods
from tests.queue.queue_testlib import (HIGH, queue_pod, names, new_queue, pop_pod, priority_key,
                                       priority_less)
from tests.queue.test_queue_priority_queue import hpp, lister, mpp, scheduled, up

T0 = 1_696_118_400.0  # 2023-10-01T00:00:00Z


def _bq(initial=1.0, max_=10.0, *, pop=True, clock=None, sort_key=False):
    clock = clock or SimulatedClock(T0)
    return BackoffQueue(clock.now, initial, max_, priority_less,
                        sort_key=priority_key if sort_key else None, pop_from_backoff_q=pop), clock


# --------------------------------------------------------------------------- backoff_queue_test.go

@pytest.mark.parametrize("initial, max_, kw, want", [
    pytest.param(1, 32, dict(unschedulable_count=0, timestamp=T0), None, id="no backoff"),
    pytest.param(1, 32, dict(unschedulable_count=1, timestamp=T0, backoff_expiration=T0 + 1e-9), T0 + 1e-9,
                 id="backoff is returned from the cache"),
    pytest.param(1, 32, dict(unschedulable_count=16, timestamp=T0), T0 + 32, id="backoff by UnschedulableCount"),
    pytest.param(1, 32, dict(unschedulable_count=5, consecutive_errors_count=16, timestamp=T0), T0 + 32,
                 id="backoff is calculated with ConsecutiveErrorsCount"),
    pytest.param(0, 0, dict(unschedulable_count=16, timestamp=T0), None, id="zero maxBackoffDuration means no backoff"),
])
def test_get_backoff_time(initial, max_, kw, want):
    """TestBackoffQueue_getBackoffTime."""
    bq, _ = _bq(initial, max_)
    assert bq.backoff_time(QueuedPodInfo(pod=queue_pod("p"), **kw)) == want


@pytest.mark.parametrize("initial_ns, max_ns, count, want_ns", [
    pytest.param(1, 32, 0, 0, id="no backoff"),
    pytest.param(3, 1000, 5, 48, id="normal"),
    pytest.param(1, 32, 16, 32, id="hitting max backoff duration"),
    pytest.param(1, 2**31 - 1, 32, 2**31 - 1, id="overflow_32bit"),
    pytest.param(1, 2**63 - 1, 64, 2**63 - 1, id="overflow_64bit"),
])
def test_calculate_backoff_duration(initial_ns, max_ns, count, want_ns):
    """TestBackoffQueue_calculateBackoffDuration (durations in nanoseconds upstream)."""
    bq, _ = _bq(initial_ns / 1e9, max_ns / 1e9)
    assert math.isclose(bq.calculate_backoff_duration(count), want_ns / 1e9, rel_tol=1e-12, abs_tol=0)


def test_backoff_durations_with_defaults():
    bq, _ = _bq()
    assert [bq.calculate_backoff_duration(c) for c in range(1, 8)] == [1, 2, 4, 8, 10, 10, 10]


def _pop_all_infos(now):
    return {
        "pod0": QueuedPodInfo(pod=queue_pod("pod0"), timestamp=now - 2, unschedulable_count=1,
                              unschedulable_plugins={"plugin"}),
        "pod1": QueuedPodInfo(pod=queue_pod("pod1"), timestamp=now + 1, unschedulable_count=1,
                              unschedulable_plugins={"plugin"}),
        "pod2": QueuedPodInfo(pod=queue_pod("pod2"), timestamp=now - 2, consecutive_errors_count=1),
        "pod3": QueuedPodInfo(pod=queue_pod("pod3"), timestamp=now + 1, consecutive_errors_count=1),
    }


@pytest.mark.parametrize("in_backoff, want", [
    pytest.param([], [], id="Both queues empty, no pods moved to activeQ"),
    pytest.param(["pod0", "pod1"], ["pod0"], id="Pods only in backoffQ, some pods moved to activeQ"),
    pytest.param(["pod2", "pod3"], ["pod2"], id="Pods only in errorBackoffQ, some pods moved to activeQ"),
    pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="Pods in both queues, some pods moved to activeQ"),
    pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="Pods in both queues, all pods moved to activeQ"),
    pytest.param(["pod1", "pod3"], [], id="Pods in both queues, no pods moved to activeQ"),
])
@pytest.mark.parametrize("pop", [True, False], ids=["popFromBackoffQEnabled", "popFromBackoffQDisabled"])
def test_pop_all_backoff_completed(sort_key, in_backoff, want, pop):
    """TestBackoffQueue_popAllBackoffCompleted."""
    bq, clock = _bq(pop=pop, clock=SimulatedClock(T0 + 0.4), sort_key=sort_key)
    infos = _pop_all_infos(clock.now())
    for name in in_backoff:
        bq.add(infos[name])
    assert names(bq.pop_all_backoff_completed()) == want
    assert len(bq) == len(in_backoff) - len(want)


@pytest.mark.parametrize("pop, want", [
    pytest.param(True, ["pod5", "pod4", "pod2", "pod3"],
                 id="Pods with the same window are ordered by priority if PopFromBackoffQ is enabled"),
    pytest.param(False, ["pod5", "pod3", "pod4", "pod2"],
                 id="Pods priority doesn't matter if PopFromBackoffQ is disabled"),
])
def test_backoff_queue_ordering(sort_key, pop, want):
    """TestBackoffQueueOrdering."""
    bq, clock = _bq(pop=pop, sort_key=sort_key)  # T0 is aligned with the ordering window
    now = clock.now()

    def info(name, prio, ts):
        return QueuedPodInfo(pod=queue_pod(name, priority=prio), timestamp=ts, attempts=1,
                             unschedulable_count=1, unschedulable_plugins={"plugin"})
    for qpi in (info("pod0", 1, now), info("pod1", 1, now - 1), info("pod2", 2, now - 2 + 0.001),
                info("pod3", 1, now - 2), info("pod4", 2, now - 2), info("pod5", 1, now - 3)):
        bq.add(qpi)
    assert names(bq.pop_all_backoff_completed()) == want


def test_backing_off_until_window_after_expiry():
    """With ordering windows a pod is still backing off inside its expiry window."""
    bq, clock = _bq(clock=SimulatedClock(100.3))
    qpi = QueuedPodInfo(pod=queue_pod("p"), timestamp=100.3, unschedulable_count=1,
                        unschedulable_plugins={"x"})
    assert bq.backoff_time(qpi) == 101.0
    for t, backing_off in ((100.9, True), (101.0, True), (101.999, True), (102.0, False)):
        clock.set(t)
        assert bq.is_pod_backing_off(qpi) is backing_off, t
    assert bq.completes_at(qpi) == 102.0


def test_error_heap_holds_pods_without_rejectors():
    bq, _ = _bq()
    err = QueuedPodInfo(pod=queue_pod("e"), consecutive_errors_count=1, timestamp=T0)
    rej = QueuedPodInfo(pod=queue_pod("r"), unschedulable_count=1, unschedulable_plugins={"x"}, timestamp=T0)
    bq.add(err)
    bq.add(rej)
    assert bq.len_backoff() == 1 and len(bq) == 2
    assert bq.pop_backoff() is rej
    assert bq.pop_backoff() is None
    # Moving an entry between heaps keeps it in exactly one.
    err.unschedulable_plugins = {"x"}
    bq.add(err)
    assert bq.len_backoff() == 1 and len(bq) == 1


# --------------------------------------------------------------------------- unschedulable_pods_test.go

_pool_pods = [queue_pod(f"p{i}", "ns1" if i in (0, 1, 3, 5) else "ns2", uid=f"u{i}") for i in range(6)]


def _info(i, gated):
    qpi = QueuedPodInfo(pod=_pool_pods[i])
    if gated:
        qpi.gating_plugin = "test"
        qpi.unschedulable_plugins.add("test")
    return qpi


@pytest.mark.parametrize("steps", [
    pytest.param([("add", [(0, 0), (1, 0), (2, 0), (2, 0), (3, 0)], [(0, 0), (1, 0), (2, 0), (3, 0)]),
                  ("update", [(0, 0)], [(0, 0), (1, 0), (2, 0), (3, 0)]),
                  ("delete", [(0, 0), (1, 0)], [(2, 0), (3, 0)])], id="create, update, delete subset of pods"),
    pytest.param([("add", [(0, 0), (3, 0)], [(0, 0), (3, 0)]),
                  ("update", [(3, 0)], [(0, 0), (3, 0)]),
                  ("delete", [(0, 0), (3, 0)], [])], id="create, update, delete all"),
    pytest.param([("add", [(1, 0), (2, 0)], [(1, 0), (2, 0)]),
                  ("update", [(1, 0)], [(1, 0), (2, 0)]),
                  ("delete", [(2, 0), (3, 0)], [(1, 0)])], id="delete non-existing and existing pods"),
    pytest.param([("add", [(0, 1), (1, 1)], [(0, 1), (1, 1)]),
                  ("delete", [(0, 1)], [(1, 1)])], id="add/delete gated pods"),
    pytest.param([("add", [(0, 0), (1, 1)], [(0, 0), (1, 1)]),
                  ("delete", [(0, 0), (1, 1)], [])], id="add gated and non-gated pods, then delete"),
    pytest.param([("add", [(0, 1)], [(0, 1)]), ("update", [(0, 0)], [(0, 0)]), ("delete", [(0, 0)], [])],
                 id="add gated pod, update it to non-gated"),
    pytest.param([("add", [(0, 0)], [(0, 0)]), ("update", [(0, 1)], [(0, 1)])],
                 id="add non-gated pod, update it to gated"),
    pytest.param([("add", [(0, 0), (1, 0), (2, 0), (3, 0), (4, 1), (5, 1)],
                   [(0, 0), (1, 0), (2, 0), (3, 0), (4, 1), (5, 1)]),
                  ("update", [(0, 1), (1, 1), (4, 0)], [(0, 1), (1, 1), (2, 0), (3, 0), (4, 0), (5, 1)])],
                 id="add 4 ungated and 2 gated, update 2 to gated and 1 to ungated"),
])
def test_unschedulable_pods(steps):
    """TestUnschedulablePods: the map and the gated/unschedulable counts."""
    pool = UnschedulablePods()
    for action, pods, expected in steps:
        for i, gated in pods:
            if action == "delete":
                pool.delete(_pool_pods[i].key)
            else:
                pool.add_or_update(_info(i, gated))
        assert {k: bool(q.gating_plugin) for k, q in pool.pod_infos.items()} == \
            {_pool_pods[i].key: bool(g) for i, g in expected}
        assert pool.gated_count == sum(1 for _, g in expected if g)
        assert len(pool) - pool.gated_count == sum(1 for _, g in expected if not g)
    pool.clear()
    assert len(pool) == 0 and pool.gated_count == 0


def test_unschedulable_pods_time_index():
    pool = UnschedulablePods()
    a = QueuedPodInfo(pod=queue_pod("a"), timestamp=10.0)
    b = QueuedPodInfo(pod=queue_pod("b"), timestamp=5.0)
    pool.add_or_update(a)
    pool.add_or_update(b)
    assert pool.oldest(lambda q: True) is b
    pool.delete(b.pod.key)
    assert pool.oldest(lambda q: True) is a
    pool.add_or_update(b)
    pool.add_or_update(b)  # same entry stored twice: indexed once
    assert pool.pop_expired(lambda ts: ts < 11) == [b, a]
    assert pool.pop_expired(lambda ts: True) == []
    assert len(pool) == 2  # the time index is separate from the pool


# --------------------------------------------------------------------------- heap

@pytest.mark.parametrize("make", [
    pytest.param(lambda: less_entry_factory(priority_less), id="less"),
    pytest.param(lambda: key_entry_factory(priority_key), id="key"),
])
def test_keyed_heap(make):
    h = KeyedHeap(make())
    infos = [QueuedPodInfo(pod=queue_pod(f"p{i}", priority=i % 3), timestamp=float(i // 3)) for i in range(9)]
    for qpi in infos:
        h.add_or_update(qpi)
    assert len(h) == 9 and "default/p4" in h
    assert h.delete("default/p4") is infos[4]
    assert h.delete("default/p4") is None
    # Update in place keeps the entry's place among equals.
    h.add_or_update(infos[2])
    assert [q.pod.name for q in h.ordered()] == ["p2", "p5", "p8", "p1", "p7", "p0", "p3", "p6"]
    assert h.peek() is infos[2]
    out = []
    while (q := h.pop()) is not None:
        out.append(q.pod.name)
    assert out == ["p2", "p5", "p8", "p1", "p7", "p0", "p3", "p6"]
    assert h.pop() is None and h.peek() is None and len(h) == 0


def test_keyed_heap_compacts_stale_entries():
    h = KeyedHeap(key_entry_factory(priority_key))
    qpi = QueuedPodInfo(pod=queue_pod("p"))
    for _ in range(1000):
        h.add_or_update(qpi)
    assert len(h) == 1 and len(h._entries) < 200


# --------------------------------------------------------------------------- nominator

def test_nominated_pods_for_node(sort_key):
    """TestPriorityQueue_NominatedPodsForNode."""
    q, _, _ = new_queue(sort_key=sort_key, pod_lister=lister(mpp, up, hpp))
    for pod in (mpp, up, hpp):
        q.add(pod)
    pop_pod(q, hpp)
    assert q.nominator.nominated_pods_for_node("node1") == [mpp, up]
    got = q.nominator.nominated_pods_for_node("node1")
    got.pop()
    assert q.nominator.nominated_pods_for_node("node1") == [mpp, up]  # a copy
    assert q.nominator.nominated_pods_for_node("node2") == []


@pytest.mark.parametrize("pod, delete, want", [
    pytest.param(mpp, False, 1, id="alive pod gets added into PodNominator"),
    pytest.param(queue_pod("hpp", "ns1", uid="hppns1", priority=HIGH, nominated="node1"), True, 0,
                 id="deleted pod shouldn't be added into PodNominator"),
    pytest.param(hpp, False, 0, id="pod without .status.nominatedPodName specified shouldn't be added into PodNominator"),
])
def test_nominated_pod_deleted(pod, delete, want):
    """TestPriorityQueue_NominatedPodDeleted."""
    store = {pod.key: pod}
    q, _, _ = new_queue(pod_lister=store.get)
    if delete:
        del store[pod.key]
    q.nominator.add_nominated_pod(pod, None)
    assert len(q.nominator.nominated_pods_for_node(pod.nominated_node_name)) == want


def test_update_nominated_pod_for_node(sort_key):
    """TestPriorityQueue_UpdateNominatedPodForNode."""
    ne = queue_pod("ne", "ns1", uid="nens1")
    unbound_copy_of_scheduled = queue_pod("sp", "ns1", uid="spns1")
    q, _, _ = new_queue(sort_key=sort_key, pod_lister=lister(mpp, up, hpp, scheduled))
    nom = q.nominator
    q.add(mpp)
    nom.add_nominated_pod(up, NominatingInfo("node5", NominatingMode.Override))
    nom.add_nominated_pod(hpp, NominatingInfo("node2", NominatingMode.Override))
    want = {"node1": [mpp], "node2": [hpp], "node5": [up]}
    assert nom.nominated_nodes() == want
    assert nom.nominated_node_name(up) == "node5"
    pop_pod(q, mpp)
    assert nom.nominated_nodes() == want  # popping does not change nominations
    nom.add_nominated_pod(hpp, NominatingInfo("node4", NominatingMode.Override))
    want = {"node1": [mpp], "node4": [hpp], "node5": [up]}
    assert nom.nominated_nodes() == want
    nom.add_nominated_pod(ne, NominatingInfo("node1", NominatingMode.Override))  # not in the lister
    assert nom.nominated_nodes() == want
    nom.add_nominated_pod(unbound_copy_of_scheduled, NominatingInfo("node1", NominatingMode.Override))
    assert nom.nominated_nodes() == want  # already scheduled per the lister
    nom.delete_nominated_pod_if_exists(hpp)
    assert nom.nominated_nodes() == {"node1": [mpp], "node5": [up]}
    assert len(nom) == 2


def test_update_nominated_pod_keeps_in_memory_nomination():
    """An update carrying no nominatedNodeName keeps a nomination made in memory (preemption)."""
    nom = Nominator()
    pod = queue_pod("p")
    nom.add_nominated_pod(pod, NominatingInfo("n1", NominatingMode.Override))
    newer = queue_pod("p", labels={"v": "2"})
    nom.update_nominated_pod(pod, newer)
    assert nom.nominated_pods_for_node("n1") == [newer]
    # An update that sets or changes nominatedNodeName follows the pod.
    moved = queue_pod("p", nominated="n2")
    nom.update_nominated_pod(newer, moved)
    assert nom.nominated_nodes() == {"n2": [moved]}
    # Override to "" removes the nomination.
    nom.add_nominated_pod(moved, NominatingInfo("", NominatingMode.Override))
    assert nom.nominated_nodes() == {} and nom.nominated_node_name(moved) == ""


def test_nominator_without_lister_ignores_bound_pods():
    nom = Nominator()
    nom.add_nominated_pod(queue_pod("b", node="n1", nominated="n1"))
    assert nom.nominated_nodes() == {}


def test_nominated_pods_resolve_to_queued_version():
    q, _, _ = new_queue()
    pod = queue_pod("p", nominated="n1")
    q.add(pod)
    q.nominator.add_nominated_pod(queue_pod("p"), NominatingInfo("n1", NominatingMode.Override))
    assert q.nominator.nominated_pods_for_node("n1") == [pod]  # the queued version
