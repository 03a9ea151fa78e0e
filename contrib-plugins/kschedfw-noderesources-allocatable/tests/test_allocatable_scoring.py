"""NodeResourcesAllocatable Score and NormalizeScore: the table of upstream
``pkg/noderesources/allocatable_test.go`` (TestNodeResourcesAllocatable), plus args handling."""

from __future__ import annotations

import itertools

import pytest

from kschedfw import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeInfo, NodeScore
from kschedfw import testing as kit
from kschedfw.framework.handle import Handle
from kschedfw.testing import framework_for

from kschedfw_noderesources_allocatable import NodeResourcesAllocatable, validate_args

_uids = itertools.count()

DEFAULT_SET = [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}]  # 1 millicore ~ 1 MiB
CPU_SET = [{"name": "cpu", "weight": 1 << 30}, {"name": "memory", "weight": 1}]  # 1 millicore ~ 1 GiB


def make_pod(requests: dict | None = None, node: str = "", labels: dict | None = None, containers: list | None = None):
    if containers is None:
        containers = [kit.container("c", requests=requests)] if requests else []
    return kit.make_pod(f"p{next(_uids)}", containers=containers, node_name=node, labels=labels)


def make_node_info(name: str, milli_cpu: int, memory: int) -> NodeInfo:
    """Upstream ``makeNodeInfo``: capacity = allocatable = {cpu, memory}."""
    return NodeInfo(node=kit.make_node(name, allocatable={"cpu": f"{milli_cpu}m", "memory": str(memory)}))


NO_RESOURCES = None
CPU_AND_MEMORY = {"cpu": "1000m", "memory": "1Gi"}
BIG_CPU = {"cpu": "8000m", "memory": "1Gi"}
SCHEDULED = [{"name": "a", "resources": {"requests": {"cpu": "1000m", "memory": "0"}}},
             {"name": "b", "resources": {"requests": {"cpu": "2000m", "memory": "0"}}}]

CASES = [
    pytest.param(NO_RESOURCES, [("machine1", 4000, 10000), ("machine2", 4000, 10000)], DEFAULT_SET, "Least",
                 [MIN_NODE_SCORE, MIN_NODE_SCORE], None, id="nothing scheduled, nothing requested"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 4000, 10000), ("machine2", 6000, 10000)], DEFAULT_SET, "Least",
                 [MAX_NODE_SCORE, MIN_NODE_SCORE], None,
                 id="nothing scheduled, resources requested, differently sized machines, least mode"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 4000, 10000), ("machine2", 6000, 10000)], DEFAULT_SET, "Most",
                 [MIN_NODE_SCORE, MAX_NODE_SCORE], None,
                 id="nothing scheduled, resources requested, differently sized machines, most mode"),
    pytest.param(NO_RESOURCES, [("machine1", 4000, 10000), ("machine2", 4000, 10000)], DEFAULT_SET, "Least",
                 [MIN_NODE_SCORE, MIN_NODE_SCORE], "labelled", id="no resources requested, pods scheduled"),
    pytest.param(NO_RESOURCES, [("machine1", 10000, 20000), ("machine2", 10000, 20000)], DEFAULT_SET, "Least",
                 [MIN_NODE_SCORE, MIN_NODE_SCORE], "with-resources",
                 id="no resources requested, pods scheduled with resources"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 10000, 20000), ("machine2", 10000, 20000)], DEFAULT_SET, "Least",
                 [MIN_NODE_SCORE, MIN_NODE_SCORE], "with-resources",
                 id="resources requested, pods scheduled with resources"),
    pytest.param(BIG_CPU, [("machine1", 4000, 1000), ("machine2", 5000, 1000)], DEFAULT_SET, "Least",
                 [MAX_NODE_SCORE, MIN_NODE_SCORE], None,
                 id="resources requested with more than the node, differently sized machines, least mode"),
    pytest.param(BIG_CPU, [("machine1", 4000, 1000), ("machine2", 5000, 1000)], DEFAULT_SET, "Most",
                 [MIN_NODE_SCORE, MAX_NODE_SCORE], None,
                 id="resources requested with more than the node, differently sized machines, most mode"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 1000, 2000), ("machine2", 1005, 1000)], CPU_SET, "Least",
                 [MAX_NODE_SCORE, MIN_NODE_SCORE], None,
                 id="nothing scheduled, resources requested, differently sized machines, cpu weighted, least mode"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 1000, 2000), ("machine2", 1005, 1000)], CPU_SET, "Most",
                 [MIN_NODE_SCORE, MAX_NODE_SCORE], None,
                 id="nothing scheduled, resources requested, differently sized machines, cpu weighted, most mode"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 1000, 1000 << 20), ("machine2", 2000, 2000 << 20),
                                  ("machine3", 3000, 3000 << 20)], DEFAULT_SET, "Least",
                 [MAX_NODE_SCORE, (MIN_NODE_SCORE + MAX_NODE_SCORE) // 2, MIN_NODE_SCORE], None,
                 id="nothing scheduled, resources requested, 3 differently sized machines, least mode"),
    pytest.param(CPU_AND_MEMORY, [("machine1", 1000, 1000 << 20), ("machine2", 2000, 2000 << 20),
                                  ("machine3", 3000, 3000 << 20)], DEFAULT_SET, "Most",
                 [MIN_NODE_SCORE, (MIN_NODE_SCORE + MAX_NODE_SCORE) // 2, MAX_NODE_SCORE], None,
                 id="nothing scheduled, resources requested, 3 differently sized machines, most mode"),
]


