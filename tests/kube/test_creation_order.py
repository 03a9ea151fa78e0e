"""Differential: equal-priority pods created one after another (as ``kubectl create -f`` does)
on a node with room for only some of them: the shipped kube-scheduler, ``kschedfw run`` and the
embedded simulation bind the same pods, in the same order: file order (issue #11)."""

from __future__ import annotations

import yaml

from kschedfw.api.load import parse_manifests
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_catalog
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
        canary = pod("canary")  # no requests: bound once the scheduler watches, takes no room
        del canary["spec"]["containers"][0]["resources"]
        return [[canary], [pod(name, cpu="500m") for name in NAMES]]
    return make


def bind_order(cp: ControlPlane, ns: str) -> list[str]:
    """Pods in the order their Scheduled events were recorded (the events outlive the pods)."""
    def scheduled() -> list[dict] | None:
        events = cp.api("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
        found = [e for e in events if e["reason"] == "Scheduled" and e["regarding"]["name"] != "canary"]
        return found if len(found) == FITS else None
    events = wait_for(scheduled, what=f"{FITS} Scheduled events in {ns}")
    events.sort(key=lambda e: (e["eventTime"], int(e["metadata"]["resourceVersion"])))
    return [e["regarding"]["name"] for e in events]


def test_equal_priority_pods_are_bound_in_creation_order_by_both(control_plane, namespace, tmp_path):
    node = f"{namespace}-only"
    control_plane.create_ready_node(node, cpu="2")
    try:
        upstream, ours = both(control_plane, namespace, tmp_path, creation_waves(node))
    finally:
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
    first = NAMES[:FITS]
    assert sorted(n for n, v in upstream.items() if v[0] and n != "canary") == sorted(first)
    assert {n: v[0] for n, v in ours.items()} == {n: v[0] for n, v in upstream.items()}
    assert bind_order(control_plane, namespace) == first
    assert bind_order(control_plane, f"{namespace}-k") == first

    # the embedded simulation, given the same objects as a cluster file, agrees
    manifests = [{"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                  "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}]
    manifests += [m for wave in creation_waves(node)("default", "default-scheduler") for m in wave]
    registry = default_catalog()
    result = Simulation(default_config(registry), registry,
                        parse_manifests(yaml.safe_dump_all(manifests), source="cluster.yaml")).run()
    simulated = [e.object_key.split("/")[1] for e in result.cluster.events if e.reason == "Scheduled"]
    assert [n for n in simulated if n != "canary"] == first
