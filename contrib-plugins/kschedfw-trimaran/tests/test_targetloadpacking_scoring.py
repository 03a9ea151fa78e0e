"""TargetLoadPacking: the table of upstream ``targetloadpacking_test.go`` (TestNew,
TestTargetLoadPackingScoring), the scoring formula around the target, prediction per QoS class,
recently bound pods, and the args checks of ``New``/``NewCollector``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kschedfw import testing as kit
from kschedfw import CycleState, NodeInfo
from kschedfw.clock import SimulatedClock
from kschedfw.framework.handle import Handle

from kschedfw_trimaran import TargetLoadPacking, validate_args
from kschedfw_trimaran.metrics import CPU, LATEST, Metric, WatcherMetrics, Window
from kschedfw_trimaran.targetloadpacking import go_round

NODE_RESOURCES = {"cpu": "1000m", "memory": "1Gi"}
UPSTREAM_ARGS = {"watcherAddress": "http://deadbeef:2020", "targetUtilization": 40, "defaultRequestsMultiplier": "1.5"}


def make_node(name: str, capacity: dict | None = None, annotations: dict | None = None):
    """``st.MakeNode().Name(name).Capacity(res)``: capacity and allocatable."""
    return kit.make_node(name, capacity=capacity or NODE_RESOURCES, annotations=annotations, hostname_label=False)


def make_pod(name: str = "p", containers: list | None = None, overhead: dict | None = None, node: str = "",
             uid: str = ""):
    return kit.make_pod(name, containers=containers or [], overhead=overhead, node_name=node, uid=uid or None)


def pod_with_containers_and_overhead(overhead: int, *requests: int):
    """Upstream ``getPodWithContainersAndOverhead``: each container requests = limits = r millicores."""
    containers = [kit.container(f"test-container-{i}", requests={"cpu": f"{r}m"}, limits={"cpu": f"{r}m"})
                  for i, r in enumerate(requests)]
    return make_pod(containers=containers, overhead={"cpu": f"{overhead}m"})


def watcher_json(nodes: dict[str, float] | None, end: int = 0) -> dict:
    """What load-watcher's /watcher endpoint serves (json.Marshal of WatcherMetrics)."""
    node_map = None if nodes is None else {
        name: {"metrics": [{"name": "", "type": "CPU", "operator": "Latest", "value": value}]}
        for name, value in nodes.items()}
    return {"timestamp": 0, "window": {"duration": "", "start": 0, "end": end}, "source": "",
            "data": {"NodeMetricsMap": node_map}}


class FixedSource:
    """A MetricsSource returning one WatcherMetrics, as a load-watcher client would."""

    def __init__(self, metrics: WatcherMetrics) -> None:
        self.metrics = metrics

    def node_metrics(self, node_name, node):
        if self.metrics.nodes is None:
            return None, None
        found = self.metrics.nodes.get(node_name)
        return (found, self.metrics) if found is not None else (None, self.metrics)


def test_new():
    plugin = TargetLoadPacking(UPSTREAM_ARGS, Handle())
    assert plugin.target_utilization == 40
    assert plugin.requests_milli_cores == 1000
    assert plugin.requests_multiplier == 1.5


@pytest.mark.parametrize("pod, metrics, expected", [
    pytest.param(make_pod(), {"node-1": 0}, 40, id="new node"),
    pytest.param(make_pod(), {"node-1": 50}, 33, id="hot node"),
    pytest.param(pod_with_containers_and_overhead(0, 1000), {"node-1": 30}, 0,
                 id="excess utilization returns min score"),
    pytest.param(make_pod(), None, 0, id="404 resp from watcher"),
])
def test_target_load_packing_scoring(tmp_path: Path, pod, metrics, expected):
    # the watcher's JSON answer, served here by a metrics file
    path = tmp_path / "watcher.json"
    path.write_text(json.dumps(watcher_json(metrics)))
    plugin = TargetLoadPacking({**UPSTREAM_ARGS, "metricsFile": str(path)}, Handle())
    node = make_node("node-1")
    assert plugin.score(CycleState(), pod, NodeInfo(node=node)) == expected


def score_with(percent: float, pod=None, target: int = 40, capacity: str = "1000m") -> int:
    node = make_node("n", {"cpu": capacity, "memory": "1Gi"})
    source = FixedSource(WatcherMetrics(0, Window(), "", {"n": (Metric("", CPU, LATEST, "", percent),)}))
    plugin = TargetLoadPacking({"targetUtilization": target}, Handle())
    plugin.metrics_source = source
    return plugin.score(CycleState(), pod or make_pod(), NodeInfo(node=node))


@pytest.mark.parametrize("percent, expected", [
    (0, 40), (10, 55), (20, 70), (30, 85), (40, 100),   # up to the target: 40 -> 100
    (45, 37), (50, 33), (70, 20), (90, 7), (100, 0),    # beyond: falling to 0
    (100.5, 0), (250, 0),                              # above 100 %: minimum
])
def test_formula_around_the_target(percent, expected):
    assert score_with(percent) == expected


def test_formula_with_another_target():
    assert score_with(0, target=70) == 70
    assert score_with(70, target=70) == 100
    assert score_with(85, target=70) == 35  # round(70 * 15 / 30)


