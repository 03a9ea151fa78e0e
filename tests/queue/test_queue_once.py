"""``PriorityQueue(once=True)`` (`simulate --once`, not upstream): a pod whose one attempt failed
is set aside; nothing moves it back, and it stays listed until it is deleted."""

from __future__ import annotations

from kschedfw.fwk.events import WILDCARD_EVENT
from tests.queue.queue_testlib import (NODE_ADD, hint_map, queue_pod, new_queue, pop_pod,
                                       queue_hint_return_queue, with_labels)

HINTS = hint_map((NODE_ADD, [("fooPlugin", queue_hint_return_queue)]))


def failed_once(q, pod, *plugins):
    qpi = pop_pod(q, pod)
    qpi.unschedulable_plugins = set(plugins)
    assert q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    return qpi


def test_a_failed_pod_is_set_aside_and_nothing_brings_it_back():
    q, clock, _ = new_queue(hints=HINTS, once=True)
    pod, error = queue_pod("p"), queue_pod("e")
    q.add(pod)
    q.add(error)
    failed_once(q, pod, "fooPlugin")
    failed_once(q, error)  # an error: no rejector, upstream would back it off
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.move_all_to_active_or_backoff_queue(WILDCARD_EVENT)
    q.update(pod, with_labels(pod, {"changed": "yes"}))
    q.activate([pod, error])
    clock.set(clock.now() + 3600)
    q.flush_backoff_q_completed()
    q.flush_unschedulable_pods_leftover()
    assert q.pop() is None
    assert q.next_wakeup() is None
    assert q.pending_pods() == {"active": 0, "backoff": 0, "unschedulable": 2, "gated": 0}
    listed = {qpi.pod.name: (where, qpi.pod.labels) for where, qpi in q.list_pending()}
    assert listed == {"p": ("unschedulable", {"changed": "yes"}), "e": ("unschedulable", {})}
    q.delete(pod)
    assert [qpi.pod.name for _, qpi in q.list_pending()] == ["e"]


def test_without_once_the_same_pod_comes_back():
    q, _, _ = new_queue(hints=HINTS)
    pod = queue_pod("p")
    q.add(pod)
    failed_once(q, pod, "fooPlugin")
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.pending_pods()["unschedulable"] == 0
