"""NodeResourcesFit's ScorePlacement as upstream's TestScorePlacement_Resources states it:
MostAllocated over the placement as a whole: the proposed pods' requests plus what the
placement's nodes already hold, against their summed allocatable; nodes outside the placement
do not count; a scalar resource counts only when some proposed pod asks for it."""

from __future__ import annotations

import attrs
import pytest

from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.podgroup import Placement, PodGroupAssignments, PodGroupInfo
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.testing.builders import make_node, make_pod

GPU = "nvidia.com/gpu"


@attrs.frozen
class Proposed:
    pod: object
    node_name: str


def node(name, gpu=None):
    capacity = {"cpu": "5000m", "memory": "5000", "pods": "110"}
    if gpu is not None:
        capacity[GPU] = gpu
    return make_node(name, allocatable=capacity)


def pod(uid, cpu, memory, gpu=None, node_name=""):
    requests = {"cpu": cpu, "memory": memory}
    if gpu is not None:
        requests[GPU] = gpu
    return make_pod(uid, uid=uid, requests=requests, node_name=node_name)


CPU_MEM = [("cpu", 1), ("memory", 1)]
CPU_MEM_GPU = [("cpu", 1), ("memory", 1), (GPU, 1)]

CASES = [
    # CPU (1000m + 2000m) / 10000m = 0.3, memory 2000 / 10000 = 0.2: 100 * (0.3 + 0.2) / 2
    ("Computes score based on total requests", [node("node1"), node("node2")], ["node1", "node2"],
     [pod("foo", "1000m", "0"), pod("bar", "2000m", "2000")], {"foo": "node1", "bar": "node2"}, [],
     CPU_MEM, 25),
    # 100 * (4 * 0.3 + 0.2) / 5
    ("Computes score using weights", [node("node1"), node("node2")], ["node1", "node2"],
     [pod("foo", "1000m", "0"), pod("bar", "2000m", "2000")], {"foo": "node1", "bar": "node2"}, [],
     [("cpu", 4), ("memory", 1)], 28),
    ("Handles multiple pods per node", [node("node1"), node("node2")], ["node1", "node2"],
     [pod("foo", "1000m", "0"), pod("bar", "2000m", "2000")], {"foo": "node1", "bar": "node1"}, [],
     [("cpu", 4), ("memory", 1)], 28),
    ("Does not include nodes from outside of placement", [node("node1"), node("node2"), node("node3")],
     ["node1", "node2"], [pod("foo", "1000m", "0"), pod("bar", "2000m", "2000")],
     {"foo": "node1", "bar": "node2"}, [], CPU_MEM, 25),
    # CPU (1000m + 2000m + 1000m) / 10000m = 0.4
    ("Includes pre-existing pods from outside of pod group", [node("node1"), node("node2")], ["node1", "node2"],
     [pod("foo", "1000m", "0"), pod("bar", "2000m", "2000")], {"foo": "node1", "bar": "node2"},
     [pod("baz", "1000m", "0", node_name="node1")], CPU_MEM, 30),
    # GPU 1 / 10 = 0.1: 100 * (0.3 + 0.2 + 0.1) / 3
    ("Includes scalar resources if any pod in pod group has nonzero requests",
     [node("node1", "5"), node("node2", "5")], ["node1", "node2"],
     [pod("foo", "1000m", "0", "0"), pod("bar", "1000m", "2000", "1")], {"foo": "node1", "bar": "node2"},
     [pod("baz", "1000m", "0", "0", node_name="node1")], CPU_MEM_GPU, 20),
    ("Does not include scalar resources if all pods in pod group have zero requests",
     [node("node1", "5"), node("node2", "5")], ["node1", "node2"],
     [pod("foo", "1000m", "0", "0"), pod("bar", "1000m", "2000", "0")], {"foo": "node1", "bar": "node2"},
     [pod("baz", "1000m", "0", "1", node_name="node1")], CPU_MEM_GPU, 25),
]


@pytest.mark.parametrize("name,nodes,placement_nodes,group_pods,assignments,existing,resources,want", CASES,
                         ids=[c[0] for c in CASES])
def test_score_placement_resources(name, nodes, placement_nodes, group_pods, assignments, existing,
                                   resources, want):
    snapshot = Snapshot.from_objects(nodes, existing)
    args = {"scoringStrategy": {"type": "LeastAllocated",
                                "resources": [{"name": n, "weight": w} for n, w in resources]}}
    pl = NodeResourcesFit(args, Handle(snapshot=snapshot))
    proposed = [Proposed(p, assignments[p.uid]) for p in group_pods if p.uid in assignments]
    placement = PodGroupAssignments(Placement("", [snapshot.get(n) for n in placement_nodes]), proposed)
    score = pl.score_placement(CycleState(), PodGroupInfo("", unscheduled_pods=tuple(group_pods)), placement)
    assert score == want
