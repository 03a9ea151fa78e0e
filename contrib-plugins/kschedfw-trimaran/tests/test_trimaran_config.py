"""The installed distribution: entry point, `kschedfw validate` on the scheduler-plugins sample
(v1beta3, refused as removed) and on its v1 version, and scheduling runs with each metrics source."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.testing import run_cli, simulate_with

from kschedfw_trimaran import TargetLoadPacking

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "trimaran__scheduler-config.yaml"
SAMPLE_V1 = DATA / "trimaran__scheduler-config.v1.yaml"



def test_entry_point():
    (ep,) = [ep for ep in entry_points(group="kschedfw.plugins") if ep.name == "TargetLoadPacking"]
    assert ep.load() is TargetLoadPacking
    assert ep.dist.name == "kschedfw-trimaran"


def test_listed_by_kschedfw_plugins(capsys):
    code, out = run_cli("plugins", "--output", "json").outcome
    assert code == 0, out
    row = next(r for r in json.loads(out) if r["name"] == "TargetLoadPacking")
    assert row["status"] == "ok"
    assert row["extension_points"] == ["score", "normalize_score"]
    assert row["args"]["targetUtilization"] == 40
    assert row["args"]["defaultRequestsMultiplier"] == "1.5"
    assert row["args"]["defaultRequests"] == {"cpu": "1000m"}


def test_sample_uses_a_removed_api_version(capsys):
    code, out = run_cli("validate", str(SAMPLE)).outcome
    assert code == 1, out
    assert ('apiVersion: Invalid value: "kubescheduler.config.k8s.io/v1beta3": kubescheduler.config.k8s.io/v1beta3 '
            "was removed upstream in Kubernetes v1.29") in out
    assert "TargetLoadPacking" not in out


def test_v1_version_of_the_sample_validates(capsys):
    code, out = run_cli("validate", str(SAMPLE_V1)).outcome
    assert code == 0, out
    assert "warning" not in out


@pytest.mark.parametrize("args_yaml, expected", [
    pytest.param('defaultRequestsMultiplier: "x1.5"',
                 'args.defaultRequestsMultiplier: Invalid value: "x1.5": unable to parse DefaultRequestsMultiplier: '
                 'strconv.ParseFloat: parsing "x1.5": invalid syntax', id="multiplier"),
    pytest.param("metricProvider:\n          type: Graphite",
                 'args.metricProvider.type: Invalid value: "Graphite": invalid MetricProvider.Type, got Graphite',
                 id="provider"),
    pytest.param("targetUtilization: 0.5", "args.targetUtilization: Invalid value: 0.5: expected integer, got number",
                 id="integer"),
    pytest.param("defaultRequestsMultiplier: 2", "args.defaultRequestsMultiplier: Invalid value: 2: expected string",
                 id="multiplier-type"),
])
def test_invalid_args_are_reported(tmp_path, capsys, args_yaml, expected):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: trimaran
  plugins:
    score:
      enabled:
      - name: TargetLoadPacking
  pluginConfig:
    - name: TargetLoadPacking
      args:
        {args_yaml}
""")
    code, out = run_cli("validate", str(cfg)).outcome
    assert code == 1, out
    assert expected in out


def test_kschedfw_simulate_with_the_v1_sample(capsys):
    """Node annotations as the metrics: the pods fill the cold node up to the 40 % target, then the
    next best node; the hot node (80 %) gets nothing."""
    code, out = run_cli("simulate", "--config", str(SAMPLE_V1), "--output", "json",
                              str(DATA / "cluster.yaml")).outcome
    assert code == 0, out
    pods = {p["pod"]: (p["status"], p["node"]) for p in json.loads(out)["pods"]}
    assert pods == {"default/job-1": ("Bound", "cold"), "default/job-2": ("Bound", "cold"),
                    "default/job-3": ("Bound", "warm")}


def _cluster(n_pods: int) -> list:
    nodes = [kit.make_node(name, capacity={"cpu": "4", "memory": "16Gi", "pods": "110"}, hostname_label=False)
             for name in ("cold", "warm", "hot")]
    pods = [kit.make_pod(f"job-{i}", limits={"cpu": "500m"}) for i in range(1, n_pods + 1)]
    return [*nodes, *pods]


def test_simulate_with_a_metrics_file():
    """load-watcher's format from a file (cold 5 %, warm 35 %, hot 90 %; 500m pods = 12.5 % each)."""
    result = simulate_with([PrioritySort, NodeResourcesFit, TargetLoadPacking, DefaultBinder], _cluster(4),
                           args={"TargetLoadPacking": {"metricsFile": str(DATA / "metrics.yaml")}},
                           weights={"TargetLoadPacking": 10})
    placed = {p.key: p.node for p in result.pods}
    # predicted with the pod: cold 17.5 %, then 30 %, then 42.5 % (score 38, warm at 47.5 %: 35), then
    # 55 % (30): the fourth pod goes to warm; hot (90 %) would pass 100 % and scores 0
    assert placed == {"default/job-1": "cold", "default/job-2": "cold", "default/job-3": "cold",
                      "default/job-4": "warm"}
    assert all(p.status == "Bound" for p in result.pods)


def test_simulate_with_node_annotations():
    objects = _cluster(3)
    for i, load in enumerate(("0", "30", "80")):
        objects[i] = parse_object({**objects[i].raw, "metadata": {**objects[i].raw["metadata"],
                                   "annotations": {"kschedfw.io/cpu-utilization": load}}})
    result = simulate_with([PrioritySort, NodeResourcesFit, TargetLoadPacking, DefaultBinder], objects,
                           weights={"TargetLoadPacking": 10})
    # cold 0 -> 12.5 -> 25 -> 37.5 %: all three stay below the target there
    assert {p.key: p.node for p in result.pods} == {"default/job-1": "cold", "default/job-2": "cold",
                                                   "default/job-3": "cold"}
