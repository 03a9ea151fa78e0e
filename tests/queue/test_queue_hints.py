"""Ports of upstream scheduling_queue_test.go about queueing hints, in-flight events, assigned
pod events and gated pods; plus the event matching and pod-update event rules."""

from __future__ import annotations

import logging

import pytest

from kschedfw.api import parse_object
from kschedfw.fwk.events import (FORCE_ACTIVATE, UNSCHEDULABLE_TIMEOUT, WILDCARD_EVENT,
                                 ActionType, ClusterEvent, EventResource, QueueingHint,
                                 pod_scheduling_properties_change)
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.queue import (ACTIVE_Q, BACKOFF_Q, EVENT_ASSIGNED_POD_ADD, EVENT_UNSCHEDULED_POD_UPDATE,
                            GATED, UNROLLED_WILDCARD_EVENTS, UNSCHEDULABLE_Q, InFlightEvent,
                            QueueingStrategy, match_cluster_events)
from tests.queue.queue_testlib import (CSI_NODE_UPDATE, NODE_ADD, PV_ADD, PV_UPDATE, PVC_ADD,
                                       AllowlistPlugin, hint_map, lookup_info,
                                       queue_pod, names, new_queue, pop_pod, queue_hint_return_queue,
                                       queue_hint_return_skip, scheduling_gates, scheduling_gates_hint)

pod1 = queue_pod("targetpod", uid="pod1")
pod2 = queue_pod("targetpod2", uid="pod2")
pod3 = queue_pod("targetpod3", uid="pod3")
NODE = parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}})


def Q(plugin):  # noqa: N802 - reads like upstream's table entries
    return (plugin, queue_hint_return_queue)


def S(plugin):  # noqa: N802
    return (plugin, queue_hint_return_skip)


# --------------------------------------------------------------------------- Test_InFlightPods

class _Ctx:
    popped = None
    popped2 = None


def _cb_pop1(q):
    _Ctx.popped = pop_pod(q, pod1)


def _cb_pop2(q):
    _Ctx.popped2 = pop_pod(q, pod2)


def _cb_requeue_popped(q):
    q.add_unschedulable_if_not_present(_Ctx.popped, q.scheduling_cycle)


def _cb_requeue_popped2_pending(q):
    _Ctx.popped2.unschedulable_plugins = {"fooPlugin2", "fooPlugin3"}
    _Ctx.popped2.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(_Ctx.popped2, q.scheduling_cycle)


def _cb_requeue_popped_pending(q):
    _Ctx.popped.pending_plugins = {"fooPlugin1"}
    _Ctx.popped.unschedulable_plugins = {"fooPlugin2"}
    q.add_unschedulable_if_not_present(_Ctx.popped, q.scheduling_cycle)


def _cb_pop_check_preserved(q):
    _Ctx.popped = pop_pod(q, pod1)
    assert _Ctx.popped.unschedulable_plugins == {"fooPlugin2"}
    assert _Ctx.popped.pending_plugins == {"fooPlugin1"}


def _cb_bug_add_pod1_to_active(q):
    q.active_q.add(lookup_info(pod1))


def _cb_active_empty(q):
    assert len(q.active_q) == 0


