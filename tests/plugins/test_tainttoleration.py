"""Port of upstream tainttoleration/taint_toleration_test.go (TestTaintTolerationScore,
TestTaintTolerationFilter, TestTaintTolerationFilterWithFeatureGate, TestIsSchedulableAfterNodeChange,
Test_isSchedulableAfterPodTolerationChange)."""

import pytest

from kschedfw.api import Node
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from kschedfw.plugins.tainttoleration import TaintToleration
from kschedfw.testing import make_node, make_pod

UNTOLERATED = (Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")


def tol(key, value="", effect="", operator="Equal"):
    d = {"key": key, "operator": operator, "effect": effect}
    if value:
        d["value"] = value
    return d


def taint(key, value, effect):
    return {"key": key, "value": value, "effect": effect}


PNS, NS = "PreferNoSchedule", "NoSchedule"

SCORE_CASES = [
    pytest.param(
        make_pod("pod1", tolerations=[tol("foo", "bar", PNS)]),
        [make_node("nodeA", taints=[taint("foo", "bar", PNS)]), make_node("nodeB", taints=[taint("foo", "blah", PNS)])],
        [("nodeA", MAX_NODE_SCORE), ("nodeB", 0)],
        id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints"),
    pytest.param(
        make_pod("pod1", tolerations=[tol("cpu-type", "arm64", PNS), tol("disk-type", "ssd", PNS)]),
        [make_node("nodeA"), make_node("nodeB", taints=[taint("cpu-type", "arm64", PNS)]),
         make_node("nodeC", taints=[taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)])],
        [("nodeA", MAX_NODE_SCORE), ("nodeB", MAX_NODE_SCORE), ("nodeC", MAX_NODE_SCORE)],
        id="the nodes that all of their taints are tolerated by the pod, get the same score, "
           "no matter how many tolerable taints a node has"),
    pytest.param(
        make_pod("pod1", tolerations=[tol("foo", "bar", PNS)]),
        [make_node("nodeA"), make_node("nodeB", taints=[taint("cpu-type", "arm64", PNS)]),
         make_node("nodeC", taints=[taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)])],
        [("nodeA", MAX_NODE_SCORE), ("nodeB", 50), ("nodeC", 0)],
        id="the more intolerable taints a node has, the lower score it gets."),
    pytest.param(
        make_pod("pod1", tolerations=[tol("cpu-type", "arm64", NS), tol("disk-type", "ssd", NS)]),
        [make_node("nodeA"), make_node("nodeB", taints=[taint("cpu-type", "arm64", NS)]),
         make_node("nodeC", taints=[taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)])],
        [("nodeA", MAX_NODE_SCORE), ("nodeB", MAX_NODE_SCORE), ("nodeC", 0)],
        id="only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
           "priority function"),
    pytest.param(
        make_pod("pod1"),
        [make_node("nodeA"), make_node("nodeB", taints=[taint("cpu-type", "arm64", PNS)])],
        [("nodeA", MAX_NODE_SCORE), ("nodeB", 0)],
        id="Default behaviour No taints and tolerations, lands on node with no taints"),
    pytest.param(
        make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "950", PNS, "Gt")]),
        [make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "800", PNS)]),
         make_node("nodeB", taints=[taint("node.kubernetes.io/sla", "999", PNS)])],
        [("nodeA", 0), ("nodeB", MAX_NODE_SCORE)],
        id="Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint"),
    pytest.param(
        make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "800", PNS, "Lt")]),
        [make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "950", PNS)]),
         make_node("nodeB", taints=[taint("node.kubernetes.io/sla", "700", PNS)])],
        [("nodeA", 0), ("nodeB", MAX_NODE_SCORE)],
        id="Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint"),
]


@pytest.mark.parametrize("pod,nodes,expected", SCORE_CASES)
def test_taint_toleration_score(pod, nodes, expected):
    snapshot = Snapshot.from_objects(nodes)
    pl = TaintToleration({}, Handle(snapshot=snapshot))
    pl.enable_comparison_operators = True  # upstream runs this table with TaintTolerationComparisonOperators on
    state = CycleState()
    node_infos = snapshot.node_infos()
    assert pl.pre_score(state, pod, node_infos) is None
    scores = []
    for ni in node_infos:
        got = pl.score(state, pod, ni)
        assert isinstance(got, int)
        scores.append(NodeScore(ni.name, got))
    assert pl.normalize_score(state, pod, scores) is None
    assert [(s.name, s.score) for s in scores] == expected


