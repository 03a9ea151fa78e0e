"""The Coscheduling hooks, ported from upstream's pkg/coscheduling/coscheduling_test.go cases, plus the
parts kschedfw adds (queueing hints, the framework wiring)."""

from __future__ import annotations

import functools

import pytest

from cosched_testlib import Env, make_node, make_pod, make_pod_group, qpi
from kschedfw import ActionType, Code, CycleState, QueueingHint
from kschedfw.fwk.cycle_state import PODS_TO_ACTIVATE_KEY, PodsToActivate
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import NodeToStatus
from kschedfw.testing import framework_for
from kschedfw_coscheduling import Coscheduling

LOW, HIGH = 10, 100


def cycle_state():
    state = CycleState()
    state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
    return state


# --------------------------------------------------------------------------- PodGroup backoff

def test_pod_group_backoff_prevents_an_infinite_scheduling_loop():
    pods = [make_pod(f"pod{i}", group="pg1", uid=f"pod{i}") for i in (1, 2, 3)]
    env = Env([*pods, make_pod_group("pg1", min_member=3)], nodes=[make_node("node")],
              args={"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 1, "podGroupRejectPercentage": 10})
    state = cycle_state()
    status, _ = env.plugin.permit(state, pods[0], "test")
    assert status.code is Code.Wait
    assert sorted(state.read(PODS_TO_ACTIVATE_KEY).map) == ["ns/pod2", "ns/pod3"]

    env.plugin.post_filter(CycleState(), pods[1], NodeToStatus())
    _, status = env.plugin.pre_filter(CycleState(), pods[2], [])
    assert status.code is Code.UnschedulableAndUnresolvable
    assert status.reasons == ("podGroup ns/pg1 failed recently",)

    env.clock.advance(1)  # the backoff is over
    _, status = env.plugin.pre_filter(CycleState(), pods[2], [])
    assert status is None


# --------------------------------------------------------------------------- Less

def _less_cases():
    # (name, p1, initial1, p2, initial2, groups as (name, namespace, created offset or None), want)
    return [
        ("p1.priority less than p2.priority",
         make_pod("p1", "ns1", priority=LOW), None, make_pod("p2", "ns2", priority=HIGH), None, [], False),
        ("p1.priority greater than p2.priority",
         make_pod("p1", "ns1", priority=HIGH), None, make_pod("p2", "ns2", priority=LOW), None, [], True),
        ("equal priority. p1 is added to schedulingQ earlier than p2",
         make_pod("p1", "ns1", priority=HIGH), 1, make_pod("p2", "ns2", priority=HIGH), 2, [], True),
        ("equal priority. p2 is added to schedulingQ earlier than p1",
         make_pod("p1", "ns1", priority=HIGH), 2, make_pod("p2", "ns2", priority=HIGH), 1, [], False),
        ("p1.priority less than p2.priority, p1 belongs to pg1",
         make_pod("p1", "ns1", priority=LOW, group="pg1"), None, make_pod("p2", "ns2", priority=HIGH), None,
         [("pg1", "ns1", None)], False),
        ("p1.priority greater than p2.priority, p1 belongs to pg1",
         make_pod("p1", "ns1", priority=HIGH, group="pg1"), None, make_pod("p2", "ns2", priority=LOW), None,
         [("pg1", "ns1", None)], True),
        ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
         make_pod("p1", "ns1", priority=HIGH, group="pg1"), 1, make_pod("p2", "ns2", priority=HIGH), 2,
         [("pg1", "ns1", 1)], True),
        ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
         make_pod("p1", "ns1", priority=HIGH, group="pg1"), 2, make_pod("p2", "ns2", priority=HIGH), 1,
         [("pg1", "ns1", 2)], False),
        ("p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
         make_pod("p1", "ns1", priority=LOW, group="pg1"), None,
         make_pod("p2", "ns2", priority=HIGH, group="pg2"), None, [("pg1", "ns1", 1), ("pg2", "ns2", 2)], False),
        ("p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
         make_pod("p1", "ns1", priority=HIGH, group="pg1"), None,
         make_pod("p2", "ns2", priority=LOW, group="pg1"), None, [("pg1", "ns1", 1), ("pg2", "ns2", 2)], True),
        ("equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
         make_pod("p1", "ns1", priority=HIGH, group="pg1"), 1,
         make_pod("p2", "ns2", priority=HIGH, group="pg2"), 2, [("pg1", "ns1", 1), ("pg2", "ns2", 2)], True),
        ("equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
         make_pod("p1", "ns", priority=LOW, group="pg2"), 1,
         make_pod("p2", "ns", priority=HIGH, group="pg1"), 2, [("pg1", "ns", 1), ("pg2", "ns", 2)], False),
        ("equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
         make_pod("p1", "ns1", priority=HIGH, group="pg2"), 1,
         make_pod("p2", "ns2", priority=HIGH, group="pg2"), 1, [("pg1", "ns1", 1), ("pg2", "ns2", 2)], True),
        ("equal priority and creation time, and p2 belong to pg2",
         make_pod("p1", "ns1", priority=HIGH), 1,
         make_pod("p2", "ns2", priority=HIGH, group="pg2"), 1, [("pg2", "ns2", 2)], True),
    ]


