"""NodeResourcesFit scoring strategies, ported from upstream (v1.36):

``least_allocated_test.go`` (TestLeastAllocatedScoringStrategy), ``most_allocated_test.go``
(TestMostAllocatedScoringStrategy), ``requested_to_capacity_ratio_test.go``
(TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction,
TestResourceBinPackingSingleExtended, TestResourceBinPackingMultipleExtended) and
``resource_allocation_test.go`` (TestResourceAllocationScorerCalculateRequests).

The weight-validation cases of those tables (negative, zero, >100 weights), which upstream
checks when the plugin is built, are checked against the plugin's own args validation
(``kschedfw.plugins.noderesources.args``), which runs before kschedfw builds a plugin.
"""

from __future__ import annotations

import itertools

import pytest

from kschedfw import Code, CycleState, Status
from kschedfw.api.field import INVALID
from kschedfw import testing as kit
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from kschedfw.plugins.noderesources.args import validate_node_resources_fit_args
from kschedfw.plugins.noderesources.fit import NodeResourcesFit, get_scorer
from kschedfw.plugins.noderesources.requested_to_capacity_ratio import build_broken_linear_function
from kschedfw.plugins.noderesources.resource_allocation import ResourceAllocationScorer

_names = itertools.count()

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RES = "abc.com/xyz"
EXTENDED_RESOURCE_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                         {"name": EXTENDED_RES, "weight": 1}]
EXT_FIRST_SET = [{"name": EXTENDED_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
MB = 1024 * 1024


def st_pod(*reqs: dict, node: str = "", containers: int = 0):
    """Upstream ``st.MakePod().Req(r1).Req(r2)...Node(node)``; ``containers`` adds request-less ones."""
    return kit.make_pod(f"p{next(_names)}", node_name=node,
                        containers=[*(kit.container(f"con{i}", requests=r) for i, r in enumerate(reqs)),
                                    *(kit.container(f"container{i}") for i in range(containers))])


def st_node(name: str, capacity: dict | None = None):
    """Upstream ``st.MakeNode().Name(name).Capacity(...)``: allocatable = capacity, pods 32."""
    return kit.make_node(name, capacity={"pods": "32", **(capacity or {})})


def cpu_mem(cpu: str, mem: str) -> dict:
    return {"cpu": cpu, "memory": mem}


def run_scores(plugin: NodeResourcesFit, pod, nodes, existing=(), pre_score_each_node: bool = False):
    snapshot = Snapshot.from_objects(nodes, existing)
    state = CycleState()
    if not pre_score_each_node:
        assert plugin.pre_score(state, pod, snapshot.node_infos()) is None
    scores, codes = [], []
    for n in nodes:
        if pre_score_each_node:
            assert plugin.pre_score(state, pod, snapshot.node_infos()) is None
        result = plugin.score(state, pod, snapshot.get(n.name))
        score, status = (MIN_NODE_SCORE, result) if isinstance(result, Status) else (result, None)
        scores.append(NodeScore(n.name, score))
        codes.append(Code.Success if status is None else status.code)
    return scores, codes


def expect(*pairs):
    return [NodeScore(n, s) for n, s in pairs]


# --------------------------------------------------------------------------- LeastAllocated

LEAST_CASES = [
    pytest.param(st_pod(), [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [], DEFAULT_RESOURCES, expect(("node1", MAX_NODE_SCORE), ("node2", MAX_NODE_SCORE)),
                 id="nothing scheduled, nothing requested"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))],
                 [], DEFAULT_RESOURCES, expect(("node1", 37), ("node2", 50)),
                 id="nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(st_pod(), [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [st_pod(node="node1"), st_pod(node="node1"), st_pod(node="node2"), st_pod(node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", MAX_NODE_SCORE), ("node2", MAX_NODE_SCORE)),
                 id="no resources requested, pods scheduled"),
    pytest.param(st_pod(), [st_node("node1", cpu_mem("10000", "20000")), st_node("node2", cpu_mem("10000", "20000"))],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "0"), node="node1"),
                  st_pod(cpu_mem("3000", "0"), node="node2"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", 70), ("node2", 57)),
                 id="no resources requested, pods scheduled with resources"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("10000", "20000")), st_node("node2", cpu_mem("10000", "20000"))],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", 57), ("node2", 45)),
                 id="resources requested, pods scheduled with resources"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("10000", "20000")), st_node("node2", cpu_mem("10000", "50000"))],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", 57), ("node2", 60)),
                 id="resources requested, pods scheduled with resources, differently sized nodes"),
    pytest.param(st_pod(cpu_mem("3000", "0")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", 50), ("node2", 25)),
                 id="requested resources exceed node capacity"),
    pytest.param(st_pod(), [st_node("node1"), st_node("node2")],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", MIN_NODE_SCORE), ("node2", MIN_NODE_SCORE)),
                 id="zero node resources, pods scheduled with resources"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000"), node="node1"),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))],
                 [], [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
                 expect(("node1", 41), ("node2", 50)),
                 id="nothing scheduled, resources requested with different weight on CPU and memory, "
                    "differently sized nodes"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000"), node="node1"),
                 [st_node("node1", cpu_mem("6000", "10000")),
                  st_node("node2", {**cpu_mem("6000", "10000"), EXTENDED_RES: "4"})],
                 [], EXTENDED_RESOURCE_SET, expect(("node1", 50), ("node2", 50)),
                 id="bypass extended resource if the pod does not request"),
    pytest.param(st_pod({**cpu_mem("3000", "5000"), EXTENDED_RES: "2"}, node="node1"),
                 [st_node("node1", {**cpu_mem("6000", "10000"), EXTENDED_RES: "4"}),
                  st_node("node2", {**cpu_mem("6000", "10000"), EXTENDED_RES: "10"})],
                 [], EXTENDED_RESOURCE_SET, expect(("node1", 50), ("node2", 60)),
                 id="honor extended resource if the pod requests"),
    pytest.param(st_pod(cpu_mem("3000", "4000"), node="node1"),
                 [st_node("node1", cpu_mem("6000", "10000")),
                  st_node("node2", {**cpu_mem("6000", "10000"), EXTENDED_RES: "4"})],
                 [], EXT_FIRST_SET,
                 expect(("node1", 55), ("node2", 55)),
                 id="if the node doesn't have a resource"),
]


@pytest.mark.parametrize("pod, nodes, existing, resources, expected", LEAST_CASES)
def test_least_allocated_scoring_strategy(pod, nodes, existing, resources, expected):
    plugin = NodeResourcesFit({"scoringStrategy": {"type": "LeastAllocated", "resources": resources}}, Handle())
    scores, codes = run_scores(plugin, pod, nodes, existing)
    assert scores == expected
    assert set(codes) == {Code.Success}


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated"])
def test_resources_not_set_scores_with_error(kind):
    """Upstream case "Resources not set, pods scheduled with error" (both strategy tables).

    kschedfw's args defaulting fills empty resources with cpu/memory before the plugin is built,
    so the scorer is given an empty resource list directly.
    """
    plugin = NodeResourcesFit({}, Handle())
    plugin.scorer = get_scorer({"type": kind, "resources": []})
    pod = st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000"))
    nodes = [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))]
    scores, codes = run_scores(plugin, pod, nodes)
    assert scores == expect(("node1", MIN_NODE_SCORE), ("node2", MIN_NODE_SCORE))
    assert codes == [Code.Error, Code.Error]
    result = plugin.score(CycleState(), pod, Snapshot.from_objects(nodes).get("node1"))
    assert isinstance(result, Status) and result.message() == "resources not found"


