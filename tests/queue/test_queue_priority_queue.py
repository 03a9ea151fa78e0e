"""Ports of upstream scheduling_queue_test.go: adding, popping, updating, deleting, activating,
requeueing after failures, timestamps, backoff flow and the pending-pods counts."""

from __future__ import annotations

import pytest

from kschedfw.fwk.events import FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.queue import (ACTIVE_Q, BACKOFF_Q, EVENT_UNSCHEDULED_POD_ADD,
                            EVENT_UNSCHEDULED_POD_UPDATE, GATED, SCHEDULE_ATTEMPT_FAILURE,
                            UNSCHEDULABLE_Q, InFlightEvent)
from tests.queue.queue_testlib import (HIGH, LOW, MEDIUM, MID, PROFILE, START, AllowlistPlugin,
                                       hint_map, lookup_info, queue_pod, names, new_queue, pop_pod,
                                       queue_hint_return_queue, queue_hint_return_skip,
                                       with_annotation, with_labels)

hpp = queue_pod("hpp", "ns1", uid="hppns1", priority=HIGH)
hpp_nominated = queue_pod("hpp", "ns1", uid="hppns1", priority=HIGH, nominated="node1")
mpp = queue_pod("mpp", "ns2", uid="mppns2", annotations={"annot2": "val2"}, priority=MEDIUM,
               nominated="node1")
up = queue_pod("up", "ns1", uid="upns1", annotations={"annot2": "val2"}, priority=LOW,
              nominated="node1")
scheduled = queue_pod("sp", "ns1", uid="spns1", node="foo")


def lister(*pods):
    store = {p.key: p for p in pods}
    return store.get


# --------------------------------------------------------------------------- Add / Pop

def test_add(sort_key):
    """TestPriorityQueue_Add: pods pop by priority; nominations are recorded on add."""
    q, _, _ = new_queue(sort_key=sort_key, pod_lister=lister(mpp, up, hpp))
    for pod in (mpp, up, hpp):
        assert q.add(pod)
    assert q.nominator.nominated_nodes() == {"node1": [mpp, up]}
    assert pop_pod(q, hpp).pod == hpp
    pop_pod(q, mpp)
    pop_pod(q, up)
    assert len(q.nominator.nominated_pods_for_node("node1")) == 2


def test_add_with_reverse_priority_less_func(sort_key):
    """TestPriorityQueue_AddWithReversePriorityLessFunc."""
    q, _, _ = new_queue(sort_key=sort_key)
    q.add(mpp)
    q.add(hpp)
    pop_pod(q, hpp)
    pop_pod(q, mpp)


def test_add_pod_of_unknown_profile_is_not_ours():
    q, _, _ = new_queue()
    assert q.add(queue_pod("other", scheduler="other-scheduler")) is False
    assert q.pending_pods() == {ACTIVE_Q: 0, BACKOFF_Q: 0, UNSCHEDULABLE_Q: 0, GATED: 0}
    assert q.pop() is None


def test_pop_increments_attempts_and_cycle(sort_key):
    q, _, _ = new_queue(sort_key=sort_key)
    q.add(hpp)
    assert q.scheduling_cycle == 0
    qpi = q.pop()
    assert qpi.attempts == 1 and q.scheduling_cycle == 1
    assert q.in_flight_pods() == [hpp]
    assert q.pop() is None
    q.done(hpp.uid)
    assert q.in_flight_pods() == []


def test_active_queue_is_fifo_among_equals(sort_key):
    """Pods with equal priority and timestamp pop in insertion order (counter tiebreak)."""
    q, _, _ = new_queue(sort_key=sort_key)
    pods = [queue_pod(f"p{i}", priority=5) for i in range(20)]
    for pod in pods:
        q.add(pod)
    assert [q.pop().pod.name for _ in pods] == [p.name for p in pods]


# --------------------------------------------------------------------------- AddUnschedulableIfNotPresent

def test_add_unschedulable_if_not_present(sort_key):
    """TestPriorityQueue_AddUnschedulableIfNotPresent."""
    q, _, _ = new_queue(sort_key=sort_key, pod_lister=lister(hpp_nominated, up))
    q.add(up)
    pop_pod(q, up)
    q.add(hpp_nominated)
    assert q.add_unschedulable_if_not_present(lookup_info(up, "plugin"), q.scheduling_cycle)
    pop_pod(q, hpp_nominated)
    assert len(q.nominator.nominated_nodes()) == 1
    # No event happened while it was being scheduled: it goes to the pool.
    assert q.unschedulable_pods.get(up.key).pod == up


def test_add_unschedulable_if_not_present_refuses_queued_pod():
    q, _, _ = new_queue()
    q.add(up)
    assert q.add_unschedulable_if_not_present(lookup_info(up, "plugin"), 0) is False
    assert q.pending_pods()[ACTIVE_Q] == 1 and q.pending_pods()[UNSCHEDULABLE_Q] == 0


def test_add_unschedulable_if_not_present_backoff(sort_key):
    """TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff: a move request while the pods
    were in flight sends them to backoffQ."""
    q, _, _ = new_queue(sort_key=sort_key)
    pods = [queue_pod(f"pod{i}", f"ns{i}", uid=f"upns{i}", priority=i) for i in range(10)]
    for p in pods:
        q.add(p)
    for i in range(9, 0, -1):
        pop_pod(q, pods[i])
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    old_cycle = q.scheduling_cycle
    pop_pod(q, pods[0])
    for i in range(1, 10):
        q.add_unschedulable_if_not_present(lookup_info(pods[i], "plugin"), old_cycle)
    for i in range(1, 10):
        assert q.backoff_q.has(pods[i].key), pods[i].name


def test_error_then_rejection_counts():
    """An error bumps consecutive_errors_count; a rejection bumps unschedulable_count and
    resets the error count (upstream AddUnschedulableIfNotPresent)."""
    q, clock, _ = new_queue()
    q.add(hpp)
    qpi = q.pop()
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert (qpi.consecutive_errors_count, qpi.unschedulable_count) == (1, 0)
    assert q.backoff_q.has(hpp.key) and qpi.timestamp == clock.now()
    clock.advance(10)
    q.flush_backoff_q_completed()
    qpi = q.pop()
    qpi.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert (qpi.consecutive_errors_count, qpi.unschedulable_count) == (0, 1)


