"""Differential metrics: the same story (a pod failing, relabelled, a gated pod released, a node
added, a namespace created) told to kube-scheduler and to kschedfw on one API server; the event
labels of scheduler_event_handling_duration_seconds and the scheduling attempts must count alike
(the samples that do not depend on timing)."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import threading
import time
import urllib.request

import pytest

from kschedfw.kube_runner import KubeRunner
from kschedfw.config.validate import load_config
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.testing.controlplane import ControlPlane, free_port
from tests.kube.helpers import pod_manifest, wait_for

FAMILIES = ("scheduler_event_handling_duration_seconds_count", "scheduler_schedule_attempts_total")


def story(cp: ControlPlane, ns: str, scheduler: str) -> None:
    def get(name: str) -> dict:
        return cp.api("GET", f"/api/v1/namespaces/{ns}/pods/{name}")

    def patch(name: str, body: dict) -> None:
        cp.api("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}", body, content_type="application/merge-patch+json")

    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    cp.api("POST", f"/api/v1/namespaces/{ns}/pods", pod_manifest("big", ns, scheduler=scheduler, cpu="2"))
    cp.api("POST", f"/api/v1/namespaces/{ns}/pods", pod_manifest("foreign", ns, scheduler="nobody"))
    wait_for(lambda: any(c["type"] == "PodScheduled" for c in get("big")["status"].get("conditions") or []),
             what="big's failure")
    patch("big", {"metadata": {"labels": {"x": "y"}}})
    patch("foreign", {"metadata": {"labels": {"x": "y"}}})
    cp.api("POST", f"/api/v1/namespaces/{ns}/pods",
           pod_manifest("gated", ns, scheduler=scheduler, schedulingGates=[{"name": "g"}]))
    time.sleep(1)
    patch("gated", {"spec": {"schedulingGates": None}})
    wait_for(lambda: get("gated")["spec"].get("nodeName"), what="gated's bind")
    patch("gated", {"metadata": {"labels": {"x": "y"}}})
    cp.create_ready_node(f"{ns}-n2", cpu="4")
    wait_for(lambda: get("big")["spec"].get("nodeName"), timeout=40, what="big's bind")
    time.sleep(1)  # the last watch events reach both schedulers' handlers


def samples(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line.startswith(FAMILIES):
            name, _, value = line.rpartition(" ")
            if float(value):
                out[name.replace(', profile="up"', "").replace(', profile="ours"', "")
                         .replace('profile="up"', "").replace('profile="ours"', "")] = float(value)
    return out


def since(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


@pytest.fixture
def small_node(control_plane: ControlPlane, namespace):
    control_plane.create_ready_node(f"{namespace}-n1", cpu="1")
    yield
    for name in (f"{namespace}-n1", f"{namespace}-u-n2", f"{namespace}-k-n2"):
        try:
            control_plane.api("DELETE", f"/api/v1/nodes/{name}")
        except Exception:
            pass


@pytest.mark.usefixtures("small_node")
def test_event_handling_and_attempts_count_as_kube_schedulers(control_plane, namespace, tmp_path):
    kube_scheduler = control_plane.assets / "kube-scheduler"
    if not os.access(kube_scheduler, os.X_OK):
        pytest.skip(f"no kube-scheduler in {control_plane.assets}")
    config = tmp_path / "upstream.yaml"
    config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(control_plane.kubeconfig)}, "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "up"}]}))
    port = free_port()
    log_path = tmp_path / "kube-scheduler.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([str(kube_scheduler), f"--config={config}", "--bind-address=127.0.0.1",
                                 f"--secure-port={port}", "-v=3", "--authorization-always-allow-paths=/metrics",
                                 f"--authentication-kubeconfig={control_plane.kubeconfig}",
                                 f"--authorization-kubeconfig={control_plane.kubeconfig}"],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            insecure = ssl.create_default_context()
            insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE

            def scrape() -> dict[str, float]:
                with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", context=insecure, timeout=10) as r:
                    return samples(r.read().decode())

            wait_for(lambda: '"Handlers synced"' in log_path.read_text(), timeout=60, what="kube-scheduler's informers")
            upstream_before = scrape()  # the initial list (the node n1)
            story(control_plane, f"{namespace}-u", "up")
            upstream = since(upstream_before, scrape())
        finally:
            proc.terminate()
            proc.wait(30)
    control_plane.api("DELETE", f"/api/v1/nodes/{namespace}-u-n2")
    for name in ("big", "gated", "foreign"):
        control_plane.api("DELETE", f"/api/v1/namespaces/{namespace}-u/pods/{name}", {"gracePeriodSeconds": 0})

    ours_config = tmp_path / "ours.yaml"
    ours_config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                       "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": False},
                                       "profiles": [{"schedulerName": "ours"}]}))
    registry = default_registry()
    loaded, diagnostics = load_config(str(ours_config), registry, FeatureGates.parse(""))
    assert loaded is not None, diagnostics
    runner = KubeRunner(loaded, registry, kubeconfig=control_plane.kubeconfig)
    metrics = runner.metrics
    assert runner.start(30)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: not control_plane.api("GET", f"/api/v1/namespaces/{namespace}-u/pods")["items"],
                 what="the first run's pods gone")
        time.sleep(1)
        before = samples(metrics.render().decode())  # the first run's deletions, seen at start
        story(control_plane, f"{namespace}-k", "ours")
        metrics.publish(runner.scheduler)
        after = samples(metrics.render().decode())
    finally:
        runner.stop()
        thread.join(10)
        runner.close()
    ours = since(before, after)
    # a bind counts AssignedPodAdd and UnschedulablePodDelete; the foreign pod, the namespace: nothing
    assert upstream['scheduler_event_handling_duration_seconds_count{event="UnschedulablePodDelete"}'] == 2
    assert ours == upstream