# --------------------------------------------------------------------------- MostAllocated

MOST_CASES = [
    pytest.param(st_pod(), [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [], DEFAULT_RESOURCES, expect(("node1", MIN_NODE_SCORE), ("node2", MIN_NODE_SCORE)),
                 id="nothing scheduled, nothing requested"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))],
                 [], DEFAULT_RESOURCES, expect(("node1", 62), ("node2", 50)),
                 id="nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(st_pod(), [st_node("node1", cpu_mem("10000", "20000")), st_node("node2", cpu_mem("10000", "20000"))],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "0"), node="node1"),
                  st_pod(cpu_mem("3000", "0"), node="node2"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", 30), ("node2", 42)),
                 id="no resources requested, pods scheduled with resources"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("10000", "20000")), st_node("node2", cpu_mem("10000", "20000"))],
                 [st_pod(cpu_mem("3000", "0"), node="node1"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 DEFAULT_RESOURCES, expect(("node1", 42), ("node2", 55)),
                 id="resources requested, pods scheduled with resources"),
    pytest.param(st_pod(cpu_mem("2000", "4000"), cpu_mem("3000", "5000")),
                 [st_node("node1", cpu_mem("5000", "10000")), st_node("node2", cpu_mem("10000", "9000"))],
                 [], DEFAULT_RESOURCES, expect(("node1", 95), ("node2", 75)),
                 id="resources requested equal node capacity"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))],
                 [], [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
                 expect(("node1", 58), ("node2", 50)),
                 id="nothing scheduled, resources requested, differently sized nodes (weighted)"),
    pytest.param(st_pod(containers=1),
                 [st_node("node1", cpu_mem("250m", "1000Mi")), st_node("node2", cpu_mem("250m", "1000Mi"))],
                 [st_pod(node="node1", containers=1), st_pod(node="node1", containers=1)],
                 DEFAULT_RESOURCES, expect(("node1", 80), ("node2", 30)),
                 id="no resources requested, pods scheduled, nonzero request for resource"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("6000", "10000")),
                  st_node("node2", {**cpu_mem("6000", "10000"), EXTENDED_RES: "4"})],
                 [], EXTENDED_RESOURCE_SET, expect(("node1", 50), ("node2", 50)),
                 id="bypass extended resource if the pod does not request"),
    pytest.param(st_pod({**cpu_mem("3000", "5000"), EXTENDED_RES: "2"}, node="node1"),
                 [st_node("node1", {**cpu_mem("6000", "10000"), EXTENDED_RES: "4"}),
                  st_node("node2", {**cpu_mem("6000", "10000"), EXTENDED_RES: "10"})],
                 [], EXTENDED_RESOURCE_SET, expect(("node1", 50), ("node2", 40)),
                 id="honor extended resource if the pod request"),
    pytest.param(st_pod(cpu_mem("3000", "4000"), node="node1"),
                 [st_node("node1", cpu_mem("6000", "10000")),
                  st_node("node2", {**cpu_mem("6000", "10000"), EXTENDED_RES: "4"})],
                 [], EXT_FIRST_SET,
                 expect(("node1", 45), ("node2", 45)),
                 id="if the node doesn't have a resource"),
]