# --------------------------------------------------------------------------- Pop from backoffQ

@pytest.mark.parametrize("pop_from_backoff_q, want", [
    pytest.param(True, ["mpp", "hpp"], id="Pop pods from both activeQ and backoffQ when PopFromBackoffQ is enabled"),
    pytest.param(False, ["mpp"], id="Pop pod only from activeQ when PopFromBackoffQ is disabled"),
])
def test_priority_queue_pop(sort_key, pop_from_backoff_q, want):
    """TestPriorityQueue_Pop: the error heap is never popped early."""
    hpp2 = queue_pod("hpp2", "ns1", uid="hpp2ns1", priority=HIGH)
    q, _, _ = new_queue(sort_key=sort_key, pop_from_backoff_q=pop_from_backoff_q)
    q.add(mpp)
    q.backoff_q.add(q.new_queued_pod_info(hpp, "plugin"))
    q.backoff_q.add(q.new_queued_pod_info(hpp2))  # error backoff
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(up, "plugin"))
    got = []
    for _ in range(len(want) + 1):
        qpi = q.pop()
        if qpi is None:
            break
        got.append(qpi.pod.name)
    assert got == want
    if pop_from_backoff_q:
        assert q.incoming_pods[(ACTIVE_Q, "PopFromBackoffQ")] == 1


# --------------------------------------------------------------------------- PopSpecificPod

_active = queue_pod("pod-active", "ns1", uid="pod-active", labels={"foo": ""})
_backoff = queue_pod("pod-backoff", "ns1", uid="pod-backoff", labels={"foo": ""})
_unsched = queue_pod("pod-unschedulable", "ns1", uid="pod-unschedulable", labels={"foo": ""})
_gated = queue_pod("pod-gated", "ns1", uid="pod-gated")
_temp_gated = queue_pod("pod-temporarily-gated", "ns1", uid="pod-temporarily-gated", labels={"bar": ""})
_other = queue_pod("pod-other", "ns1", uid="pod-other", labels={"foo": ""})


@pytest.mark.parametrize("pod, want_popped", [
    pytest.param(_active, True, id="Pod is in activeQ"),
    pytest.param(_backoff, True, id="Pod is in backoffQ"),
    pytest.param(_unsched, True, id="Pod is in unschedulablePods"),
    pytest.param(_gated, False, id="Pod is gated in unschedulablePods"),
    pytest.param(_temp_gated, True, id="Pod was gated, but should be no longer"),
    pytest.param(_other, False, id="Pod is not in any queue"),
])
def test_pop_specific_pod(sort_key, pod, want_popped):
    """TestPriorityQueue_PopSpecificPod."""
    plugin = AllowlistPlugin(["foo"])
    q, _, _ = new_queue(sort_key=sort_key, pre_enqueue={plugin.name: plugin})
    q.add(_active)
    q.backoff_q.add(q.new_queued_pod_info(_backoff))
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(_unsched))
    q.add(_gated)
    q.add(_temp_gated)
    plugin.allowlists = ["foo", "bar"]
    got = q.pop_specific_pod(pod)
    if want_popped:
        assert got is not None and got.pod.name == pod.name
        assert q.get_pod(pod.key) is None
    else:
        assert got is None
        if pod is not _other:
            assert q.get_pod(pod.key) is not None
    assert any(p.uid == pod.uid for p in q.in_flight_pods()) == want_popped


# --------------------------------------------------------------------------- Update

QUEUE_PLUGIN, SKIP_PLUGIN = "queuePlugin", "skipPlugin"
NOT_IN_ANY_QUEUE = "NotInAnyQueue"


def _update_didnt_exist(q, clock):
    return mpp, with_annotation(mpp, "foo", "test")


def _update_add_nominated(q, clock):
    return hpp, hpp_nominated


def _update_in_active(q, clock):
    q.add(hpp)
    return hpp, hpp


def _update_in_backoff(q, clock):
    q.backoff_q.add(q.new_queued_pod_info(mpp))
    return mpp, mpp


def _update_pool_backing_off(q, clock):
    qpi = q.new_queued_pod_info(mpp, QUEUE_PLUGIN)
    qpi.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(qpi)
    return mpp, with_annotation(mpp, "foo", "test")


def _update_pool_backoff_expired(q, clock):
    qpi = q.new_queued_pod_info(mpp, QUEUE_PLUGIN)
    qpi.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(qpi)
    clock.advance(q.backoff_q.max)
    return mpp, with_annotation(mpp, "foo", "test1")


def _update_pool_skip(q, clock):
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(mpp, SKIP_PLUGIN))
    return mpp, with_annotation(mpp, "foo", "test1")


def _update_in_flight(q, clock):
    q.add(mpp)
    pop_pod(q, mpp)
    return mpp, with_annotation(mpp, "foo", "bar")


