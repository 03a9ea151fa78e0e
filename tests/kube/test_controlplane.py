"""The test control plane is a real v1.36 kube-apiserver that answers as the recordings show."""

from __future__ import annotations

import pytest

from kschedfw.testing.controlplane import APIError, ControlPlane, find_assets, missing_assets_reason


def test_find_assets_needs_both_binaries(tmp_path, monkeypatch):
    monkeypatch.setenv("KSCHEDFW_KUBE_ASSETS", str(tmp_path))
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    (tmp_path / "etcd").write_text("")
    (tmp_path / "etcd").chmod(0o755)
    assert find_assets() is None
    assert "lacks executable kube-apiserver" in missing_assets_reason()
    (tmp_path / "kube-apiserver").write_text("")
    (tmp_path / "kube-apiserver").chmod(0o755)
    assert find_assets() == tmp_path


def test_find_assets_falls_back_to_kubebuilder_assets(tmp_path, monkeypatch):
    monkeypatch.delenv("KSCHEDFW_KUBE_ASSETS", raising=False)
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    for name in ("etcd", "kube-apiserver"):
        (tmp_path / name).write_text("")
        (tmp_path / name).chmod(0o755)
    assert find_assets() == tmp_path


def test_no_assets_reason_names_the_variable(monkeypatch):
    monkeypatch.delenv("KSCHEDFW_KUBE_ASSETS", raising=False)
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    assert find_assets() is None
    assert "KSCHEDFW_KUBE_ASSETS" in missing_assets_reason()


def test_server_is_v1_36_and_rbac_refuses_anonymous(control_plane: ControlPlane):
    assert control_plane.api("GET", "/version")["gitVersion"].startswith("v1.36")
    assert control_plane.url.startswith("https://127.0.0.1:")
    anonymous = ControlPlane.__new__(ControlPlane)
    anonymous.__dict__.update(control_plane.__dict__, token="wrong")
    with pytest.raises(APIError) as err:
        anonymous.api("GET", "/api/v1/nodes")
    assert err.value.status == 401


def test_created_node_is_ready_and_untainted(control_plane: ControlPlane):
    node = control_plane.create_ready_node("cp-node-ready")
    try:
        assert not (node["spec"].get("taints") or [])
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"
    finally:
        control_plane.api("DELETE", "/api/v1/nodes/cp-node-ready")


def test_admin_kubeconfig_names_the_server(control_plane: ControlPlane):
    import yaml
    config = yaml.safe_load(control_plane.kubeconfig.read_text())
    assert config["clusters"][0]["cluster"]["server"] == control_plane.url


def test_delete_pods_removes_pending_and_bound_pods_at_once(control_plane: ControlPlane, namespace: str):
    # no controller manager empties a namespace here, and no kubelet confirms a graceful delete:
    # the pods go with grace 0, the bound one included
    from tests.kube.helpers import pod_manifest
    control_plane.create_ready_node("cp-delete-pods")
    try:
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("pending", namespace, scheduler="no-such-scheduler"))
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("bound", namespace, nodeName="cp-delete-pods"))
        assert len(control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]) == 2
        control_plane.delete_pods(namespace)
        assert control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"] == []
    finally:
        control_plane.api("DELETE", "/api/v1/nodes/cp-delete-pods")
