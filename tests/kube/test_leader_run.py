"""`kschedfw run` with leader election, as a process against a real API server: a standby says it
waits; the leader says so, reports leader_election_master_status 1 and a healthy watchdog; a
leader frozen past its renew deadline (SIGSTOP, then SIGCONT) binds nothing more and exits 1."""

from __future__ import annotations

import datetime as dt
import signal
import time

from kschedfw.api.timestamps import micro_time
from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest
from tests.kube.test_cli_run import http_get, kschedfw


def leader_config(tmp_path, namespace: str, lease: str, durations: str = "") -> str:
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    f"leaderElection:\n  leaderElect: true\n  resourceName: {lease}\n"
                    f"  resourceNamespace: {namespace}\n{durations}"
                    f"profiles:\n- schedulerName: le-{namespace}\n")
    return str(path)


def read_until(proc, text: str) -> str:
    """The first stderr line containing ``text`` (earlier lines are skipped)."""
    seen = []
    while True:
        line = proc.stderr.readline()
        assert line, f"kschedfw run ended before printing {text!r}:\n{''.join(seen)}"
        if text in line:
            return line
        seen.append(line)


def leader_status(url: str, lease: str) -> float | None:
    """leader_election_master_status{name=lease} (its label is called ``name``, as upstream's)."""
    from prometheus_client.parser import text_string_to_metric_families
    for family in text_string_to_metric_families(http_get(url + "/metrics")[1]):
        for s in family.samples:
            if s.name == "leader_election_master_status" and s.labels == {"name": lease}:
                return s.value
    return None


def health_url(proc) -> str:
    return read_until(proc, "health and metrics on ").rsplit("health and metrics on ", 1)[1].strip()


def test_a_standby_says_it_waits_for_the_lease(control_plane: ControlPlane, namespace, tmp_path):
    now = micro_time(dt.datetime.now(dt.timezone.utc))
    control_plane.api("POST", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", {
        "metadata": {"name": "held"}, "spec": {"holderIdentity": "someone-else", "leaseDurationSeconds": 3600,
                                              "acquireTime": now, "renewTime": now}})
    proc = kschedfw("run", "--config", leader_config(tmp_path, namespace, "held"), "--kubeconfig",
                    str(control_plane.kubeconfig), "--secure-port", "0", "--health-address", "127.0.0.1:0")
    try:
        url = health_url(proc)
        read_until(proc, f"kschedfw run: informers synced; waiting to acquire lease {namespace}/held as ")
        assert leader_status(url, "held") == 0
        assert http_get(url + "/healthz?verbose") == (200, "[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n")
        assert http_get(url + "/readyz")[0] == 200  # a standby is ready, as upstream's
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "scheduling for" not in err and "became leader" not in err


def test_the_leader_reports_itself_and_exits_when_frozen_past_its_deadline(control_plane: ControlPlane, namespace,
                                                                           tmp_path):
    node = f"{namespace}-node"
    control_plane.create_ready_node(node)
    config = leader_config(tmp_path, namespace, "mine",
                           "  leaseDuration: 4s\n  renewDeadline: 2s\n  retryPeriod: 500ms\n")
    proc = kschedfw("run", "--config", config, "--kubeconfig", str(control_plane.kubeconfig),
                    "--secure-port", "0", "--health-address", "127.0.0.1:0")
    try:
        url = health_url(proc)
        read_until(proc, f"kschedfw run: became leader of lease {namespace}/mine")
        read_until(proc, f"kschedfw run: informers synced, scheduling for le-{namespace}")
        assert leader_status(url, "mine") == 1
        assert "[+]leaderElection ok\n" in http_get(url + "/healthz?verbose")[1]

        proc.send_signal(signal.SIGSTOP)  # frozen past the renew deadline: no longer the leader
        time.sleep(3)
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("late", namespace, scheduler=f"le-{namespace}"))
        started = time.monotonic()
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - started < 5
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.communicate()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
    assert proc.returncode == 1, err
    assert f"kschedfw run: lost lease {namespace}/mine: not renewed within 2s" in err
    assert err.rstrip().endswith("kschedfw run: leaderelection lost")
    assert not control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods/late")["spec"].get("nodeName")