@pytest.mark.parametrize("pod, nodes, existing, resources, expected", MOST_CASES)
def test_most_allocated_scoring_strategy(pod, nodes, existing, resources, expected):
    plugin = NodeResourcesFit({"scoringStrategy": {"type": "MostAllocated", "resources": resources}}, Handle())
    scores, codes = run_scores(plugin, pod, nodes, existing)
    assert scores == expected
    assert set(codes) == {Code.Success}


# --------------------------------------------------------------------------- RequestedToCapacityRatio

def rtcr_args(resources, shape):
    return {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": resources,
                                "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s}
                                                                       for u, s in shape]}}}


RTCR_SHAPE = [(0, 10), (100, 0)]


@pytest.mark.parametrize("pod, nodes, existing, expected", [
    pytest.param(st_pod(), [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [st_pod(node="node1"), st_pod(node="node1")],
                 expect(("node1", MAX_NODE_SCORE), ("node2", MAX_NODE_SCORE)),
                 id="nothing scheduled, nothing requested (default - least requested nodes have priority)"),
    pytest.param(st_pod(cpu_mem("1000", "2000"), cpu_mem("2000", "3000")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))],
                 [st_pod(node="node1"), st_pod(node="node1")], expect(("node1", 38), ("node2", 50)),
                 id="nothing scheduled, resources requested, differently sized nodes "
                    "(default - least requested nodes have priority)"),
    pytest.param(st_pod(), [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))],
                 [st_pod(cpu_mem("3000", "5000"), node="node1"), st_pod(cpu_mem("3000", "5000"), node="node2")],
                 expect(("node1", 38), ("node2", 50)),
                 id="no resources requested, pods scheduled with resources "
                    "(default - least requested nodes have priority)"),
])
def test_requested_to_capacity_ratio_scoring_strategy(pod, nodes, existing, expected):
    plugin = NodeResourcesFit(rtcr_args(DEFAULT_RESOURCES, RTCR_SHAPE), Handle())
    scores, codes = run_scores(plugin, pod, nodes, existing, pre_score_each_node=True)
    assert scores == expected