IN_FLIGHT_CASES = [
    pytest.param(
        [pod1], [("event", PVC_ADD), ("pop", pod1), ("event", PV_ADD), ("event", PV_UPDATE)],
        dict(in_flight=[pod1], events=[pod1, PV_ADD]),
        hint_map((PV_ADD, [Q("fooPlugin1")])),
        id="Pod and interested events are registered in inFlightPods/inFlightEvents"),
    pytest.param(
        [pod1, pod2], [("event", PVC_ADD), ("pop", pod1), ("event", PV_ADD), ("pop", pod2),
                       ("event", NODE_ADD), ("enqueue", lookup_info(pod1))],
        dict(backoff=["targetpod"], in_flight=[pod2], events=[pod2, NODE_ADD]),
        hint_map((PV_ADD, [Q("fooPlugin1")]), (NODE_ADD, [Q("fooPlugin1")]), (PVC_ADD, [Q("fooPlugin1")])),
        id="Pod, registered in inFlightPods, is enqueued back to backoffQ"),
    pytest.param(
        [pod1, pod2], [("event", PVC_ADD), ("pop", pod1), ("event", PV_ADD), ("pop", pod2),
                       ("event", NODE_ADD), ("enqueue", lookup_info(pod1)), ("event", CSI_NODE_UPDATE),
                       ("enqueue", lookup_info(pod2))],
        dict(backoff=["targetpod", "targetpod2"], in_flight=[], events=[]),
        hint_map((PV_ADD, [Q("fooPlugin1")]), (NODE_ADD, [Q("fooPlugin1")]), (PVC_ADD, [Q("fooPlugin1")]),
                 (CSI_NODE_UPDATE, [Q("fooPlugin1")])),
        id="All Pods registered in inFlightPods are enqueued back to activeQ"),
    pytest.param(
        [pod1, pod2, pod3], [("event", PVC_ADD), ("pop", pod1), ("event", PV_ADD), ("pop", pod2),
                             ("event", NODE_ADD), ("pop", pod3), ("event", EVENT_ASSIGNED_POD_ADD),
                             ("enqueue", lookup_info(pod2))],
        dict(backoff=["targetpod2"], in_flight=[pod1, pod3],
             events=[pod1, PV_ADD, NODE_ADD, pod3, EVENT_ASSIGNED_POD_ADD]),
        hint_map((PV_ADD, [Q("fooPlugin1")]), (NODE_ADD, [Q("fooPlugin1")]),
                 (EVENT_ASSIGNED_POD_ADD, [Q("fooPlugin1")])),
        id="One intermediate Pod registered in inFlightPods is enqueued back to activeQ"),
    pytest.param(
        [pod1], [("event", UNSCHEDULABLE_TIMEOUT), ("pop", pod1), ("event", EVENT_ASSIGNED_POD_ADD),
                 ("enqueue", lookup_info(pod1, "fooPlugin1"))],
        dict(pool=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [S("fooPlugin1")])),
        id="events before popping Pod are ignored when Pod is enqueued back to queue"),
    pytest.param(
        [pod1], [("pop", pod1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", lookup_info(pod1))],
        dict(backoff=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [Q("fooPlugin1")])),
        id="pod is enqueued to backoff if no failed plugin"),
    pytest.param(
        [pod1], [("pop", pod1), ("event", NODE_ADD), ("enqueue", lookup_info(pod1, "fooPlugin1"))],
        dict(pool=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [Q("fooPlugin1")])),
        id="pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable"),
    pytest.param(
        [pod1], [("pop", pod1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", lookup_info(pod1, "fooPlugin1"))],
        dict(pool=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [S("fooPlugin1")])),
        id="pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip"),
    pytest.param(
        [pod1], [("pop", pod1), ("event", EVENT_ASSIGNED_POD_ADD),
                 ("enqueue", QueuedPodInfo(pod=pod1, unschedulable_plugins={"fooPlugin2", "fooPlugin3"},
                                           pending_plugins={"fooPlugin1"}))],
        dict(active=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [S("fooPlugin3"), Q("fooPlugin2"), Q("fooPlugin1")])),
        id="pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue"),
    pytest.param(
        [pod1], [("pop", pod1), ("event", EVENT_ASSIGNED_POD_ADD),
                 ("enqueue", lookup_info(pod1, "fooPlugin1", "fooPlugin2"))],
        dict(backoff=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [S("fooPlugin2"), Q("fooPlugin1")])),
        id="pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue"),
    pytest.param(
        [pod1, pod2], [("call", _cb_pop1), ("event", NODE_ADD), ("call", _cb_pop2),
                       ("event", EVENT_ASSIGNED_POD_ADD), ("call", _cb_requeue_popped),
                       ("call", _cb_requeue_popped2_pending)],
        dict(active=["targetpod2"], backoff=["targetpod"], in_flight=[], events=[]),
        hint_map((EVENT_ASSIGNED_POD_ADD, [S("fooPlugin3"), Q("fooPlugin2"), Q("fooPlugin1")])),
        id="pod is enqueued to activeQ because the pending plugin has a hint fn and it returns Queue for a concurrent event that was received while some other pod was in flight"),
    pytest.param(
        [pod1], [("call", _cb_pop1), ("call", _cb_requeue_popped_pending), ("event", PV_ADD),
                 ("call", _cb_pop_check_preserved), ("call", _cb_requeue_popped)],
        dict(),
        hint_map((PV_ADD, [Q("fooPlugin1")])),
        id="popped pod preserves UnschedulablePlugins and PendingPlugins"),
    pytest.param(
        [pod1, pod2], [("event", PVC_ADD), ("pop", pod1), ("event", PV_ADD), ("pop", pod2),
                       ("call", _cb_bug_add_pod1_to_active), ("create", pod3), ("pop", pod3),
                       ("call", _cb_active_empty), ("event", NODE_ADD), ("enqueue", lookup_info(pod1)),
                       ("event", CSI_NODE_UPDATE), ("enqueue", lookup_info(pod2)),
                       ("enqueue", lookup_info(pod3))],
        dict(backoff=["targetpod", "targetpod2", "targetpod3"], in_flight=[]),
        hint_map((PV_ADD, [Q("fooPlugin1")]), (NODE_ADD, [Q("fooPlugin1")]), (PVC_ADD, [Q("fooPlugin1")]),
                 (CSI_NODE_UPDATE, [Q("fooPlugin1")])),
        id="Pop is made twice for the same Pod, but the cleanup still happen correctly"),
]


@pytest.mark.parametrize("initial, actions, want, hints", IN_FLIGHT_CASES)
def test_in_flight_pods(sort_key, initial, actions, want, hints):
    """Test_InFlightPods."""
    q, clock, _ = new_queue(sort_key=sort_key, hints=hints)
    for pod in initial:
        q.add(pod)
        clock.advance(1)
    for kind, arg in actions:
        if kind == "create":
            q.add(arg)
        elif kind == "pop":
            pop_pod(q, arg)
        elif kind == "event":
            q.move_all_to_active_or_backoff_queue(arg)
        elif kind == "enqueue":
            assert q.add_unschedulable_if_not_present(arg, q.scheduling_cycle)
        else:
            arg(q)
    if "in_flight" in want:
        assert {p.uid for p in q.in_flight_pods()} == {p.uid for p in want["in_flight"]}
    if "events" in want:
        expected = [InFlightEvent(v) if isinstance(v, ClusterEvent) else v for v in want["events"]]
        assert q.active_q.in_flight_events() == expected
    if "active" in want:
        assert sorted(names(q.active_q.list())) == sorted(want["active"])
    if "backoff" in want:
        assert sorted(names(q.backoff_q.list())) == sorted(want["backoff"])
    for name in want.get("pool", []):
        assert q.unschedulable_pods.get(f"default/{name}") is not None


def test_pop_in_flight_events(sort_key):
    """TestPop: Queue from a Pending plugin skips backoff; Pop preserves PendingPlugins."""
    pod = queue_pod("targetpod", uid="pod1")
    q, _, _ = new_queue(sort_key=sort_key, hints=hint_map((PV_ADD, [Q("fooPlugin1")])))
    q.add(pod)
    popped = pop_pod(q, pod)
    popped.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(PV_ADD)
    popped = pop_pod(q, pod)
    assert popped.pending_plugins == {"fooPlugin1"}


