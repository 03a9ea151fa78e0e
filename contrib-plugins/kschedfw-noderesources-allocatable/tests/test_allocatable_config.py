"""The installed distribution: entry point, `kschedfw validate` on the scheduler-plugins sample
configuration, and scheduling runs (`simulate_with` and `kschedfw simulate`)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.testing import make_node, make_pod, run_cli, simulate_with

from kschedfw_noderesources_allocatable import NodeResourcesAllocatable

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "noderesources__scheduler-config.yaml"


def kschedfw(*args: str) -> subprocess.CompletedProcess:
    """The real command line, in a child process."""
    return subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *args], capture_output=True, text=True,
                          timeout=120)



def test_entry_point():
    (ep,) = [ep for ep in entry_points(group="kschedfw.plugins") if ep.name == "NodeResourcesAllocatable"]
    assert ep.load() is NodeResourcesAllocatable
    assert ep.dist.name == "kschedfw-noderesources-allocatable"


def test_listed_by_kschedfw_plugins(capsys):
    code, out = run_cli("plugins", "--output", "json").outcome
    assert code == 0, out
    row = next(r for r in json.loads(out) if r["name"] == "NodeResourcesAllocatable")
    assert row["status"] == "ok"
    assert row["extension_points"] == ["score", "normalize_score"]
    assert row["args"] == {"resources": [{"name": "cpu", "weight": 1048576}, {"name": "memory", "weight": 1}],
                           "mode": "Least"}


def test_sample_config_validates():
    done = kschedfw("validate", str(SAMPLE))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("args_yaml, expected", [
    pytest.param("mode: Medium", 'args.mode: Invalid value: "Medium": invalid support ModeType', id="mode"),
    pytest.param("resources:\n      - name: cpu\n        weight: -3",
                 "args.resources[0].weight: Invalid value: -3: resource weight of cpu should be a positive value, "
                 "got :-3", id="weight"),
    pytest.param("moode: Most", 'args.moode: Forbidden: unknown field "moode"', id="unknown-field"),
])
def test_invalid_args_are_reported(tmp_path, capsys, args_yaml, expected):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesAllocatable
  pluginConfig:
  - name: NodeResourcesAllocatable
    args:
      {args_yaml}
""")
    code, out = run_cli("validate", str(cfg)).outcome
    assert code == 1, out
    assert expected in out


def _cluster():
    return [make_node("small", cpu="2", memory="4Gi"), make_node("medium", cpu="4", memory="8Gi"),
            make_node("large", cpu="16", memory="64Gi"), make_pod("a", cpu="500m"), make_pod("b", cpu="3")]


@pytest.mark.parametrize("mode, expected", [
    ("Least", {"default/a": "small", "default/b": "medium"}),
    ("Most", {"default/a": "large", "default/b": "large"}),
])
def test_simulate_with(mode, expected):
    result = simulate_with([PrioritySort, NodeResourcesFit, NodeResourcesAllocatable, DefaultBinder], _cluster(),
                           args={"NodeResourcesAllocatable": {"mode": mode}},
                           weights={"NodeResourcesAllocatable": 10})
    assert {p.key: p.node for p in result.pods} == expected
    assert all(p.status == "Bound" for p in result.pods)


def test_kschedfw_simulate_with_sample_profile(capsys):
    code, out = run_cli("simulate", "--config", str(SAMPLE), "--output", "json",
                              str(DATA / "cluster.yaml")).outcome
    assert code == 0, out
    pods = {p["pod"]: (p["status"], p["node"]) for p in json.loads(out)["pods"]}
    assert pods == {"default/web": ("Bound", "small"), "default/batch": ("Bound", "medium")}
