"""`kschedfw run`'s secure port against a real API server, beside kube-scheduler's: the same
requests (no credentials, a token the API server rejects, a service account's token without and
with ``get`` on /metrics, client certificates with and without it, the always-allowed paths) get
the same status codes and the same refusal bodies from both."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kschedfw.testing.controlplane import ControlPlane, free_port
from tests.kube.helpers import wait_for
from tests.serving.certs import client_certificate

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "secure-serving"
METRICS_READER = "secure-serving-metrics-reader"


def _service_account_token(cp: ControlPlane, name: str) -> str:
    cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", {"metadata": {"name": name}})
    return str(cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{name}/token",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"expirationSeconds": 3600}})["status"]["token"])


def _bind_metrics_reader(cp: ControlPlane) -> None:
    """The scraper service account and the cert-scraper user may ``get`` /metrics."""
    subjects = [{"kind": "ServiceAccount", "name": "scraper", "namespace": NAMESPACE},
                {"kind": "User", "name": "cert-scraper", "apiGroup": "rbac.authorization.k8s.io"}]
    cp.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
           {"metadata": {"name": METRICS_READER}, "subjects": subjects,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": METRICS_READER}})


def stop_processes(procs: list[subprocess.Popen]) -> None:
    """Terminate the schedulers started for a test, killing any that outlive 30 s."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _wait_serving(url: str, proc: subprocess.Popen, log: Path) -> None:
    def up() -> bool:
        assert proc.poll() is None, f"exited {proc.returncode}:\n{log.read_text()[-3000:]}"
        return request(url, "/healthz")[0] == 200
    wait_for(up, timeout=60, what=f"{url}/healthz")


@pytest.fixture(scope="module")
def world(control_plane: ControlPlane, tmp_path_factory):
    scheduler = control_plane.assets / "kube-scheduler"
    if not os.access(scheduler, os.X_OK):
        pytest.skip(f"no kube-scheduler in {control_plane.assets}")
    d = tmp_path_factory.mktemp("secure-serving")
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    tokens = {"none": None, "rejected": "not-a-token",
              "without-rights": _service_account_token(control_plane, "nobody"),
              "with-rights": _service_account_token(control_plane, "scraper")}
    ca_file, _, _ = client_certificate(d, "cert-scraper", ["scrapers"])
    client_certificate(d, "cert-nobody", [])
    control_plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": METRICS_READER}, "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})
    _bind_metrics_reader(control_plane)
    kubeconfig = str(control_plane.kubeconfig)
    common = ["--bind-address=127.0.0.1", f"--client-ca-file={ca_file}"]
    config = d / "config.json"
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                  "clientConnection": {"kubeconfig": kubeconfig},
                                  "leaderElection": {"leaderElect": False},
                                  "profiles": [{"schedulerName": "secure-serving"}]}))
    ours_port, theirs_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs: list[subprocess.Popen] = []
    logs = {"kschedfw": d / "kschedfw.log", "kube-scheduler": d / "kube-scheduler.log"}
    try:
        with open(logs["kschedfw"], "w") as out:
            procs.append(subprocess.Popen([sys.executable, "-m", "kschedfw.cli.main", "run", "--config", str(config),
                                           f"--secure-port={ours_port}", *common], env=env, stdout=out,
                                          stderr=subprocess.STDOUT))
        with open(logs["kube-scheduler"], "w") as out:
            procs.append(subprocess.Popen([str(scheduler), f"--config={config}", f"--secure-port={theirs_port}",
                                           f"--authentication-kubeconfig={kubeconfig}",
                                           f"--authorization-kubeconfig={kubeconfig}", *common],
                                          stdout=out, stderr=subprocess.STDOUT))
        urls = {"kschedfw": f"https://127.0.0.1:{ours_port}", "kube-scheduler": f"https://127.0.0.1:{theirs_port}"}
        for (name, url), proc in zip(urls.items(), procs):
            _wait_serving(url, proc, logs[name])
        yield {"urls": urls, "tokens": tokens, "certs": d, "logs": logs}
    finally:
        stop_processes(procs)
        control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{METRICS_READER}")
        control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{METRICS_READER}")
        control_plane.api("DELETE", f"/api/v1/namespaces/{NAMESPACE}")


def request(url: str, path: str, token: str | None = None, cert: tuple[Path, Path] | None = None) -> tuple[int, str]:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # both serve self-signed certificates
    if cert is not None:
        context.load_cert_chain(*cert)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url + path, headers=headers), context=context,
                                    timeout=15) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except urllib.error.URLError as exc:
        return 0, str(exc)


def answers(world: dict, url: str) -> dict[str, tuple[int, str]]:
    """Every request of the matrix; 200 bodies reduced to their status (they differ by design)."""
    out: dict[str, tuple[int, str]] = {}
    for path in ("/healthz", "/readyz", "/livez", "/metrics", "/configz"):
        for name, token in world["tokens"].items():
            out[f"{path} token={name}"] = request(url, path, token)
        for user in ("cert-scraper", "cert-nobody"):
            d = world["certs"]
            out[f"{path} cert={user}"] = request(url, path, cert=(d / f"{user}.crt", d / f"{user}.key"))
    return {key: (status, "" if status == 200 else body) for key, (status, body) in out.items()}


def test_the_status_codes_kube_scheduler_answers(world):
    ours = answers(world, world["urls"]["kschedfw"])
    assert {k: v[0] for k, v in ours.items() if k.startswith("/metrics")} == {
        "/metrics token=none": 403, "/metrics token=rejected": 401, "/metrics token=without-rights": 403,
        "/metrics token=with-rights": 200, "/metrics cert=cert-scraper": 200, "/metrics cert=cert-nobody": 403}
    for path in ("/healthz", "/readyz", "/livez"):
        assert ours[f"{path} token=none"][0] == 200
    assert 'forbidden: User \\"system:anonymous\\" cannot get path \\"/metrics\\"' in ours["/metrics token=none"][1]


def test_the_same_answers_as_kube_scheduler(world):
    theirs = answers(world, world["urls"]["kube-scheduler"])
    ours = answers(world, world["urls"]["kschedfw"])
    # /configz (kube-scheduler's, not served here) is refused alike: nobody may get it
    differing = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not differing, differing


def test_answers_come_from_the_cache_within_ten_seconds(world, control_plane: ControlPlane):
    """A revoked right is still honoured from the cache (upstream's 10 s), then refused."""
    url = world["urls"]["kschedfw"]
    token = world["tokens"]["with-rights"]
    assert request(url, "/metrics", token)[0] == 200
    started = time.monotonic()
    control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{METRICS_READER}")
    try:
        assert request(url, "/metrics", token)[0] == 200
        wait_for(lambda: request(url, "/metrics", token)[0] == 403, timeout=30, what="the revoked right refused")
        assert time.monotonic() - started > 5
    finally:
        _bind_metrics_reader(control_plane)