def test_done_drops_events_no_in_flight_pod_needs():
    """active_queue TestClose, adapted: done()/clear_in_flight() release pods and events."""
    q, _, _ = new_queue(hints=hint_map((NODE_ADD, [Q("p")]), (CSI_NODE_UPDATE, [Q("p")])))
    a, b = queue_pod("p1", "foo", uid="p1"), queue_pod("p2", "bar", uid="p2")
    q.active_q.add(lookup_info(a))
    q.active_q.add(lookup_info(b))
    q.pop()
    q.pop()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.move_all_to_active_or_backoff_queue(CSI_NODE_UPDATE)
    assert len(q.active_q.in_flight_events()) == 4
    assert len(q.in_flight_pods()) == 2
    q.active_q.clear_in_flight()
    assert q.active_q.in_flight_events() == [] and q.in_flight_pods() == []


def test_done_keeps_events_for_later_in_flight_pods():
    q, _, _ = new_queue(hints=hint_map((NODE_ADD, [Q("p")])))
    a, b = queue_pod("a"), queue_pod("b")
    q.add(a)
    q.add(b)
    q.pop()                                   # a
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.pop()                                   # b
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.done(b.uid)                             # a still needs both events
    assert q.active_q.in_flight_events() == [a, InFlightEvent(NODE_ADD), InFlightEvent(NODE_ADD)]
    q.done(a.uid)
    assert q.active_q.in_flight_events() == []
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.active_q.in_flight_events() == []  # nothing in flight: not recorded


# --------------------------------------------------------------------------- MoveAll with hints

def _hint_raises(pod, old, new):
    raise AssertionError("QueueingHintFn should not be called as pod is gated")


P = queue_pod("pod1", "ns1", uid="1", labels={"foo": "bar"})


@pytest.mark.parametrize("qpi_kw, hint, duration, expected", [
    pytest.param(dict(pending_plugins={"foo"}), queue_hint_return_queue, 0, ACTIVE_Q,
                 id="Queue queues pod to activeQ"),
    pytest.param(dict(unschedulable_plugins={"foo"}), queue_hint_return_queue, 0, BACKOFF_Q,
                 id="Queue queues pod to backoffQ if Pod is backing off"),
    pytest.param(dict(unschedulable_plugins={"foo"}), queue_hint_return_queue, 1 + 1, ACTIVE_Q,
                 id="Queue queues pod to activeQ if Pod is not backing off"),
    pytest.param(dict(unschedulable_plugins={"foo"}), queue_hint_return_skip, 0, UNSCHEDULABLE_Q,
                 id="Skip queues pod to unschedulablePods"),
    pytest.param(dict(gating_plugin="SchedulingGates", unschedulable_plugins={"SchedulingGates"}),
                 _hint_raises, 0, UNSCHEDULABLE_Q,
                 id="QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event"),
    pytest.param(dict(gating_plugin="foo", unschedulable_plugins={"foo"}), queue_hint_return_queue, 0, BACKOFF_Q,
                 id="QueueHintFunction is called when Pod is gated by the plugin that is interested in the event"),
])
def test_move_all_to_active_or_backoff_queue_with_queueing_hint(sort_key, qpi_kw, hint, duration, expected):
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint."""
    from kschedfw.clock import SimulatedClock
    hints = hint_map((NODE_ADD, [("foo", hint)]),
                     (EVENT_UNSCHEDULED_POD_UPDATE, [Q("SchedulingGates")]))
    pre = {"SchedulingGates": scheduling_gates, "foo": AllowlistPlugin(["foo"], "foo")}
    q, clock, _ = new_queue(sort_key=sort_key, hints=hints, pre_enqueue=pre,
                            clock=SimulatedClock(1735689600.0))
    q.add(P)
    pop_pod(q, P)
    qpi = QueuedPodInfo(pod=P, **qpi_kw)
    assert q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    clock.advance(duration)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    where = {ACTIVE_Q: q.active_q.has(P.key), BACKOFF_Q: q.backoff_q.has(P.key),
             UNSCHEDULABLE_Q: P.key in q.unschedulable_pods}
    assert [k for k, v in where.items() if v] == [expected]


def test_move_all_to_active_or_backoff_queue(sort_key):
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue."""
    from tests.queue.test_queue_priority_queue import hpp, mpp, up
    from tests.queue.queue_testlib import rename

    def expect_in_flight(*pods):
        assert sorted(p.uid for p in q.in_flight_pods()) == sorted(p.uid for p in pods)
        assert sorted(e.uid for e in q.active_q.in_flight_events() if not isinstance(e, InFlightEvent)) \
            == sorted(p.uid for p in pods)

    q, clock, _ = new_queue(sort_key=sort_key, hints=hint_map((NODE_ADD, [Q("fooPlugin")])))
    q.add(up)
    pop_pod(q, up)
    expect_in_flight(up)
    q.add(hpp)
    pop_pod(q, hpp)
    expect_in_flight(up, hpp)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "fooPlugin"), q.scheduling_cycle)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "fooPlugin"), q.scheduling_cycle)
    expect_in_flight()
    hpp1 = rename(hpp, "hpp1")
    q.add(hpp1)
    pop_pod(q, hpp1)
    expect_in_flight(hpp1)
    info = q.new_queued_pod_info(hpp1)
    info.unschedulable_count += 1
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)  # no rejector: backoffQ
    expect_in_flight()
    hpp2 = rename(hpp, "hpp2")
    q.add(hpp2)
    pop_pod(q, hpp2)
    expect_in_flight(hpp2)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp2, "barPlugin"), q.scheduling_cycle)
    expect_in_flight()
    # NodeAdd moves up and hpp (fooPlugin has a hint) to backoffQ; hpp2 stays.
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.add(mpp)
    assert len(q.active_q) == 1
    pop_pod(q, mpp)
    expect_in_flight(mpp)
    assert len(q.backoff_q) == 3
    clock.advance(q.backoff_q.max)
    q.backoff_q.pop_all_backoff_completed()
    expect_in_flight(mpp)

    q.add(up)
    pop_pod(q, up)
    expect_in_flight(mpp, up)
    q.add(hpp)
    pop_pod(q, hpp)
    expect_in_flight(mpp, up, hpp)
    q.add(hpp1)
    pop_pod(q, hpp1)
    up_info = q.new_queued_pod_info(up, "fooPlugin")
    hpp_info = q.new_queued_pod_info(hpp, "fooPlugin")
    hpp1_info = q.new_queued_pod_info(hpp1)
    expect_in_flight(mpp, up, hpp, hpp1)
    q.add_unschedulable_if_not_present(up_info, q.scheduling_cycle)
    expect_in_flight(mpp, hpp, hpp1)
    q.add_unschedulable_if_not_present(hpp_info, q.scheduling_cycle)
    expect_in_flight(mpp, hpp1)
    q.add_unschedulable_if_not_present(hpp1_info, q.scheduling_cycle)
    expect_in_flight(mpp)
    q.add(mpp)
    for pod in (up, hpp, hpp2):
        assert q.unschedulable_pods.get(pod.key) is not None, pod.name
    assert q.backoff_q.has(hpp1.key)
    assert len(q.active_q) == 1
    clock.advance(q.backoff_q.max)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert len(q.active_q) == 4
    assert len(q.backoff_q) == 0
    expect_in_flight(mpp)
    assert len(q.unschedulable_pods) == 1  # hpp2, whatever its backoff


