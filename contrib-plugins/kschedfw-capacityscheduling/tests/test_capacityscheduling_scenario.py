"""CapacityScheduling installed and running: entry point, `kschedfw validate` on the
scheduler-plugins sample and on kschedfw's elastic-quotas profile, and the quota scenario on the
embedded cluster: a namespace over its max is refused; borrowed capacity is reclaimed by preemption
and the owner's pod binds after the victim's graceful deletion."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from kschedfw.api import load_manifests
from kschedfw.cluster.inputs.manifests import load_inputs
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.simulation import Simulation
from kschedfw.testing import make_namespace, make_node, make_pod, run_cli, simulate_with

from kschedfw_capacityscheduling import CapacityScheduling

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "capacityscheduling__scheduler-config.yaml"
PROFILE = DATA / "elastic-quotas.yaml"
SCENARIO = DATA / "elastic-quotas-scenario.yaml"
EQ_EXAMPLE = DATA / "capacityscheduling__elasticquota-example.yaml"

OVER_MAX = "Pod team-b/b-big is rejected in PreFilter because ElasticQuota team-b is more than Max"



def test_entry_point():
    (ep,) = [ep for ep in entry_points(group="kschedfw.plugins") if ep.name == "CapacityScheduling"]
    assert ep.load() is CapacityScheduling
    assert ep.dist.name == "kschedfw-capacityscheduling"


def test_listed_by_kschedfw_plugins(capsys):
    code, out = run_cli("plugins", "--output", "json").outcome
    assert code == 0, out
    row = next(r for r in json.loads(out) if r["name"] == "CapacityScheduling")
    assert row["status"] == "ok"
    assert {"pre_filter", "pre_filter_add_pod", "pre_filter_remove_pod", "post_filter", "reserve", "unreserve",
            "events_to_register"} <= set(row["extension_points"])


def test_sample_config_and_profile_validate():
    done = subprocess.run([sys.executable, "-m", "kschedfw.cli.main", "validate", str(SAMPLE), str(PROFILE)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 files checked: 2 valid" in done.stdout


@pytest.mark.parametrize("path", [SAMPLE, PROFILE], ids=["sample", "profile"])
def test_capacity_scheduling_replaces_default_preemption(path):
    config, diagnostics = load_config(str(path), default_registry())
    assert config is not None, diagnostics
    profile = config.profiles[0]
    assert [e.name for e in profile.plugins["post_filter"]] == ["CapacityScheduling"]
    assert "CapacityScheduling" in [e.name for e in profile.plugins["pre_filter"]]
    assert "CapacityScheduling" in [e.name for e in profile.plugins["reserve"]]


def test_args_are_refused(tmp_path, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(PROFILE.read_text() + "  pluginConfig:\n  - name: CapacityScheduling\n    args:\n      x: 1\n")
    code, out = run_cli("validate", str(cfg)).outcome
    assert code == 1, out
    assert 'args.x: Forbidden: unknown field "x"' in out


# --------------------------------------------------------------------------- the quota scenario

@pytest.fixture(scope="module")
def scenario():
    registry = default_registry()
    config, diagnostics = load_config(str(PROFILE), registry)
    assert config is not None, diagnostics
    objects, steps = load_inputs([str(SCENARIO)])
    return Simulation(config, registry, objects, steps).run()


def test_namespace_over_its_max_is_refused(scenario):
    outcomes = {p.key: p for p in scenario.pods}
    big = outcomes["team-b/b-big"]
    assert (big.status, big.reason) == ("Pending", "Unschedulable")
    assert big.message.startswith(f"0/1 nodes are available: {OVER_MAX}.")
    # it may not preempt its own namespace's pods: they are not of lower priority
    assert "No victims found on node node-1 for preemptor pod b-big" in big.message
    refusals = [a for a in scenario.scheduler.attempts if a.pod == "team-b/b-big"]
    assert refusals and all(a.result == "Unschedulable" and OVER_MAX in a.message for a in refusals)


def test_borrowed_capacity_is_reclaimed_by_preemption(scenario):
    outcomes = {p.key: p for p in scenario.pods}
    # team a's pod runs; team b keeps 3 of its 4 pods (back at 2 + what team a does not use)
    assert (outcomes["team-a/a-1"].status, outcomes["team-a/a-1"].node) == ("Bound", "node-1")
    team_b = sorted(k for k, p in outcomes.items() if k.startswith("team-b/b-") and p.status == "Bound")
    assert len(team_b) == 3
    (victim,) = {"team-b/b-1", "team-b/b-2", "team-b/b-3", "team-b/b-4"} - set(team_b)
    # the victim was preempted when team a's pod was first tried (t=20s), by CapacityScheduling
    preempted = [e for e in scenario.cluster.events if e.reason == "Preempted"]
    assert [(e.time, e.object_key) for e in preempted] == [(20.0, victim)]
    attempts = [(a.time, a.result, a.node) for a in scenario.scheduler.attempts if a.pod == "team-a/a-1"]
    assert attempts[0][:2] == (20.0, "Unschedulable")
    assert attempts[0][2] == "node-1"  # nominated
    # ... and team a's pod bound only once the victim's 30 s graceful deletion ended
    assert attempts[-1] == (50.0, "Scheduled", "node-1")
    assert scenario.cluster.get("Pod", victim.split("/")[1], "team-b") is None
    bound = [e for e in scenario.cluster.events if e.reason == "Scheduled" and e.object_key == "team-a/a-1"]
    assert [e.time for e in bound] == [50.0]


def test_quota_bookkeeping_at_the_end(scenario):
    fwk = scenario.scheduler.frameworks["default-scheduler"]
    infos = fwk.plugins["CapacityScheduling"].elastic_quota_infos
    assert (infos["team-a"].used.milli_cpu, infos["team-b"].used.milli_cpu) == (1000, 3000)
    assert len(infos["team-a"].pods) == 1 and len(infos["team-b"].pods) == 3


def test_kschedfw_simulate_runs_the_scenario(capsys):
    code, out = run_cli("simulate", "--config", str(PROFILE), "--output", "json", str(SCENARIO)).outcome
    assert code == 0, out
    result = json.loads(out)
    pods = {p["pod"]: p for p in result["pods"]}
    assert pods["team-a/a-1"]["status"] == "Bound"
    assert pods["team-b/b-big"]["status"] == "Pending"
    assert OVER_MAX in pods["team-b/b-big"]["message"]
    # the reclaimed pod keeps its row: preempted by team a's pod, on the node it ran on
    (victim,) = [p for p in result["pods"] if p["status"] == "Preempted"]
    assert victim["pod"].startswith("team-b/b-") and victim["deletedBy"] == "team-a/a-1"
    assert (victim["node"], victim["deletedAt"], victim["goneAt"]) == ("node-1", 20.0, 50.0)
    assert result["summary"]["total"] == {"Bound": 4, "Pending": 1, "Preempted": 1}
    assert result["simulatedSeconds"] == 50.0


# --------------------------------------------------------------------------- the sample ElasticQuota

def _gpu_pod(name: str, gpus: int):
    return make_pod(name, namespace="test", cpu="1", memory="1Gi", requests={"nvidia.com/gpu": str(gpus)})


def test_the_sample_elastic_quota():
    """The sample's quota (min 1 GPU, max 2): alone in the cluster, its min is also the sum of
    all minimums, so the namespace cannot borrow beyond it."""
    (eq,) = load_manifests(EQ_EXAMPLE)
    node = make_node("gpu-node", cpu="32", memory="128Gi", extra_allocatable={"nvidia.com/gpu": "8"})
    namespace = make_namespace("test")
    result = simulate_with([PrioritySort, NodeResourcesFit, CapacityScheduling, DefaultBinder],
                           [node, namespace, eq, _gpu_pod("train-1", 1), _gpu_pod("train-2", 1)])
    outcomes = {p.key: p for p in result.pods}
    assert outcomes["test/train-1"].status == "Bound"
    assert outcomes["test/train-2"].status == "Pending"
    assert "Pod test/train-2 is rejected in PreFilter because total ElasticQuota used is more than min" in \
        outcomes["test/train-2"].message


def test_raising_a_max_requeues_the_refused_pod(tmp_path):
    """ElasticQuota events: the pod refused for team b's max is retried when the max is raised
    (there is room on a second node)."""
    cluster = DATA / "elastic-quotas-cluster.yaml"
    scenario = tmp_path / "raise-max.yaml"
    scenario.write_text(f"""\