@pytest.mark.parametrize("prepare, want_q, want_nominated", [
    pytest.param(_update_didnt_exist, ACTIVE_Q, False, id="Update pod that didn't exist in the queue"),
    pytest.param(_update_add_nominated, ACTIVE_Q, True,
                 id="Update highPriorityPodInfo and add a nominatedNodeName to it"),
    pytest.param(_update_in_active, ACTIVE_Q, False,
                 id="When updating a pod that is already in activeQ, the pod should remain in activeQ after Update()"),
    pytest.param(_update_in_backoff, BACKOFF_Q, False,
                 id="When updating a pod that is in backoff queue and is still backing off, it will be updated in backoff queue"),
    pytest.param(_update_pool_backing_off, BACKOFF_Q, False,
                 id="when updating a pod in unschedulablePods, if its backoff timer has not yet expired, it moves to backoffQ"),
    pytest.param(_update_pool_backoff_expired, ACTIVE_Q, False,
                 id="when updating a pod in unschedulablePods, if its backoff timer has expired, it moves to activeQ"),
    pytest.param(_update_pool_skip, UNSCHEDULABLE_Q, False,
                 id="when updating a pod in unschedulablePods, if the scheduling hint returns QueueSkip, it remains in unschedulablePods"),
    pytest.param(_update_in_flight, NOT_IN_ANY_QUEUE, False,
                 id="when updating a pod which is in flightPods, the pod will not be added to any queue"),
])
def test_update(sort_key, prepare, want_q, want_nominated):
    """TestPriorityQueue_Update."""
    hints = hint_map((EVENT_UNSCHEDULED_POD_UPDATE, [(QUEUE_PLUGIN, queue_hint_return_queue),
                                                     (SKIP_PLUGIN, queue_hint_return_skip)]))
    q, clock, _ = new_queue(sort_key=sort_key, hints=hints, pod_lister=lister(hpp, up, mpp))
    old, new = prepare(q, clock)
    q.update(old, new)
    found = {queue: sub.get(new.key) for queue, sub in (
        (ACTIVE_Q, q.active_q), (BACKOFF_Q, q.backoff_q), (UNSCHEDULABLE_Q, q.unschedulable_pods))}
    where = [queue for queue, qpi in found.items() if qpi is not None]
    if want_q == NOT_IN_ANY_QUEUE:
        assert where == []
        return
    assert where == [want_q]
    assert found[want_q].pod == new
    if want_nominated:
        assert len(q.nominator.nominated_nodes()) == 1


def test_update_when_in_flight(sort_key):
    """TestPriorityQueue_UpdateWhenInflight: an update received while the pod is being
    scheduled can make it schedulable, so it is requeued to backoffQ."""
    hints = hint_map((EVENT_UNSCHEDULED_POD_UPDATE, [("fakePlugin", queue_hint_return_queue)]))
    q, _, _ = new_queue(sort_key=sort_key, hints=hints)
    test_pod = queue_pod("test-pod", "test-ns", uid="test-uid")
    q.add(test_pod)
    pop_pod(q, test_pod)
    updated = queue_pod("test-pod", "test-ns", uid="test-uid",
                       tolerations=[{"key": "foo", "effect": "NoSchedule"}])
    q.update(test_pod, updated)
    q.add_unschedulable_if_not_present(lookup_info(updated, "fakePlugin"), q.scheduling_cycle)
    qpi = q.backoff_q.get(updated.key)
    assert qpi is not None and qpi.pod == updated


# --------------------------------------------------------------------------- Delete

def test_delete(sort_key):
    """TestPriorityQueue_Delete."""
    q, _, _ = new_queue(sort_key=sort_key, pod_lister=lister(hpp, up))
    q.update(hpp, hpp_nominated)
    q.add(up)
    q.delete(hpp_nominated)
    assert q.active_q.has(up.key)
    assert not q.active_q.has(hpp_nominated.key)
    assert len(q.nominator.nominated_nodes()) == 1
    q.delete(up)
    assert q.nominator.nominated_nodes() == {}


def test_delete_from_every_sub_queue():
    q, _, _ = new_queue()
    a, b, c = queue_pod("a"), queue_pod("b"), queue_pod("c")
    q.add(a)
    q.backoff_q.add(q.new_queued_pod_info(b, "x"))
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(c, "x"))
    for pod in (a, b, c):
        q.delete(pod)
    assert q.pending_pods() == {ACTIVE_Q: 0, BACKOFF_Q: 0, UNSCHEDULABLE_Q: 0, GATED: 0}
    assert q.pop() is None


# --------------------------------------------------------------------------- Activate

def _activate_case(q, case):
    if case == "in_flight":
        q.active_q.add(lookup_info(hpp_nominated))
        pop_pod(q, hpp_nominated)
        assert len(q.active_q.in_flight_events()) == 1
    elif case == "other_in_flight":
        q.active_q.add(lookup_info(mpp))
        pop_pod(q, mpp)
    elif case == "active":
        q.add(hpp_nominated)
    elif case == "pool":
        q.unschedulable_pods.add_or_update(QueuedPodInfo(pod=hpp_nominated))
    elif case == "backoff":
        q.backoff_q.add(QueuedPodInfo(pod=hpp_nominated))


@pytest.mark.parametrize("case, want_active, want_event", [
    pytest.param("active", 1, None, id="pod already in activeQ"),
    pytest.param("none", 0, None, id="pod not in unschedulablePods/backoffQ"),
    pytest.param("in_flight", 0, InFlightEvent(FORCE_ACTIVATE, None, hpp_nominated),
                 id="[QHint] pod not in unschedulablePods/backoffQ but in-flight"),
    pytest.param("other_in_flight", 0, None,
                 id="[QHint] pod not in unschedulablePods/backoffQ and not in-flight"),
    pytest.param("pool", 1, None, id="pod in unschedulablePods"),
    pytest.param("backoff", 1, None, id="pod in backoffQ"),
])
def test_activate(sort_key, case, want_active, want_event):
    """TestPriorityQueue_Activate."""
    q, _, _ = new_queue(sort_key=sort_key)
    _activate_case(q, case)
    q.activate({"test_pod": hpp_nominated})
    assert len(q.active_q) == want_active
    events = [e for e in q.active_q.in_flight_events() if isinstance(e, InFlightEvent)]
    if want_event is not None:
        assert len(q.active_q.in_flight_events()) == 2
        assert events == [want_event]
    else:
        assert events == []
    if want_active:
        assert q.active_q.has(hpp_nominated.key)


