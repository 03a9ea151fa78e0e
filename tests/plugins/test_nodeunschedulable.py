"""Port of upstream nodeunschedulable/node_unschedulable_test.go."""

import pytest

from kschedfw.api import Taint
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from kschedfw.testing import make_node, make_pod

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"


def pod(uid=None, tolerations=()):
    return make_pod("p", uid=uid, tolerations=tolerations)


def toleration(key):
    # st.MakePod().Toleration(key): operator Exists, any effect.
    return {"key": key, "operator": "Exists"}


def node(unschedulable=False, taints=()):
    return make_node("n", unschedulable=unschedulable, taints=[t.to_dict() for t in taints])


@pytest.mark.parametrize("p,n,want", [
    pytest.param(pod(), node(True), (Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE),
                 id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)"),
    pytest.param(pod(), node(False), None, id="Schedule pod to normal node"),
    pytest.param(pod(tolerations=[{"key": UNSCHEDULABLE_KEY, "effect": "NoSchedule"}]),
                 node(True), None,
                 id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)"),
])
def test_node_unschedulable(p, n, want):
    got = NodeUnschedulable({}, None).filter(None, p, NodeInfo(node=n))
    if want is None:
        assert got is None
    else:
        assert (got.code, got.message()) == want


def test_toleration_with_exists_operator():
    p = pod(tolerations=[toleration(UNSCHEDULABLE_KEY)])
    assert NodeUnschedulable({}, None).filter(None, p, NodeInfo(node=node(True))) is None


NOT_READY = Taint(key="node.kubernetes.io/not-ready", value="", effect="NoExecute")


@pytest.mark.parametrize("old,new,expected", [
    pytest.param(None, "not-a-node", TypeError, id="error-wrong-new-object"),
    pytest.param("not-a-node", node(True), TypeError, id="error-wrong-old-object"),
    pytest.param(None, node(True), QueueingHint.QueueSkip, id="skip-queue-on-unschedulable-node-added"),
    pytest.param(None, node(False), QueueingHint.Queue, id="queue-on-schedulable-node-added"),
    pytest.param(node(True), node(True, [NOT_READY]), QueueingHint.QueueSkip,
                 id="skip-unrelated-change-unschedulable-true"),
    pytest.param(node(False), node(False, [NOT_READY]), QueueingHint.QueueSkip,
                 id="skip-unrelated-change-unschedulable-false"),
    pytest.param(node(True), node(False), QueueingHint.Queue, id="queue-on-unschedulable-field-change"),
])
def test_is_schedulable_after_node_change(old, new, expected):
    pl = NodeUnschedulable({}, None)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_node_change(pod(), old, new)
        return
    assert pl.is_schedulable_after_node_change(pod(), old, new) is expected


@pytest.mark.parametrize("p,old,new,expected", [
    pytest.param(pod(), None, "not-a-pod", TypeError, id="error-wrong-new-object"),
    pytest.param(pod(), "not-a-pod", pod(), TypeError, id="error-wrong-old-object"),
    pytest.param(pod("uid"), pod("different-uid"), pod("different-uid", [toleration(UNSCHEDULABLE_KEY)]),
                 QueueingHint.QueueSkip, id="skip-different-pod-update"),
    pytest.param(pod("uid"), pod("uid"), pod("uid", [toleration(UNSCHEDULABLE_KEY)]),
                 QueueingHint.Queue, id="queue-when-the-unsched-pod-gets-toleration"),
    pytest.param(pod("uid"), pod("uid"), pod("uid", [toleration("unrelated-key")]),
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