# --------------------------------------------------------------------------- assigned pod events

_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchExpressions": [{"key": "service", "operator": "Exists"}]},
     "topologyKey": "region"}]}}
_SPREAD = [{"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]
afp = queue_pod("afp", "ns1", uid="afp", annotations={"annot2": "val2"}, affinity=_AFFINITY)
tsp = queue_pod("tsp", "ns1", uid="tsp", spread=_SPREAD)
plain = queue_pod("afp", "ns1", uid="afp", annotations={"annot2": "val2"})
matching = queue_pod("lbp", "ns1", labels={"service": "securityscan"}, node="node1")
unrelated = queue_pod("lbp", "unrelated", labels={"unrelated": "unrelated"}, node="node1")


def _assigned_pod_case(sort_key, hints, unsched_pod, plugin):
    q, clock, _ = new_queue(sort_key=sort_key, hints=hints)
    q.add(unsched_pod)
    pop_pod(q, unsched_pod)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(unsched_pod, plugin), q.scheduling_cycle)
    clock.advance(1 + 1)
    return q


@pytest.mark.parametrize("unsched_pod, plugin, assigned, want", [
    pytest.param(afp, "InterPodAffinity", matching, True,
                 id="Pod rejected by pod affinity is requeued with matching Pod's update"),
    pytest.param(afp, "InterPodAffinity", unrelated, False,
                 id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
    pytest.param(tsp, "PodTopologySpread", matching, True,
                 id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
    pytest.param(afp, "PodTopologySpread", unrelated, False,
                 id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
    pytest.param(plain, "fakePlugin", unrelated, False,
                 id="Pod rejected by other plugins isn't requeued with any Pod's update"),
])
def test_assigned_pod_added(sort_key, unsched_pod, plugin, assigned, want):
    """TestPriorityQueue_AssignedPodAdded_."""
    hints = hint_map((EVENT_ASSIGNED_POD_ADD, [Q("fakePlugin"), Q("InterPodAffinity"), Q("PodTopologySpread")]))
    q = _assigned_pod_case(sort_key, hints, unsched_pod, plugin)
    q.assigned_pod_added(assigned)
    assert q.active_q.has(unsched_pod.key) == want


POD_LABEL = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)
rp = queue_pod("rp", "ns1", uid="afp", annotations={"annot2": "val2"}, requests={"cpu": "1"})


@pytest.mark.parametrize("unsched_pod, plugin, event, assigned, want", [
    pytest.param(afp, "InterPodAffinity", POD_LABEL, matching, True,
                 id="Pod rejected by pod affinity is requeued with matching Pod's update"),
    pytest.param(afp, "InterPodAffinity", POD_LABEL, unrelated, False,
                 id="Pod rejected by pod affinity isn't requeued with unrelated Pod's update"),
    pytest.param(tsp, "PodTopologySpread", POD_LABEL, matching, True,
                 id="Pod rejected by pod topology spread is requeued with Pod's update in the same namespace"),
    pytest.param(afp, "PodTopologySpread", POD_LABEL, unrelated, False,
                 id="Pod rejected by pod topology spread isn't requeued with unrelated Pod's update"),
    pytest.param(rp, "NodeResourcesFit", ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown),
                 queue_pod("lbp", "ns2", node="node1"), True,
                 id="Pod rejected by resource fit is requeued with assigned Pod's scale down"),
    pytest.param(plain, "fakePlugin", POD_LABEL, unrelated, False,
                 id="Pod rejected by other plugins isn't requeued with any Pod's update"),
])
def test_assigned_pod_updated(sort_key, unsched_pod, plugin, event, assigned, want):
    """TestPriorityQueue_AssignedPodUpdated."""
    hints = hint_map((POD_LABEL, [Q("fakePlugin"), Q("InterPodAffinity"), Q("PodTopologySpread")]),
                     (ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown), [Q("NodeResourcesFit")]))
    q = _assigned_pod_case(sort_key, hints, unsched_pod, plugin)
    q.assigned_pod_updated(None, assigned, event)
    assert q.active_q.has(unsched_pod.key) == want


def test_assigned_pod_added_namespace_selector():
    """A term with a namespaceSelector matches via the namespace labels the caller supplies."""
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone",
         "namespaceSelector": {"matchLabels": {"team": "a"}}}]}}
    pod = queue_pod("web", "ns1", affinity=affinity)
    hints = hint_map((EVENT_ASSIGNED_POD_ADD, [Q("InterPodAffinity")]))
    ns_labels = {"team-a-ns": {"team": "a"}, "other": {}}
    q, clock, _ = new_queue(hints=hints, namespace_labels=ns_labels.get)
    q.add(pod)
    pop_pod(q, pod)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(pod, "InterPodAffinity"), q.scheduling_cycle)
    clock.advance(2)
    q.assigned_pod_added(queue_pod("db", "other", labels={"app": "db"}, node="n"))
    assert not q.active_q.has(pod.key)
    q.assigned_pod_added(queue_pod("db", "team-a-ns", labels={"app": "db"}, node="n"))
    assert q.active_q.has(pod.key)


