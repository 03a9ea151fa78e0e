"""NodeResourcesBalancedAllocation, ported from upstream ``balanced_allocation_test.go`` (v1.36,
with the "score the change in balance" formula: ``50 + (50 + withPod - withoutPod) / 2``).

Table: TestNodeResourcesBalancedAllocation (every case except the two whose extended resource is
backed by DRA ResourceSlices; kschedfw has no DRA manager). TestBalancedAllocationSignPod's
non-DRA cases are checked for equal signatures.
"""

from __future__ import annotations

import itertools

import pytest

from kschedfw import Code, CycleState
from kschedfw import testing as kit
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.plugins.noderesources.balanced_allocation import (
    PRE_SCORE_STATE_KEY, NodeResourcesBalancedAllocation, balanced_resource_score, balanced_resource_scorer)

_names = itertools.count()

DEFAULT_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
GPU_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]


def st_pod(*reqs: dict, node: str = ""):
    return kit.make_pod(f"p{next(_names)}", node_name=node,
                        containers=[kit.container(f"con{i}", requests=r) for i, r in enumerate(reqs)])


def cpu_only(cpu: str) -> dict:
    return {"cpu": cpu}


def cpu_mem(cpu: str, mem: str) -> dict:
    return {"cpu": cpu, "memory": mem}


