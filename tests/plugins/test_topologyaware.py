"""TopologyPlacementGenerator as upstream's topology_placement_test.go states it: without a
constraint the parent placement comes back; with a topology key, one placement per value of
the label among the parent's nodes; with pods of the group already scheduled, only their
domain, and an Error when they are in more than one, on a node the snapshot lacks or on a node
without the label."""

from __future__ import annotations

import pytest

from kschedfw.api.workload import PodGroup, PodGroupSchedulingConstraints, TopologyConstraint
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.podgroup import Placement, PodGroupInfo
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.topologyaware import TopologyPlacementGenerator
from kschedfw.testing.builders import make_node, make_pod
from tests.plugins.fakes import FakeLister

INITIAL = "test-placement"


def node(name, **labels):
    return make_node(name, labels=labels, hostname_label=False)


def constrained(key):
    return PodGroup(name="pg1", namespace="default",
                    scheduling_constraints=PodGroupSchedulingConstraints(topology=(TopologyConstraint(key),)))


CASES = {
    "without constraint returns placement matching all nodes": dict(
        pod_group=PodGroup(name="pg1", namespace="default"), scheduled={},
        placement_nodes=[node("node1"), node("node2", foo="bar")], other_nodes=[node("node3")],
        want={INITIAL: ["node1", "node2"]}, code=Code.Success),
    "with topology key constraint, returns placement for each topology domain": dict(
        pod_group=constrained("topology1"), scheduled={},
        placement_nodes=[node("node0", topology2="d1"), node("node1", topology2="d4"),
                         node("node2", topology1="d1"), node("node3", topology1="d2"),
                         node("node4", topology1="d1"), node("node5", topology1="d3")], other_nodes=[],
        want={"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}, code=Code.Success),
    "without matching topology label, returns empty": dict(
        pod_group=constrained("topology3"), scheduled={},
        placement_nodes=[node("node0", topology2="d1"), node("node1", topology2="d4"),
                         node("node2", topology1="d1"), node("node3", topology1="d2"),
                         node("node4", topology1="d1"), node("node5", topology1="d3")], other_nodes=[],
        want={}, code=Code.Success),
    "with pods already scheduled in a single domain, returns that domain": dict(
        pod_group=constrained("topology"), scheduled={"pod1": "node2", "pod2": "node3"},
        placement_nodes=[node("node0", topology="d2"), node("node1", topology="d1")],
        other_nodes=[node("node2", topology="d1"), node("node3", topology="d1")],
        want={"d1": ["node1"]}, code=Code.Success),
    "with pods already scheduled in a single domain not present in current placement, returns empty": dict(
        pod_group=constrained("topology"), scheduled={"pod1": "node2", "pod2": "node3"},
        placement_nodes=[node("node0", topology="d2")],
        other_nodes=[node("node2", topology="d1"), node("node3", topology="d1")],
        want={}, code=Code.Success),
    "with pods already scheduled in conflicting domains, returns error": dict(
        pod_group=constrained("topology"), scheduled={"pod1": "node2", "pod2": "node3"},
        placement_nodes=[node("node0", topology="d2"), node("node1", topology="d1")],
        other_nodes=[node("node2", topology="d0"), node("node3", topology="d1")],
        want=None, code=Code.Error),
    "with already scheduled pod on node outside of snapshot, returns error": dict(
        pod_group=constrained("topology"), scheduled={"pod1": "node2", "pod2": "node4"},
        placement_nodes=[node("node0", topology="d2"), node("node1", topology="d1")],
        other_nodes=[node("node2", topology="d1"), node("node3", topology="d1")],
        want=None, code=Code.Error),
    "with already scheduled pod on node without topology label, returns error": dict(
        pod_group=constrained("topology"), scheduled={"pod1": "node2"},
        placement_nodes=[node("node1", topology="d2")], other_nodes=[node("node2", foo="bar")],
        want=None, code=Code.Error),
}


@pytest.mark.parametrize("name", list(CASES))
def test_generate_placements(name):
    case = CASES[name]
    pg = case["pod_group"]
    pods = [make_pod("unscheduled", uid="unscheduled", namespace=pg.namespace,
                     schedulingGroup={"podGroupName": pg.name})]
    pods += [make_pod(pod, uid=pod, namespace=pg.namespace, node_name=on,
                      schedulingGroup={"podGroupName": pg.name}) for pod, on in case["scheduled"].items()]
    snapshot = Snapshot.from_objects(case["placement_nodes"] + case["other_nodes"], pods)
    pl = TopologyPlacementGenerator({}, Handle(snapshot=snapshot, lister=FakeLister(pg)))
    parent = Placement(INITIAL, [NodeInfo(node=n) for n in case["placement_nodes"]])

    result, status = pl.generate_placements(CycleState(), PodGroupInfo(pg.name, pg.namespace), parent)

    assert (status.code if status is not None else Code.Success) is case["code"]
    if status is None:
        got = {p.name: [ni.node.name for ni in p.nodes] for p in result.placements}
        assert got == case["want"]


def test_the_parent_placement_itself_comes_back_without_a_constraint():
    pg = PodGroup(name="pg1", namespace="default")
    pl = TopologyPlacementGenerator({}, Handle(lister=FakeLister(pg)))
    parent = Placement(INITIAL, [])
    result, status = pl.generate_placements(CycleState(), PodGroupInfo("pg1", "default"), parent)
    assert status is None and result.placements == [parent] and result.placements[0] is parent