# --------------------------------------------------------------------------- preCheck

_p_pods = [queue_pod(f"p{i}", priority=i) for i in range(5)]


def _panic(pod):
    raise AssertionError("preCheck shouldn't be called")


@pytest.mark.parametrize("event, pre_check, want", [
    pytest.param(UNSCHEDULABLE_TIMEOUT, None, {"p0", "p1", "p2", "p3", "p4"}, id="nil PreEnqueueCheck"),
    pytest.param(UNSCHEDULABLE_TIMEOUT, lambda p: p.effective_priority >= 2, {"p2", "p3", "p4"},
                 id="move Pods with priority greater than 2"),
    pytest.param(UNSCHEDULABLE_TIMEOUT, lambda p: p.effective_priority % 2 == 0 and p.effective_priority >= 2,
                 {"p2", "p4"}, id="move Pods with even priority and greater than 2"),
    pytest.param(UNSCHEDULABLE_TIMEOUT, lambda p: p.effective_priority % 2 == 0 and p.effective_priority < 0,
                 set(), id="move Pods with even and negative priority"),
    pytest.param(PV_ADD, _panic, set(), id="preCheck isn't called if the event is not interested by any plugins"),
])
def test_move_all_pre_enqueue_checks(sort_key, event, pre_check, want):
    """TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks."""
    from kschedfw.clock import SimulatedClock
    q, clock, _ = new_queue(sort_key=sort_key, clock=SimulatedClock(1_700_000_000.0))
    for pod in _p_pods:
        q.add(pod)
        pop_pod(q, pod)
        q.add_unschedulable_if_not_present(lookup_info(pod, "plugin"), q.scheduling_cycle)
    q.move_all_to_active_or_backoff_queue(event, None, None, pre_check)
    clock.advance(2 * q.backoff_q.max)
    assert set(names(q.backoff_q.pop_all_backoff_completed())) == want


# --------------------------------------------------------------------------- isPodWorthRequeuing

class _Counter:
    def __init__(self):
        self.count = 0

    def queue(self, pod, old, new):
        self.count += 1
        return QueueingHint.Queue

    def skip(self, pod, old, new):
        self.count += 1
        return QueueingHint.QueueSkip

    def err(self, pod, old, new):
        self.count += 1
        raise RuntimeError("unexpected error")


_w = queue_pod("pod1", "ns1", uid="1")
NODE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)
NODE_UPDATE = ClusterEvent(EventResource.Node, ActionType.Update)


