"""PodTopologySpread events, queueing hints (upstream plugin_test.go: Test_isSchedulableAfterNodeChange,
Test_isSchedulableAfterPodChange), default selectors (helper.DefaultSelector) and fast paths."""

from __future__ import annotations

import pytest

from kschedfw.api import Taint
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import NodeScore

from .podtopologyspread_builders import (BAR, DNS, FOO, HONOR, HOSTNAME, IGNORE,
                                              UNSCHEDULABLE_TAINT_KEY, ZONE, st_node, make_plugin,
                                              st_pod, new_cycle_state, spread)

from kschedfw.plugins.podtopologyspread import PodTopologySpread
from kschedfw.plugins.podtopologyspread.common import Selector, default_selector

P = st_pod
Q, SKIP = QueueingHint.Queue, QueueingHint.QueueSkip


def N(name, taints=(), **labels):
    return st_node(name, labels, taints)


def T(key):
    return (Taint(key, "bbb", "NoSchedule"),)


ZONE_C = [spread(1, "zone", DNS, FOO)]
ZONE_NODE_C = [spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]


# =========================================================================== events

def test_events_to_register():
    plugin, _ = make_plugin([])
    events = plugin.events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel
                     | ActionType.UpdatePodToleration | ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel
                     | ActionType.UpdateNodeTaint),
    ]
    assert events[0].queueing_hint_fn == plugin.is_schedulable_after_pod_change
    assert events[1].queueing_hint_fn == plugin.is_schedulable_after_node_change


# =========================================================================== node hints

@pytest.mark.parametrize("pod,old,new,want", [
    pytest.param(P(constraints=ZONE_C), N("node-a", zone="zone1"), N("node-a", zone="zone2"), Q,
                 id="node updates label which matches topologyKey"),
    pytest.param(P(constraints=ZONE_C), N("node-a", foo="bar1"), N("node-a", foo="bar2"), SKIP,
                 id="node that doesn't match topologySpreadConstraints updates non-related label"),
    pytest.param(P(constraints=ZONE_NODE_C), N("node-a", zone="zone1", node="node1", foo="bar"),
                 N("node-a", zone="zone1", node="node1"), SKIP,
                 id="node that match topologySpreadConstraints adds non-related label"),
    pytest.param(P(constraints=ZONE_C), None, N("node-a", foo="bar"), SKIP,
                 id="create node with non-related labels"),
    pytest.param(P(constraints=ZONE_C), None, N("node-a", zone="zone1"), Q, id="create node with related labels"),
    pytest.param(P(constraints=ZONE_C), N("node-a", foo="bar"), None, SKIP,
                 id="delete node with non-related labels"),
    pytest.param(P(constraints=ZONE_C), N("node-a", zone="zone1"), None, Q, id="delete node with related labels"),
    pytest.param(P(constraints=ZONE_NODE_C), None, N("node-a", zone="zone1"), SKIP,
                 id="add node with related labels that only match one of topologySpreadConstraints"),
    pytest.param(P(constraints=ZONE_NODE_C), None, N("node-a", zone="zone1", node="node1"), Q,
                 id="add node with related labels that match all topologySpreadConstraints"),
    pytest.param(P(constraints=ZONE_NODE_C), N("node-a", zone="zone1"), N("node-a", zone="zone1"), SKIP,
                 id="update node with related labels that only match one of topologySpreadConstraints"),
    pytest.param(P(constraints=ZONE_NODE_C), N("node-a", zone="zone1", node="node1"),
                 N("node-a", zone="zone1", node="node2"), Q,
                 id="update node with related labels that match all topologySpreadConstraints"),
    pytest.param(P(constraints=ZONE_NODE_C), N("node-a", T("aaa"), zone="zone1", node="node1"),
                 N("node-a", T("ccc"), zone="zone1", node="node1"), Q,
                 id="update node with different taints that match all topologySpreadConstraints"),
    pytest.param(P(constraints=ZONE_NODE_C), N("node-a", T("aaa"), node="node1"),
                 N("node-a", T("ccc"), node="node1"), SKIP,
                 id="update node with different taints that only match one of topologySpreadConstraints"),
])
def test_is_schedulable_after_node_change(pod, old, new, want):
    plugin, _ = make_plugin([])
    assert plugin.is_schedulable_after_node_change(pod, old, new) == want