@pytest.mark.parametrize("container, predicted_millis", [
    pytest.param({"name": "c", "resources": {"limits": {"cpu": "300m"}}}, 300, id="limit"),
    pytest.param({"name": "c", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "300m"}}}, 300,
                 id="limit wins over request"),
    pytest.param({"name": "c", "resources": {"requests": {"cpu": "200m"}}}, 300, id="request x 1.5"),
    pytest.param({"name": "c", "resources": {"requests": {"cpu": "1m"}}}, 2, id="rounded half away from zero"),
    pytest.param({"name": "c"}, 1000, id="best effort: default requests"),
])
def test_predict_utilisation(container, predicted_millis):
    plugin = TargetLoadPacking({}, Handle())
    pod = make_pod(containers=[container])
    assert plugin.pod_cpu(pod) == predicted_millis


def test_overhead_and_args():
    plugin = TargetLoadPacking({"defaultRequests": {"cpu": "2"}, "defaultRequestsMultiplier": "2"}, Handle())
    pod = make_pod(containers=[{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "250m"}}}],
                   overhead={"cpu": "100m"})
    assert plugin.pod_cpu(pod) == 2000 + 500 + 100
    # defaultRequests without cpu: best-effort containers predict 0 (upstream reads Cpu() of the list)
    plugin = TargetLoadPacking({"defaultRequests": {"memory": "1Gi"}}, Handle())
    assert plugin.pod_cpu(make_pod(containers=[{"name": "a"}])) == 0


def test_pod_load_counts():
    # 1000m node at 10 % + a pod predicted at 200m -> 30 % -> round(60*30/40 + 40) = 85
    pod = make_pod(containers=[{"name": "c", "resources": {"limits": {"cpu": "200m"}}}])
    assert score_with(10, pod) == 85
    # the same pod makes it 2 cores + 200m on a 4-core node at 50 % -> 55 % -> round(40*45/60) = 30
    assert score_with(50, pod, capacity="4") == 30


def test_node_without_cpu_metric_scores_minimum():
    node = make_node("n")
    plugin = TargetLoadPacking({}, Handle())
    plugin.metrics_source = FixedSource(WatcherMetrics(0, Window(), "", {"n": (Metric("", "Memory", LATEST, "", 5),)}))
    assert plugin.score(CycleState(), make_pod(), NodeInfo(node=node)) == 0
    plugin.metrics_source = FixedSource(WatcherMetrics(0, Window(), "", {"n": (Metric("", CPU, "STD", "", 5),)}))
    assert plugin.score(CycleState(), make_pod(), NodeInfo(node=node)) == 0


def test_recently_bound_pods_are_added_until_the_metrics_show_them():
    clock = SimulatedClock()
    handle = Handle(clock=clock)
    plugin = TargetLoadPacking({"metricsAnnotation": "load"}, handle)
    node = make_node("n", {"cpu": "4", "memory": "1Gi"}, annotations={"load": "10"})
    pod = make_pod(containers=[{"name": "c"}])  # best effort: 1000m
    base = plugin.score(CycleState(), pod, NodeInfo(node=node))
    assert base == go_round(60 * 35 / 40 + 40)  # 400m + 1000m of 4000m = 35 %
    plugin.event_handler.on_add(make_pod("bound", [{"name": "c"}], node="n", uid="u1"))  # another 1000m, just bound
    assert plugin.score(CycleState(), pod, NodeInfo(node=node)) == go_round(40 * (100 - 60) / 60)
    clock.set(59)  # annotations are measured "now": the pod still counts for 60 s
    assert plugin.score(CycleState(), pod, NodeInfo(node=node)) == go_round(40 * (100 - 60) / 60)
    clock.set(60)
    assert plugin.score(CycleState(), pod, NodeInfo(node=node)) == base


@pytest.mark.parametrize("args, expected", [
    pytest.param({}, [], id="defaults"),
    pytest.param({"watcherAddress": "http://lw:2020", "metricProvider": {"type": ""}}, [], id="watcher"),
    pytest.param({"metricProvider": {"type": "Prometheus", "address": "http://p:9090"}}, [], id="prometheus"),
    pytest.param({"watcherAddress": "", "metricProvider": {"type": ""}},
                 ['metricProvider.type: Invalid value: "": invalid MetricProvider.Type, got '], id="no provider"),
    pytest.param({"metricProvider": {"type": "Graphite"}},
                 ['metricProvider.type: Invalid value: "Graphite": invalid MetricProvider.Type, got Graphite'],
                 id="unknown provider"),
    pytest.param({"defaultRequestsMultiplier": "one"},
                 ['defaultRequestsMultiplier: Invalid value: "one": unable to parse DefaultRequestsMultiplier: '
                  'strconv.ParseFloat: parsing "one": invalid syntax'], id="multiplier"),
    pytest.param({"defaultRequests": {"cpu": "lots"}},
                 ['defaultRequests.cpu: Invalid value: "lots": quantities must match the regular expression '
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"], id="quantity"),
])
def test_validate_args(args, expected):
    assert [str(e) for e in validate_args(args)] == expected
    if expected:
        with pytest.raises(ValueError):
            TargetLoadPacking(args, Handle())


def test_target_utilization_defaulting():
    assert TargetLoadPacking({"targetUtilization": 0}, Handle()).target_utilization == 40
    assert TargetLoadPacking({"targetUtilization": -5}, Handle()).target_utilization == 40
    assert TargetLoadPacking({"targetUtilization": 80}, Handle()).target_utilization == 80


def test_missing_metrics_file_fails_to_build(tmp_path):
    with pytest.raises(ValueError, match="cannot read metrics file"):
        TargetLoadPacking({"metricsFile": str(tmp_path / "nope.yaml")}, Handle())