def test_score_without_pre_score_is_an_error():
    pl = TaintToleration({}, None)
    status = pl.score(CycleState(), make_pod("p"), NodeInfo(node=Node(name="n")))
    assert isinstance(status, Status) and status.code is Code.Error
    assert status.message() == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


FILTER_CASES = [
    pytest.param(make_pod("pod1"), make_node("nodeA", taints=[taint("dedicated", "user1", NS)]),
                 UNTOLERATED, True,
                 id="A pod having no tolerations can't be scheduled onto a node with nonempty taints"),
    pytest.param(make_pod("pod1", tolerations=[{"key": "dedicated", "value": "user1", "effect": NS}]),
                 make_node("nodeA", taints=[taint("dedicated", "user1", NS)]), None, True,
                 id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"),
    pytest.param(make_pod("pod1", tolerations=[tol("dedicated", "user2", NS)]),
                 make_node("nodeA", taints=[taint("dedicated", "user1", NS)]), UNTOLERATED, True,
                 id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule"),
    pytest.param(make_pod("pod1", tolerations=[tol("foo", effect=NS, operator="Exists")]),
                 make_node("nodeA", taints=[taint("foo", "bar", NS)]), None, True,
                 id="A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates "
                    "the taints on the node"),
    pytest.param(make_pod("pod1", tolerations=[tol("dedicated", "user2", NS),
                                               tol("foo", effect=NS, operator="Exists")]),
                 make_node("nodeA", taints=[taint("dedicated", "user2", NS), taint("foo", "bar", NS)]), None, True,
                 id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can "
                    "be scheduled onto the node"),
    pytest.param(make_pod("pod1", tolerations=[tol("foo", "bar", PNS)]),
                 make_node("nodeA", taints=[taint("foo", "bar", NS)]), UNTOLERATED, True,
                 id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
                    "effect doesn't match, can't be scheduled onto the node"),
    pytest.param(make_pod("pod1", tolerations=[tol("foo", "bar")]),
                 make_node("nodeA", taints=[taint("foo", "bar", NS)]), None, True,
                 id="The pod has a toleration that keys and values match the taint on the node, the effect of "
                    "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node"),
    pytest.param(make_pod("pod1", tolerations=[tol("dedicated", "user2", NS)]),
                 make_node("nodeA", taints=[taint("dedicated", "user1", PNS)]), None, True,
                 id="The pod has a toleration that key and value don't match the taint on the node, but the effect "
                    "of taint on node is PreferNoSchedule. Pod can be scheduled onto the node"),
    pytest.param(make_pod("pod1"),
                 make_node("nodeA", taints=[taint("dedicated", "user1", PNS)]), None, True,
                 id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
                    "scheduled onto the node"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.example.com/priority-level", "950", NS, "Gt")]),
                 make_node("nodeA", taints=[taint("node.example.com/priority-level", "800", NS)]), UNTOLERATED, True,
                 id="Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "750", NS, "Gt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "950", NS)]), None, True,
                 id="Pod with Gt toleration can be scheduled on node when taint value is higher than threshold"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.example.com/priority-level", "800", NS, "Lt")]),
                 make_node("nodeA", taints=[taint("node.example.com/priority-level", "950", NS)]), UNTOLERATED, True,
                 id="Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "950", NS, "Lt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "800", NS)]), None, True,
                 id="Pod with Lt toleration can be scheduled on node when taint value is lower than threshold"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "950", NS, "Gt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "high", NS)]), UNTOLERATED, True,
                 id="Pod with Gt toleration cannot be scheduled on node with non-numeric taint value"),
]

MIXED = [tol("dedicated", "user1", NS), tol("node.kubernetes.io/sla", "750", NS, "Gt")]

