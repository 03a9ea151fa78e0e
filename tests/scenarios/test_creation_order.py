"""Cluster files are created like ``kubectl create -f`` creates them against a real API server:
in file order, one after another, with creationTimestamps in whole seconds, while the scheduler's
queue sees each pod at its own sub-second instant."""

from __future__ import annotations

import datetime as dt

import pytest

from kschedfw.api.load import parse_manifests
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.clock import SIMULATION_EPOCH
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import CREATE_SPACING_SECONDS, Simulation

#: names in reverse alphabetical order, so file order and name order disagree
NAMES = ["p9", "p8", "p7", "p6", "p5", "p4", "p3", "p2", "p1"]


def cluster_file(count: int = len(NAMES)) -> str:
    """One node with room for 4 of ``count`` equal-priority pods, pods listed before the node."""
    pods = [f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: c, image: pause, resources: {{requests: {{cpu: 500m}}}}}}]
""" for name in NAMES[:count]]
    node = """---
apiVersion: v1
kind: Node
metadata: {name: only, labels: {kubernetes.io/hostname: only}}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
"""
    return "".join(pods) + node


def simulation(text: str) -> Simulation:
    registry = default_registry()
    return Simulation(default_config(registry), registry, parse_manifests(text, source="cluster.yaml"))


def test_the_queue_sees_pods_in_file_order_at_increasing_sub_second_times():
    sim = simulation(cluster_file())
    queued = [(qpi.pod.name, qpi.timestamp) for _, qpi in sim.scheduler.queue.list_pending()]
    # the node is created first (pods depend on it), then the pods in file order, 50 ms apart;
    # the last object is created at 0, when the scheduling loop starts
    n = len(NAMES)
    assert [name for name, _ in queued] == NAMES
    expected = [-(n - 1 - i) * CREATE_SPACING_SECONDS for i in range(n)]
    assert [ts for _, ts in queued] == pytest.approx(expected)
    assert all(a < b for (_, a), (_, b) in zip(queued, queued[1:])) and queued[0][1] > -1
    assert sim.clock.now() == 0.0


def test_creation_timestamps_are_whole_seconds_truncated_as_the_api_server_stores_them():
    sim = simulation(cluster_file())
    pods = {p.name: p for p in sim.cluster.list("Pod")}
    # p9 is created at -0.4 s: the API server stores 23:59:59 of the day before the epoch, never
    # the fraction and never rounded up
    assert pods["p9"].creation_timestamp == SIMULATION_EPOCH - dt.timedelta(seconds=1)
    assert pods["p1"].creation_timestamp == SIMULATION_EPOCH
    assert all(p.creation_timestamp.microsecond == 0 for p in pods.values())
    assert sim.cluster.get("Node", "only").creation_timestamp == SIMULATION_EPOCH - dt.timedelta(seconds=1)


def test_equal_priority_pods_are_bound_in_file_order_until_the_node_is_full():
    # upstream PrioritySort: equal priority, the pod the informer saw first goes first; kubectl
    # creates them in file order, so the first four of the file fit and are bound in that order
    # (the real kube-scheduler does the same: tests/kube/test_creation_order.py)
    result = simulation(cluster_file()).run()
    bound = [e.object_key for e in result.cluster.events if e.reason == "Scheduled"]
    assert bound == ["default/p9", "default/p8", "default/p7", "default/p6"]
    pending = sorted(p.key for p in result.pods if p.status == "Pending")
    assert pending == ["default/p1", "default/p2", "default/p3", "default/p4", "default/p5"]


def test_a_single_object_is_created_at_zero():
    sim = simulation(cluster_file(0))
    assert sim.clock.now() == 0.0
    assert sim.cluster.get("Node", "only").creation_timestamp == SIMULATION_EPOCH


def test_every_kind_gets_the_stamp_in_its_manifest_unless_it_came_with_one():
    # --write-out and plugins reading other kinds (a PodGroup) see the manifest, as a
    # ``kubectl get -o yaml`` would show it; a snapshot's own creationTimestamp is kept
    text = cluster_file(1) + """---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {minMember: 1}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: old, creationTimestamp: "2024-05-06T07:08:09Z"}
value: 10
"""
    sim = simulation(text)
    stamps = {o.name: o.raw["metadata"].get("creationTimestamp") for o in sim.cluster.all_objects()}
    assert stamps == {"p9": "2026-01-01T00:00:00Z", "only": "2025-12-31T23:59:59Z",
                      "g": "2025-12-31T23:59:59Z", "old": "2024-05-06T07:08:09Z"}


def test_pods_waiting_together_behind_a_cordon_are_taken_in_file_order():
    # the same as tests/kube/test_creation_order.py's second case, where kube-scheduler took
    # p9, p8, p7, p6: all pods fail on the cordoned node, the uncordon moves them back together
    # and the queue's tie-break between equal priorities (their timestamps) decides
    cordoned = cluster_file().replace("metadata: {name: only,", "spec: {unschedulable: true}\nmetadata: {name: only,")
    uncordoned = parse_manifests(cluster_file().split("---\n")[-1], source="step.yaml")
    registry = default_registry()
    sim = Simulation(default_config(registry), registry, parse_manifests(cordoned, source="cluster.yaml"),
                     [Step(10, "update", tuple(uncordoned))])
    result = sim.run()
    bound = [(e.time, e.object_key) for e in result.cluster.events if e.reason == "Scheduled"]
    assert [key for _, key in bound] == ["default/p9", "default/p8", "default/p7", "default/p6"]
    assert all(when >= 10 for when, _ in bound)
