"""Metrics sources (load-watcher's format from a file, node annotations) and the cache of recently
bound pods (upstream ``handler_test.go``, TestHandlerCacheCleanup; ``collector_test.go``)."""

from __future__ import annotations

import json
import os
import re

import pytest

from kschedfw import testing as kit
from kschedfw.clock import SIMULATION_EPOCH, SimulatedClock
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.framework.handle import Handle

from kschedfw_trimaran.handler import PodAssignEventHandler, PodInfo
from kschedfw_trimaran.metrics import (AVERAGE, CPU, LATEST, MEMORY, STD, AnnotationMetricsSource, FileMetricsSource,
                                       Metric, MetricsFileError, parse_watcher_metrics)

T0 = SIMULATION_EPOCH.timestamp()

WATCHER_RESPONSE = {  # upstream collector_test.go's watcherResponse, as JSON
    "timestamp": 0, "window": {"duration": "", "start": 0, "end": 0}, "source": "",
    "data": {"NodeMetricsMap": {"node-1": {"metrics": [
        {"name": "", "type": "CPU", "operator": "AVG", "value": 80},
        {"name": "", "type": "CPU", "operator": "STD", "value": 16},
        {"name": "", "type": "Memory", "operator": "AVG", "value": 25},
        {"name": "", "type": "Memory", "operator": "STD", "value": 6.25},
    ]}}},
}


def pod(name, node="", uid=None):
    return kit.make_pod(name, uid=uid or name, node_name=node)


def node(name, annotations=None):
    return kit.make_node(name, capacity={"cpu": "4"}, annotations=annotations, hostname_label=False)


# --------------------------------------------------------------------------- files (collector_test.go)

def test_get_node_metrics(tmp_path):
    path = tmp_path / "watcher.json"
    path.write_text(json.dumps(WATCHER_RESPONSE))
    source = FileMetricsSource(path, Handle())
    metrics, all_metrics = source.node_metrics("node-1", None)
    assert metrics == (Metric("", CPU, AVERAGE, "", 80), Metric("", CPU, STD, "", 16),
                       Metric("", MEMORY, AVERAGE, "", 25), Metric("", MEMORY, STD, "", 6.25))
    assert set(all_metrics.nodes) == {"node-1"}


def test_get_node_metrics_nil_for_node(tmp_path):
    path = tmp_path / "watcher.json"
    path.write_text(json.dumps({**WATCHER_RESPONSE, "data": {"NodeMetricsMap": {}}}))
    metrics, all_metrics = FileMetricsSource(path, Handle()).node_metrics("node-1", None)
    assert metrics is None
    assert all_metrics is not None and all_metrics.nodes == {}


def test_never_populated(tmp_path):
    path = tmp_path / "watcher.json"
    path.write_text(json.dumps({**WATCHER_RESPONSE, "data": {"NodeMetricsMap": None}}))
    assert FileMetricsSource(path, Handle()).node_metrics("node-1", None) == (None, None)


def test_shorthand_and_times():
    parsed = parse_watcher_metrics({"window": {"end": "2026-01-01T00:00:00Z"}, "nodes": {"a": 35, "b": "12.5%"}})
    assert parsed.window.end == int(T0)
    assert parsed.nodes == {"a": (Metric("cpu", CPU, LATEST, "", 35.0),), "b": (Metric("cpu", CPU, LATEST, "", 12.5),)}


@pytest.mark.parametrize("doc, message", [
    ([], "expected a mapping"),
    ({"source": "x"}, "expected data.NodeMetricsMap (load-watcher format) or nodes (shorthand)"),
    ({"nodes": {"a": "busy"}}, "nodes.a: expected a CPU utilisation in percent, got 'busy'"),
    ({"data": {"NodeMetricsMap": {"a": {"metrics": [{"type": "CPU", "value": "x"}]}}}},
     "data.NodeMetricsMap.a.metrics[0].value: expected a number, got 'x'"),
    ({"window": {"end": "yesterday"}, "nodes": {}}, "window.end: expected Unix seconds or an RFC 3339 time"),
])
def test_bad_documents(doc, message):
    with pytest.raises(MetricsFileError, match=re.escape(message)):
        parse_watcher_metrics(doc)


