"""`kschedfw run` as a process: binds, stops cleanly on SIGTERM, refuses bad input clearly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


from kschedfw.scheduler.pending_reason import message_of
from tests.report.test_pending_reason import VALIDATOR
from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest, sample, wait_for

ROOT = Path(__file__).resolve().parents[2]


def http_get(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def kschedfw(*args: str, script: str | None = None, **kwargs) -> subprocess.Popen:
    """`kschedfw ARGS` in a child process; with ``script``, that Python source stands in for the
    entry point (e.g. one that installs one more plugin before calling ``main``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    program = ["-c", script] if script is not None else ["-m", "kschedfw.cli.main"]
    return subprocess.Popen([sys.executable, *program, *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_missing_kubeconfig_is_a_clear_error_not_a_traceback(tmp_path):
    proc = kschedfw("run", "--kubeconfig", str(tmp_path / "absent"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "absent" in err and "Traceback" not in err


def test_run_binds_then_stops_cleanly_on_sigterm(control_plane: ControlPlane, namespace, tmp_path):
    node = f"{namespace}-node"
    control_plane.create_ready_node(node)
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "leaderElection:\n  leaderElect: false\n"
                      f"profiles:\n- schedulerName: cli-{namespace}\n")
    proc = kschedfw("run", "--config", str(config), "--kubeconfig", str(control_plane.kubeconfig),
                    "--secure-port", "0", "--health-address", "127.0.0.1:0")
    try:
        url = ""
        while not url:
            line = proc.stderr.readline()
            assert line, "kschedfw run ended early"
            if "health and metrics on " in line:
                url = line.split("health and metrics on ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("p", namespace, scheduler=f"cli-{namespace}"))
        wait_for(lambda: control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"].get("nodeName"),
                 timeout=60, what="the pod bound by `kschedfw run`")
        wait_for(lambda: http_get(url + "/readyz") == (200, "ok"), what="/readyz ok")
        assert http_get(url + "/healthz") == (200, "ok")
        wait_for(lambda: sample(http_get(url + "/metrics")[1], "scheduler_schedule_attempts_total",
                                result="scheduled", profile=f"cli-{namespace}") == 1, what="the bind in /metrics")
        metrics = http_get(url + "/metrics")[1]
        for queue in ("active", "backoff", "unschedulable", "gated"):
            assert sample(metrics, "scheduler_pending_pods", queue=queue) == 0
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopped after binding 1 pod\n" in err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")


def test_dry_run_prints_json_decisions_and_a_summary_and_writes_nothing(control_plane: ControlPlane, namespace,
                                                                         tmp_path):
    """Shadow mode: simulate's output formats, nothing written to the cluster."""
    node = f"{namespace}-node"
    control_plane.create_ready_node(node)
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "leaderElection:\n  leaderElect: false\n"
                      f"profiles:\n- schedulerName: shadow-{namespace}\n")
    proc = kschedfw("run", "--dry-run", "-o", "json", "--config", str(config), "--kubeconfig",
                    str(control_plane.kubeconfig), "--secure-port", "0")
    try:
        while "informers synced" not in (line := proc.stderr.readline()):
            assert line, "kschedfw run ended early"
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("p", namespace, scheduler=f"shadow-{namespace}"))
        decision = json.loads(proc.stdout.readline())
        assert decision == {"pod": f"{namespace}/p", "schedulerName": f"shadow-{namespace}", "status": "Bound",
                            "node": node, "reason": "", "message": "", "nominatedNodeName": ""}
        # a pod no node fits: simulate's pendingReason beside the message, which it rebuilds
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("big", namespace, scheduler=f"shadow-{namespace}", cpu="1000"))
        pending = json.loads(proc.stdout.readline())
        assert (pending["pod"], pending["status"], pending["pendingReason"]["type"]) == \
            (f"{namespace}/big", "Pending", "Unschedulable")
        assert message_of(pending["pendingReason"]) == pending["message"]
        VALIDATOR.validate(pending["pendingReason"])  # the JSON Schema simulate's reasons follow
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        summary = json.loads(out.splitlines()[-1])["summary"][f"shadow-{namespace}"]
        assert summary["Bound"] == 1 and summary["Pending"] >= 1  # a retry decides again
        # a dry run sends no binding: its last line must not claim one
        assert "dry run stopped: 1 pod would have been bound, nothing was written" in err
        assert "stopped after binding" not in err
        assert not control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/p")["spec"].get("nodeName")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")


def test_a_second_scheduler_keeping_upstreams_lease_name_is_warned(control_plane: ControlPlane, tmp_path):
    """kube-scheduler holds kube-system/kube-scheduler; a scheduler that does not serve
    default-scheduler must not compete for it."""
    from kschedfw.kube_runner import KubeRunner
    from kschedfw.config.validate import load_config
    from kschedfw.framework.registry import default_registry

    def warning(body: str) -> str | None:
        config_file = tmp_path / "config.yaml"
        config_file.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
        registry = default_registry()
        config, diagnostics = load_config(str(config_file), registry)
        assert config is not None, diagnostics
        runner = KubeRunner(config, registry, kubeconfig=control_plane.kubeconfig)
        runner.close()
        return runner.lease_warning()

    assert "leaderElection.resourceName is 'kube-scheduler'" in warning("profiles:\n- schedulerName: mine\n")
    assert warning("leaderElection:\n  resourceName: mine\nprofiles:\n- schedulerName: mine\n") is None
    assert warning("profiles:\n- schedulerName: default-scheduler\n") is None


