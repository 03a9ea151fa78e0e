"""A plugin whose QueueingHint reads state its own Node subscription keeps (``OpenNodes``)
requeues the same pods in a simulation and against a real API server: in both, the subscription
hears a change before the scheduler's handlers run the hint on it (Subscriber's promise). Were
the order the other way round, the hint would read the state before the change and skip the pod,
which would stay pending (until the five-minute flush)."""

from __future__ import annotations

import threading
import time

import pytest

from kschedfw.api.load import parse_object
from kschedfw.kube_runner import KubeRunner
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import Registry
from kschedfw.simulation import Simulation
from tests.contract.author_plugins import OpenNodes
from tests.contract.worlds import node_manifest, pod_manifest

NAMESPACE = "open-nodes"
SCHEDULER = "open-nodes"
NODES = ("open-a", "open-b")
#: what both runs must show: the hint queued the pod wanting the opened node, and only it bound
EXPECTED_HINTS = [("p-a", "open-a", "Queue")]
EXPECTED_PLACEMENT = {"p-a": "open-a", "p-b": ""}


def wanting(name: str, node: str) -> dict:
    manifest = pod_manifest(name, NAMESPACE, schedulerName=SCHEDULER)
    manifest["metadata"]["annotations"] = {"open-nodes/wants": node}
    return manifest


def scheduler_setup(tmp_path):
    """The registry of what is installed plus OpenNodes, and a profile adding it at Filter."""
    registry = Registry.discover()
    registry.add_class(OpenNodes)
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "leaderElection:\n  leaderElect: false\n"
                    f"profiles:\n- schedulerName: {SCHEDULER}\n  plugins:\n"
                    "    filter:\n      enabled: [{name: OpenNodes}]\n")
    config, diagnostics = load_config(str(path), registry)
    assert config is not None, diagnostics
    return config, registry


@pytest.fixture(autouse=True)
def fresh_hints():
    OpenNodes.hints.clear()
    yield
    OpenNodes.hints.clear()


def test_the_hint_reads_the_subscribers_state_in_a_simulation(tmp_path):
    config, registry = scheduler_setup(tmp_path)
    objects = [parse_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
               *(parse_object(node_manifest(n)) for n in NODES),
               parse_object(wanting("p-a", "open-a")), parse_object(wanting("p-b", "open-b"))]
    opened = Step(at=10.0, action="update", objects=(parse_object(node_manifest("open-a", open="true")),))
    result = Simulation(config, registry, objects, [opened]).run(until=60.0)
    assert {p.key.split("/")[1]: p.node for p in result.pods} == EXPECTED_PLACEMENT
    assert OpenNodes.hints == EXPECTED_HINTS


def test_the_hint_reads_the_subscribers_state_under_run(tmp_path, control_plane):
    config, registry = scheduler_setup(tmp_path)
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    for name in NODES:
        control_plane.create_ready_node(name)
    runner = KubeRunner(config, registry, kubeconfig=control_plane.kubeconfig)
    thread = threading.Thread(target=runner.run, daemon=True)
    try:
        assert runner.start(sync_timeout=30)
        thread.start()
        for name, node in (("p-a", "open-a"), ("p-b", "open-b")):
            control_plane.api("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", wanting(name, node))
        wait_for(lambda: all(unschedulable(control_plane, name) for name in ("p-a", "p-b")), "both pods tried")
        control_plane.api("PATCH", "/api/v1/nodes/open-a", {"metadata": {"labels": {"open": "true"}}},
                          content_type="application/merge-patch+json")
        wait_for(lambda: placement(control_plane)["p-a"], "p-a bound")
        time.sleep(1.5)  # p-b's backoff would be over, were it queued
        assert placement(control_plane) == EXPECTED_PLACEMENT
        assert OpenNodes.hints == EXPECTED_HINTS
    finally:
        runner.stop()
        thread.join(10)
        runner.close()
        for name in NODES:
            control_plane.api("DELETE", f"/api/v1/nodes/{name}")


def placement(control_plane) -> dict[str, str]:
    items = control_plane.api("GET", f"/api/v1/namespaces/{NAMESPACE}/pods")["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in items}


def unschedulable(control_plane, name: str) -> bool:
    got = control_plane.api("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")
    return any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
               for c in got["status"].get("conditions") or [])


def wait_for(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
