"""The scheduling and binding cycles on the embedded cluster, with upstream's failure handling."""

from __future__ import annotations

import pytest

from kschedfw.cluster.inputs.scenario import Step
from kschedfw.testing import simulate_with

from .plugins import (BASE, CALLS, CpuFit, FailingPreBind, Quorum, RaisingFilter, RecordingReserve,
                      RejectingReserve, SkippingBinder)


@pytest.fixture(autouse=True)
def clear_calls():
    CALLS.clear()


def outcome(result, key):
    return next(p for p in result.pods if p.key == key)


def test_pods_fill_nodes_and_the_rest_get_a_fit_error(node, pod):
    objects = [node("n1", cpu="1"), node("n2", cpu="1")] + [pod(f"p{i}", cpu="600m") for i in range(3)]
    result = simulate_with([*BASE, CpuFit], objects)
    statuses = sorted(p.status for p in result.pods)
    assert statuses == ["Bound", "Bound", "Pending"]
    pending = next(p for p in result.pods if p.status == "Pending")
    assert pending.reason == "Unschedulable"
    assert pending.message == "0/2 nodes are available: 2 Insufficient cpu."
    events = [e for e in result.cluster.events if e.reason == "FailedScheduling"]
    assert events and events[-1].message == pending.message


def test_no_nodes(pod):
    result = simulate_with([*BASE, CpuFit], [pod("p")])
    assert outcome(result, "default/p").message == "no nodes available to schedule pods"


def test_permit_waits_until_quorum_then_all_bind(node, pod):
    objects = [node("n1")] + [pod(f"g{i}") for i in range(3)]
    result = simulate_with([*BASE, Quorum], objects)
    assert [p.status for p in result.pods] == ["Bound"] * 3
    assert result.end_time == 0.0


def test_permit_timeout_rejects_and_unreserves(node, pod):
    # upstream reports a Permit rejection as a FitError over the one chosen node
    objects = [node("n1")] + [pod(f"g{i}") for i in range(2)]
    result = simulate_with([*BASE, Quorum], objects)
    for p in result.pods:
        assert p.status in ("Pending", "Waiting")
    rejected = [e.message for e in result.cluster.events if e.reason == "FailedScheduling"]
    assert "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Quorum." in rejected
    assert "Quorum.unreserve g0" in CALLS


def test_reserve_rejection_runs_unreserve_in_reverse_and_frees_the_node(node, pod):
    result = simulate_with([*BASE, RecordingReserve, RejectingReserve], [node("n1"), pod("p")])
    assert CALLS[:4] == ["RecordingReserve.reserve p", "RejectingReserve.reserve p",
                         "RejectingReserve.unreserve p", "RecordingReserve.unreserve p"]
    p = outcome(result, "default/p")
    assert p.status == "Pending"
    assert p.message == "0/1 nodes are available: 1 no room in the ledger."
    info = result.scheduler.cache.node_info("n1")
    assert info.pods == []


def test_pre_bind_failure_unreserves_and_retries_with_backoff(node, pod):
    result = simulate_with([*BASE, RecordingReserve, FailingPreBind], [node("n1"), pod("p")])
    p = outcome(result, "default/p")
    assert p.status == "Pending" and p.reason == "SchedulerError"
    assert 'running PreBind plugin "FailingPreBind": volume attach timed out' in p.message
    assert "RecordingReserve.unreserve p" in CALLS
    attempts = [a for a in result.scheduler.attempts if a.pod == "default/p" and a.result == "SchedulerError"]
    assert len(attempts) > 1  # retried after backoff
    times = [a.time for a in attempts]
    gaps = [b - a for a, b in zip(times, times[1:])]
    # backoff doubles from podInitialBackoffSeconds (1, 2, 4, 8 s); with SchedulerPopFromBackoffQ
    # (on since v1.33) expiry is truncated to a 1 s window and a pod still backs off inside that
    # window, so a pod that failed at a whole second leaves one window later.
    assert gaps[:4] == [2.0, 3.0, 5.0, 9.0]


def test_raising_plugin_is_an_error_and_other_pods_still_schedule(node, pod):
    objects = [node("n1"), pod("ok"), pod("bad", labels={"explode": "yes"})]
    result = simulate_with([*BASE, RaisingFilter], objects)
    assert outcome(result, "default/ok").status == "Bound"
    bad = outcome(result, "default/bad")
    assert bad.status == "Pending" and bad.reason == "SchedulerError"
    assert bad.message == 'running "RaisingFilter" filter plugin: RuntimeError: plugin bug'


def test_bind_chain_skip_then_default_binder(node, pod):
    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.queuesort import PrioritySort
    result = simulate_with([PrioritySort, SkippingBinder, DefaultBinder], [node("n1"), pod("p")])
    assert outcome(result, "default/p").status == "Bound"
    assert CALLS == ["SkippingBinder.bind p"]


def test_pods_for_other_schedulers_are_ignored_and_reported(node, pod):
    result = simulate_with(BASE, [node("n1"), pod("mine"), pod("theirs", scheduler_name="other-scheduler")])
    theirs = outcome(result, "default/theirs")
    assert theirs.status == "Ignored" and 'no profile for schedulerName "other-scheduler"' in theirs.message
    assert outcome(result, "default/mine").status == "Bound"


def test_higher_priority_pods_are_scheduled_first(node, pod):
    objects = [node("n1", cpu="1"), pod("low", cpu="800m", priority=1), pod("high", cpu="800m", priority=100)]
    result = simulate_with([*BASE, CpuFit], objects)
    assert outcome(result, "default/high").status == "Bound"
    assert outcome(result, "default/low").status == "Pending"


def test_freed_capacity_requeues_the_rejected_pod(node, pod):
    objects = [node("n1", cpu="1"), pod("first", cpu="800m", priority=10)]
    steps = [Step(1.0, "create", objects=(pod("second", cpu="800m"),)),
             Step(30.0, "delete", target={"kind": "Pod", "name": "first", "namespace": "default"})]
    result = simulate_with([*BASE, CpuFit], objects, steps)
    second = outcome(result, "default/second")
    assert second.status == "Bound"
    binds = [e for e in result.cluster.events if e.reason == "Scheduled" and "second" in e.message]
    assert binds and binds[0].time >= 30.0


def test_permit_reject_through_the_handle_unreserves(node, pod):
    from .plugins import Gatekeeper
    objects = [node("n1"), pod("waiter", priority=10), pod("judge", labels={"role": "judge"})]
    result = simulate_with([*BASE, Gatekeeper], objects)
    assert outcome(result, "default/judge").status == "Bound"
    waiter = outcome(result, "default/waiter")
    assert waiter.status in ("Pending", "Waiting")
    messages = [e.message for e in result.cluster.events if e.reason == "FailedScheduling"]
    assert "0/1 nodes are available: 1 refused by the judge." in messages
    assert "Gatekeeper.unreserve waiter" in CALLS


def test_bind_failure_unreserves_and_is_retried_as_an_error(node, pod):
    from kschedfw.plugins.queuesort import PrioritySort

    from .plugins import FailingBinder
    result = simulate_with([PrioritySort, RecordingReserve, FailingBinder], [node("n1"), pod("p")])
    p = outcome(result, "default/p")
    assert p.status == "Pending" and p.reason == "SchedulerError"
    assert p.message == 'running Bind plugin "FailingBinder": API server unavailable'
    assert "RecordingReserve.unreserve p" in CALLS
    assert result.scheduler.cache.node_info("n1").pods == []
