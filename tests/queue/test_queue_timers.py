"""The two flushes and next_wakeup, which lets a simulation jump its clock to the next time a
timer would move a pod (upstream: backoffQ flush every whole second, leftover flush every 30 s)."""

from __future__ import annotations

import math

import pytest

from kschedfw.fwk.events import UNSCHEDULABLE_TIMEOUT
from kschedfw.queue import ACTIVE_Q, BACKOFF_Q, GATED, UNSCHEDULABLE_Q
from tests.queue.queue_testlib import (NODE_ADD, START, AllowlistPlugin, hint_map, queue_pod,
                                       queue_hint_return_queue)
from tests.queue.queue_testlib import new_queue as _new_queue


def new_queue(**kw):
    """Queues whose leftover flush follows upstream's 30-s timer."""
    kw.setdefault("unschedulable_flush_interval", 30.0)
    return _new_queue(**kw)


def _fail(q, plugins=("P",)):
    qpi = q.pop()
    qpi.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    return qpi


def test_next_wakeup_empty():
    q, _, _ = new_queue()
    assert q.next_wakeup() is None
    q.add(queue_pod("a"))
    assert q.next_wakeup() is None  # activeQ pods need no timer


def test_flush_backoff_q_completed_and_wakeup():
    q, clock, _ = new_queue(hints=hint_map((NODE_ADD, [("P", queue_hint_return_queue)])))
    q.add(queue_pod("a"))
    qpi = q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)  # while in flight
    qpi.unschedulable_plugins = {"P"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    assert q.pending_pods()[BACKOFF_Q] == 1
    assert qpi.backoff_expiration == math.floor(START + 1)
    wake = q.next_wakeup()
    assert wake == math.floor(START + 1) + 1  # the first whole second after the expiry window
    clock.set(wake - 0.001)
    q.flush_backoff_q_completed()
    assert q.pending_pods()[BACKOFF_Q] == 1
    clock.set(wake)
    q.flush_backoff_q_completed()
    assert q.pending_pods() == {ACTIVE_Q: 1, BACKOFF_Q: 0, UNSCHEDULABLE_Q: 0, GATED: 0}
    assert q.incoming_pods[(ACTIVE_Q, "BackoffComplete")] == 1
    assert q.next_wakeup() is None


def test_next_wakeup_never_in_the_past():
    q, clock, _ = new_queue()
    q.add(queue_pod("a"))
    q.add_unschedulable_if_not_present(q.pop(), 0)  # error: error backoffQ
    clock.advance(100)
    assert q.next_wakeup() == clock.now()


def test_flush_unschedulable_pods_leftover_on_the_30s_grid():
    q, clock, _ = new_queue()
    q.add(queue_pod("a"))
    clock.advance(5)
    qpi = _fail(q)                       # pool at START+5
    assert q.pending_pods()[UNSCHEDULABLE_Q] == 1
    assert q.next_backoff_flush() is None
    # Leftover flush ticks at START, START+30, ...; the first with now - ts > 300 is START+330.
    assert q.next_wakeup() == START + 330
    clock.set(START + 305)               # exactly 300 s: not "longer than"
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[UNSCHEDULABLE_Q] == 1
    clock.set(START + 329)               # 324 s, but the timer last ticked at START+300
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[UNSCHEDULABLE_Q] == 1
    clock.set(START + 330)
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[ACTIVE_Q] == 1
    assert q.incoming_pods[(ACTIVE_Q, "UnschedulableTimeout")] == 1
    assert q.pop() is qpi and qpi.attempts == 2


def test_leftover_flush_without_grid():
    q, clock, _ = new_queue(unschedulable_flush_interval=None)
    q.add(queue_pod("a"))
    clock.advance(5)
    _fail(q)
    wake = q.next_unschedulable_flush()
    assert START + 305 < wake < START + 305.001
    clock.set(START + 305)
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[UNSCHEDULABLE_Q] == 1
    clock.set(wake)
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[ACTIVE_Q] == 1


def test_leftover_boundary_on_a_tick():
    q, clock, _ = new_queue()
    q.add(queue_pod("a"))
    _fail(q)                             # pool at START, a tick
    assert q.next_unschedulable_flush() == START + 330  # START+300 is not > 300 s
    q2, _, _ = new_queue(unschedulable_flush_interval=7)
    q2.add(queue_pod("a"))
    _fail(q2)
    assert q2.next_unschedulable_flush() == START + 301


def test_leftover_flush_respects_backoff():
    """A pod flushed after its timeout whose backoff is longer than that goes to backoffQ."""
    q, clock, _ = new_queue(pod_initial_backoff=1000, pod_max_backoff=1000)
    q.add(queue_pod("a"))
    _fail(q)
    clock.advance(331)
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[BACKOFF_Q] == 1


def test_gated_pods_give_no_wakeup():
    plugin = AllowlistPlugin(["ok"])
    q, clock, _ = new_queue(pre_enqueue={plugin.name: plugin})
    q.add(queue_pod("g"))
    assert q.pending_pods()[GATED] == 1
    assert q.next_wakeup() is None
    clock.advance(1000)
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[GATED] == 1


def test_simulated_retry_loop():
    """A pod that no event helps is retried only by the leftover flush, each 5 min on the grid;
    a simulation driven by next_wakeup reproduces upstream's retry times."""
    q, clock, _ = new_queue()
    q.add(queue_pod("a"))
    tries = []
    while len(tries) < 4:
        qpi = q.pop()
        if qpi is not None:
            tries.append(clock.now() - START)
            qpi.unschedulable_plugins = {"P"}
            q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
            continue
        clock.set(q.next_wakeup())
        q.flush_backoff_q_completed()
        q.flush_unschedulable_pods_leftover()
    assert tries == [0, 330, 660, 990]


def _backoff_loop(q, clock, n):
    tries = []
    while len(tries) < n:
        qpi = q.pop()
        if qpi is not None:
            tries.append(clock.now())
            q.move_all_to_active_or_backoff_queue(NODE_ADD)
            qpi.unschedulable_plugins = {"P"}
            q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
            continue
        clock.set(q.next_wakeup())
        q.flush_backoff_q_completed()
        q.flush_unschedulable_pods_leftover()
    return [b - a for a, b in zip(tries, tries[1:])]


def test_simulated_backoff_loop_pops_backoff_when_active_is_empty():
    """With SchedulerPopFromBackoffQ, a lone pod in backoffQ is popped at once."""
    q, clock, _ = new_queue(hints=hint_map((NODE_ADD, [("P", queue_hint_return_queue)])))
    q.add(queue_pod("a"))
    assert _backoff_loop(q, clock, 4) == [0, 0, 0]
    assert q.incoming_pods[(ACTIVE_Q, "PopFromBackoffQ")] == 3


def test_simulated_backoff_loop_waits_while_other_pods_are_active():
    """Without popping from backoffQ early, a retry waits for the first whole-second flush after
    the window holding ``timestamp + backoff``: a pod that failed at a whole second waits one
    more second than its backoff (upstream: still backing off while expiry == truncate(now))."""
    q, clock, _ = new_queue(hints=hint_map((NODE_ADD, [("P", queue_hint_return_queue)])))
    q.add(queue_pod("a", priority=10))
    qpi = q.pop()
    tries = [clock.now()]
    for _ in range(6):
        q.move_all_to_active_or_backoff_queue(NODE_ADD)
        qpi.unschedulable_plugins = {"P"}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
        clock.set(q.next_wakeup())
        q.flush_backoff_q_completed()
        qpi = q.active_q.get(qpi.pod.key)
        assert qpi is not None
        q.active_q.delete(qpi.pod.key)
        q.active_q.move_to_in_flight(qpi)
        tries.append(clock.now())
    assert [b - a for a, b in zip(tries, tries[1:])] == [1.75, 3, 5, 9, 11, 11]


def test_simulated_backoff_loop_without_pop_from_backoff_q():
    q, clock, _ = new_queue(hints=hint_map((NODE_ADD, [("P", queue_hint_return_queue)])),
                            pop_from_backoff_q=False)
    q.add(queue_pod("a"))
    assert _backoff_loop(q, clock, 7) == pytest.approx([1, 2, 4, 8, 10, 10])


def test_unschedulable_timeout_event_moves_everything_not_gated():
    plugin = AllowlistPlugin(["ok"])
    q, clock, _ = new_queue(pre_enqueue={plugin.name: plugin})
    q.add(queue_pod("a", labels={"ok": ""}))
    _fail(q)
    q.add(queue_pod("g"))
    clock.advance(2)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT)
    assert q.pending_pods() == {ACTIVE_Q: 1, BACKOFF_Q: 0, UNSCHEDULABLE_Q: 0, GATED: 1}