def _existing(kind: str | None) -> list:
    if kind == "labelled":
        l1, l2 = {"foo": "bar", "baz": "blah"}, {"bar": "foo", "baz": "blah"}
        return [make_pod(node="machine1", labels=l2), make_pod(node="machine1", labels=l1),
                make_pod(node="machine2", labels=l1), make_pod(node="machine2", labels=l1)]
    if kind == "with-resources":
        return [make_pod(node="machine1", containers=SCHEDULED)]
    return []


@pytest.mark.parametrize("requests, nodes, resources, mode, expected, existing", CASES)
def test_node_resources_allocatable(requests, nodes, resources, mode, expected, existing):
    pod = make_pod(requests)
    infos = [make_node_info(*n) for n in nodes]
    for p in _existing(existing):
        next(ni for ni in infos if ni.name == p.node_name).add_pod(p)
    plugin = NodeResourcesAllocatable({"resources": resources, "mode": mode}, Handle())
    state = CycleState()
    scores = []
    for ni in infos:
        value = plugin.score(state, pod, ni)
        assert isinstance(value, int)
        scores.append(NodeScore(ni.name, value))
    assert plugin.normalize_score(state, pod, scores) is None
    assert [s.score for s in sorted(scores, key=lambda s: s.name)] == expected


@pytest.mark.parametrize("resources, message", [
    pytest.param([{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
                 "resources[0].weight: Invalid value: -1: resource weight of memory should be a positive value, "
                 "got :-1",
                 id="resource with negative weight"),
    pytest.param([{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}],
                 "resources[1].weight: Invalid value: 0: resource weight of cpu should be a positive value, got :0",
                 id="resource with zero weight"),
    pytest.param([{"name": "memory", "weight": 1}, {"name": "cpu"}],
                 "resources[1].weight: Invalid value: 0: resource weight of cpu should be a positive value, got :0",
                 id="resource without weight"),
])
def test_invalid_weights(resources, message):
    errors = validate_args({"resources": resources, "mode": "Least"})
    assert [str(e) for e in errors] == [message]
    with pytest.raises(ValueError, match="should be a positive value"):
        NodeResourcesAllocatable({"resources": resources}, Handle())


def test_invalid_mode():
    errors = validate_args({"mode": "Medium"})
    assert [str(e) for e in errors] == ['mode: Invalid value: "Medium": invalid support ModeType']


def test_defaults():
    plugin = NodeResourcesAllocatable({}, Handle())
    assert plugin.mode == "Least"
    assert plugin.resource_to_weight == {"cpu": 1 << 20, "memory": 1}
    # an empty list and an empty mode are defaulted as upstream does
    plugin = NodeResourcesAllocatable({"resources": [], "mode": ""}, Handle())
    assert plugin.mode == "Least"
    assert plugin.resource_to_weight == {"cpu": 1 << 20, "memory": 1}
    assert validate_args({"resources": [], "mode": ""}) == []


def test_raw_score_is_weighted_mean_truncated_toward_zero():
    plugin = NodeResourcesAllocatable({"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}],
                                       "mode": "Least"}, Handle())
    # (-1000*1 + -1001*2) / 3 = -1000.67 -> Go truncates to -1000
    assert plugin.raw_score(make_node_info("n", 1000, 1001)) == -1000


def test_extended_and_untracked_resources():
    node = kit.make_node("gpu", cpu="2", memory="1Gi", extra_allocatable={"nvidia.com/gpu": "4"})
    info = NodeInfo(node=node)
    plugin = NodeResourcesAllocatable({"resources": [{"name": "nvidia.com/gpu", "weight": 1}], "mode": "Most"},
                                      Handle())
    assert plugin.raw_score(info) == 4
    # "pods" is neither cpu, memory, ephemeral-storage nor a scalar resource: upstream ignores it
    plugin = NodeResourcesAllocatable({"resources": [{"name": "pods", "weight": 1}], "mode": "Most"}, Handle())
    assert plugin.raw_score(info) == 0


def test_in_a_framework():
    fwk = framework_for([NodeResourcesAllocatable], args={"NodeResourcesAllocatable": {"mode": "Most"}})
    infos = [make_node_info("small", 1000, 1 << 30), make_node_info("big", 8000, 16 << 30)]
    results, status = fwk.run_score_plugins(CycleState(), make_pod(CPU_AND_MEMORY), infos)
    assert status is None
    assert {r.name: r.total_score for r in results} == {"small": 0, "big": 100}
