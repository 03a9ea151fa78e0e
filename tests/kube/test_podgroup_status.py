"""`kschedfw run`'s PodGroup status writes against a real API server serving the workload API: the
``PodGroupScheduled`` condition lands in podgroups/status (with the group's generation, as
upstream's updatePodGroupCondition stamps it: v1.36.2's server keeps none for PodGroups), a
patch that fails or hangs is retried as a pod's status patch is (upstream PatchPodGroupStatus:
retry.DefaultBackoff on util.Retriable errors), and nothing is written once the leader-election
fence closes."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kschedfw.cluster.kube.client import ApiError, TransportError
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.kube_runner import KubeRunner
from kschedfw.testing.controlplane import ControlPlane
from tests.kube.conftest import WORKLOAD_GATES
from tests.kube.helpers import pod_manifest, wait_for

GROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups"


class Faulty:
    """The status writer's client with scripted faults for podgroups/status patches: each entry
    of ``faults`` is an exception raised (after ``hang`` seconds for a TransportError, as a
    request that timed out) instead of sending; then requests go to the real server."""

    def __init__(self, client: Any, faults: list[BaseException], hang: float = 0.5) -> None:
        self.client = client
        self.faults = list(faults)
        self.hang = hang
        self.group_patches = 0

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        if path.endswith("/status") and "/podgroups/" in path:
            self.group_patches += 1
            if self.faults:
                fault = self.faults.pop(0)
                if isinstance(fault, TransportError):
                    time.sleep(self.hang)
                raise fault
        return self.client.request(method, path, **kwargs)


@pytest.fixture
def namespace(workload_control_plane: ControlPlane) -> str:
    from tests.kube.conftest import _names
    name = f"pgs{next(_names)}"
    workload_control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def start(cp: ControlPlane, tmp_path, scheduler: str, faults: list[BaseException]) -> tuple[KubeRunner, Faulty,
                                                                                         threading.Thread]:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      f"leaderElection:\n  leaderElect: false\nprofiles:\n- schedulerName: {scheduler}\n")
    registry = default_registry()
    gates = FeatureGates.parse(WORKLOAD_GATES)
    loaded, diagnostics = load_config(str(config), registry, gates)
    assert loaded is not None, diagnostics
    runner = KubeRunner(loaded, registry, kubeconfig=cp.kubeconfig, feature_gates=gates)
    statuses = runner.backend.statuses
    assert statuses is not None
    faulty = Faulty(statuses.client, faults)
    statuses.client = faulty  # type: ignore[assignment]
    assert runner.start(30)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    return runner, faulty, thread


def stop(runner: KubeRunner, thread: threading.Thread) -> None:
    runner.stop()
    thread.join(10)
    runner.close()


def a_gang(cp: ControlPlane, ns: str, scheduler: str, node: str) -> None:
    cp.api("POST", GROUPS.format(ns=ns), {"metadata": {"name": "g"},
                                         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    for name in ("m0", "m1"):
        cp.api("POST", f"/api/v1/namespaces/{ns}/pods",
               pod_manifest(name, ns, scheduler=scheduler, schedulingGroup={"podGroupName": "g"},
                            nodeSelector={"kubernetes.io/hostname": node}))


def group_conditions(cp: ControlPlane, ns: str) -> list[dict[str, Any]]:
    return list((cp.api("GET", GROUPS.format(ns=ns) + "/g").get("status") or {}).get("conditions") or [])


@pytest.fixture
def node(workload_control_plane: ControlPlane, namespace: str):
    name = f"{namespace}-node"
    workload_control_plane.create_ready_node(name)
    yield name
    workload_control_plane.api("DELETE", f"/api/v1/nodes/{name}")


@pytest.mark.parametrize("faults", [
    pytest.param([], id="no fault"),
    pytest.param([ApiError(503, "unavailable", "ServiceUnavailable"),
                  TransportError("PATCH", "podgroups/status", TimeoutError("read timed out"), maybe_sent=True)],
                 id="a 503, then a hang, then through"),
])
def test_the_pod_group_condition_is_written_and_retried_as_pod_status(workload_control_plane, namespace, node,
                                                                      tmp_path, faults):
    cp = workload_control_plane
    tries = len(faults) + 1
    a_gang(cp, namespace, f"pgs-{namespace}", node)
    runner, faulty, thread = start(cp, tmp_path, f"pgs-{namespace}", faults)
    try:
        [condition] = wait_for(lambda: group_conditions(cp, namespace), what="the PodGroup's condition")
        generation = cp.api("GET", GROUPS.format(ns=namespace) + "/g")["metadata"].get("generation", 0)
        assert {k: condition.get(k, 0) for k in ("type", "status", "reason", "message", "observedGeneration")} == {
            "type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": "",
            "observedGeneration": generation}
        assert condition["lastTransitionTime"]
        assert faulty.group_patches == tries
        assert runner.backend.statuses is not None and runner.backend.statuses.dropped == 0
        for name in ("m0", "m1"):
            assert cp.api("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")["spec"].get("nodeName") == node
    finally:
        stop(runner, thread)


def test_a_pod_group_condition_is_dropped_after_the_retries_and_never_after_the_fence(workload_control_plane,
                                                                                      namespace, node, tmp_path,
                                                                                      caplog):
    cp = workload_control_plane
    a_gang(cp, namespace, f"pgs-{namespace}", node)
    runner, faulty, thread = start(cp, tmp_path, f"pgs-{namespace}", [ApiError(500, "etcd", "InternalError")] * 4)
    try:
        statuses = runner.backend.statuses
        assert statuses is not None
        wait_for(lambda: faulty.group_patches == 4 and statuses.flush(0.1), what="the patch tried four times")
        assert group_conditions(cp, namespace) == []
        assert f"could not patch the status of PodGroup {namespace}/g (patch podgroups/status): etcd" in caplog.text
        # a deposed leader sends nothing: a patch queued now is never sent
        runner.backend.write_fence = lambda: False
        group = runner.backend.get("scheduling.k8s.io/PodGroup", "g", namespace)
        from kschedfw.api.workload import Condition
        runner.backend.patch_pod_group_condition(group, Condition(type="PodGroupScheduled", status="True",
                                                                  reason="Scheduled"))
        assert statuses.flush(5)
        assert faulty.group_patches == 4 and group_conditions(cp, namespace) == []
    finally:
        stop(runner, thread)