@pytest.mark.parametrize("p1, i1, p2, i2, groups, want",
                         [pytest.param(*case[1:], id=case[0]) for case in _less_cases()])
def test_less(p1, i1, p2, i2, groups, want):
    env = Env()
    for name, namespace, created in groups:
        env.cluster.create(make_pod_group(name, namespace, created=None if created is None else env.at(created)))
    assert env.plugin.less(qpi(p1, i1), qpi(p2, i2)) is want


def test_less_after_schedule_failure():
    env = Env()
    env.cluster.create(make_pod_group("pg1", min_member=3, created=env.at(-10)))  # older
    env.cluster.create(make_pod_group("pg2", min_member=3, created=env.at(-5)))   # newer
    p1 = qpi(make_pod("p1", priority=HIGH, group="pg1"), 0.0)
    p2 = qpi(make_pod("p2", priority=HIGH, group="pg2"), 0.0)
    assert env.plugin.less(p1, p2)
    env.plugin.pg_mgr.mark_pod_group_schedule_failure("ns/pg1")
    assert not env.plugin.less(p1, p2)
    assert env.plugin.less(p2, p1)
    env.plugin.pg_mgr.clear_pod_group_schedule_failure("ns/pg1")
    assert env.plugin.less(p1, p2)


def test_less_keeps_the_members_of_a_group_together():
    env = Env()
    env.cluster.create(make_pod_group("a", min_member=2))
    env.cluster.create(make_pod_group("b", min_member=2))
    infos = [qpi(make_pod(name, group=group), 0.0) for name, group in
             [("x-1", "b"), ("x-2", "a"), ("x-3", "b"), ("x-4", "a")]]
    ordered = sorted(infos, key=functools.cmp_to_key(
        lambda a, b: -1 if env.plugin.less(a, b) else (1 if env.plugin.less(b, a) else 0)))
    assert [i.pod.name for i in ordered] == ["x-2", "x-4", "x-1", "x-3"]


# --------------------------------------------------------------------------- Permit

@pytest.mark.parametrize("pod, want", [
    pytest.param(make_pod("p", uid="p"), None, id="pods do not belong to any podGroup"),
    pytest.param(make_pod("p", uid="p", group="pg2"), Code.Wait, id="pods belong to a pg1, but quorum not satisfied"),
    pytest.param(make_pod("p", uid="p", group="pg1"), None, id="pods belong to a podGroup, and quorum satisfied"),
])
def test_permit(pod, want):
    env = Env([pod, make_pod_group("pg1", min_member=1), make_pod_group("pg2", min_member=2)],
              nodes=[make_node("node")], args={"permitWaitingTimeSeconds": 10})
    status, _ = env.plugin.permit(CycleState(), pod, "node")
    assert (status.code if status is not None else None) is want