def test_activated_in_flight_pod_is_requeued_when_it_comes_back():
    """The recorded ForceActivate event sends the pod to backoffQ/activeQ, not the pool."""
    q, _, _ = new_queue()
    q.add(hpp)
    qpi = q.pop()
    q.activate([hpp])
    qpi.unschedulable_plugins = {"SomePlugin"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.backoff_q.has(hpp.key)


# --------------------------------------------------------------------------- moveToActiveQ / moveToBackoffQ

def _plugins(*allowlists):
    """Upstream registers these in a map keyed by name; they share one name, so the last wins."""
    m = {}
    for allow in allowlists:
        p = AllowlistPlugin(allow)
        m[p.name] = p
    return m


_bar = queue_pod("bar", labels={"bar": ""})
_p = queue_pod("p", labels={"p": ""})


def _per_gate(cases):
    """Upstream runs each case for the gate values it lists: one pytest case per value."""
    out = []
    for case in cases:
        i = next(i for i, v in enumerate(case.values)
                 if isinstance(v, tuple) and v and all(isinstance(x, bool) for x in v))
        values = case.values[:i] + case.values[i + 1:]
        for gate in case.values[i]:
            out.append(pytest.param(*values, gate, id=f"{case.id} popFromBackoffQEnabled({gate})"))
    return out


@pytest.mark.parametrize("plugins, pod, event, from_backoff, want_pool, want_ok, gate", _per_gate([
    pytest.param({}, _p, EVENT_UNSCHEDULED_POD_ADD.label, False, (True, False), 0, True,
                 id="no plugins registered"),
    pytest.param(_plugins([], []), _p, EVENT_UNSCHEDULED_POD_ADD.label, False, (True, False), 1, False,
                 id="preEnqueue plugin registered, pod name not in allowlists"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, EVENT_UNSCHEDULED_POD_ADD.label, False,
                 (True, False), 1, False, id="preEnqueue plugin registered, pod failed one preEnqueue plugin"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, "BackoffComplete", False, (False,), 1, False,
                 id="preEnqueue plugin registered, preEnqueue rejects the pod, even if it is after backoff"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, "BackoffComplete", True, (True,), 0, True,
                 id="preEnqueue plugin registered, pod would fail one preEnqueue plugin, but it is moved from backoffQ after completing backoff, so preEnqueue is not executed"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, FORCE_ACTIVATE.label, False, (True,), 1, False,
                 id="preEnqueue plugin registered, pod failed one preEnqueue plugin when activated from unschedulablePods"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, FORCE_ACTIVATE.label, True, (True,), 0, True,
                 id="preEnqueue plugin registered, pod would fail one preEnqueue plugin, but was activated from backoffQ, so preEnqueue is not executed"),
    pytest.param(_plugins(["foo", "bar"], ["bar"]), _bar, EVENT_UNSCHEDULED_POD_ADD.label, False,
                 (True, False), 0, True, id="preEnqueue plugin registered, pod passed all preEnqueue plugins"),
]))
def test_move_to_active_q(plugins, pod, event, from_backoff, want_pool, want_ok, gate):
    """TestPriorityQueue_moveToActiveQ."""
    q, _, _ = new_queue(pre_enqueue=plugins, pod_initial_backoff=30, pod_max_backoff=60,
                        pop_from_backoff_q=gate)
    assert q._move_to_active_q(q.new_queued_pod_info(pod), event, from_backoff) == want_ok
    assert len(q.unschedulable_pods) == want_pool
    # An update that changes nothing relevant keeps a gated pod in the pool.
    q.update(pod, with_annotation(pod, "foo", ""))
    assert len(q.unschedulable_pods) == want_pool


@pytest.mark.parametrize("plugins, pod, want_ok, gate", _per_gate([
    pytest.param({}, _p, (True, False), True, id="no plugins registered"),
    pytest.param(_plugins([], []), _p, (False,), True,
                 id="preEnqueue plugin registered, pod name would not be in allowlists"),
    pytest.param(_plugins([], []), _p, (True,), False, id="preEnqueue plugin registered, pod name not in allowlists"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, (False,), True,
                 id="preEnqueue plugin registered, preEnqueue plugin would reject the pod, but isn't run"),
    pytest.param(_plugins(["foo", "bar"], ["foo"]), _bar, (True,), False,
                 id="preEnqueue plugin registered, pod failed one preEnqueue plugin"),
    pytest.param(_plugins(["foo", "bar"], ["bar"]), _bar, (True, False), True,
                 id="preEnqueue plugin registered, pod passed all preEnqueue plugins"),
]))
def test_move_to_backoff_q(plugins, pod, want_ok, gate):
    """TestPriorityQueue_moveToBackoffQ: PreEnqueue runs on entering backoffQ (gate on)."""
    q, _, _ = new_queue(pre_enqueue=plugins, pod_initial_backoff=30, pod_max_backoff=60,
                        pop_from_backoff_q=gate)
    qpi = q.new_queued_pod_info(pod)
    assert q._move_to_backoff_q(qpi, EVENT_UNSCHEDULED_POD_ADD.label) == want_ok
    assert q.backoff_q.has(pod.key) == want_ok
    assert (q.unschedulable_pods.get(pod.key) is None) == want_ok


# --------------------------------------------------------------------------- GetPod / PendingPods / options

@pytest.mark.parametrize("key, want", [
    pytest.param("default/pod1", "pod1", id="pod is found in activeQ"),
    pytest.param("default/pod2", "pod2", id="pod is found in backoffQ"),
    pytest.param("default/pod3", "pod3", id="pod is found in unschedulablePods"),
    pytest.param("default/pod4", None, id="pod is not found"),
])
def test_get_pod(key, want):
    """TestPriorityQueue_GetPod."""
    q, _, _ = new_queue()
    q.active_q.add(lookup_info(queue_pod("pod1")))
    q.backoff_q.add(lookup_info(queue_pod("pod2")))
    q.unschedulable_pods.add_or_update(lookup_info(queue_pod("pod3")))
    got = q.get_pod(key)
    assert (got.pod.name if got else None) == want


def test_pending_pods(sort_key):
    """TestPriorityQueue_PendingPods."""
    q, _, _ = new_queue(sort_key=sort_key)
    q.add(up)
    pop_pod(q, up)
    q.add(hpp)
    pop_pod(q, hpp)
    q.add(mpp)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "plugin"), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "plugin"), q.scheduling_cycle)
    assert {qpi.pod.key for _, qpi in q.list_pending()} == {mpp.key, up.key, hpp.key}
    assert q.pending_pods() == {ACTIVE_Q: 1, BACKOFF_Q: 0, UNSCHEDULABLE_Q: 2, GATED: 0}
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert {qpi.pod.key for _, qpi in q.list_pending()} == {mpp.key, up.key, hpp.key}
    assert q.pending_pods() == {ACTIVE_Q: 1, BACKOFF_Q: 2, UNSCHEDULABLE_Q: 0, GATED: 0}
    assert [name for name, _ in q.list_pending()] == [ACTIVE_Q, BACKOFF_Q, BACKOFF_Q]