kind: Scenario
cluster: [{cluster}]
steps:
- at: 5s
  create:
  - apiVersion: v1
    kind: Node
    metadata: {{name: node-2}}
    status: {{allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}}}
- at: 10s
  create:
  - apiVersion: v1
    kind: Pod
    metadata: {{name: b-5, namespace: team-b}}
    spec:
      containers: [{{name: work, image: busybox, resources: {{requests: {{cpu: 100m, memory: 1Gi}}}}}}]
- at: 40s
  update:
  - apiVersion: scheduling.x-k8s.io/v1alpha1
    kind: ElasticQuota
    metadata: {{name: quota, namespace: team-b}}
    spec:
      min: {{cpu: "2", memory: 8Gi}}
      max: {{cpu: "5", memory: 16Gi}}
- at: 41s
  update:
  - apiVersion: scheduling.x-k8s.io/v1alpha1
    kind: ElasticQuota
    metadata: {{name: quota, namespace: team-a}}
    spec:
      min: {{cpu: "3", memory: 8Gi}}
      max: {{cpu: "4", memory: 16Gi}}
""")
    registry = default_registry()
    config, _ = load_config(str(PROFILE), registry)
    objects, steps = load_inputs([str(scenario)])
    result = Simulation(config, registry, objects, steps).run()
    attempts = [(a.time, a.result) for a in result.scheduler.attempts if a.pod == "team-b/b-5"]
    # refused for the max at 10 s; at 40 s the larger max lets it past the max, but the sum of
    # minimums (4 cores) still refuses it; at 41 s team a's larger min raises that sum: it binds
    assert ("team-b/b-5", "node-2") in [(p.key, p.node) for p in result.pods]
    assert [a for a in attempts if a[1] != "Assumed"] == [(10.0, "Unschedulable"), (40.0, "Unschedulable"),
                                                          (41.0, "Scheduled")]
    messages = [a.message for a in result.scheduler.attempts if a.pod == "team-b/b-5" and a.message]
    assert "ElasticQuota team-b is more than Max" in messages[0]
    assert "total ElasticQuota used is more than min" in messages[-1]