def test_file_is_reread_every_30_seconds_when_it_changes(tmp_path):
    clock = SimulatedClock()
    path = tmp_path / "m.yaml"
    path.write_text("nodes: {a: 10}\n")
    source = FileMetricsSource(path, Handle(clock=clock))
    path.write_text("nodes: {a: 70, b: 1}\n")
    os.utime(path, ns=(1, 1))  # a different mtime, whatever the file system's resolution
    assert source.node_metrics("a", None)[0][0].value == 10
    clock.set(30)
    assert source.node_metrics("a", None)[0][0].value == 70
    path.write_text("not: [valid")  # a broken file keeps the last good metrics
    clock.set(60)
    assert source.node_metrics("b", None)[0][0].value == 1


# --------------------------------------------------------------------------- annotations

def test_annotation_source():
    clock = SimulatedClock()
    source = AnnotationMetricsSource(Handle(clock=clock), "cpu")
    clock.set(42)
    metrics, all_metrics = source.node_metrics("n", node("n", {"cpu": "35"}))
    assert metrics == (Metric("annotation:cpu", CPU, LATEST, "", 35.0),)
    assert all_metrics.window.end == int(T0) + 42
    assert source.node_metrics("n", node("n"))[0] is None
    assert source.node_metrics("n", node("n", {"cpu": "hot"}))[0] is None


# --------------------------------------------------------------------------- handler_test.go

class Clock:
    def __init__(self, now: float) -> None:
        self.value = now

    def __call__(self) -> float:
        return self.value


@pytest.mark.parametrize("infos, pod_to_update, expected", [
    pytest.param([0, 0, 0], "Pod-4", ["Pod-4"], id="OnUpdate doesn't add unassigned pods"),
    pytest.param([0, 0, 0, "now"], "Pod-5", ["Pod-4", "Pod-5"], id="cleanupCache doesn't delete newly added pods"),
    pytest.param([-300, -10, -5], None, ["Pod-2", "Pod-3"], id="cleanupCache deletes old pods"),
])
def test_handler_cache_cleanup(infos, pod_to_update, expected):
    now = 1_000_000.0
    handler = PodAssignEventHandler(Clock(now))
    cache = handler.scheduled_pods_cache.setdefault("node-1", [])
    for i, offset in enumerate(infos, start=1):
        stamp = now if offset == "now" else (0.0 if offset == 0 else now + offset)
        cache.append(PodInfo(stamp, pod(f"Pod-{i}", "node-1")))
    if pod_to_update:
        handler.on_update(pod(pod_to_update), pod(pod_to_update, "node-1"))
    handler.cleanup_cache()
    assert [info.pod.name for info in handler.scheduled_pods_cache["node-1"]] == expected


def test_handler_follows_the_cluster():
    clock = SimulatedClock()
    cluster = MemoryCluster(clock)
    cluster.create(node("n1"))
    cluster.create(pod("running", "n1"))
    cluster.deliver()
    handler = PodAssignEventHandler(lambda: T0 + clock.now())
    handler.follow(Handle(backend=cluster))  # lists what is there, then subscribes
    clock.set(10)
    pending = cluster.create(pod("pending"))
    cluster.deliver()
    assert [i.pod.name for i in handler.pods_on("n1")] == ["running"]
    cluster.bind(pending, "n1")
    cluster.deliver()
    assert [(i.pod.name, i.timestamp - T0) for i in handler.pods_on("n1")] == [("running", 0), ("pending", 10)]
    cluster.remove("Pod", "running", "default")
    cluster.deliver()
    assert [i.pod.name for i in handler.pods_on("n1")] == ["pending"]
    clock.set(300)  # the 5-minute cleanup drops what is older than 60 s
    handler.pods_on("n1")
    assert [i.pod.name for i in handler.scheduled_pods_cache.get("n1", [])] == ["pending"]  # upstream keeps all-old
    clock.set(580)
    cluster.bind(cluster.create(pod("late")), "n1")
    cluster.deliver()
    clock.set(600)
    assert [i.pod.name for i in handler.pods_on("n1")] == ["late"]