def test_new_with_options():
    """TestPriorityQueue_NewWithOptions."""
    q, _, _ = new_queue(pod_initial_backoff=2, pod_max_backoff=20)
    assert q.backoff_q.initial == 2 and q.backoff_q.max == 20


# --------------------------------------------------------------------------- ordering after failures

def test_recently_tried_pods_go_back(sort_key):
    """TestRecentlyTriedPodsGoBack: a retried pod goes behind pods of equal priority."""
    q, clock, _ = new_queue(sort_key=sort_key)
    for i in range(5):
        q.add(queue_pod(f"test-pod-{i}", "ns1", uid=f"tp00{i}", priority=HIGH, node="node1",
                       nominated="node1"))
    clock.advance(1e-6)
    p1 = q.pop()
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle)
    clock.advance(q.backoff_q.max)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    for i in range(5):
        p = q.pop()
        assert (i == 4) == (p is p1), (i, p.pod.name)


def test_pod_failed_scheduling_multiple_times_does_not_block_newer_pod(sort_key):
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod."""
    q, clock, _ = new_queue(sort_key=sort_key)
    unsched = queue_pod("test-pod-unscheduled", "ns1", uid="tp001", priority=HIGH, nominated="node1")
    q.add(unsched)
    pop_pod(q, unsched)
    q.add_unschedulable_if_not_present(lookup_info(unsched, "plugin"), q.scheduling_cycle)
    clock.advance(1 + 1)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    pop_pod(q, unsched)
    newer = queue_pod("test-newer-pod", "ns1", uid="tp002", priority=HIGH, nominated="node1")
    q.add(newer)
    q.add_unschedulable_if_not_present(lookup_info(unsched, "plugin"), q.scheduling_cycle)
    clock.advance(1 + 1)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    pop_pod(q, newer)


def test_high_priority_backoff(sort_key):
    """TestHighPriorityBackoff: an unschedulable high-priority pod does not block others."""
    q, _, _ = new_queue(sort_key=sort_key)
    mid = queue_pod("test-midpod", "ns1", uid="tp-mid", priority=MID, nominated="node1")
    high = queue_pod("test-highpod", "ns1", uid="tp-high", priority=HIGH, nominated="node1")
    q.add(mid)
    q.add(high)
    p = pop_pod(q, high)
    q.add_unschedulable_if_not_present(lookup_info(p.pod, "fooPlugin"), q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    pop_pod(q, mid)


def test_high_priority_flush_unschedulable_pods_leftover(sort_key):
    """TestHighPriorityFlushUnschedulablePodsLeftover."""
    from tests.queue.queue_testlib import NODE_ADD
    q, clock, _ = new_queue(sort_key=sort_key,
                            hints=hint_map((NODE_ADD, [("fakePlugin", queue_hint_return_queue)])))
    mid = queue_pod("test-midpod", "ns1", uid="tp-mid", priority=MID, nominated="node1")
    high = queue_pod("test-highpod", "ns1", uid="tp-high", priority=HIGH, nominated="node1")
    q.add(high)
    pop_pod(q, high)
    q.add(mid)
    pop_pod(q, mid)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(high, "fakePlugin"), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(mid, "fakePlugin"), q.scheduling_cycle)
    clock.advance(300 + 1)
    q.flush_unschedulable_pods_leftover()
    pop_pod(q, high)
    pop_pod(q, mid)


@pytest.mark.parametrize("duration", [
    pytest.param(None, id="New priority queue by the default value of podMaxInUnschedulablePodsDuration"),
    pytest.param(30.0, id="New priority queue by user-defined value of podMaxInUnschedulablePodsDuration"),
])
def test_init_pod_max_in_unschedulable_pods_duration(sort_key, duration):
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration."""
    kwargs = {} if duration is None else {"pod_max_in_unschedulable_pods_duration": duration}
    q, clock, _ = new_queue(sort_key=sort_key, **kwargs)
    p1 = QueuedPodInfo(pod=queue_pod("test-pod-1", "ns1", uid="tp-1", nominated="node1"),
                       timestamp=START - 1)
    p2 = QueuedPodInfo(pod=queue_pod("test-pod-2", "ns2", uid="tp-2", nominated="node2"),
                       timestamp=START - 2)
    for p in (p1, p2):
        p.unschedulable_count += 1
        q.unschedulable_pods.add_or_update(p)
    clock.advance(q.pod_max_in_unschedulable_pods_duration)
    q.flush_unschedulable_pods_leftover()
    assert len(q.active_q) == 2
    assert [q.pop() for _ in range(2)] == [p2, p1]


# --------------------------------------------------------------------------- TestPodTimestamp

def _timestamp_infos():
    p1 = QueuedPodInfo(pod=queue_pod("test-pod-1", "ns1", uid="tp-1", nominated="node1"), timestamp=START)
    p2 = QueuedPodInfo(pod=queue_pod("test-pod-2", "ns2", uid="tp-2", nominated="node2"),
                       timestamp=START + 1)
    return p1, p2


def _to_pool(q, qpi):
    qpi.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(qpi)


@pytest.mark.parametrize("case", [
    "add two pod to activeQ and sort them by the timestamp",
    "add two pod to unschedulablePods then move them to activeQ and sort them by the timestamp",
    "add one pod to BackoffQ and move it to activeQ",
])
def test_pod_timestamp(sort_key, case):
    """TestPodTimestamp."""
    q, clock, _ = new_queue(sort_key=sort_key)
    p1, p2 = _timestamp_infos()
    if case.startswith("add two pod to activeQ"):
        q.active_q.add(p2)
        q.active_q.add(p1)
    elif case.startswith("add two pod to unschedulablePods"):
        _to_pool(q, p2)
        _to_pool(q, p1)
        clock.advance(3)
        q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    else:
        q.active_q.add(p2)
        q.backoff_q.add(p1)
        clock.advance(3)
        q.flush_backoff_q_completed()
        q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert len(q.active_q) == 2
    assert [q.pop(), q.pop()] == [p1, p2]