def test_permit_rejects_a_pod_whose_pod_group_does_not_exist():
    pod = make_pod("p", group="missing")
    env = Env([pod])
    status, _ = env.plugin.permit(CycleState(), pod, "node")
    assert status.code is Code.Unschedulable and status.reasons == ("PodGroup not found",)


@pytest.mark.parametrize("args, pg_timeout, want", [
    pytest.param({"permitWaitingTimeSeconds": 10}, None, 10.0, id="plugin args"),
    pytest.param({"permitWaitingTimeSeconds": 10}, 30, 30.0, id="PodGroup scheduleTimeoutSeconds wins"),
    pytest.param({"permitWaitingTimeSeconds": 0}, None, 60.0, id="neither: 60s"),
    pytest.param({}, None, 60.0, id="default args"),
])
def test_permit_wait_time(args, pg_timeout, want):
    pod = make_pod("p", group="pg")
    env = Env([pod, make_pod_group("pg", min_member=2, timeout=pg_timeout)], args=args)
    status, timeout = env.plugin.permit(CycleState(), pod, "node")
    assert status.code is Code.Wait and timeout == want


def test_the_member_that_completes_the_group_allows_every_waiting_one():
    members = [make_pod(f"m{i}", group="pg", uid=f"m{i}") for i in range(3)]
    stranger = make_pod("s", group="other", uid="s")
    env = Env([*members, stranger, make_pod_group("pg", min_member=3), make_pod_group("other", min_member=2)])
    for member in members[:2]:
        status, _ = env.plugin.permit(CycleState(), member, "node")
        assert status.code is Code.Wait
        env.wait(member)
    env.plugin.permit(CycleState(), stranger, "node")
    env.wait(stranger)
    env.plugin.pg_mgr.mark_pod_group_schedule_failure("ns/pg")
    assert env.plugin.permit(CycleState(), members[2], "node") == (None, 0.0)
    assert sorted(env.resolved) == [("m0", "allowed"), ("m1", "allowed")]
    assert list(env.waiting) == ["s"]
    assert env.plugin.pg_mgr.last_failure("ns/pg") is None


def test_only_the_first_member_at_permit_activates_its_siblings():
    members = [make_pod(f"m{i}", group="pg", uid=f"m{i}") for i in range(3)]
    env = Env([*members, make_pod_group("pg", min_member=3)])
    first, second = cycle_state(), cycle_state()
    env.plugin.permit(first, members[0], "node")
    env.wait(members[0])
    env.plugin.permit(second, members[1], "node")
    assert sorted(first.read(PODS_TO_ACTIVATE_KEY).map) == ["ns/m1", "ns/m2"]
    assert second.read(PODS_TO_ACTIVATE_KEY).map == {}


# --------------------------------------------------------------------------- PostFilter

@pytest.mark.parametrize("pod, existing, min_member, want", [
    pytest.param(make_pod("p", uid="p"), [], 2, (Code.Unschedulable, ("can not find pod group",)),
                 id="pod does not belong to any pod group"),
    pytest.param(make_pod("p", uid="p", group="pg1"), [make_pod("p1", uid="p1", node="node", group="pg1")], 1,
                 (Code.Unschedulable, ()), id="enough pods assigned, do not reject all"),
    pytest.param(make_pod("p", uid="p", group="pg1"), [make_pod("p1", uid="p1", node="node", group="pg1")], 2,
                 (Code.Unschedulable, ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after "
                                       "PostFilter",)),
                 id="pod failed at filter phase, reject all pods"),
])
def test_post_filter(pod, existing, min_member, want):
    env = Env([*existing, pod, make_pod_group("pg1", min_member=min_member)], nodes=[make_node("node")],
              args={"permitWaitingTimeSeconds": 10})
    _, status = env.plugin.post_filter(CycleState(), pod, NodeToStatus())
    assert (status.code, status.reasons) == want