@pytest.mark.parametrize("unsched, pending, event, new_obj, expected, calls, hints", [
    pytest.param({"fooPlugin1"}, set(), NODE_ADD, NODE, QueueingStrategy.QUEUE_SKIP, 0,
                 lambda c: hint_map((EVENT_ASSIGNED_POD_ADD, [("fooPlugin1", c.queue)])),
                 id="return Queue when no queueing hint function is registered for the event"),
    pytest.param({"fooPlugin1"}, set(), NODE_ADD, NODE, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1,
                 lambda c: hint_map((NODE_ADD, [("fooPlugin1", c.err)])),
                 id="Treat the event as Queue when QueueHintFn returns error"),
    pytest.param({"fooPlugin1"}, set(), UNSCHEDULABLE_TIMEOUT, None, QueueingStrategy.QUEUE_AFTER_BACKOFF, 0,
                 lambda c: [], id="return Queue when the event is wildcard"),
    pytest.param({"fooPlugin1"}, set(), FORCE_ACTIVATE, queue_pod("pod1", "ns1", uid="1"),
                 QueueingStrategy.QUEUE_AFTER_BACKOFF, 0, lambda c: [],
                 id="return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now"),
    pytest.param({"fooPlugin1"}, set(), FORCE_ACTIVATE, queue_pod("pod-different", "ns2", uid="2"),
                 QueueingStrategy.QUEUE_SKIP, 0, lambda c: [],
                 id="return Skip when the event is wildcard, but the wildcard targets a different pod"),
    pytest.param({"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}, NODE_ADD, NODE,
                 QueueingStrategy.QUEUE_IMMEDIATELY, 2,
                 lambda c: hint_map((NODE_ADD, [("fooPlugin1", c.queue), ("fooPlugin2", c.queue),
                                                ("fooPlugin3", c.queue), ("fooPlugin4", c.err)])),
                 id="interprets Queue from the Pending plugin as queueImmediately"),
    pytest.param({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, NODE, QueueingStrategy.QUEUE_AFTER_BACKOFF, 2,
                 lambda c: hint_map((NODE_ADD, [("fooPlugin1", c.skip), ("fooPlugin2", c.queue)])),
                 id="interprets Queue from the Unschedulable plugin as queueAfterBackoff"),
    pytest.param({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, NODE, QueueingStrategy.QUEUE_SKIP, 2,
                 lambda c: hint_map((NODE_ADD, [("fooPlugin1", c.skip), ("fooPlugin2", c.skip),
                                                ("fooPlugin3", c.queue)])),
                 id="Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored"),
    pytest.param({"fooPlugin1", "fooPlugin2"}, set(), NODE_LABEL, NODE, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1,
                 lambda c: hint_map((NODE_LABEL, [("fooPlugin1", c.queue), ("fooPlugin2", c.queue)]),
                                    (NODE_UPDATE, [("fooPlugin1", c.queue)]),
                                    (NODE_ADD, [("fooPlugin1", c.queue)])),
                 id="If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel is also executed"),
    pytest.param({"fooPlugin1"}, set(), NODE_ADD, NODE, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1,
                 lambda c: hint_map((ClusterEvent(EventResource.Wildcard, ActionType.Add), [("fooPlugin1", c.queue)])),
                 id="If event with '*' Resource, queueing hint function for specified Resource is also executed"),
    pytest.param({"fooPlugin1"}, set(), ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint),
                 NODE, QueueingStrategy.QUEUE_AFTER_BACKOFF, 1,
                 lambda c: hint_map((WILDCARD_EVENT, [("fooPlugin1", c.queue)])),
                 id="If event is a wildcard one, queueing hint function for all kinds of events is executed"),
])
def test_is_pod_worth_requeuing(unsched, pending, event, new_obj, expected, calls, hints):
    """Test_isPodWorthRequeuing (also counts the hint calls)."""
    counter = _Counter()
    q, _, _ = new_queue(hints=hints(counter))
    qpi = QueuedPodInfo(pod=_w, unschedulable_plugins=set(unsched), pending_plugins=set(pending))
    assert q.is_pod_worth_requeuing(qpi, event, None, new_obj) is expected
    assert counter.count == calls


def test_hint_error_is_logged(caplog):
    counter = _Counter()
    q, _, _ = new_queue(hints=hint_map((NODE_ADD, [("fooPlugin1", counter.err)])))
    qpi = QueuedPodInfo(pod=_w, unschedulable_plugins={"fooPlugin1"})
    with caplog.at_level(logging.ERROR, logger="kschedfw.queue"):
        assert q.is_pod_worth_requeuing(qpi, NODE_ADD, None, NODE) is QueueingStrategy.QUEUE_AFTER_BACKOFF
    assert any("fooPlugin1" in r.getMessage() and r.exc_info for r in caplog.records)


def test_hint_none_means_always_queue():
    q, _, _ = new_queue(hints=[(NODE_ADD, "P", None)])
    qpi = QueuedPodInfo(pod=_w, unschedulable_plugins={"P"})
    assert q.is_pod_worth_requeuing(qpi, NODE_ADD, None, NODE) is QueueingStrategy.QUEUE_AFTER_BACKOFF


def test_plugin_without_events_registered_with_unrolled_wildcard():
    """A plugin without EventsToRegister is registered (by the caller) for every event."""
    q, _, _ = new_queue(hints=[(e, "NoEvents", None) for e in UNROLLED_WILDCARD_EVENTS])
    qpi = QueuedPodInfo(pod=_w, unschedulable_plugins={"NoEvents"})
    assert q.is_pod_worth_requeuing(qpi, NODE_ADD, None, NODE) is QueueingStrategy.QUEUE_AFTER_BACKOFF
    assert q.is_pod_worth_requeuing(qpi, EVENT_ASSIGNED_POD_ADD, None, NODE) is QueueingStrategy.QUEUE_AFTER_BACKOFF


# --------------------------------------------------------------------------- gated pods

def _gates_queue(**kw):
    hints = hint_map((ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated),
                      [("SchedulingGates", scheduling_gates_hint)]),
                     (NODE_ADD, [("NodeThing", queue_hint_return_queue)]))
    return new_queue(hints=hints, pre_enqueue={"SchedulingGates": scheduling_gates}, **kw)


def test_queued_pod_info_gated_set_upon_creation_and_unset_upon_update(sort_key):
    """Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate."""
    q, _, _ = _gates_queue(sort_key=sort_key)
    gated = queue_pod("p", gates=["hello world"])
    q.add(gated)
    qpi = q.unschedulable_pods.get(gated.key)
    assert qpi.gated and qpi.gating_plugin == "SchedulingGates"
    assert qpi.unschedulable_plugins == {"SchedulingGates"}
    assert q.pending_pods()[GATED] == 1 and q.pending_pods()[UNSCHEDULABLE_Q] == 0
    ungated = queue_pod("p")
    q.update(gated, ungated)
    popped = q.pop()
    assert popped.pod == ungated and not popped.gated and popped.gating_plugin == ""


def test_gated_pod_ignores_events_of_other_plugins():
    q, clock, _ = _gates_queue()
    gated = queue_pod("p", gates=["g"])
    q.add(gated)
    clock.advance(3600)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    q.flush_unschedulable_pods_leftover()
    q.flush_backoff_q_completed()
    assert q.pending_pods() == {ACTIVE_Q: 0, BACKOFF_Q: 0, UNSCHEDULABLE_Q: 0, GATED: 1}
    assert q.next_wakeup() is None


def test_released_gated_pod_skips_backoff():
    """A gated pod was never tried: when its gates go it enters activeQ at once."""
    q, _, fw = _gates_queue()
    gated = queue_pod("p", gates=["g"])
    q.add(gated)
    q.update(gated, queue_pod("p"))
    assert q.pending_pods()[ACTIVE_Q] == 1
    assert q.pop().attempts == 1


def test_gated_pod_is_not_nominated():
    """Upstream only nominates a pod when it enters activeQ."""
    q, _, _ = _gates_queue()
    gated = queue_pod("p", gates=["g"], nominated="node1")
    q.add(gated)
    assert q.nominator.nominated_pods_for_node("node1") == []
    ungated = queue_pod("p", nominated="node1")
    q.update(gated, ungated)
    assert q.nominator.nominated_pods_for_node("node1") == [ungated]


def test_pre_enqueue_error_gates_and_logs(caplog):
    def broken(pod):
        return Status.as_status("boom")
    q, _, _ = new_queue(pre_enqueue={"Broken": broken})
    with caplog.at_level(logging.ERROR, logger="kschedfw.queue"):
        q.add(queue_pod("p"))
    assert q.pending_pods()[GATED] == 1
    assert q.unschedulable_pods.get("default/p").gating_plugin == "Broken"
    assert any("Broken" in r.getMessage() for r in caplog.records)


def test_gating_plugin_runs_first():
    calls = []

    def first(pod):
        calls.append("First")
        return None

    def second(pod):
        calls.append("Second")
        return Status(Code.UnschedulableAndUnresolvable)
    hints = hint_map((NODE_ADD, [Q("Second")]))
    q, _, fw = new_queue(pre_enqueue={"First": first, "Second": second}, hints=hints)
    q.add(queue_pod("p"))
    assert calls == ["First", "Second"]
    calls.clear()
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert calls == ["Second"]  # the gating plugin first, and it still gates


def test_framework_without_gating_plugin_parameter():
    class Minimal:
        profile_name = "default-scheduler"

        def __init__(self):
            self.gate = True

        def run_pre_enqueue_plugins(self, pod):
            return Status(Code.UnschedulableAndUnresolvable, plugin="Gate") if self.gate else None

        def queueing_hints(self):
            return [(NODE_ADD, "Gate", None)]

        def pre_enqueue_plugin_names(self):
            return frozenset({"Gate"})
    fw = Minimal()
    q, _, _ = new_queue(frameworks={"default-scheduler": fw})
    q.add(queue_pod("p"))
    assert q.pending_pods()[GATED] == 1
    fw.gate = False
    q.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert q.pending_pods()[ACTIVE_Q] == 1


def test_gated_pod_moves_when_gating_plugin_registered_wildcard():
    """TestUnschedulablePodsMetric relies on this: a plugin registered for a wildcard event
    (here UnschedulableTimeout) hears every event, so its gated pods are reconsidered."""
    plugin = AllowlistPlugin([], "P")
    q, clock, _ = new_queue(pre_enqueue={"P": plugin}, hints=hint_map((UNSCHEDULABLE_TIMEOUT, [Q("P")])))
    pod = queue_pod("p", labels={"ok": ""})
    q.add(pod)
    clock.advance(301)
    assert q.next_unschedulable_flush() is not None
    plugin.allowlists = ["ok"]
    q.flush_unschedulable_pods_leftover()
    assert q.pending_pods()[ACTIVE_Q] == 1


# --------------------------------------------------------------------------- matching & pod update events

NODE_TAINT = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)