def test_node_hint_rejects_other_objects():
    plugin, _ = make_plugin([])
    with pytest.raises(TypeError):
        plugin.is_schedulable_after_node_change(P(constraints=ZONE_C), None, P("not-a-node"))


# =========================================================================== pod hints

def _target(*constraints):
    return P("p", uid="p", labels={"foo": ""}, constraints=constraints or ZONE_C)


TWO = (spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR))
TWO_HONOR = (spread(1, "zone", DNS, FOO, None, None, HONOR), spread(1, "node", DNS, BAR))
TWO_IGNORE = (spread(1, "zone", DNS, FOO, None, None, IGNORE), spread(1, "node", DNS, BAR))


@pytest.mark.parametrize("pod,old,new,want,inclusion", [
    pytest.param(_target(), None, P("p2", uid="p2", node="fake-node", labels={"foo": ""}), Q, False,
                 id="add pod with labels match topologySpreadConstraints selector"),
    pytest.param(_target(), None, P("p2", uid="p2", labels={"foo": ""}), SKIP, False,
                 id="add un-scheduled pod"),
    pytest.param(_target(), P("p2", uid="p2", labels={"bar": ""}), P("p2", uid="p2", labels={"foo": ""}), SKIP,
                 False, id="update un-scheduled pod"),
    pytest.param(_target(), P("p2", uid="p2", labels={"foo": ""}), None, SKIP, False,
                 id="delete un-scheduled pod"),
    pytest.param(_target(), None, P("p2", uid="p2", ns="fake-namespace", node="fake-node", labels={"foo": ""}),
                 SKIP, False, id="add pod with different namespace"),
    pytest.param(_target(), None, P("p2", uid="p2", node="fake-node", labels={"bar": ""}), SKIP, False,
                 id="add pod with labels don't match topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node", labels={"foo": ""}), None, Q, False,
                 id="delete pod with labels that match topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", nominated="fake-node", labels={"bar": ""}), None, SKIP, False,
                 id="delete nominated pod with labels that don't match topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", nominated="fake-node", labels={"foo": ""}), None, Q, False,
                 id="delete nominated pod with labels that match topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node", labels={"bar": ""}), None, SKIP, False,
                 id="delete pod with labels that don't match topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": "bar1"}),
                 P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": "bar2"}), SKIP, False,
                 id="update pod's non-related label"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node"),
                 P("p2", uid="p2", node="fake-node", labels={"foo": ""}), Q, False,
                 id="add pod's label that matches topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node", labels={"foo": ""}),
                 P("p2", uid="p2", node="fake-node"), Q, False,
                 id="delete pod label that matches topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node", labels={"foo": "foo1"}),
                 P("p2", uid="p2", node="fake-node", labels={"foo": "foo2"}), SKIP, False,
                 id="change pod's label that matches topologySpreadConstraints selector"),
    pytest.param(_target(), P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": "bar1"}),
                 P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": "bar2"}), SKIP, False,
                 id="change pod's label that doesn't match topologySpreadConstraints selector"),
    pytest.param(_target(*TWO), P("p2", uid="p2", node="fake-node", labels={"foo": ""}),
                 P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": "bar2"}), Q, False,
                 id=("add pod's label that matches topologySpreadConstraints selector with multi "
                     "topologySpreadConstraints")),
    pytest.param(_target(*TWO), P("p2", uid="p2", node="fake-node", labels={"foo": ""}),
                 P("p2", uid="p2", node="fake-node", labels={"foo": "", "baz": ""}), SKIP, False,
                 id=("change pod's label that doesn't match topologySpreadConstraints selector with multi "
                     "topologySpreadConstraints")),
    pytest.param(_target(*TWO), P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": ""}),
                 P("p2", uid="p2", node="fake-node", labels={"foo": "", "bar": "bar2"}), SKIP, False,
                 id=("change pod's label that match topologySpreadConstraints selector with multi "
                     "topologySpreadConstraints")),
    pytest.param(_target(*TWO_HONOR), P("p", uid="p", labels={"foo": ""}),
                 P("p", uid="p", labels={"foo": ""}, tolerate=[UNSCHEDULABLE_TAINT_KEY]), Q, True,
                 id=("the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new "
                     "toleration")),
    pytest.param(_target(*TWO_IGNORE), P("p", uid="p", labels={"foo": ""}),
                 P("p", uid="p", labels={"foo": ""}, tolerate=[UNSCHEDULABLE_TAINT_KEY]), SKIP, False,
                 id=("the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a "
                     "new toleration")),
    pytest.param(_target(*TWO_IGNORE), P("p", uid="p"), P("p", uid="p", labels={"foo": ""}), Q, False,
                 id=("the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector "
                     "of the constraint")),
    pytest.param(_target(*TWO_IGNORE), P("p", uid="p"), P("p", uid="p", labels={"unrelated": ""}), SKIP, False,
                 id="the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label"),
])
def test_is_schedulable_after_pod_change(pod, old, new, want, inclusion):
    plugin, _ = make_plugin([], inclusion=inclusion)
    assert plugin.is_schedulable_after_pod_change(pod, old, new) == want