# --------------------------------------------------------------------------- per-pod attempts

@pytest.mark.parametrize("case, want_attempts, want_initial", [
    pytest.param("once", 1, 0.0, id="pod is created and scheduled after 1 attempt"),
    pytest.param("twice", 2, 0.0, id="pod is created and scheduled after 2 attempts"),
    pytest.param("twice_update", 2, 0.0,
                 id="pod is created and scheduled after 2 attempts but before the second pop, call update"),
    pytest.param("gated", 1, 60.0, id="A gated pod is created and scheduled after lifting gate"),
])
def test_per_pod_scheduling_metrics(sort_key, case, want_attempts, want_initial):
    """TestPerPodSchedulingMetrics: attempts count and the initial attempt timestamp."""
    pod = queue_pod("test-pod", "test-ns", uid="test-uid")
    pre_enqueue = {}
    hints = []
    if case == "gated":
        plugin = AllowlistPlugin(["foo"])
        pre_enqueue = {plugin.name: plugin}
        # A plugin gating on labels registers for pod updates (upstream's test relies on a
        # missing hint map, which makes every event Queue).
        hints = hint_map((EVENT_UNSCHEDULED_POD_UPDATE, [(plugin.name, queue_hint_return_queue)]))
    q, clock, _ = new_queue(sort_key=sort_key, pre_enqueue=pre_enqueue, hints=hints)
    q.add(pod)
    if case in ("twice", "twice_update"):
        qpi = q.pop()
        qpi.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(qpi, 1)
        clock.set(START + 300 + 1e-3)  # upstream: +1ns, below float resolution here
        q.flush_unschedulable_pods_leftover()
        if case == "twice_update":
            q.update(pod, with_annotation(pod, "generation", "1"))
    elif case == "gated":
        assert q.unschedulable_pods.get(pod.key).pod == pod
        clock.advance(60)
        q.update(pod, with_labels(pod, {"foo": ""}))
    qpi = q.pop()
    assert qpi.attempts == want_attempts
    assert qpi.initial_attempt_timestamp == START + want_initial


# --------------------------------------------------------------------------- incoming pods counter

def _incoming_infos():
    return [QueuedPodInfo(pod=queue_pod(f"test-pod-{i}", f"ns{i}", uid=f"tp-{i}"), timestamp=START,
                          unschedulable_plugins={"unschedulable_plugin"}) for i in (1, 2, 3)]


def _pop_requeue_unschedulable(q, clock, qpi):
    plugins = set(qpi.unschedulable_plugins)
    q.add(qpi.pod)
    p = pop_pod(q, qpi.pod)
    p.unschedulable_plugins = plugins
    q.add_unschedulable_if_not_present(p, 1)


def _pop_requeue_backoff(q, clock, qpi):
    q.add(qpi.pod)
    p = pop_pod(q, qpi.pod)
    p.unschedulable_count += 1
    q.add_unschedulable_if_not_present(p, 1)


def _op_add(q, clock, qpi):
    q.add(qpi.pod)


def _op_move_all(q, clock, qpi):
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)


def _op_clock(q, clock, qpi):
    clock.advance(3)


def _op_flush_backoff(q, clock, qpi):
    clock.advance(3)
    q.flush_backoff_q_completed()


ADD = EVENT_UNSCHEDULED_POD_ADD.label


@pytest.mark.parametrize("ops, want", [
    pytest.param([_op_add], {(ACTIVE_Q, ADD): 3}, id="add pods to activeQ"),
    pytest.param([_pop_requeue_unschedulable],
                 {(ACTIVE_Q, ADD): 3, (UNSCHEDULABLE_Q, SCHEDULE_ATTEMPT_FAILURE): 3},
                 id="add pods to unschedulablePods"),
    pytest.param([_pop_requeue_unschedulable, _op_move_all],
                 {(ACTIVE_Q, ADD): 3, (UNSCHEDULABLE_Q, SCHEDULE_ATTEMPT_FAILURE): 3,
                  (BACKOFF_Q, "UnschedulableTimeout"): 3},
                 id="add pods to unschedulablePods and then move all to backoffQ"),
    pytest.param([_pop_requeue_unschedulable, _op_clock, _op_move_all],
                 {(ACTIVE_Q, ADD): 3, (UNSCHEDULABLE_Q, SCHEDULE_ATTEMPT_FAILURE): 3,
                  (ACTIVE_Q, "UnschedulableTimeout"): 3},
                 id="add pods to unschedulablePods and then move all to activeQ"),
    pytest.param([_pop_requeue_backoff, _op_clock, _op_flush_backoff],
                 {(ACTIVE_Q, ADD): 3, (ACTIVE_Q, "BackoffComplete"): 3,
                  (BACKOFF_Q, SCHEDULE_ATTEMPT_FAILURE): 3},
                 id="make some pods subject to backoff and add them to backoffQ, then flush backoffQ"),
])
def test_incoming_pods_metrics(ops, want):
    """TestIncomingPodsMetrics (scheduler_queue_incoming_pods_total)."""
    q, clock, _ = new_queue()
    infos = _incoming_infos()
    for op in ops:
        for qpi in infos:
            op(q, clock, qpi)
    assert dict(q.incoming_pods) == want


# --------------------------------------------------------------------------- TestBackOffFlow

@pytest.mark.parametrize("pop_from_backoff_q", [True, False],
                         ids=["popFromBackoffQEnabled", "popFromBackoffQDisabled"])
def test_backoff_flow(sort_key, pop_from_backoff_q):
    """TestBackOffFlow: backoff 1, 2, 4, 8, 10, 10, 10 s on the simulated clock."""
    q, clock, _ = new_queue(sort_key=sort_key, pop_from_backoff_q=pop_from_backoff_q)
    pod = queue_pod("test-pod", "test-ns", uid="test-uid")
    q.add(pod)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        timestamp = clock.now()
        qpi = q.pop()
        assert qpi.attempts == i + 1
        qpi.unschedulable_plugins.add("unsched-plugin")
        q.add_unschedulable_if_not_present(qpi, i)
        q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
        assert q.backoff_q.has(pod.key)
        backoff = qpi.backoff_expiration - timestamp
        if pop_from_backoff_q:
            # The actual backoff rounds up to the ordering window.
            backoff = float(int(backoff)) + 1.0
        assert backoff == want, f"step {i}"
        clock.advance(1)
        q.flush_backoff_q_completed()
        assert q.backoff_q.has(pod.key), "still backing off after an early flush"
        clock.advance(backoff)
        q.flush_backoff_q_completed()
        assert not q.backoff_q.has(pod.key), "moved out after the backoff"


