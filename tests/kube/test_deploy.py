"""deploy/: the RBAC is enough for `kschedfw run` (start-up checks, informers, the lease and a bind
as the service account, on the real API server), the shipped profile is a valid configuration with
its own lease, and the kubelet's probes and Prometheus reach the health and metrics endpoints."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from kschedfw.cluster.kube.health import HealthServer, parse_address
from kschedfw.kube_runner import KubeRunner
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.testing.controlplane import APIError, ControlPlane
from tests.kube.helpers import pod_manifest, wait_for
from tests.kube.test_cli_run import http_get

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

_COLLECTIONS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "Service": "/api/v1/namespaces/{ns}/services",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
}


def apply(cp: ControlPlane, path: Path, *, dry_run: bool = False) -> None:
    for doc in yaml.safe_load_all(path.read_text()):
        collection = _COLLECTIONS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
        try:
            cp.api("POST", collection + ("?dryRun=All" if dry_run else ""), doc)
        except APIError as exc:
            if exc.status != 409:
                raise


def shipped_config(tmp_path: Path):
    configmap = yaml.safe_load((DEPLOY / "configmap.yaml").read_text())
    config_file = tmp_path / "config.yaml"
    config_file.write_text(configmap["data"]["config.yaml"])
    registry = default_registry()
    config, diagnostics = load_config(str(config_file), registry)
    assert config is not None, diagnostics
    return config, registry


def test_shipped_profile_is_valid_and_uses_its_own_lease(tmp_path):
    config, _ = shipped_config(tmp_path)
    lease = config.document["leaderElection"]
    assert lease["resourceName"] == "kschedfw" and lease["resourceNamespace"] == "kube-system"
    assert [p.scheduler_name for p in config.profiles] == ["kschedfw"]


def test_rbac_is_enough_for_informers_and_binding(control_plane: ControlPlane, namespace, tmp_path):
    apply(control_plane, DEPLOY / "rbac.yaml")
    token = control_plane.api("POST", "/api/v1/namespaces/kube-system/serviceaccounts/kschedfw/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                               "spec": {"expirationSeconds": 3600}})["status"]["token"]
    kubeconfig = tmp_path / "sa.kubeconfig"
    kubeconfig.write_text(control_plane.kubeconfig_text(token, "kschedfw"))
    with pytest.raises(APIError) as denied:  # the token is the service account's, not an admin's
        sa = ControlPlane.__new__(ControlPlane)
        sa.__dict__.update(control_plane.__dict__, token=token)
        sa.api("GET", "/api/v1/secrets")
    assert denied.value.status == 403

    config, registry = shipped_config(tmp_path)
    node = f"{namespace}-rbac"
    control_plane.create_ready_node(node)
    runner = KubeRunner(config, registry, kubeconfig=kubeconfig)
    health = HealthServer(("127.0.0.1", 0), runner.health_endpoints(), runner.metrics_text)
    health.start()
    url = f"http://127.0.0.1:{health.address[1]}"
    try:
        runner.preflight()  # the start-up checks find every right the scheduler needs
        assert runner.start(sync_timeout=30), "an informer could not list/watch with these rights"
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("p", namespace, scheduler="kschedfw"))
        wait_for(lambda: control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"].get("nodeName"),
                 what="a bind as the service account")
        wait_for(lambda: runner.backend.events.written >= 1, what="the Scheduled event written")
        assert http_get(url + "/readyz?verbose") == (200, "[+]ping ok\n[+]leaderElection ok\n[+]shutdown ok\n"
                                                          "[+]informer-sync ok\n[+]apiserver-reachable ok\n"
                                                          "readyz check passed\n")
        assert 'leader_election_master_status{name="kschedfw"} 1.0' in http_get(url + "/metrics")[1]
        runner.stop()
        thread.join(10)
    finally:
        health.stop()
        runner.stop()
        runner.close()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")


def test_probes_and_prometheus_reach_the_health_endpoints(control_plane: ControlPlane):
    """The kubelet probes the pod IP, so the container serves on 0.0.0.0 at the declared port;
    liveness is /healthz (the leader-election watchdog), readiness /readyz; the Service's
    annotations send Prometheus to /metrics on that port. The API server accepts both objects."""
    deployment = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    args = container["args"]
    host, port = parse_address(args[args.index("--health-address") + 1])
    assert host == "0.0.0.0"
    declared = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert list(declared.values()) == [port]

    def probe_port(probe: dict) -> int:
        target = probe["httpGet"]["port"]
        return declared[target] if isinstance(target, str) else target
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert probe_port(container["livenessProbe"]) == probe_port(container["readinessProbe"]) == port

    service = yaml.safe_load((DEPLOY / "service.yaml").read_text())
    assert service["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    annotations = service["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/path"] == "/metrics"
    assert int(annotations["prometheus.io/port"]) == port
    [service_port] = service["spec"]["ports"]
    assert service_port["port"] == port and declared[service_port["targetPort"]] == port

    apply(control_plane, DEPLOY / "deployment.yaml", dry_run=True)
    apply(control_plane, DEPLOY / "service.yaml", dry_run=True)
