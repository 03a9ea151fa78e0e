"""Port of upstream nodename/node_name_test.go."""

import pytest

from kschedfw.api import Node
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.nodename import ERR_REASON, NodeName
from kschedfw.testing import make_pod


@pytest.mark.parametrize("p,node,want", [
    pytest.param(make_pod("p"), Node(name=""), None, id="no host specified"),
    pytest.param(make_pod("p", node_name="foo"), Node(name="foo"), None, id="host matches"),
    pytest.param(make_pod("p", node_name="bar"), Node(name="foo"), (Code.UnschedulableAndUnresolvable, ERR_REASON),
                 id="host doesn't match"),
])
def test_node_name(p, node, want):
    got = NodeName({}, None).filter(CycleState(), p, NodeInfo(node=node))
    if want is None:
        assert got is None
    else:
        assert (got.code, got.message()) == want


def test_message_text():
    assert ERR_REASON == "node(s) didn't match the requested node name"


def test_events_to_register():
    events = NodeName({}, None).events_to_register()
    assert [(e.event, e.queueing_hint_fn) for e in events] == [(ClusterEvent(EventResource.Node, ActionType.Add), None)]