# --------------------------------------------------------------------------- scheduler_pending_pods

PLUGIN = "preEnqueuePlugin"


def _pending_infos():
    def make(n, prefix, label, ts):
        return [QueuedPodInfo(pod=queue_pod(f"{prefix}-{i}", f"ns{i}", uid=f"tp-{i}", labels={label: ""}),
                              timestamp=ts) for i in range(1, n + 1)]
    infos = make(50, "x", "queueable", START)
    gated = make(10, "y", "failme", START)
    for qpi in gated:
        qpi.gating_plugin = PLUGIN
        qpi.unschedulable_plugins = {PLUGIN}
    return infos + gated, make(20, "z", "queueable", START + 2)


def _m_add(q, fw, clock, qpi):
    q.add(qpi.pod)


def _m_pool(q, fw, clock, qpi):
    if not qpi.gating_plugin:
        qpi.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(qpi)


def _m_backoff(q, fw, clock, qpi):
    q.backoff_q.add(qpi)


def _m_move_all(q, fw, clock, qpi):
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)


def _m_clock(q, fw, clock, qpi):
    clock.advance(3)


def _m_flush_backoff(q, fw, clock, qpi):
    clock.advance(3)
    q.flush_backoff_q_completed()


def _m_delete(q, fw, clock, qpi):
    q.delete(qpi.pod)


def _m_queueable(q, fw, clock, qpi):
    q.update(qpi.pod, with_labels(qpi.pod, {"queueable": ""}))


def _m_gate_all(q, fw, clock, qpi):
    fw.pre_enqueue[PLUGIN] = AllowlistPlugin([""])


def _m_ungate_all(q, fw, clock, qpi):
    fw.pre_enqueue[PLUGIN] = AllowlistPlugin(["queueable"])


def _counts(active, backoff, gated, unsched):
    return {ACTIVE_Q: active, BACKOFF_Q: backoff, GATED: gated, UNSCHEDULABLE_Q: unsched}


ALL = slice(None)
NIL = None


@pytest.mark.parametrize("steps, want, gate", [
    pytest.param([(_m_add, slice(0, 30)), (_m_pool, slice(30, None))], _counts(30, 0, 10, 20), True,
                 id="add pods to activeQ and unschedulablePods"),
    pytest.param([(_m_add, slice(0, 15)), (_m_backoff, slice(15, 40)), (_m_pool, slice(40, None))],
                 _counts(15, 25, 10, 10), True, id="add pods to all kinds of queues"),
    pytest.param([(_m_pool, ALL), (_m_clock, NIL), (_m_move_all, NIL)], _counts(50, 0, 10, 0), True,
                 id="add pods to unschedulablePods and then move all to activeQ"),
    pytest.param([(_m_pool, slice(20, None)), (_m_clock, NIL), (_m_pool, "delayed"), (_m_move_all, NIL)],
                 _counts(30, 20, 10, 0), True,
                 id="make some pods subject to backoff, add pods to unschedulablePods, and then move all to activeQ"),
    pytest.param([(_m_pool, slice(0, 40)), (_m_add, slice(40, 50)), (_m_move_all, NIL), (_m_flush_backoff, NIL)],
                 _counts(50, 0, 0, 0), True,
                 id="make some pods subject to backoff, add pods to unschedulablePods/activeQ, move all to activeQ, and finally flush backoffQ"),
    pytest.param([(_m_add, slice(0, 30)), (_m_pool, slice(30, None)), (_m_delete, slice(0, 2)),
                  (_m_delete, slice(30, 33)), (_m_delete, slice(50, 54))], _counts(28, 0, 6, 17), True,
                 id="add pods to activeQ/unschedulablePods and then delete some Pods"),
    pytest.param([(_m_add, slice(0, 30)), (_m_pool, slice(30, None)), (_m_queueable, slice(50, 55))],
                 _counts(35, 0, 5, 20), True,
                 id="add pods to activeQ/unschedulablePods and then update some Pods as queueable"),
    pytest.param([(_m_pool, slice(0, 1)), (_m_clock, NIL), (_m_gate_all, NIL), (_m_queueable, slice(0, 1))],
                 _counts(0, 0, 1, 0), True,
                 id="Gated metric should be 1 when Ungated to Gated transition into moveToActiveQ"),
    pytest.param([(_m_pool, slice(0, 1)), (_m_gate_all, NIL), (_m_queueable, slice(0, 1))],
                 _counts(0, 0, 1, 0), True,
                 id="Gated metric should be 1 when Ungated to Gated transition into moveToBackoffQ"),
    pytest.param([(_m_pool, slice(0, 1)), (_m_clock, NIL), (_m_gate_all, NIL), (_m_queueable, slice(0, 1))],
                 _counts(0, 0, 1, 0), False,
                 id="Gated metric should be 1 when Ungated to Gated transition when popFromBackoffQ is disabled"),
    pytest.param([(_m_pool, slice(0, 1)), (_m_clock, NIL), (_m_gate_all, NIL), (_m_queueable, slice(0, 1)),
                  (_m_ungate_all, NIL), (_m_queueable, slice(0, 1))], _counts(1, 0, 0, 0), True,
                 id="Gated metric should be 0 when Ungated -> Gated -> Ungated (ActiveQ) transition"),
    pytest.param([(_m_pool, slice(0, 1)), (_m_gate_all, NIL), (_m_queueable, slice(0, 1)),
                  (_m_ungate_all, NIL), (_m_queueable, slice(0, 1))], _counts(0, 1, 0, 0), True,
                 id="Gated metric should be 0 when Ungated -> Gated -> Ungated (BackoffQ) transition"),
    pytest.param([(_m_pool, slice(0, 1)), (_m_clock, NIL), (_m_gate_all, NIL), (_m_queueable, slice(0, 1)),
                  (_m_ungate_all, NIL), (_m_queueable, slice(0, 1))], _counts(1, 0, 0, 0), False,
                 id="Gated metric should be 0 when Ungated -> Gated -> Ungated transition, when popFromBackoffQ is disabled"),
])
def test_scheduler_pods_metric(sort_key, steps, want, gate):
    """TestSchedulerPodsMetric (scheduler_pending_pods{queue=active|backoff|unschedulable|gated})."""
    infos, delayed = _pending_infos()
    hints = hint_map((EVENT_UNSCHEDULED_POD_UPDATE, [(PLUGIN, queue_hint_return_queue)]))
    q, clock, fw = new_queue(sort_key=sort_key, hints=hints,
                             pre_enqueue={PLUGIN: AllowlistPlugin(["queueable"])},
                             pop_from_backoff_q=gate)
    for op, which in steps:
        if which is None:
            op(q, fw, clock, None)
            continue
        for qpi in (delayed if which == "delayed" else infos[which]):
            op(q, fw, clock, qpi)
    assert q.pending_pods() == want


