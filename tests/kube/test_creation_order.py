"""Differential: equal-priority pods created one after another (as ``kubectl create -f`` does)
on a node with room for only some of them: the shipped kube-scheduler, ``kschedfw run`` and the
embedded simulation bind the same pods, in the same order: file order."""

from __future__ import annotations

from pathlib import Path

import yaml

from kschedfw.api.load import parse_manifests
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest, wait_for
from tests.kube.test_differential import both

#: created in this order; reverse alphabetical, so an order by name would show
NAMES = ["p9", "p8", "p7", "p6", "p5", "p4", "p3", "p2", "p1"]
FITS = 4  # 500m each on a 2-CPU node


def creation_waves(node: str):
    def make(ns: str, scheduler: str) -> list[list[dict]]:
        def pod(name: str, **kwargs) -> dict:
            return pod_manifest(name, ns, scheduler=scheduler, nodeSelector={"kubernetes.io/hostname": node},
                                **kwargs)
        return [[canary(pod)], [pod(name, cpu="500m") for name in NAMES]]
    return make


def canary(pod) -> dict:
    """Bound once the scheduler watches; takes no room and tolerates a cordon."""
    manifest = pod("canary", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                            "effect": "NoSchedule"}])
    del manifest["spec"]["containers"][0]["resources"]
    return manifest


def queued_waves(cp: ControlPlane, node: str):
    """All pods wait in the queue at once: created on a cordoned node, which is then uncordoned,
    so the queue's tie-break between equal priorities (not the arrival pace) decides."""
    def make(ns: str, scheduler: str):
        def pod(name: str, **kwargs) -> dict:
            return pod_manifest(name, ns, scheduler=scheduler, nodeSelector={"kubernetes.io/hostname": node},
                                **kwargs)
        cordon(cp, node, True)
        yield [canary(pod)]
        yield [pod(name, cpu="500m") for name in NAMES]  # play() waits: all Unschedulable
        cordon(cp, node, False)
        wait_for(lambda: sum(1 for p in cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"]
                             if p["spec"].get("nodeName") and p["metadata"]["name"] != "canary") == FITS,
                 timeout=60, what=f"{FITS} pods bound after the uncordon")
    return make


def cordon(cp: ControlPlane, node: str, unschedulable: bool) -> None:
    cp.api("PATCH", f"/api/v1/nodes/{node}", {"spec": {"unschedulable": unschedulable or None}},
           content_type="application/merge-patch+json")


def scheduling_order(log: Path, ns: str, bound: set[str]) -> list[str]:
    """The ``bound`` pods in the order kube-scheduler (``-v=3``) made its last, successful
    attempt at each. Its Scheduled events may come in another order: upstream binds in
    goroutines, so two pods scheduled a few milliseconds apart may be bound either way."""
    last: dict[str, int] = {}
    for i, line in enumerate(log.read_text().splitlines()):
        if '"Attempting to schedule pod"' in line:
            name = line.split(f'pod="{ns}/', 1)[1].split('"', 1)[0]
            if name in bound:
                last[name] = i
    return sorted(last, key=last.__getitem__)


def last_attempt_order(attempts: list[str], bound: set[str]) -> list[str]:
    """The ``bound`` pods in the order kschedfw made its last attempt at each (its binds, like
    upstream's, run off the scheduling thread and may finish in another order)."""
    last = {name: i for i, name in enumerate(attempts) if name in bound}
    return sorted(last, key=last.__getitem__)


def test_equal_priority_pods_are_bound_in_creation_order_by_both(control_plane, namespace, tmp_path):
    node = f"{namespace}-only"
    control_plane.create_ready_node(node, cpu="2")
    try:
        attempts: list[str] = []
        upstream, ours = both(control_plane, namespace, tmp_path, creation_waves(node), scheduler_args=["-v=3"],
                              attempts=attempts)
    finally:
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
    first = NAMES[:FITS]
    assert sorted(n for n, v in upstream.items() if v[0] and n != "canary") == sorted(first)
    assert {n: v[0] for n, v in ours.items()} == {n: v[0] for n, v in upstream.items()}
    assert scheduling_order(tmp_path / "kube-scheduler.log", namespace, set(first)) == first
    assert last_attempt_order(attempts, set(first)) == first

    # the embedded simulation, given the same objects as a cluster file, agrees
    manifests = [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                  "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}]
    manifests += [m for wave in creation_waves(node)("default", "default-scheduler") for m in wave]
    registry = default_registry()
    result = Simulation(default_config(registry), registry,
                        parse_manifests(yaml.safe_dump_all(manifests), source="cluster.yaml")).run()
    simulated = [e.object_key.split("/")[1] for e in result.cluster.events if e.reason == "Scheduled"]
    assert [n for n in simulated if n != "canary"] == first


def test_equal_priority_pods_waiting_together_are_bound_in_creation_order_by_both(control_plane, namespace,
                                                                                   tmp_path):
    node = f"{namespace}-only"
    control_plane.create_ready_node(node, cpu="2")
    try:
        attempts = []
        upstream, ours = both(control_plane, namespace, tmp_path, queued_waves(control_plane, node),
                              scheduler_args=["-v=3"], attempts=attempts)
    finally:
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
    first = NAMES[:FITS]
    # the four taken first are the first four created (by name it would be p1..p4), in that order
    assert sorted(n for n, v in upstream.items() if v[0] and n != "canary") == sorted(first)
    assert {n: v[0] for n, v in ours.items()} == {n: v[0] for n, v in upstream.items()}
    assert scheduling_order(tmp_path / "kube-scheduler.log", namespace, set(first)) == first
    assert last_attempt_order(attempts, set(first)) == first
