"""`kschedfw controlplane` as a process: a throwaway control plane a plugin author can point
kubectl and `kschedfw run` at, gone (processes and files) after SIGTERM, exit 0."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kschedfw.testing.controlplane import find_assets, missing_assets_reason
from tests.kube.helpers import pod_manifest, wait_for

ROOT = Path(__file__).resolve().parents[2]


def children_of(pid: int) -> dict[int, str]:
    """``{pid: command name}`` of the processes whose parent is ``pid`` (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            if int(rest[1]) == pid:
                found[int(entry.name)] = name
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def get(kubeconfig: Path, path: str, body: dict | None = None) -> tuple[int, str]:
    """One request with the kubeconfig's server, CA and token, as kubectl would send it."""
    config = json.loads(kubeconfig.read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    request = urllib.request.Request(cluster["server"] + path, method="POST" if body else "GET",
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Authorization": f"Bearer {user['token']}",
                                              "Content-Type": "application/json"})
    context = ssl.create_default_context(cafile=cluster["certificate-authority"])
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return answer.status, answer.read().decode()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to find the processes it started")
def test_controlplane_serves_until_sigterm_then_leaves_nothing(tmp_path):
    assets = find_assets()
    if assets is None:
        pytest.skip(missing_assets_reason())
    if not os.access(assets / "kube-scheduler", os.X_OK):
        pytest.skip(f"no kube-scheduler in {assets}")
    kubeconfig = tmp_path / "kubeconfig"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "kschedfw.cli.main", "controlplane", "--kubeconfig",
                             str(kubeconfig), "--nodes", "1", "--with-kube-scheduler"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: kubeconfig.exists() or proc.poll() is not None, timeout=120, what="the kubeconfig")
        assert proc.poll() is None, proc.communicate()
        usage = "".join(proc.stdout.readline() for _ in range(5))
        assert f"kubectl --kubeconfig {kubeconfig} " in usage and f"kschedfw run --kubeconfig {kubeconfig} " in usage
        assert get(kubeconfig, "/readyz") == (200, "ok")
        namespaces = {n["metadata"]["name"] for n in json.loads(get(kubeconfig, "/api/v1/namespaces")[1])["items"]}
        assert {"default", "kube-system"} <= namespaces
        nodes = json.loads(get(kubeconfig, "/api/v1/nodes")[1])["items"]
        assert [n["metadata"]["name"] for n in nodes] == ["node-1"]
        # the real kube-scheduler runs: a default-scheduler pod gets bound
        get(kubeconfig, "/api/v1/namespaces/default/pods", pod_manifest("p", "default"))
        wait_for(lambda: json.loads(get(kubeconfig, "/api/v1/namespaces/default/pods/p")[1])["spec"].get("nodeName")
                 == "node-1", timeout=60, what="kube-scheduler's bind")
        started = children_of(proc.pid)
        assert {"etcd", "kube-apiserver", "kube-scheduler"} <= set(started.values()), started
        workdir = Path(json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["certificate-authority"]).parent
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        left = {pid: name for pid, name in started.items() if alive(pid)}
        assert left == {}, f"still running after exit: {left}"
        assert not kubeconfig.exists() and not workdir.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
            time.sleep(1)  # its children get SIGKILL with it (PR_SET_PDEATHSIG)