@pytest.mark.parametrize("percentage, min_member, assigned, rejects", [
    pytest.param(10, 10, 9, False, id="default 10%: 9/10 assigned (10% gap) -> no rejection"),
    pytest.param(10, 10, 8, True, id="default 10%: 8/10 assigned (20% gap) -> rejection"),
    pytest.param(0, 10, 9, True, id="0%: 9/10 assigned (10% gap) -> rejection (always reject)"),
    pytest.param(100, 10, 0, False, id="100%: 0/10 assigned (100% gap) -> no rejection (never reject)"),
    pytest.param(50, 10, 6, False, id="50%: 6/10 assigned (40% gap) -> no rejection"),
    pytest.param(50, 10, 4, True, id="50%: 4/10 assigned (60% gap) -> rejection"),
])
def test_post_filter_reject_threshold(percentage, min_member, assigned, rejects):
    bound = [make_pod(f"assigned-{i}", uid=f"assigned-{i}", node="node", group="pg1") for i in range(assigned)]
    pod = make_pod("p", uid="p", group="pg1")
    env = Env([*bound, pod, make_pod_group("pg1", min_member=min_member)], nodes=[make_node("node")],
              args={"permitWaitingTimeSeconds": 10, "podGroupRejectPercentage": percentage})
    _, status = env.plugin.post_filter(CycleState(), pod, NodeToStatus())
    expected = ("PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",) if rejects else ()
    assert (status.code, status.reasons) == (Code.Unschedulable, expected)


def test_post_filter_rejects_the_waiting_members_and_marks_the_group_failed():
    members = [make_pod(f"m{i}", group="pg", uid=f"m{i}") for i in range(4)]
    stranger = make_pod("s", group="other", uid="s")
    env = Env([*members, stranger, make_pod_group("pg", min_member=4), make_pod_group("other", min_member=2)])
    for member in members[:2]:
        env.plugin.permit(CycleState(), member, "node")
        env.wait(member)
    env.plugin.permit(CycleState(), stranger, "node")
    env.wait(stranger)
    env.clock.advance(3)
    env.plugin.post_filter(CycleState(), members[3], NodeToStatus())
    assert sorted(env.resolved) == [("m0", "optimistic rejection in PostFilter"),
                                    ("m1", "optimistic rejection in PostFilter")]
    assert list(env.waiting) == ["s"]
    assert env.plugin.pg_mgr.last_failure("ns/pg") == 3
    # kschedfw: members still queued at this instant are held back (no zero-time retry loop) ...
    _, status = env.plugin.pre_filter(CycleState(), members[2], [])
    assert status.reasons == ("podGroup ns/pg failed recently",)
    env.clock.advance(1)  # ... until the clock moves on
    assert env.plugin.pre_filter(CycleState(), members[2], [])[1] is None


# --------------------------------------------------------------------------- Unreserve

def test_unreserve_rejects_every_waiting_member_once():
    members = [make_pod(f"m{i}", group="pg", uid=f"m{i}") for i in range(200)]
    # The scheduler runs Unreserve for a rejected waiting pod at once, while the rejection that
    # caused it is still being handled: a long chain of nested rejections must not exhaust the stack.
    env = Env([*members, make_pod_group("pg", min_member=300)], unreserve_rejected=True)
    for member in members:
        env.plugin.permit(CycleState(), member, "node")
        env.wait(member)
    env.waiting[members[0].uid].reject("Coscheduling", "rejected due to timeout")
    assert not env.waiting
    messages = dict(env.resolved)
    assert messages.pop("m0") == "rejected due to timeout"
    assert set(messages.values()) == {"rejection in Unreserve"}
    assert env.plugin.pg_mgr.assigned_count("ns/pg") == 0


def test_unreserve_ignores_pods_outside_groups():
    pod = make_pod("p")
    env = Env([pod])
    env.plugin.unreserve(CycleState(), pod, "node")
    assert env.plugin.pg_mgr.last_failure("ns/") is None


