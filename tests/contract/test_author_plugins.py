"""An author's plugins, installed through an entry point, in the three places a plugin runs:
``kschedfw simulate`` (the embedded cluster), ``kschedfw run`` (a real API server) and the
scheduler_perf harness (``benchmarks/scheduler_perf.py``). Hooks taking a subset of their spec's
arguments (Filter and Score without ``state``) schedule in each; a hook with an argument the spec
does not have is refused in each before anything runs, naming the plugin, the hook and the
argument."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kschedfw.testing.builders import container, make_pod
from tests.contract.author_plugins import install
from tests.contract.worlds import node_manifest as node

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "benchmarks" / "scheduler_perf.py"


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that has the author's package installed."""
    site = install(tmp_path_factory.mktemp("site"))
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])}


def config(tmp_path: Path, scheduler: str, *plugins: str) -> Path:
    """A profile adding ``plugins`` to the defaults: Filter ones, then a Score one (weight 10)."""
    filters = [p for p in plugins if p != "PrefersGood"]
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "leaderElection:\n  leaderElect: false\n"
            f"profiles:\n- schedulerName: {scheduler}\n  plugins:\n"
            f"    filter:\n      enabled: [{', '.join('{name: %s}' % p for p in filters)}]\n")
    if "PrefersGood" in plugins:
        text += "    score:\n      enabled: [{name: PrefersGood, weight: 10}]\n"
    path = tmp_path / f"{scheduler}-{'-'.join(plugins)}.yaml"
    path.write_text(text)
    return path


def pod(name: str, namespace: str = "default", scheduler: str = "default-scheduler") -> dict:
    return make_pod(name, namespace=namespace, scheduler_name=scheduler,
                    containers=[container("c", requests={"cpu": "100m", "memory": "64Mi"})]).raw


def refused(result: subprocess.CompletedProcess) -> None:
    assert result.returncode != 0
    assert "Misspelled" in result.stderr and "'filter'" in result.stderr and "nodeinfo" in result.stderr


# ------------------------------------------------------------------------------------ simulate
def simulate(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", "simulate", *args], env=env, text=True,
                          capture_output=True, timeout=120)


def test_subset_hooks_schedule_in_simulate(env, tmp_path):
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        node("bad", bad="true"), node("plain"), node("good", good="true"), pod("web"), pod("api")]}))
    result = simulate(env, "--config", str(config(tmp_path, "default-scheduler", "OnlyNode", "PrefersGood")),
                      "-o", "json", str(cluster))
    assert result.returncode == 0, result.stderr
    assert {p["pod"]: p["node"] for p in json.loads(result.stdout)["pods"]} == \
        {"default/web": "good", "default/api": "good"}


def test_a_misspelled_argument_is_refused_by_simulate(env, tmp_path):
    refused(simulate(env, "--config", str(config(tmp_path, "default-scheduler", "Misspelled"))))


# ------------------------------------------------------------------------------------ run
def test_subset_hooks_schedule_in_run(env, tmp_path, control_plane):
    scheduler = "author-plugins"
    namespace = "author-plugins"
    control_plane.api("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    nodes = {"bad": {"bad": "true"}, "plain": {}, "good": {"good": "true"}}
    for name, labels in nodes.items():
        control_plane.create_ready_node(f"{namespace}-{name}", labels=labels)
    log = (tmp_path / "run.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "kschedfw.cli.main", "run", "--kubeconfig",
                             str(control_plane.kubeconfig), "--secure-port", "0", "--health-address", "127.0.0.1:0", "--config",
                             str(config(tmp_path, scheduler, "OnlyNode", "PrefersGood"))],
                            env=env, text=True, stdout=log, stderr=subprocess.STDOUT)
    try:
        for name in ("web", "api"):
            control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod(name, namespace, scheduler))
        bound = {}
        deadline = time.monotonic() + 60
        while len(bound) < 2 and proc.poll() is None and time.monotonic() < deadline:
            items = control_plane.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
            bound = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in items if p["spec"].get("nodeName")}
            time.sleep(0.1)
        assert bound == {"web": f"{namespace}-good", "api": f"{namespace}-good"}, (tmp_path / "run.log").read_text()
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
        for name in nodes:
            control_plane.api("DELETE", f"/api/v1/nodes/{namespace}-{name}")


def test_a_misspelled_argument_is_refused_by_run(env, tmp_path):
    result = subprocess.run([sys.executable, "-m", "kschedfw.cli.main", "run", "--kubeconfig",
                             str(tmp_path / "never-read"), "--config",
                             str(config(tmp_path, "author-plugins", "Misspelled"))],
                            env=env, text=True, capture_output=True, timeout=120)
    refused(result)


# ------------------------------------------------------------------------------------ harness
HARNESS_CASE = """\
- name: AuthorPlugins
  workloadTemplate:
  - {opcode: createNodes, count: 1, nodeTemplatePath: bad.json}
  - {opcode: createNodes, count: 1, nodeTemplatePath: good.json}
  - {opcode: createNodes, count: 1, nodeTemplatePath: plain.json}
  - {opcode: createPods, count: 4, podTemplatePath: pod.json, collectMetrics: true}
  - {opcode: createPods, count: 1, podTemplatePath: pod.json, skipWaitToCompletion: true}
  - {opcode: sleep, duration: 1s}
  workloads:
  - name: small
"""


def harness(env, tmp_path: Path, *plugins: str) -> subprocess.CompletedProcess:
    """The harness on a workload of a bad node (room for any number of pods), a good and a plain
    one (room for two each) and five pods: four fit on good and plain, the fifth only on bad
    (the workload ends a simulated second after it, once it has been tried)."""
    cases = tmp_path / "cases"
    cases.mkdir(exist_ok=True)
    (cases / "performance-config.yaml").write_text(HARNESS_CASE)
    for name, pods, labels in (("bad", "110", {"bad": "true"}), ("good", "2", {"good": "true"}),
                               ("plain", "2", {})):
        manifest = node(name, pods, **labels)
        manifest["metadata"] = {"generateName": f"{name}-", "labels": labels}
        (cases / f"{name}.json").write_text(json.dumps(manifest))
    template = pod("pod")
    template["metadata"] = {"generateName": "pod-"}
    (cases / "pod.json").write_text(json.dumps(template))
    return subprocess.run([sys.executable, str(HARNESS), str(cases), "--test", "AuthorPlugins", "--workload",
                           "small", "--config", str(config(tmp_path, "default-scheduler", *plugins)),
                           "--pace", "instant", "--output", "json", "--quiet"],
                          env=env, text=True, capture_output=True, timeout=300)


def test_subset_hooks_schedule_in_the_harness(env, tmp_path):
    result = harness(env, tmp_path, "OnlyNode", "PrefersGood")
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)
    assert run["status"] == "ok", run["error"]
    assert run["total_bound"] == 4  # the fifth pod would go to the bad node, were OnlyNode not filtering
    assert run["pending_end"].get("unschedulable") == 1
    assert set(run["unschedulable_reasons"]) == {"OnlyNode", "NodeResourcesFit"}


def test_a_misspelled_argument_is_refused_by_the_harness(env, tmp_path):
    refused(harness(env, tmp_path, "Misspelled"))