def test_new_toleration_queues_with_node_inclusion_policy_on_by_default():
    """With v1.36 defaults a Honor taints policy makes a new toleration worth a retry."""
    plugin, _ = make_plugin([])
    pod = _target(*TWO_HONOR)
    old = P("p", uid="p", labels={"foo": ""})
    new = P("p", uid="p", labels={"foo": ""}, tolerate=[UNSCHEDULABLE_TAINT_KEY])
    assert PodTopologySpread.enable_node_inclusion_policy is True
    assert plugin.is_schedulable_after_pod_change(pod, old, new) == Q


# =========================================================================== default selector

def _svc(name, selector, ns="default"):
    spec = {} if selector is None else {"selector": selector}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _workload(kind, name, selector, api="apps/v1"):
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": selector}}


@pytest.mark.parametrize("pod,objs,want", [
    pytest.param(P(labels={"foo": "bar"}), [], Selector(), id="nothing selects the pod"),
    pytest.param(P(labels={"foo": "bar", "baz": "x"}),
                 [_svc("s1", {"foo": "bar"}), _svc("s2", {"baz": "x"}), _svc("s3", {"baz": "y"}),
                  _svc("s4", None), _svc("s5", {"foo": "bar", "more": "1"}), _svc("s6", {"baz": "x"}, ns="other")],
                 Selector.from_set({"foo": "bar", "baz": "x"}), id="matching services are merged"),
    pytest.param(P(labels={"foo": "bar"}, owner=("v1", "ReplicationController", "rc")),
                 [_svc("s1", {"foo": "bar"}), _workload("ReplicationController", "rc", {"app": "a"}, api="v1")],
                 Selector.from_set({"foo": "bar", "app": "a"}), id="replication controller"),
    pytest.param(P(labels={"foo": "bar"}, owner=("apps/v1", "ReplicaSet", "rs")),
                 [_svc("s1", {"foo": "bar"}),
                  _workload("ReplicaSet", "rs", {"matchExpressions": [{"key": "tier", "operator": "In",
                                                                        "values": ["web"]}]})],
                 Selector([("foo", "=", ("bar",)), ("tier", "In", ("web",))]), id="replica set"),
    pytest.param(P(labels={"foo": "bar"}, owner=("apps/v1", "StatefulSet", "ss")),
                 [_workload("StatefulSet", "ss", {"matchLabels": {"app": "db"}})],
                 Selector.from_set({"app": "db"}), id="stateful set"),
    pytest.param(P(labels={"foo": "bar"}, owner=("apps/v1beta1", "StatefulSet", "ss")),
                 [_workload("StatefulSet", "ss", {"matchLabels": {"app": "db"}})],
                 Selector(), id="unsupported owner version"),
    pytest.param(P(labels={"foo": "bar"}, owner=("apps/v1", "ReplicaSet", "missing")), [],
                 Selector(), id="owner not found"),
])
def test_default_selector(pod, objs, want):
    plugin, _ = make_plugin([], objs=objs)
    assert default_selector(pod, plugin.handle.lister) == want


# =========================================================================== defaulting and fast paths