# --------------------------------------------------------------------------- hints and wiring

def hints(plugin):
    """{(resource, actions): hint} of what the plugin registers."""
    return {(getattr(e.event.resource, "value", e.event.resource), e.event.action_type): e.queueing_hint_fn
            for e in plugin.events_to_register()}


def test_events_to_register():
    env = Env()
    registered = hints(env.plugin)
    assert ("PodGroup", ActionType.Add | ActionType.Update) in registered
    assert ("Pod", ActionType.Add) in registered


def test_hints_wake_a_member_only_for_its_own_group():
    members = [make_pod(f"m{i}", group="pg", uid=f"m{i}") for i in range(2)]
    env = Env([*members, make_pod_group("pg", min_member=2), make_pod_group("other", min_member=1)])
    registered = hints(env.plugin)
    pod_added = registered[("Pod", ActionType.Add)]
    group_changed = registered[("PodGroup", ActionType.Add | ActionType.Update)]
    assert pod_added(members[0], None, make_pod("m9", group="pg")) is QueueingHint.Queue
    assert pod_added(members[0], None, make_pod("x", group="other")) is QueueingHint.QueueSkip
    assert pod_added(members[0], None, make_pod("m9", namespace="elsewhere", group="pg")) is QueueingHint.QueueSkip
    own = env.cluster.get("PodGroup", "pg", "ns")
    other = env.cluster.get("PodGroup", "other", "ns")
    assert group_changed(members[0], None, own) is QueueingHint.Queue
    assert group_changed(members[0], own, own) is QueueingHint.Queue
    assert group_changed(members[0], None, other) is QueueingHint.QueueSkip


def test_capacity_hints_need_a_group_able_to_make_quorum():
    members = [make_pod(f"m{i}", group="pg", uid=f"m{i}") for i in range(2)]
    short = make_pod("lonely", group="big", uid="lonely")
    env = Env([*members, short, make_pod_group("pg", min_member=2), make_pod_group("big", min_member=5)])
    registered = hints(env.plugin)
    node_added = registered[("Node", ActionType.Add | ActionType.UpdateNodeAllocatable | ActionType.UpdateNodeLabel
                             | ActionType.UpdateNodeTaint)]
    pod_deleted = registered[("AssignedPod", ActionType.Delete)]
    assert node_added(members[0], None, make_node("new")) is QueueingHint.Queue
    assert node_added(short, None, make_node("new")) is QueueingHint.QueueSkip
    assert pod_deleted(members[0], make_pod("x", node="n"), None) is QueueingHint.Queue
    # the group's own members giving up their reservations do not make it fit
    assert pod_deleted(members[0], make_pod("m1", group="pg", node="n"), None) is QueueingHint.QueueSkip
    assert node_added(make_pod("no-group"), None, make_node("new")) is QueueingHint.QueueSkip


def test_framework_wiring():
    env = Env()
    fwk = framework_for([Coscheduling], handle=Handle.factory(backend=env.cluster, snapshot=env.handle.snapshot,
                                                              waiting_pods=env.waiting),
                        args={"Coscheduling": {"permitWaitingTimeSeconds": 5}})
    points = {point: names for point, names in fwk.list_plugins().items() if names}
    assert points == {"less": ["Coscheduling"], "pre_filter": ["Coscheduling"], "post_filter": ["Coscheduling"],
                      "reserve": ["Coscheduling"], "permit": ["Coscheduling"]}
    assert fwk.plugins["Coscheduling"].schedule_timeout == 5
    events = {(e.resource if isinstance(e.resource, str) else e.resource.value) for e, _, _ in fwk.queueing_hints()}
    assert {"Pod", "PodGroup"} <= events


def test_invalid_args_are_refused_at_construction():
    with pytest.raises(ValueError, match="permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"):
        Coscheduling({"permitWaitingTimeSeconds": -1}, Env().handle)
