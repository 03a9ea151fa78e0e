"""The installed distribution: entry point, `kschedfw validate` on the scheduler-plugins sample
configuration, and scheduling the sample nodes with each of its four profiles."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from kschedfw import testing as kit
from kschedfw.api import load_manifests, parse_object
from kschedfw.config.validate import load_config
from kschedfw.framework.registry import default_registry
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.simulation import Simulation
from kschedfw.testing import run_cli, simulate_with

from kschedfw_nodemetadata import NodeMetadata

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "nodemetadata__scheduler-config.yaml"
NODES = DATA / "nodemetadata__examples__nodes.yaml"

# (schedulerName of the sample's profile, the node its example prefers)
PROFILES = [
    ("default-scheduler", "high-priority-node"),        # priority label, Highest
    ("cost-aware-scheduler", "cheap-node"),             # hourly-cost annotation, Lowest
    ("freshness-aware-scheduler", "recently-maintained-node"),  # last-maintenance, Newest
    ("stable-nodes-scheduler", "old-stable-node"),      # created-at label (2006-01-02), Oldest
]



def sample_documents(tmp_path) -> list[Path]:
    """The sample holds four alternative KubeSchedulerConfigurations in one file; a scheduler
    reads the first, so each document goes to its own file to be run."""
    text = SAMPLE.read_text()
    docs = text.split("\n---\n")
    paths = []
    for i, doc in enumerate(docs):
        path = tmp_path / f"nodemetadata-{i}.yaml"
        path.write_text(doc)
        paths.append(path)
    return paths


def test_entry_point():
    (ep,) = [ep for ep in entry_points(group="kschedfw.plugins") if ep.name == "NodeMetadata"]
    assert ep.load() is NodeMetadata
    assert ep.dist.name == "kschedfw-nodemetadata"


def test_sample_config_validates():
    """`kschedfw validate` checks each of the sample's four documents (alternative profiles)."""
    done = subprocess.run([sys.executable, "-m", "kschedfw.cli.main", "validate", str(SAMPLE)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 file checked: 1 valid" in done.stdout


def test_each_sample_document_validates(tmp_path, capsys):
    paths = sample_documents(tmp_path)
    assert len(paths) == 4
    code, out = run_cli("validate", *map(str, paths)).outcome
    assert code == 0, out
    assert "4 files checked: 4 valid" in out


def test_defaults_shown(tmp_path, capsys):
    path = sample_documents(tmp_path)[0]
    code, out = run_cli("validate", "--show-defaults", "--output", "json", str(path)).outcome
    assert code == 0, out
    assert '"metadataKey": "node.example.com/priority"' in out


@pytest.mark.parametrize("args_yaml, expected", [
    pytest.param('metadataKey: ""\n      metadataSource: Label\n      metadataType: Number\n'
                 '      scoringStrategy: Highest',
                 'args.metadataKey: Invalid value: "": metadataKey cannot be empty', id="empty-key"),
    pytest.param('metadataKey: k\n      metadataSource: Label\n      metadataType: Number\n'
                 '      scoringStrategy: Newest',
                 'args.scoringStrategy: Invalid value: "Newest": scoringStrategy "Newest" and "Oldest" are only '
                 'valid for metadataType "Timestamp"', id="strategy-type-mismatch"),
    pytest.param('metadataKey: k\n      metadataSource: Labels\n      metadataType: Number\n'
                 '      scoringStrategy: Highest',
                 'args.metadataSource: Invalid value: "Labels": metadataSource must be either "Label" or '
                 '"Annotation"', id="source"),
    pytest.param('metadataKey: k\n      metadataSource: Label\n      metadataType: Number\n'
                 '      scoringStrategy: Highest\n      timestampFmt: x',
                 'args.timestampFmt: Forbidden: unknown field "timestampFmt"', id="unknown-field"),
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
      - name: NodeMetadata
  pluginConfig:
  - name: NodeMetadata
    args:
      {args_yaml}
""")
    code, out = run_cli("validate", str(cfg)).outcome
    assert code == 1, out
    assert expected in out


def _cluster(scheduler_name: str) -> list:
    """The sample nodes (given room for pods) and one pending pod for ``scheduler_name``."""
    nodes = [n.with_allocatable({"cpu": 4000, "memory": 8 << 30, "pods": 110}) for n in load_manifests(NODES)]
    pod = kit.make_pod("app", scheduler_name=scheduler_name,
                       containers=[kit.container("app", image="nginx", requests={"cpu": "100m"})])
    return [*nodes, pod]


@pytest.mark.parametrize("index, scheduler_name, preferred", [(i, *p) for i, p in enumerate(PROFILES)],
                         ids=[p[0] for p in PROFILES])
def test_sample_profiles_schedule_the_example_nodes(tmp_path, index, scheduler_name, preferred):
    path = sample_documents(tmp_path)[index]
    registry = default_registry()
    config, diagnostics = load_config(str(path), registry)
    assert config is not None, diagnostics
    result = Simulation(config, registry, _cluster(scheduler_name)).run()
    (pod,) = result.pods
    assert (pod.status, pod.node) == ("Bound", preferred)


def test_kschedfw_simulate(tmp_path, capsys):
    path = sample_documents(tmp_path)[1]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([o.raw for o in _cluster("cost-aware-scheduler")]))
    code, out = run_cli("simulate", "--config", str(path), "--output", "json", str(cluster)).outcome
    assert code == 0, out
    (pod,) = json.loads(out)["pods"]
    assert (pod["status"], pod["node"]) == ("Bound", "cheap-node")


def test_simulate_with_spreads_by_metadata():
    nodes = [parse_object({"kind": "Node", "metadata": {"name": f"n{i}", "labels": {"rank": str(i)}},
                           "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "1"}}})
             for i in range(3)]
    pods = [parse_object({"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
                          "spec": {"containers": [{"name": "c"}]}}) for i in range(3)]
    result = simulate_with([PrioritySort, NodeResourcesFit, NodeMetadata, DefaultBinder], [*nodes, *pods],
                           args={"NodeMetadata": {"metadataKey": "rank", "metadataSource": "Label",
                                                  "metadataType": "Number", "scoringStrategy": "Highest"}},
                           weights={"NodeMetadata": 10})
    # one pod per node (pods: 1); the first pod (by name, same priority and time) gets the top rank
    assert sorted((p.key, p.node) for p in result.pods) == [("default/p0", "n2"), ("default/p1", "n1"),
                                                            ("default/p2", "n0")]
