"""Pod-level requests (``spec.resources``) in the node-resources scorers, as upstream v1.36 counts them.

Two rules, both found by the differential fuzzer against kube-scheduler v1.36.2:

* NodeResourcesFit scores the incoming pod by its containers: ``nodeResourceStrategyTypeMap`` in
  ``pkg/scheduler/framework/plugins/noderesources/fit.go`` builds every strategy's
  ``resourceAllocationScorer`` without ``enablePodLevelResources``, so
  ``calculatePodResourceRequest`` (``resource_allocation.go``) asks the component-helpers
  ``PodRequests`` to skip pod-level requests. BalancedAllocation (``balanced_allocation.go``
  sets ``enablePodLevelResources``), Filter (``computePodResourceRequest``) and the pods already
  on a node (``PodInfo.CalculateResource``) use them.
* A pod on a node counts the 100m / 200Mi placeholder, when it has pod-level requests, only for a
  resource named nowhere in its requests: ``getNonMissingContainerRequests`` and
  ``PodInfo.CalculateResource`` in ``pkg/scheduler/framework/types.go``, then ``applyNonMissing``
  per container in component-helpers ``resource/helpers.go``.
"""

from __future__ import annotations

import pytest

from kschedfw import CycleState
from kschedfw import testing as kit
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedfw.plugins.noderesources.fit import NodeResourcesFit

MI = 2**20
GI = 2**30
DEF_CPU, DEF_MEM = 100, 200 * MI


def ctr(name: str, **requests: str) -> dict:
    return kit.container(name, requests=requests or None)


def pod(name: str, containers, *, init=(), node: str = "", overhead=None, pod_requests=None,
        pod_limits=None):
    spec = {}
    if pod_requests or pod_limits:
        spec["resources"] = {k: v for k, v in (("requests", pod_requests), ("limits", pod_limits)) if v}
    return kit.make_pod(name, node_name=node, containers=containers, init_containers=init,
                        overhead=overhead, **spec)


def sidecar(name: str, **requests: str) -> dict:
    return kit.container(name, requests=requests or None, restart_policy="Always")


def fit(strategy: str = "LeastAllocated", **extra) -> NodeResourcesFit:
    return NodeResourcesFit({"scoringStrategy": {"type": strategy, **extra}}, Handle())


def scores(plugin, incoming, nodes, existing=()) -> dict[str, int]:
    snapshot = Snapshot.from_objects(nodes, existing)
    state = CycleState()
    assert plugin.pre_score(state, incoming, snapshot.node_infos()) is None
    return {n.name: plugin.score(state, incoming, snapshot.get(n.name)) for n in nodes}


