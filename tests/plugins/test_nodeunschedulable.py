"""Port of upstream nodeunschedulable/node_unschedulable_test.go."""

import pytest

from kschedfw.api import Taint
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from kschedfw.testing import make_node, make_pod

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


def toleration(key):
    # st.MakePod().Toleration(key): operator Exists, any effect.
    return {"key": key, "operator": "Exists"}


@pytest.mark.parametrize("p,n,want", [
    pytest.param(make_pod("p"), make_node("n", unschedulable=True),
                 (Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE),
                 id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"),
    pytest.param(make_pod("p"), make_node("n"), None, id="Schedule pod to normal node"),
    pytest.param(make_pod("p", tolerations=[{"key": UNSCHEDULABLE_KEY, "effect": "NoSchedule"}]),
                 make_node("n", unschedulable=True), None,
                 id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)"),
])
def test_node_unschedulable(p, n, want):
    got = NodeUnschedulable({}, None).filter(None, p, NodeInfo(node=n))
    if want is None:
        assert got is None
    else:
        assert (got.code, got.message()) == want


def test_toleration_with_exists_operator():
    p = make_pod("p", tolerations=[toleration(UNSCHEDULABLE_KEY)])
    assert NodeUnschedulable({}, None).filter(None, p, NodeInfo(node=make_node("n", unschedulable=True))) is None


NOT_READY = Taint(key="node.kubernetes.io/not-ready", value="", effect="NoExecute")


@pytest.mark.parametrize("old,new,expected", [
    pytest.param(None, "not-a-node", TypeError, id="error-wrong-new-object"),
    pytest.param("not-a-node", make_node("n", unschedulable=True), TypeError, id="error-wrong-old-object"),
    pytest.param(None, make_node("n", unschedulable=True), QueueingHint.QueueSkip,
                 id="skip-queue-on-unschedulable-node-added"),
    pytest.param(None, make_node("n"), QueueingHint.Queue, id="queue-on-schedulable-node-added"),
    pytest.param(make_node("n", unschedulable=True), make_node("n", unschedulable=True), QueueingHint.QueueSkip,
                 id="skip-unrelated-change-unschedulable-true"),
    pytest.param(make_node("n"), make_node("n"), QueueingHint.QueueSkip,
                 id="skip-unrelated-change-unschedulable-false"),
    pytest.param(make_node("n", unschedulable=True), make_node("n"), QueueingHint.Queue,
                 id="queue-on-unschedulable-field-change"),
])
def test_is_schedulable_after_node_change(old, new, expected):
    pl = NodeUnschedulable({}, None)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_node_change(make_pod("p"), old, new)
        return
    assert pl.is_schedulable_after_node_change(make_pod("p"), old, new) is expected


@pytest.mark.parametrize("p,old,new,expected", [
    pytest.param(make_pod("p"), None, "not-a-pod", TypeError, id="error-wrong-new-object"),
    pytest.param(make_pod("p"), "not-a-pod", make_pod("p"), TypeError, id="error-wrong-old-object"),
    pytest.param(make_pod("p", uid="uid"), make_pod("p", uid="different-uid"),
                 make_pod("p", uid="different-uid", tolerations=[toleration(UNSCHEDULABLE_KEY)]),
                 QueueingHint.QueueSkip, id="skip-different-pod-update"),
    pytest.param(make_pod("p", uid="uid"), make_pod("p", uid="uid"),
                 make_pod("p", uid="uid", tolerations=[toleration(UNSCHEDULABLE_KEY)]),
                 QueueingHint.Queue, id="queue-when-the-unsched-pod-gets-toleration"),
    pytest.param(make_pod("p", uid="uid"), make_pod("p", uid="uid"),
                 make_pod("p", uid="uid", tolerations=[toleration("unrelated-key")]),
                 QueueingHint.QueueSkip, id="skip-when-the-unsched-pod-gets-unrelated-toleration"),
])
def test_is_schedulable_after_pod_toleration_change(p, old, new, expected):
    pl = NodeUnschedulable({}, None)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_pod_toleration_change(p, old, new)
        return
    assert pl.is_schedulable_after_pod_toleration_change(p, old, new) is expected


def test_events_to_register():
    events = NodeUnschedulable({}, None).events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)


def test_message_text():
    assert ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"
