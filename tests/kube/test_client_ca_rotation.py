"""The cluster's client CA is followed without a restart: when --client-ca-file is not given,
`kschedfw run` verifies client certificates against the client-ca-file key of
kube-system/extension-apiserver-authentication as it is now, as kube-scheduler does (beside it
here): a CA added to that ConfigMap authenticates its certificates on the next connections (200
or 403 by the user's rights, no longer refused as unauthenticated), and taking it out again
refuses them."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys

import pytest

from kschedfw.testing.controlplane import ControlPlane, free_port
from tests.kube.helpers import wait_for
from tests.kube.test_secure_serving import ROOT, _wait_serving, request, stop_processes
from tests.serving.certs import client_certificate

CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
READER = "client-ca-rotation-metrics-reader"


def _set_client_ca(cp: ControlPlane, pem: str) -> None:
    cp.api("PATCH", CONFIGMAP, {"data": {"client-ca-file": pem}}, content_type="application/merge-patch+json")


@pytest.fixture(scope="module")
def world(control_plane: ControlPlane, tmp_path_factory):
    scheduler = control_plane.assets / "kube-scheduler"
    if not os.access(scheduler, os.X_OK):
        pytest.skip(f"no kube-scheduler in {control_plane.assets}")
    d = tmp_path_factory.mktemp("client-ca-rotation")
    ca_file, _, _ = client_certificate(d, "rotated-scraper", [])
    client_certificate(d, "rotated-nobody", [])
    control_plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": READER}, "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})
    control_plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": READER},
        "subjects": [{"kind": "User", "name": "rotated-scraper", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": READER}})
    original = control_plane.api("GET", CONFIGMAP)["data"]["client-ca-file"]
    kubeconfig = str(control_plane.kubeconfig)
    config = d / "config.json"
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                  "clientConnection": {"kubeconfig": kubeconfig},
                                  "leaderElection": {"leaderElect": False},
                                  "profiles": [{"schedulerName": "client-ca-rotation"}]}))
    ours_port, theirs_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    logs = {"kschedfw": d / "kschedfw.log", "kube-scheduler": d / "kube-scheduler.log"}
    procs: list[subprocess.Popen] = []
    try:
        # no --client-ca-file: the CA comes from the ConfigMap
        with open(logs["kschedfw"], "w") as out:
            procs.append(subprocess.Popen([sys.executable, "-m", "kschedfw.cli.main", "run", "--config", str(config),
                                           "--bind-address=127.0.0.1", f"--secure-port={ours_port}", "-v"], env=env,
                                          stdout=out, stderr=subprocess.STDOUT))
        with open(logs["kube-scheduler"], "w") as out:
            procs.append(subprocess.Popen([str(scheduler), f"--config={config}", "--bind-address=127.0.0.1",
                                           f"--secure-port={theirs_port}", f"--authentication-kubeconfig={kubeconfig}",
                                           f"--authorization-kubeconfig={kubeconfig}"],
                                          stdout=out, stderr=subprocess.STDOUT))
        urls = {"kschedfw": f"https://127.0.0.1:{ours_port}", "kube-scheduler": f"https://127.0.0.1:{theirs_port}"}
        for (name, url), proc in zip(urls.items(), procs):
            _wait_serving(url, proc, logs[name])
        yield {"urls": urls, "certs": d, "new_ca": ca_file.read_text(), "original": original, "procs": procs,
               "logs": logs}
    finally:
        stop_processes(procs)
        _set_client_ca(control_plane, original)
        control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{READER}")
        control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{READER}")


def statuses(world: dict, name: str) -> tuple[int, int]:
    """/metrics as rotated-scraper and as rotated-nobody, both with certificates of the new CA."""
    d, url = world["certs"], world["urls"][name]
    out = []
    for user in ("rotated-scraper", "rotated-nobody"):
        try:
            out.append(request(url, "/metrics", cert=(d / f"{user}.crt", d / f"{user}.key"))[0])
        except (ssl.SSLError, ConnectionError):  # the handshake refused the certificate (TLS 1.3: on the read)
            out.append(0)
    return out[0], out[1]


def test_a_client_ca_added_to_the_configmap_authenticates_without_a_restart(world, control_plane):
    for name in world["urls"]:  # not trusted yet: not authenticated (kube-scheduler: 401; kschedfw: no handshake)
        assert all(status in (0, 401) for status in statuses(world, name)), (name, statuses(world, name))

    _set_client_ca(control_plane, world["original"].rstrip("\n") + "\n" + world["new_ca"])  # a rotation: both CAs
    for name in world["urls"]:
        wait_for(lambda: statuses(world, name) == (200, 403), timeout=30,
                 what=f"{name}: the new CA's certificates authenticated (200 for the reader, 403 for the other)")
    assert all(proc.poll() is None for proc in world["procs"])  # the same processes, not restarted

    _set_client_ca(control_plane, world["original"])  # the new CA taken out: its certificates refused again
    for name in world["urls"]:
        wait_for(lambda: all(status in (0, 401) for status in statuses(world, name)), timeout=30,
                 what=f"{name}: the removed CA's certificates no longer authenticated")
    log = world["logs"]["kschedfw"].read_text()
    assert "the client CA in configmap/extension-apiserver-authentication in kube-system changed" in log, log[-3000:]