@pytest.mark.parametrize("points, assertions", [
    pytest.param([(10, 1), (90, 9)],
                 [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9),
                  (99, 9), (100, 9), (110, 9)], id="case_0"),
    pytest.param([(0, 2), (40, 10), (100, 0)],
                 [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)], id="case_1"),
    pytest.param([(0, 2), (40, 2), (100, 2)],
                 [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)], id="case_2"),
])
def test_broken_linear_function(points, assertions):
    f = build_broken_linear_function(points)
    for p, expected in assertions:
        assert f(p) == expected, (points, p)


def test_broken_linear_function_truncates_toward_zero_on_decreasing_segments():
    # Go's int64 division truncates: 100 + (0-100)*(1-0)/3 = 100 - 33 = 67 (not 66).
    assert build_broken_linear_function([(0, 100), (3, 0)])(1) == 67


FOO, BAR = "intel.com/foo", "intel.com/bar"


@pytest.mark.parametrize("pod, existing, expected", [
    pytest.param(st_pod(), [], expect(("node1", 0), ("node2", 0)), id="nothing scheduled, nothing requested"),
    pytest.param(st_pod({FOO: "2"}), [st_pod()], expect(("node1", 2), ("node2", 5)),
                 id="resources requested, pods scheduled with less resources"),
    pytest.param(st_pod({FOO: "2"}), [st_pod({FOO: "2"}, node="node2")], expect(("node1", 2), ("node2", 10)),
                 id="resources requested, pods scheduled with resources, on node with existing pod running "),
    pytest.param(st_pod({FOO: "4"}), [st_pod()], expect(("node1", 5), ("node2", 10)),
                 id="resources requested, pods scheduled with more resources"),
])
def test_resource_bin_packing_single_extended(pod, existing, expected):
    nodes = [kit.make_node("node1", allocatable={"cpu": "4000m", "memory": str(10000 * MB), FOO: "8"}),
             kit.make_node("node2", allocatable={"cpu": "4000m", "memory": str(10000 * MB), FOO: "4"})]
    plugin = NodeResourcesFit(rtcr_args([{"name": FOO, "weight": 1}], [(0, 0), (100, 1)]), Handle())
    scores, _ = run_scores(plugin, pod, nodes, existing, pre_score_each_node=True)
    assert scores == expected


@pytest.mark.parametrize("pod, existing, expected", [
    pytest.param(st_pod(), [], expect(("node1", 0), ("node2", 0)), id="nothing scheduled, nothing requested"),
    pytest.param(st_pod({FOO: "2", BAR: "2"}), [st_pod()], expect(("node1", 4), ("node2", 3)),
                 id="resources requested, pods scheduled with less resources"),
    pytest.param(st_pod({FOO: "2", BAR: "2"}), [st_pod({FOO: "4", BAR: "2"}, node="node2")],
                 expect(("node1", 4), ("node2", 7)),
                 id="resources requested, pods scheduled with resources, on node with existing pod running "),
    pytest.param(st_pod({FOO: "4", BAR: "2"}), [st_pod()], expect(("node1", 5), ("node2", 5)),
                 id="resources requested, pods scheduled with more resources"),
])
def test_resource_bin_packing_multiple_extended(pod, existing, expected):
    nodes = [kit.make_node("node1", allocatable={"cpu": "4000m", "memory": str(10000 * MB), FOO: "8", BAR: "4"}),
             kit.make_node("node2", allocatable={"cpu": "4000m", "memory": str(10000 * MB), FOO: "4", BAR: "8"})]
    plugin = NodeResourcesFit(rtcr_args([{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}], [(0, 0), (100, 1)]),
                 Handle())
    scores, _ = run_scores(plugin, pod, nodes, existing)
    assert scores == expected


# ------------------------------------------------------------- TestResourceAllocationScorerCalculateRequests

ONE_MI = 1048576
DEF_CPU, DEF_MEM = 100, 200 * ONE_MI


def _spec_pod(spec: dict):
    for key in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(key, [])):
            c.setdefault("name", f"{key}{i}")
    return kit.make_pod(f"p{next(_names)}", containers=spec.pop("containers", []), **spec)


def _req(**r):
    return {"resources": {"requests": r}}