@pytest.mark.parametrize("registered, incoming, want", [
    pytest.param(NODE_ADD, NODE_ADD, True, id="same event"),
    pytest.param(NODE_UPDATE, NODE_LABEL, True, id="specific incoming update matches a general registration"),
    pytest.param(NODE_LABEL, NODE_UPDATE, False, id="general incoming update does not match a specific registration"),
    pytest.param(NODE_LABEL, NODE_TAINT, False, id="different node updates"),
    pytest.param(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel), NODE_ADD, True,
                 id="registered action set contains the incoming one"),
    pytest.param(ClusterEvent(EventResource.Pod, ActionType.Add), EVENT_ASSIGNED_POD_ADD, True,
                 id="Pod matches AssignedPod"),
    pytest.param(ClusterEvent(EventResource.Pod, ActionType.Update), EVENT_UNSCHEDULED_POD_UPDATE, True,
                 id="Pod matches UnschedulablePod"),
    pytest.param(EVENT_ASSIGNED_POD_ADD, ClusterEvent(EventResource.Pod, ActionType.Add), False,
                 id="AssignedPod does not match Pod"),
    pytest.param(ClusterEvent(EventResource.Wildcard, ActionType.Add), NODE_ADD, True, id="star resource"),
    pytest.param(ClusterEvent(EventResource.Wildcard, ActionType.Add), NODE_LABEL, False,
                 id="star resource, other action"),
    pytest.param(WILDCARD_EVENT, NODE_LABEL, True, id="wildcard registration matches everything"),
    pytest.param(NODE_ADD, UNSCHEDULABLE_TIMEOUT, False, id="incoming wildcard only matches a star registration"),
    pytest.param(UNSCHEDULABLE_TIMEOUT, NODE_ADD, True, id="labelled wildcard registration is a wildcard"),
    pytest.param(ClusterEvent("scheduling.k8s.io/PodGroup", ActionType.Add),
                 ClusterEvent(EventResource.PodGroup, ActionType.Add), True, id="custom resource by string"),
])
def test_match_cluster_events(registered, incoming, want):
    """framework.MatchClusterEvents."""
    assert match_cluster_events(registered, incoming) is want


def _ev(resource, *actions):
    return [ClusterEvent(resource, a) for a in actions]