def test_a_closed_port_is_reported_at_once_naming_the_server(tmp_path):
    """Not after --sync-timeout: the first request's refusal is the answer."""
    from kschedfw.testing.controlplane import free_port
    server = f"http://127.0.0.1:{free_port()}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n")
    started = time.monotonic()
    proc = kschedfw("run", "--kubeconfig", str(kubeconfig), "--secure-port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert time.monotonic() - started < 10
    assert f"cannot reach the API server at {server}" in err and "Connection refused" in err
    assert "Traceback" not in err


def test_refused_credentials_are_reported_at_once(control_plane: ControlPlane, tmp_path):
    kubeconfig = tmp_path / "wrong.kubeconfig"
    kubeconfig.write_text(control_plane.kubeconfig_text("not-a-valid-token", "nobody"))
    started = time.monotonic()
    proc = kschedfw("run", "--kubeconfig", str(kubeconfig), "--secure-port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert time.monotonic() - started < 10
    assert f"Unauthorized: the API server at {control_plane.url}" in err
    assert f"check the credentials in {kubeconfig}" in err and "Traceback" not in err


def test_a_user_not_allowed_to_bind_is_told_which_right_is_missing(control_plane: ControlPlane, namespace, tmp_path):
    """It may read everything the informers list, but not create pods/binding: exit 2 at start-up
    naming the verb and resource, not a scheduler that lists, decides and fails every bind."""
    account = "reader"
    control_plane.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": account}})
    control_plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": f"{namespace}-reader"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]})
    control_plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": f"{namespace}-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{namespace}-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]})
    token = control_plane.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                               "spec": {"expirationSeconds": 3600}})["status"]["token"]
    kubeconfig = tmp_path / "reader.kubeconfig"
    kubeconfig.write_text(control_plane.kubeconfig_text(token, account))
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      f"leaderElection:\n  leaderElect: false\nprofiles:\n- schedulerName: ro-{namespace}\n")
    try:
        started = time.monotonic()
        proc = kschedfw("run", "--config", str(config), "--kubeconfig", str(kubeconfig), "--secure-port", "0")
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, err
        assert time.monotonic() - started < 10
        assert f"forbidden: system:serviceaccount:{namespace}:{account} cannot create pods/binding" in err

        # the same user in a dry run needs no write: it gets past the start-up checks
        proc = kschedfw("run", "--dry-run", "--config", str(config), "--kubeconfig", str(kubeconfig),
                        "--secure-port", "0")
        try:
            while "informers synced" not in (line := proc.stderr.readline()):
                assert line, "kschedfw run --dry-run ended early"
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
    finally:
        control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{namespace}-reader")
        control_plane.api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{namespace}-reader")


def test_a_server_certificate_not_trusted_is_reported_at_once(control_plane: ControlPlane, tmp_path):
    config = json.loads(control_plane.kubeconfig_text(control_plane.token, "admin"))
    del config["clusters"][0]["cluster"]["certificate-authority"]  # the system's CAs do not know it
    kubeconfig = tmp_path / "untrusted.kubeconfig"
    kubeconfig.write_text(json.dumps(config))
    proc = kschedfw("run", "--kubeconfig", str(kubeconfig), "--secure-port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert f"cannot reach the API server at {control_plane.url}" in err and "CERTIFICATE_VERIFY_FAILED" in err


def test_the_workload_gate_on_without_the_api_says_what_to_change(control_plane: ControlPlane, tmp_path):
    # kube-scheduler v1.36.2 with GenericWorkload on against a server without
    # scheduling.k8s.io/v1alpha2 retries its PodGroup list ("the server could not find the
    # requested resource") and never schedules: run waits the same way, says why and what to
    # change, and gives up after --sync-timeout with exit status 1
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "leaderElection:\n  leaderElect: false\nprofiles:\n- schedulerName: no-workload-api\n")
    proc = kschedfw("run", "--config", str(config), "--kubeconfig", str(control_plane.kubeconfig),
                    "--feature-gates", "GenericWorkload=true,GangScheduling=true", "--sync-timeout", "3",
                    "--secure-port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    why = ("feature gate GenericWorkload is on but the API server does not serve "
           "podgroups.scheduling.k8s.io/v1alpha2: scheduling waits until it does, as kube-scheduler's informers "
           "do (start kube-apiserver with --runtime-config=scheduling.k8s.io/v1alpha2=true and "
           "--feature-gates=GenericWorkload=true, or turn the gate off here)")
    assert f"kschedfw run: {why}\n" in err
    assert (f"kschedfw run: the informers did not sync within 3s: /apis/scheduling.k8s.io/v1alpha2/podgroups "
            f"not listed: {why}\n") in err
    assert "Traceback" not in err