@pytest.mark.parametrize("pod, expected", [
    pytest.param(_spec_pod({"overhead": {"cpu": "1", "memory": "1Mi"}}), {"cpu": 1000, "memory": ONE_MI},
                 id="overhead only"),
    pytest.param(_spec_pod({"containers": [{}]}), {"cpu": DEF_CPU, "memory": DEF_MEM},
                 id="1x requestless container"),
    pytest.param(_spec_pod({"containers": [{}, {}]}), {"cpu": 2 * DEF_CPU, "memory": 2 * DEF_MEM},
                 id="2x requestless container"),
    pytest.param(_spec_pod({"containers": [_req(cpu="1", memory="1Mi"), {}]}),
                 {"cpu": 1000 + DEF_CPU, "memory": ONE_MI + DEF_MEM},
                 id="request container + requestless container"),
    pytest.param(_spec_pod({"overhead": {"cpu": "1", "memory": "1Mi"},
                            "containers": [_req(cpu="1", memory="1Mi"), {}]}),
                 {"cpu": 2000 + DEF_CPU, "memory": 2 * ONE_MI + DEF_MEM},
                 id="container + requestless container + overhead"),
    pytest.param(_spec_pod({"overhead": {"cpu": "1", "memory": "1Mi"},
                            "initContainers": [_req(cpu="3")],
                            "containers": [_req(cpu="1", memory="1Mi"), {}]}),
                 {"cpu": 4000, "memory": 2 * ONE_MI + DEF_MEM},
                 id="init container + container + requestless container + overhead"),
    pytest.param(_spec_pod({"initContainers": [{}, _req(cpu="1m", memory="1")],
                            "containers": [_req(cpu="3m", memory="3")]}),
                 {"cpu": DEF_CPU, "memory": DEF_MEM},
                 id="requestless init container + small init container + small container "),
    pytest.param(_spec_pod({"initContainers": [{}, _req(cpu="1m", memory="1")],
                            "containers": [_req(cpu="3m", memory="3"), {}]}),
                 {"cpu": 3 + DEF_CPU, "memory": 3 + DEF_MEM},
                 id="requestless init container + small init container + small container + requestless container "),
])
def test_resource_allocation_scorer_calculate_requests(pod, expected):
    names = list(expected)
    scorer = ResourceAllocationScorer("test", lambda *a: 0, [(n, 1) for n in names])
    assert dict(zip(names, scorer.pod_requests(pod))) == expected


def test_calculate_resource_allocatable_request_device_plugin_resource():
    """Upstream TestCalculateResourceAllocatableRequest, device-plugin cases (no DRA backing)."""
    ern = "extended.resource.dra.io/something"
    node = st_node("resource-node", {ern: "4"})
    pod = st_pod({ern: "1"})
    scorer = ResourceAllocationScorer("test", lambda *a: 0, [(ern, 1)])
    requested, allocated, allocatable = scorer.node_vectors(Snapshot.from_objects([node]).get(node.name),
                                                            scorer.pod_requests(pod))
    assert (allocatable, allocated, requested) == ([4], [0], [1])


# --------------------------------------------------------------------------- weight validation (wantErrs)

@pytest.mark.parametrize("strategy, resources, field", [
    pytest.param("LeastAllocated", [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
                 "scoringStrategy.resources[0].weight", id="least allocated: resource with negative weight"),
    pytest.param("LeastAllocated", [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}],
                 "scoringStrategy.resources[1].weight", id="least allocated: resource with zero weight"),
    pytest.param("LeastAllocated", [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}],
                 "scoringStrategy.resources[1].weight",
                 id="least allocated: resource weight larger than MaxNodeScore"),
    pytest.param("MostAllocated", [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
                 "scoringStrategy.resources[0].weight", id="most allocated: resource with negative weight"),
    pytest.param("MostAllocated", [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}],
                 "scoringStrategy.resources[1].weight", id="most allocated: resource with zero weight"),
    pytest.param("MostAllocated", [{"name": "memory", "weight": 101}],
                 "scoringStrategy.resources[0].weight",
                 id="most allocated: resource weight larger than MaxNodeScore"),
])
def test_invalid_resource_weights_are_refused(strategy, resources, field):
    errs = validate_node_resources_fit_args({"scoringStrategy": {"type": strategy, "resources": resources}})
    assert [(str(e).split(": ")[0], e.kind) for e in errs] == [(field, INVALID)]
