"""deploy/: the RBAC is enough for `kschedfw run` (informers and a bind as the service account,
on the real API server), and the shipped profile is a valid configuration with its own lease."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from kschedfw.cluster.kube.runner import KubeRunner
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_catalog
from kschedfw.testing.controlplane import APIError, ControlPlane
from tests.kube.helpers import pod_manifest, wait_for

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

_COLLECTIONS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


def apply(cp: ControlPlane, path: Path) -> None:
    for doc in yaml.safe_load_all(path.read_text()):
        collection = _COLLECTIONS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
        try:
            cp.api("POST", collection, doc)
        except APIError as exc:
            if exc.status != 409:
                raise


def shipped_config(tmp_path: Path):
    configmap = yaml.safe_load((DEPLOY / "configmap.yaml").read_text())
    config_file = tmp_path / "config.yaml"
    config_file.write_text(configmap["data"]["config.yaml"])
    registry = default_catalog()
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
    try:
        assert runner.start(sync_timeout=30), "an informer could not list/watch with these rights"
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("p", namespace, scheduler="kschedfw"))
        wait_for(lambda: control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"].get("nodeName"),
                 what="a bind as the service account")
        wait_for(lambda: runner.backend.events.written >= 1, what="the Scheduled event written")
        runner.stop()
        thread.join(10)
    finally:
        runner.stop()
        runner.close()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
