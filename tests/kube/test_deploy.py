"""deploy/: the RBAC is enough for `kschedfw run` (start-up checks, informers, the lease, a bind
and the secure port's reviews as the service account, on the real API server), the shipped profile
is a valid configuration with its own lease, the kubelet's probes reach the health endpoints over
HTTPS without credentials, and Prometheus's service account, bound as prometheus.yaml binds it,
scrapes /metrics with its token while others are refused."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

import argparse
import ssl
import urllib.error
import urllib.request

from kschedfw.serving.flags import add_arguments
from kschedfw.serving.options import start_servers
from kschedfw.kube_runner import KubeRunner
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.testing.controlplane import APIError, ControlPlane, free_port
from tests.kube.helpers import pod_manifest, wait_for

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


def container_args() -> list[str]:
    deployment = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    return list(deployment["spec"]["template"]["spec"]["containers"][0]["args"])


def serving_flags(argv: list[str]) -> argparse.Namespace:
    """The serving flags of a `kschedfw run` command line (its --config aside)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    add_arguments(parser)
    return parser.parse_args(argv)


def https_get(url: str, token: str | None = None) -> tuple[int, str]:
    """As the kubelet probes and Prometheus scrape: the certificate is self-signed."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), context=context, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def service_account_token(cp: ControlPlane, namespace: str, name: str) -> str:
    return str(cp.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"expirationSeconds": 3600}})["status"]["token"])


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


def test_rbac_is_enough_for_informers_and_binding(control_plane: ControlPlane, namespace, tmp_path, caplog):
    apply(control_plane, DEPLOY / "rbac.yaml")
    apply(control_plane, DEPLOY / "prometheus.yaml")
    token = service_account_token(control_plane, "kube-system", "kschedfw")
    for path, body in (("/api/v1/namespaces", {"metadata": {"name": "monitoring"}}),
                       ("/api/v1/namespaces/monitoring/serviceaccounts", {"metadata": {"name": "prometheus"}})):
        try:
            control_plane.api("POST", path, body)
        except APIError as exc:
            if exc.status != 409:
                raise
    scraper = service_account_token(control_plane, "monitoring", "prometheus")
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
    args = serving_flags(container_args() + ["--bind-address", "127.0.0.1", "--secure-port", str(free_port())])
    said: list[str] = []
    [server] = start_servers(args, runner.client.connection, runner.health_endpoints(), runner.metrics_text,
                             said.append)
    url = server.url
    # the client CA was read (extension-apiserver-authentication-reader)
    assert "extension-apiserver-authentication" not in caplog.text
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
        assert https_get(url + "/readyz?verbose") == (200, "[+]ping ok\n[+]leaderElection ok\n[+]shutdown ok\n"
                                                           "[+]informer-sync ok\n[+]apiserver-reachable ok\n"
                                                           "readyz check passed\n")
        assert https_get(url + "/healthz") == (200, "ok")
        status, metrics = https_get(url + "/metrics", scraper)  # TokenReview and SAR as the service account
        assert status == 200 and 'leader_election_master_status{name="kschedfw"} 1.0' in metrics
        assert https_get(url + "/metrics")[0] == 403
        assert https_get(url + "/metrics", token)[0] == 403  # the scheduler's own token may not read it
        runner.stop()
        thread.join(10)
    finally:
        server.stop()
        runner.stop()
        runner.close()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")


def test_probes_and_prometheus_reach_the_secure_port(control_plane: ControlPlane):
    """The kubelet probes the pod IP, so the secure port listens on 0.0.0.0 (the default) at the
    declared port; liveness is /healthz (the leader-election watchdog), readiness /readyz, both
    over HTTPS and always allowed; Prometheus's job scrapes that port of the Service's endpoints
    over HTTPS with its token. The API server accepts every object."""
    deployment = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    flags = serving_flags(container["args"])
    assert flags.bind_address == "0.0.0.0" and flags.secure_port == 10259 and flags.health_address == "off"
    assert set(flags.authorization_always_allow_paths.split(",")) >= {"/healthz", "/readyz"}
    declared = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert list(declared.values()) == [flags.secure_port]

    def probe_port(probe: dict) -> int:
        target = probe["httpGet"]["port"]
        return declared[target] if isinstance(target, str) else target
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in (container["livenessProbe"], container["readinessProbe"]):
        assert probe["httpGet"]["scheme"] == "HTTPS" and probe_port(probe) == flags.secure_port

    service = yaml.safe_load((DEPLOY / "service.yaml").read_text())
    assert service["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    [service_port] = service["spec"]["ports"]
    assert service_port["port"] == flags.secure_port and declared[service_port["targetPort"]] == flags.secure_port

    scrape = next(d for d in yaml.safe_load_all((DEPLOY / "prometheus.yaml").read_text()) if d["kind"] == "ConfigMap")
    [job] = yaml.safe_load(scrape["data"]["kschedfw.yaml"])
    assert job["scheme"] == "https" and job["metrics_path"] == "/metrics"
    assert job["authorization"]["credentials_file"].endswith("/serviceaccount/token")
    [keep] = job["relabel_configs"]
    assert keep["regex"] == f"{service['metadata']['name']};{service_port['name']}"

    apply(control_plane, DEPLOY / "deployment.yaml", dry_run=True)
    apply(control_plane, DEPLOY / "service.yaml", dry_run=True)
    apply(control_plane, DEPLOY / "prometheus.yaml", dry_run=True)


def _workload_rules(role: dict) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """A ClusterRole's rules on the workload API's resources, as (resources, verbs)."""
    workload = {"podgroups", "podgroups/status", "workloads"}
    return sorted((tuple(sorted(r["resources"])), tuple(sorted(r["verbs"]))) for r in role["rules"]
                  if "scheduling.k8s.io" in r.get("apiGroups", ()) and workload & set(r.get("resources", ())))


def test_rbac_grants_the_workload_api_as_upstream_and_is_enough_for_a_gang(workload_control_plane: ControlPlane,
                                                                           tmp_path):
    """With GenericWorkload on, the API server's own system:kube-scheduler role reads PodGroups
    and patches their status (no Workloads); ours grants the same, and with it `kschedfw run`
    watches PodGroups, binds a gang and writes its PodGroupScheduled condition."""
    from kschedfw.fwk.features import FeatureGates
    from tests.kube.conftest import WORKLOAD_GATES
    cp = workload_control_plane
    upstream = cp.api("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:kube-scheduler")
    ours = next(d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()) if d["kind"] == "ClusterRole")
    assert _workload_rules(upstream) == [(("podgroups",), ("get", "list", "watch")),
                                         (("podgroups/status",), ("patch", "update"))]
    assert _workload_rules(ours) == _workload_rules(upstream)

    apply(cp, DEPLOY / "rbac.yaml")
    kubeconfig = tmp_path / "sa.kubeconfig"
    kubeconfig.write_text(cp.kubeconfig_text(service_account_token(cp, "kube-system", "kschedfw"), "kschedfw"))
    ns = "deploy-gang"
    cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    node = f"{ns}-node"
    cp.create_ready_node(node)
    groups = f"/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups"
    cp.api("POST", groups, {"metadata": {"name": "g"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    for name in ("m0", "m1"):
        cp.api("POST", f"/api/v1/namespaces/{ns}/pods",
               pod_manifest(name, ns, scheduler="kschedfw", schedulingGroup={"podGroupName": "g"}))
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_load((DEPLOY / "configmap.yaml").read_text())["data"]["config.yaml"])
    registry = default_registry()
    gates = FeatureGates.parse(WORKLOAD_GATES)
    config, diagnostics = load_config(str(config_file), registry, gates)
    assert config is not None, diagnostics
    runner = KubeRunner(config, registry, kubeconfig=kubeconfig, feature_gates=gates)
    try:
        runner.preflight()
        assert runner.start(sync_timeout=30), "an informer could not list/watch with these rights"
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()

        def group_condition():
            status = cp.api("GET", f"{groups}/g").get("status") or {}
            return [(c["type"], c["status"], c["reason"]) for c in status.get("conditions") or []]
        assert wait_for(group_condition, what="the PodGroup's status written") == [
            ("PodGroupScheduled", "True", "Scheduled")]
        for name in ("m0", "m1"):
            assert cp.api("GET", f"/api/v1/namespaces/{ns}/pods/{name}")["spec"].get("nodeName") == node
        assert runner.backend.statuses is not None and runner.backend.statuses.dropped == 0
        runner.stop()
        thread.join(10)
    finally:
        runner.stop()
        runner.close()
        cp.api("DELETE", f"/api/v1/nodes/{node}")