FEATURE_GATE_CASES = [
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "750", NS, "Gt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "950", NS)]), None, True,
                 id="Pod with Gt toleration can be scheduled when feature gate is enabled and taint value is higher"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "750", NS, "Gt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "950", NS)]), UNTOLERATED, False,
                 id="Pod with Gt toleration cannot be scheduled when feature gate is disabled"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "950", NS, "Lt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "800", NS)]), None, True,
                 id="Pod with Lt toleration can be scheduled when feature gate is enabled and taint value is lower"),
    pytest.param(make_pod("pod1", tolerations=[tol("node.kubernetes.io/sla", "950", NS, "Lt")]),
                 make_node("nodeA", taints=[taint("node.kubernetes.io/sla", "800", NS)]), UNTOLERATED, False,
                 id="Pod with Lt toleration cannot be scheduled when feature gate is disabled"),
    pytest.param(make_pod("pod1", tolerations=MIXED),
                 make_node("nodeA", taints=[taint("dedicated", "user1", NS)]), None, False,
                 id="Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored"),
    pytest.param(make_pod("pod1", tolerations=MIXED),
                 make_node("nodeA", taints=[taint("dedicated", "user1", NS),
                                            taint("node.kubernetes.io/sla", "950", NS)]),
                 UNTOLERATED, False,
                 id="Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled"),
]


@pytest.mark.parametrize("pod,node,want,comparison_ops", FILTER_CASES + FEATURE_GATE_CASES)
def test_taint_toleration_filter(pod, node, want, comparison_ops):
    pl = TaintToleration({}, None)
    pl.enable_comparison_operators = comparison_ops
    got = pl.filter(None, pod, NodeInfo(node=node))
    assert (None if got is None else (got.code, got.message())) == want


_POD = make_pod("pod1", tolerations=[tol("dedicated", "user2", NS)])


@pytest.mark.parametrize("pod,old,new,expected", [
    pytest.param(_POD, None, "not-a-node", TypeError, id="backoff-wrong-new-object"),
    pytest.param(_POD, "not-a-node", make_node("nodeA", taints=[taint("dedicated", "user1", NS)]), TypeError,
                 id="backoff-wrong-old-object"),
    pytest.param(_POD, None, make_node("nodeA", taints=[taint("dedicated", "user1", NS)]), QueueingHint.QueueSkip,
                 id="skip-queue-on-untoleratedtaint-node-added"),
    pytest.param(_POD, None, make_node("nodeA", taints=[taint("dedicated", "user2", NS)]), QueueingHint.Queue,
                 id="queue-on-toleratedtaint-node-added"),
    pytest.param(_POD, make_node("nodeA", taints=[taint("dedicated", "user1", NS)]),
                 make_node("nodeA", taints=[taint("dedicated", "user1", NS), taint("dedicated", "user3", NS)]),
                 QueueingHint.QueueSkip, id="skip-unrelated-change"),
    pytest.param(_POD, make_node("nodeA", taints=[taint("dedicated", "user1", NS)]),
                 make_node("nodeA", taints=[taint("dedicated", "user2", NS)]), QueueingHint.Queue,
                 id="queue-on-taint-change"),
])
def test_is_schedulable_after_node_change(pod, old, new, expected):
    pl = TaintToleration({}, None)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_node_change(pod, old, new)
        return
    assert pl.is_schedulable_after_node_change(pod, old, new) is expected


_FOO = [{"key": "foo", "effect": NS, "operator": "Exists"}]


@pytest.mark.parametrize("pod,old,new,expected", [
    pytest.param(make_pod("p"), None, "not-a-pod", TypeError, id="backoff-wrong-new-object"),
    pytest.param(make_pod("p"), "not-a-pod", make_pod("p"), TypeError,
                 id="backoff-wrong-old-object"),
    pytest.param(make_pod("pod-1", uid="uid0", namespace="ns-1"),
                 make_pod("pod-2", uid="uid1", namespace="ns-1"),
                 make_pod("pod-2", tolerations=_FOO, uid="uid1", namespace="ns-1"),
                 QueueingHint.QueueSkip, id="skip-updates-other-pod"),
    pytest.param(make_pod("pod-1", namespace="ns-1"),
                 make_pod("pod-1", namespace="ns-1"),
                 make_pod("pod-1", tolerations=_FOO, namespace="ns-1"),
                 QueueingHint.Queue, id="queue-on-toleration-added"),
])
def test_is_schedulable_after_pod_toleration_change(pod, old, new, expected):
    pl = TaintToleration({}, None)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_pod_toleration_change(pod, old, new)
        return
    assert pl.is_schedulable_after_pod_toleration_change(pod, old, new) is expected


def test_events_to_register():
    events = TaintToleration({}, None).events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)