# --------------------------------------------------------------------------- scheduler_unschedulable_pods

P1, P2 = "plugin1", "plugin2"


def _u_allow(name, allow):
    def step(q, fw, pod):
        fw.pre_enqueue[name].allowlists = list(allow)
    return step


def _u_add(q, fw, pod):
    q.add(pod)


def _u_move_all(q, fw, pod):
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)


def _u_pop(q, fw, pod):
    assert q.pop() is not None


def _u_delete(q, fw, pod):
    q.delete(pod)


@pytest.mark.parametrize("steps, want", [
    pytest.param([_u_allow(P1, []), _u_add, _u_move_all, _u_allow(P1, ["queueable"]), _u_move_all, _u_pop],
                 (0, 0), id="Unschedulable pods metric must be 0 after a pod is gated, ungated, re-queued, and eventually popped from the scheduling queue"),
    pytest.param([_u_allow(P1, []), _u_add, _u_move_all, _u_delete], (0, 0),
                 id="Unschedulable pods metric must be 0 after pod is gated and then deleted"),
    pytest.param([_u_allow(P1, []), _u_add, _u_move_all], (1, 0),
                 id="Unschedulable pods metric must be 1 after pod is gated multiple time by the same plugin"),
    pytest.param([_u_add, _u_delete], (0, 0),
                 id="Unschedulable pods metric must be 0 after non gated pods is added and then deleted"),
    pytest.param([_u_allow(P1, []), _u_add, _u_move_all], (1, 0),
                 id="Unschedulable pods metric should not be duplicate if gated pods added and then gated with the same plugin again"),
    pytest.param([_u_allow(P1, []), _u_add, _u_allow(P1, ["queueable"]), _u_allow(P2, []), _u_move_all,
                  _u_allow(P2, ["queueable"]), _u_move_all, _u_pop], (0, 0),
                 id="Unschedulable pods metric should be 0 if pod was gated by two plugins sequentially and then ungated and popped"),
    pytest.param([_u_allow(P1, []), _u_add, _u_allow(P1, ["queueable"]), _u_allow(P2, []), _u_move_all,
                  _u_delete], (0, 0),
                 id="Unschedulable pods metric should be 0 if pod was gated by two plugins sequentially and then deleted"),
    pytest.param([_u_allow(P1, []), _u_add, _u_allow(P1, ["queueable"]), _u_allow(P2, []), _u_move_all],
                 (1, 1), id="Unschedulable pods metric should be 1 for both plugins if pod was gated by two plugins sequentially"),
])
def test_unschedulable_pods_metric(steps, want):
    """TestUnschedulablePodsMetric (scheduler_unschedulable_pods{plugin,profile})."""
    hints = hint_map((UNSCHEDULABLE_TIMEOUT, [(P1, queue_hint_return_queue), (P2, queue_hint_return_queue)]))
    pre = {P1: AllowlistPlugin(["queueable"], P1), P2: AllowlistPlugin(["queueable"], P2)}
    q, _, fw = new_queue(hints=hints, pre_enqueue=pre)
    pod = queue_pod("podA", "namespaceA", uid="someUid", labels={"queueable": ""})
    for step in steps:
        step(q, fw, pod)
    reasons = q.unschedulable_reasons()
    assert (reasons.get((P1, PROFILE), 0), reasons.get((P2, PROFILE), 0)) == want


def test_list_pending_names_gated_pods():
    plugin = AllowlistPlugin(["ok"])
    q, _, _ = new_queue(pre_enqueue={plugin.name: plugin})
    q.add(queue_pod("a", labels={"ok": ""}))
    q.add(queue_pod("b"))
    assert [(name, qpi.pod.name) for name, qpi in q.list_pending()] == [(ACTIVE_Q, "a"), (GATED, "b")]
    assert names(q.active_q.list()) == ["a"]
    assert q.unschedulable_pods.get("default/b").gating_plugin == plugin.name
    assert q.unschedulable_pods.get("default/b").gated is True


def test_multiple_profiles():
    """Pods are queued when their schedulerName has a framework; hints are per profile."""
    from tests.queue.queue_testlib import NODE_ADD, FakeFramework
    fw1 = FakeFramework(hint_map((NODE_ADD, [("A", queue_hint_return_queue)])), profile_name="s1")
    fw2 = FakeFramework(hint_map((NODE_ADD, [("A", queue_hint_return_skip)])), profile_name="s2")
    q, clock, _ = new_queue(frameworks={"s1": fw1, "s2": fw2})
    p1, p2 = queue_pod("p1", scheduler="s1"), queue_pod("p2", scheduler="s2")
    assert q.add(p1) and q.add(p2)
    assert not q.add(queue_pod("p3", scheduler="s3"))
    for p in (p1, p2):
        qpi = q.pop()
        qpi.unschedulable_plugins = {"A"}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    clock.advance(5)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert names(q.active_q.list()) == ["p1"]
    assert q.unschedulable_pods.get(p2.key) is not None
