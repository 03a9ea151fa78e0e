"""Binding cycles that wait on the embedded cluster: the work runs on its own thread in lock step
with the simulation, its sleeps are timers on the simulated clock, and ``done`` runs on the
scheduler's thread (as a real backend hands a goroutine's result back)."""

from __future__ import annotations

import threading

import pytest

from kschedfw.clock import SimulatedClock
from kschedfw.cluster.memory import MemoryCluster


def _advance(cluster):
    """What the simulation loop does while idle: jump to the next timer and run it."""
    when = cluster.next_timer()
    cluster.clock.set(when)
    cluster.run_due_timers()


def test_a_waiting_binding_polls_on_the_simulated_clock_and_finishes_on_the_scheduler_thread():
    cluster = MemoryCluster(SimulatedClock(0.0))
    main = threading.get_ident()
    polls, done = [], []
    ready_at = 12.0

    def work():
        ok = cluster.wait_for(lambda: polls.append(cluster.clock.now()) or cluster.clock.now() >= ready_at, 5.0, 60.0)
        return ("bound" if ok else "timeout", threading.get_ident() != main)

    cluster.submit_binding(work, lambda result: done.append((result, threading.get_ident())), may_wait=True)
    assert done == [] and polls == [0.0]  # the first poll at once, then the turn comes back
    while not done:
        _advance(cluster)
    assert polls == [0.0, 5.0, 10.0, 15.0]
    assert done == [(("bound", True), main)]


def test_a_wait_that_times_out_returns_false_at_the_timeout():
    cluster = MemoryCluster(SimulatedClock(0.0))
    done = []
    cluster.submit_binding(lambda: (cluster.wait_for(lambda: False, 5.0, 12.0), cluster.clock.now()),
                           done.append, may_wait=True)
    while not done:
        _advance(cluster)
    assert done == [(False, 12.0)]


def test_what_the_work_raises_is_raised_on_the_scheduler_thread():
    cluster = MemoryCluster(SimulatedClock(0.0))

    def work():
        cluster.wait_for(lambda: False, 5.0, 5.0)
        raise ValueError("broken plugin")

    cluster.submit_binding(work, lambda result: None, may_wait=True)
    with pytest.raises(ValueError, match="broken plugin"):
        _advance(cluster)


def test_waiting_without_the_mark_is_a_plugin_error_not_a_hang():
    cluster = MemoryCluster(SimulatedClock(0.0))
    with pytest.raises(RuntimeError, match="BINDING_MAY_WAIT_KEY"):
        cluster.wait_for(lambda: False, 5.0, 60.0)