def cpu_mem_gpu(cpu: str, mem: str, gpu: str) -> dict:
    return {"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu}


CASES = [
    # Node1: CPU 0 -> 75%, memory 0 -> 50%: 68 (100 -> 87); Node2: 50%/50%: 75 (100 -> 100)
    pytest.param(st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
                 [kit.make_node("node1", allocatable={"cpu": "4000m", "memory": "10000"}),
                  kit.make_node("node2", allocatable={"cpu": "6000m", "memory": "10000"})], [], DEFAULT_SET, True,
                 [68, 75], id="nothing scheduled, resources requested, differently sized nodes"),
    # Node1: CPU 30% -> 60%, memory 0 -> 25%: 73 (85 -> 82); Node2: 30->60%, 25->50%: 74 (97 -> 95)
    pytest.param(st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
                 [kit.make_node("node1", allocatable={"cpu": "10000m", "memory": "20000"}),
                  kit.make_node("node2", allocatable={"cpu": "10000m", "memory": "20000"})],
                 [st_pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
                  st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2")],
                 DEFAULT_SET, True, [73, 74], id="resources requested, pods scheduled with resources"),
    pytest.param(st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
                 [kit.make_node("node1", allocatable={"cpu": "10000m", "memory": "20000"}),
                  kit.make_node("node2", allocatable={"cpu": "10000m", "memory": "50000"})],
                 [st_pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
                  st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2")],
                 DEFAULT_SET, True, [73, 70],
                 id="resources requested, pods scheduled with resources, differently sized nodes"),
    # Node1: 100%/0% -> 100%/100%: 100 (50 -> 100); Node2: 0%/0% -> 0%/100%: 50 (100 -> 50)
    pytest.param(st_pod({"memory": "2000"}, {"memory": "3000"}),
                 [kit.make_node("node1", allocatable={"cpu": "3000m", "memory": "5000"}),
                  kit.make_node("node2", allocatable={"cpu": "3000m", "memory": "5000"})],
                 [st_pod(cpu_only("1000m"), cpu_only("2000m"), node="node1")],
                 DEFAULT_SET, True, [100, 50],
                 id="resources requested, pods scheduled with resources, nodes to reach min/max score"),
    pytest.param(st_pod(cpu_only("1000m"), cpu_only("2000m")),
                 [kit.make_node("node1", allocatable={"cpu": "6000m", "memory": "10000"}),
                  kit.make_node("node2", allocatable={"cpu": "6000m", "memory": "10000"})],
                 [st_pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
                  st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2")],
                 DEFAULT_SET, True, [62, 62], id="requested resources at node capacity"),
    pytest.param(st_pod(cpu_mem_gpu("0", "0", "1")),
                 [kit.make_node("node1", allocatable={"cpu": "3500m", "memory": "40000", "nvidia.com/gpu": "8"}),
                  kit.make_node("node2", allocatable={"cpu": "3500m", "memory": "40000", "nvidia.com/gpu": "8"})],
                 [st_pod(cpu_mem("1000m", "2000"), cpu_mem_gpu("2000m", "3000", "3"), node="node1"),
                  st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2")],
                 GPU_SET, True, [75, 76],
                 id="scalar resource is included in the score computation if pod requests the scalar resource"),
    pytest.param(st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
                 [kit.make_node("node1", allocatable={"cpu": "3500m", "memory": "40000", "nvidia.com/gpu": "8"}),
                  kit.make_node("node2", allocatable={"cpu": "3500m", "memory": "40000"})], [],
                 GPU_SET, True, [56, 56],
                 id="scalar resource is not included in the score computation "
                    "if pod doesn't request the scalar resource"),
    pytest.param(st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
                 [kit.make_node("node1", allocatable={"cpu": "10000m", "memory": "20000"}),
                  kit.make_node("node2", allocatable={"cpu": "10000m", "memory": "20000"})],
                 [st_pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
                  st_pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node="node2")],
                 DEFAULT_SET, False, [73, 74],
                 id="resources requested, pods scheduled with resources if PreScore not called"),
]


@pytest.mark.parametrize("pod, nodes, existing, resources, run_pre_score, expected", CASES)
def test_node_resources_balanced_allocation(pod, nodes, existing, resources, run_pre_score, expected):
    snapshot = Snapshot.from_objects(nodes, existing)
    plugin = NodeResourcesBalancedAllocation({"resources": resources}, Handle(snapshot=snapshot))
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pod, snapshot.node_infos()) is None
    got = [plugin.score(state, pod, snapshot.get(n.name)) for n in nodes]
    assert got == expected


def test_best_effort_pod_is_skipped_at_pre_score():
    """Upstream case "nothing scheduled, nothing requested, skip in PreScore"."""
    nodes = [kit.make_node("node1", allocatable={"cpu": "4000m", "memory": "10000"}),
             kit.make_node("node2", allocatable={"cpu": "4000m", "memory": "10000"})]
    snapshot = Snapshot.from_objects(nodes)
    plugin = NodeResourcesBalancedAllocation({"resources": DEFAULT_SET}, Handle(snapshot=snapshot))
    state = CycleState()
    status = plugin.pre_score(state, st_pod(), snapshot.node_infos())
    assert status.code is Code.Skip
    assert state.get(PRE_SCORE_STATE_KEY) is None
    # Score without PreScore state: a best-effort pod scores 0.
    assert plugin.score(CycleState(), st_pod(), snapshot.get("node1")) == 0


def test_default_args_are_cpu_and_memory():
    assert NodeResourcesBalancedAllocation({}, Handle()).scorer.resources == (("cpu", 1), ("memory", 1))


@pytest.mark.parametrize("requested, allocatable, expected", [
    pytest.param([3000, 5000], [4000, 10000], 87, id="two resources: (1 - |0.75-0.5|/2) * 100"),
    pytest.param([0, 0], [4000, 10000], 100, id="nothing requested"),
    pytest.param([5000, 0], [4000, 10000], 50, id="fraction capped at 1"),
    pytest.param([3000, 5000, 0], [3500, 40000, 0], 63, id="resource without allocatable left out"),
    pytest.param([3000, 5000, 4], [3500, 40000, 8], 70, id="three resources: population std-dev"),
    pytest.param([1, 0], [2, 0], 100, id="one resource: no deviation"),
])
def test_balanced_resource_score(requested, allocatable, expected):
    assert balanced_resource_score(requested, allocatable) == expected


def test_unchanged_balance_scores_75():
    assert balanced_resource_scorer([10, 20], [10, 20], [100, 200]) == 75


def test_sign_pod_same_requests_same_signature():
    plugin = NodeResourcesBalancedAllocation({}, Handle())
    a, status = plugin.sign_pod(st_pod(cpu_mem("500m", "1000"), cpu_mem("1500m", "3000")))
    b, _ = plugin.sign_pod(st_pod(cpu_mem("2000m", "4000")))
    assert status is None and a == b
    assert a[0].key == "v1.Pod.Spec.ContainerRequestsAndOverheads()"