_base = queue_pod("p", labels={"a": "1"}, requests={"cpu": "1", "memory": "1Gi"}, gates=["g"])
U = EventResource.UnschedulablePod


@pytest.mark.parametrize("new, old, want", [
    pytest.param(queue_pod("p", labels={"a": "2"}, requests={"cpu": "1", "memory": "1Gi"}, gates=["g"]), _base,
                 _ev(U, ActionType.UpdatePodLabel), id="label changed"),
    pytest.param(queue_pod("p", labels={"a": "1"}, requests={"cpu": "500m", "memory": "1Gi"}, gates=["g"]), _base,
                 _ev(U, ActionType.UpdatePodScaleDown), id="cpu scaled down"),
    pytest.param(queue_pod("p", labels={"a": "1"}, requests={"cpu": "1"}, gates=["g"]), _base,
                 _ev(U, ActionType.UpdatePodScaleDown), id="request removed"),
    pytest.param(queue_pod("p", labels={"a": "1"}, requests={"cpu": "2", "memory": "1Gi"}, gates=["g"]), _base,
                 _ev(U, ActionType.UpdatePodOther), id="scale up is a plain update"),
    pytest.param(queue_pod("p", labels={"a": "1"}, requests={"cpu": "1", "memory": "1Gi"}), _base,
                 _ev(U, ActionType.UpdatePodSchedulingGatesEliminated), id="gates eliminated"),
    pytest.param(queue_pod("p", labels={"a": "1"}, requests={"cpu": "1", "memory": "1Gi"}, gates=["g"],
                          tolerations=[{"key": "k", "operator": "Exists"}]), _base,
                 _ev(U, ActionType.UpdatePodToleration), id="toleration added"),
    pytest.param(queue_pod("p", labels={"b": "1"}, requests={"cpu": "1", "memory": "1Gi"}), _base,
                 _ev(U, ActionType.UpdatePodLabel, ActionType.UpdatePodSchedulingGatesEliminated),
                 id="several changes"),
    pytest.param(queue_pod("p", labels={"a": "1"}, annotations={"x": "y"}, requests={"cpu": "1", "memory": "1Gi"},
                          gates=["g"]), _base, _ev(U, ActionType.UpdatePodOther), id="nothing relevant"),
    pytest.param(queue_pod("q", labels={"a": "2"}, node="n1"), queue_pod("q", labels={"a": "1"}, node="n1"),
                 _ev(EventResource.AssignedPod, ActionType.UpdatePodLabel), id="assigned pod"),
])
def test_pod_scheduling_properties_change(new, old, want):
    """framework.PodSchedulingPropertiesChange."""
    assert pod_scheduling_properties_change(new, old) == want


def test_update_in_pool_runs_each_update_event():
    """Update of a pooled pod: each of the update's own events goes through the hints."""
    seen = []

    def record(pod, old, new):
        seen.append("label")
        return QueueingHint.QueueSkip
    hints = hint_map((ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel), [("A", record)]),
                     (ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration), [Q("B")]))
    q, clock, _ = new_queue(hints=hints)
    pod = queue_pod("p", labels={"x": "1"})
    q.add(pod)
    qpi = q.pop()
    qpi.unschedulable_plugins = {"A", "B"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    clock.advance(30)
    new = queue_pod("p", labels={"x": "2"}, tolerations=[{"key": "k", "operator": "Exists"}])
    q.update(pod, new)
    assert seen == ["label"]
    assert q.active_q.get(pod.key).pod == new


def test_gated_pod_skips_hints_of_its_other_rejectors():
    """A gated pod is only reconsidered for its gating plugin's events, even when another of
    its rejector plugins registered the incoming event."""
    calls = []

    def other_hint(pod, old, new):
        calls.append(pod.name)
        return QueueingHint.Queue
    gate = AllowlistPlugin(["ok"], "Gate")
    hints = hint_map((NODE_ADD, [("Other", other_hint)]),
                     (EVENT_UNSCHEDULED_POD_UPDATE, [Q("Gate")]))
    q, clock, fw = new_queue(hints=hints, pre_enqueue={"Gate": gate})
    pod = queue_pod("p", labels={"ok": ""})
    q.add(pod)
    qpi = q.pop()
    qpi.unschedulable_plugins = {"Other"}
    gate.allowlists = []
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)  # pool: rejected by Other
    clock.advance(20)
    q.move_all_to_active_or_backoff_queue(NODE_ADD)               # Other says Queue; Gate gates it
    assert calls == ["p"]
    assert qpi.gating_plugin == "Gate" and qpi.unschedulable_plugins == {"Other", "Gate"}
    calls.clear()
    before = fw.pre_enqueue_calls
    q.move_all_to_active_or_backoff_queue(NODE_ADD)               # Gate cares nothing for NodeAdd
    clock.advance(1000)
    q.flush_unschedulable_pods_leftover()                          # nor for the timeout
    assert calls == [] and fw.pre_enqueue_calls == before
    assert q.pending_pods()[GATED] == 1


def test_update_in_pool_stops_at_the_first_event_that_moves_the_pod():
    later = []

    def record(pod, old, new):
        later.append(pod.name)
        return QueueingHint.Queue
    hints = hint_map((ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel), [Q("A")]),
                     (ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration), [("B", record)]))
    q, clock, _ = new_queue(hints=hints)
    pod = queue_pod("p", labels={"x": "1"})
    q.add(pod)
    qpi = q.pop()
    qpi.unschedulable_plugins = {"A", "B"}
    q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    clock.advance(30)
    q.update(pod, queue_pod("p", labels={"x": "2"}, tolerations=[{"key": "k", "operator": "Exists"}]))
    assert later == [] and q.pending_pods()[ACTIVE_Q] == 1