N1 = kit.make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})
N2 = kit.make_node("n2", allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"})
# the fuzzer's first class of difference: pod-level {cpu: 3, memory: 2Gi}, one container {cpu: 1, memory: 1Gi}
POD_LEVEL = pod("p", [ctr("c", cpu="1", memory="1Gi")], pod_requests={"cpu": "3", "memory": "2Gi"})


# Scores kube-scheduler v1.36.2 logged (-v=10) for that pod on these two nodes, per strategy.
@pytest.mark.parametrize("plugin, expected", [
    # pod-level requests would give 50 / 74
    pytest.param(fit(), {"n1": 81, "n2": 90}, id="LeastAllocated"),
    # container requests 1 cpu / 1Gi: n1 (25 + 12) / 2, n2 (12 + 6) / 2
    pytest.param(fit("MostAllocated"), {"n1": 18, "n2": 9}, id="MostAllocated"),
    # shape 0% -> 10, 100% -> 0: n1 round((75 + 88) / 2), n2 round((88 + 94) / 2)
    pytest.param(fit("RequestedToCapacityRatio", requestedToCapacityRatio={
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}),
        {"n1": 82, "n2": 91}, id="RequestedToCapacityRatio"),
])
def test_fit_scores_the_incoming_pod_by_its_containers(plugin, expected):
    """Every strategy shares ``calculatePodResourceRequest``, which skips pod-level requests."""
    assert scores(plugin, POD_LEVEL, [N1, N2]) == expected


def test_fit_scores_init_containers_sidecars_placeholders_and_overhead_without_pod_level():
    """With pod-level requests skipped, the scorer's request is the container one (upstream
    ``PodRequests`` with ``SkipPodLevelResources`` and ``NonMissingContainerRequests``, applied to
    init containers too). cpu: the init container (2 cpu) next to the sidecar (100m placeholder)
    outweighs sidecar + container (1100m); memory: sidecar (200Mi placeholder) + container (1Gi)
    outweighs sidecar + init container (two placeholders); overhead on top of both. kube-scheduler
    v1.36.2 logged requestedResource [2600, 1Gi + 300Mi] for it on an empty node (RuntimeClass
    overhead), and [4000, 3Gi + 100Mi] (pod level plus overhead) for BalancedAllocation."""
    incoming = pod("p", [ctr("c", cpu="1", memory="1Gi")],
                   init=[sidecar("s"), ctr("i", cpu="2")], overhead={"cpu": "500m", "memory": "100Mi"},
                   pod_requests={"cpu": "3500m", "memory": "3Gi"})
    assert fit().scorer.pod_requests(incoming) == [2100 + 500, DEF_MEM + GI + 100 * MI]
    balanced = NodeResourcesBalancedAllocation({}, Handle())
    assert balanced.scorer.pod_requests(incoming) == [3500 + 500, 3 * GI + 100 * MI]


def test_balanced_allocation_and_filter_keep_pod_level_requests():
    balanced = NodeResourcesBalancedAllocation({}, Handle())
    assert balanced.scorer.pod_requests(POD_LEVEL) == [3000, 2 * GI]
    small = kit.make_node("small", allocatable={"cpu": "2", "memory": "8Gi", "pods": "110"})
    plugin = fit()
    state = CycleState()
    plugin.pre_filter(state, POD_LEVEL, Snapshot.from_objects([small]).node_infos())
    status = plugin.filter(state, POD_LEVEL, Snapshot.from_objects([small]).get("small"))
    assert status is not None and status.reasons == ("Insufficient cpu",)


# What a pod already on the node counts for cpu / memory when scoring (upstream
# PodInfo.CalculateResource's Non0CPU / Non0Mem), in every combination of pod-level requests,
# containers with and without requests, init and sidecar containers and overhead (RuntimeClass
# overhead upstream), then NodeResourcesFit's score for a 1 cpu / 1Gi pod on that 4 cpu / 8Gi
# node. Each row as kube-scheduler v1.36.2 logged it at -v=10 (requestedResource, resourceScore).
NON_ZERO_CASES = [
    pytest.param(pod("x", [ctr("a")]), (DEF_CPU, DEF_MEM), 78, id="no pod level: placeholders"),
    pytest.param(pod("x", [ctr("a", cpu="500m"), ctr("b")]), (500 + DEF_CPU, 2 * DEF_MEM), 71,
                 id="no pod level: placeholder per container lacking it"),
    pytest.param(pod("x", [ctr("a")], overhead={"cpu": "250m"}), (250 + DEF_CPU, DEF_MEM), 75,
                 id="no pod level: overhead does not replace the placeholder"),
    pytest.param(pod("x", [ctr("a", cpu="500m"), ctr("b")], pod_requests={"memory": "2Gi"}),
                 (500, 2 * GI), 62, id="pod level memory, one container names cpu (found by the fuzzer)"),
    pytest.param(pod("x", [ctr("a"), ctr("b")], pod_requests={"memory": "2Gi"}),
                 (2 * DEF_CPU, 2 * GI), 66, id="pod level memory, no cpu anywhere: placeholder per container"),
    pytest.param(pod("x", [ctr("a"), ctr("b")], pod_requests={"cpu": "1", "memory": "1Gi"}),
                 (1000, GI), 62, id="pod level cpu and memory: no placeholder"),
    pytest.param(pod("x", [ctr("a", memory="0"), ctr("b")], pod_requests={"cpu": "2"}),
                 (2000, 0), 56, id="pod level cpu, explicit zero memory counts as named"),
    pytest.param(pod("x", [ctr("a", memory="1Gi"), ctr("b")], pod_requests={"cpu": "2"}),
                 (2000, GI), 50, id="pod level cpu, one container names memory"),
    pytest.param(pod("x", [ctr("a")], pod_requests={"memory": "2Gi"}, overhead={"cpu": "250m"}),
                 (250, 2 * GI), 65, id="pod level memory, overhead names cpu"),
    pytest.param(pod("x", [ctr("a")], pod_requests={"memory": "2Gi"}, overhead={"memory": "100Mi"}),
                 (DEF_CPU, 2 * GI + 100 * MI), 66, id="pod level memory, overhead memory added on top"),
    pytest.param(pod("x", [ctr("a")], init=[ctr("i", cpu="1")], pod_requests={"memory": "2Gi"}),
                 (1000, 2 * GI), 56, id="pod level memory, an init container names cpu"),
    pytest.param(pod("x", [ctr("a")], init=[ctr("i")], pod_requests={"memory": "2Gi"}),
                 (DEF_CPU, 2 * GI), 67, id="pod level memory, init container placeholder at its peak"),
    pytest.param(pod("x", [ctr("a")], init=[sidecar("s")], pod_requests={"memory": "2Gi"}),
                 (2 * DEF_CPU, 2 * GI), 66, id="pod level memory, sidecar placeholder runs with the container"),
    pytest.param(pod("x", [ctr("a")], init=[sidecar("s", cpu="300m")], pod_requests={"memory": "2Gi"}),
                 (300, 2 * GI), 64, id="pod level memory, a sidecar names cpu"),
    pytest.param(pod("x", [ctr("a", cpu="1")], pod_requests={"hugepages-2Mi": "4Mi"},
                     pod_limits={"hugepages-2Mi": "4Mi"}),
                 (1000, DEF_MEM), 67, id="pod level hugepages only, memory named nowhere"),
]


@pytest.mark.parametrize("existing, expected, score", NON_ZERO_CASES)
def test_node_counts_the_placeholder_only_where_upstream_does(existing, expected, score):
    """The fuzzer's case: x counts 500m cpu (score 62); a placeholder on its second container
    would make it 600m (61)."""
    existing = existing.with_node("n1")
    node_info = Snapshot.from_objects([N1], [existing]).get("n1")
    counted = node_info.non_zero_requested
    assert (counted.get("cpu", 0), counted.get("memory", 0)) == expected
    incoming = pod("p", [ctr("c", cpu="1", memory="1Gi")])
    assert scores(fit(), incoming, [N1], [existing]) == {"n1": score}


@pytest.mark.parametrize("containers, pod_limits, pod_requests, expected", [
    pytest.param([ctr("a", cpu="1"), ctr("b", cpu="500m")], {"cpu": "4", "memory": "4Gi"}, None,
                 {"cpu": 1500, "memory": 4 * GI}, id="containers' cpu, limit's memory"),
    pytest.param([ctr("a")], {"cpu": "4", "memory": "2Gi"}, {"memory": "1Gi"}, {"cpu": 4000, "memory": GI},
                 id="no container names cpu: the limit"),
    pytest.param([ctr("a", cpu="1")], {"cpu": "4"}, {"cpu": "2"}, {"cpu": 2000},
                 id="a pod-level request is kept"),
    pytest.param([ctr("a", cpu="1")], None, {"memory": "1Gi"}, {"cpu": 1000, "memory": GI},
                 id="no pod-level limits: no defaulting"),
])
def test_pod_level_requests_are_defaulted_as_the_api_server_does(containers, pod_limits, pod_requests,
                                                                 expected):
    """Upstream ``defaultPodRequests`` (``pkg/apis/core/v1/defaults.go``): with pod-level limits, a
    missing pod-level request takes the containers' aggregated request, else the limit. Filter
    (``computePodResourceRequest``) sees the result. The first three rows are what a v1.36.2 API
    server stored for those pods."""
    p = pod("p", containers, pod_requests=pod_requests, pod_limits=pod_limits)
    assert {k: v for k, v in p.request().items() if k in ("cpu", "memory")} == expected