def test_system_defaulting_without_owners_skips_everything():
    """With System defaulting and nothing selecting the pod, PreFilter and PreScore Skip."""
    nodes = [N(f"n{i}", **{HOSTNAME: f"n{i}", ZONE: f"z{i % 3}"}) for i in range(10)]
    plugin, snapshot = make_plugin(nodes, [], defaulting="System")
    state = new_cycle_state()
    pod = P(labels={"app": "x"})
    assert plugin.pre_filter(state, pod, snapshot.node_infos()) == (None, Status.skip())
    assert plugin.pre_score(state, pod, snapshot.node_infos()) == Status.skip()


def test_system_defaulting_with_a_service_spreads_softly():
    nodes = [N("a", **{HOSTNAME: "a", ZONE: "z1"}), N("b", **{HOSTNAME: "b", ZONE: "z2"}), N("c", **{HOSTNAME: "c"})]
    existing = [P("e1", node="a", labels={"app": "x"}), P("e2", node="a", labels={"app": "x"})]
    plugin, snapshot = make_plugin(nodes, existing, defaulting="System", objs=[_svc("s", {"app": "x"})])
    state = new_cycle_state()
    pod = P(labels={"app": "x"})
    # The system defaults are all ScheduleAnyway: nothing to filter.
    assert plugin.pre_filter(state, pod, snapshot.node_infos()) == (None, Status.skip())
    assert plugin.pre_score(state, pod, snapshot.node_infos()) is None
    scores = [NodeScore(n.name, plugin.score(state, pod, snapshot.get(n.name))) for n in nodes]
    plugin.normalize_score(state, pod, scores)
    # Raw: a = round(2*ln5 + 2 + 2*ln5 + 4) = 12, b = 2 + 4 = 6, c = 2 (node "c" has no zone
    # label: it only gets hostname spreading, but it is not ignored under System defaulting).
    assert {s.name: s.score for s in scores} == {"a": 16, "b": 66, "c": 100}


def test_list_defaulting_hard_default_constraint_filters():
    nodes = [N("a", rack="r1"), N("b", rack="r2")]
    existing = [P("e1", node="a", labels={"app": "x"})]
    plugin, snapshot = make_plugin(nodes, existing, objs=[_svc("s", {"app": "x"})],
                                   default_constraints=[{"maxSkew": 1, "topologyKey": "rack",
                                                         "whenUnsatisfiable": DNS}])
    state = new_cycle_state()
    pod = P(labels={"app": "x"})
    assert plugin.pre_filter(state, pod, snapshot.node_infos()) == (None, None)
    assert plugin.filter(state, pod, snapshot.get("a")) == Status.unschedulable(
        "node(s) didn't match pod topology spread constraints")
    assert plugin.filter(state, pod, snapshot.get("b")) is None


def test_match_label_keys_on_by_default():
    """MatchLabelKeysInPodTopologySpread is on in v1.36: the pod's value narrows the selector."""
    pod = P(labels={"foo": "", "rev": "2"}, constraints=[spread(1, "node", DNS, FOO, match_label_keys=["rev"])])
    nodes = [N("a", node="a"), N("b", node="b")]
    existing = [P("old1", node="a", labels={"foo": "", "rev": "1"}),
                P("old2", node="a", labels={"foo": "", "rev": "1"})]
    plugin, snapshot = make_plugin(nodes, existing)
    plugin = PodTopologySpread({"defaultingType": "List"}, plugin.handle)
    state = new_cycle_state()
    plugin.pre_filter(state, pod, snapshot.node_infos())
    assert plugin.filter(state, pod, snapshot.get("a")) is None


def test_no_constraints_fast_path_is_fast():
    """SchedulingBasic-like: 5000 nodes, pods without constraints -> Skip at PreFilter and PreScore."""
    nodes = [N(f"n{i}", **{HOSTNAME: f"n{i}", ZONE: f"z{i % 3}"}) for i in range(5000)]
    pods = [P(f"e{i}", node=f"n{i % 5000}", labels={"app": "x"}) for i in range(10000)]
    plugin, snapshot = make_plugin(nodes, pods, defaulting="System")
    infos = snapshot.node_infos()
    pod = P(labels={"app": "x"})
    state = new_cycle_state()
    assert plugin.pre_filter(state, pod, infos)[1] == Status.skip()
    assert plugin.pre_score(state, pod, infos) == Status.skip()


