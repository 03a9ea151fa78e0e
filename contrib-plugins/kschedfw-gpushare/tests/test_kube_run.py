"""Under `kschedfw run` against a real kube-apiserver: PreBind writes the devices on the pods
through the API, and later pods see them (and see them freed when a pod is deleted). Skipped
without the Kubernetes binaries (KSCHEDFW_KUBE_ASSETS)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator

import pytest

from kschedfw.config.validate import load_config
from kschedfw.framework.registry import Registry
from kschedfw.kube_runner import KubeRunner
from kschedfw.testing.controlplane import ControlPlane, find_assets, missing_assets_reason

from kschedfw_gpushare.resources import GPU_CARD_MODEL, GPU_COUNT, GPU_INDEX, GPU_MILLI

NAMESPACE = "gpushare"
SCHEDULER = "kschedfw-gpushare"


@pytest.fixture(scope="module")
def control_plane() -> Iterator[ControlPlane]:
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    with ControlPlane(assets) as cp:
        yield cp


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def pod(name: str, milli: int, count: int = 1) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE,
                         "annotations": {GPU_MILLI: str(milli), GPU_COUNT: str(count)}},
            "spec": {"schedulerName": SCHEDULER, "containers": [{
                "name": "c", "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}


def test_devices_are_written_and_read_back(control_plane, tmp_path):
    cp = control_plane
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    cp.create_ready_node("t4-node", cpu="16", memory="64Gi", labels={GPU_CARD_MODEL: "T4"},
                         extra_allocatable={GPU_COUNT: "2", GPU_MILLI: "2000"})
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {{leaderElect: false}}
profiles:
- schedulerName: {SCHEDULER}
  plugins:
    multiPoint:
      enabled: [{{name: Open-Gpu-Share}}]
    score:
      disabled: [{{name: "*"}}]
      enabled: [{{name: BestFitScore, weight: 1000}}]
""")
    registry = Registry.discover()
    config, diagnostics = load_config(str(config_file), registry)
    assert config is not None, diagnostics
    runner = KubeRunner(config, registry, kubeconfig=cp.kubeconfig)
    assert runner.start(sync_timeout=30)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        def index_of(name: str) -> str | None:
            got = cp.api("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")
            if not (got.get("spec") or {}).get("nodeName"):
                return None
            return (got["metadata"].get("annotations") or {}).get(GPU_INDEX)

        placed = {}
        for name, milli in (("a", 600), ("b", 300), ("whole", 1000)):
            cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", pod(name, milli))
            placed[name] = wait_for(lambda: index_of(name), f"pod {name} bound with its devices")
        # best fit: b joins a on device 0 (100 left), the whole GPU takes device 1
        assert placed == {"a": "0", "b": "0", "whole": "1"}

        def unschedulable(name: str) -> bool:
            got = cp.api("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")
            return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                       for c in (got.get("status") or {}).get("conditions") or ())

        cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", pod("c", 400))
        wait_for(lambda: unschedulable("c"), "pod c reported unschedulable")
        cp.api("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/a", {"gracePeriodSeconds": 0})
        assert wait_for(lambda: index_of("c"), "pod c bound once a is gone") == "0"
    finally:
        runner.stop()
        thread.join(10)
        runner.close()
