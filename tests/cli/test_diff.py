"""`kschedfw diff`: one cluster, two configurations or gate sets, and the plugin behind each change.

Upstream references: NodeResourcesFit scores with LeastAllocated by default and MostAllocated when
configured (``scoringStrategy``, pkg/scheduler/framework/plugins/noderesources), the weighted sum of
Score plugins picks the node (schedulePod/prioritizeNodes); a FitError lists the rejecting plugins'
reasons per node; the API server refuses ``Gt``/``Lt`` tolerations unless the
TaintTolerationComparisonOperators gate is on. diff(1)'s exit status: 0 same, 1 different, 2 trouble.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kschedfw.testing.cli import run_cli

NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""

WEB = """\
- apiVersion: v1
  kind: Pod
  metadata: {{name: web-{i}, namespace: default}}
  spec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]}}
"""

BIN_PACKING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""

TAINTED = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-1, labels: {kubernetes.io/hostname: gpu-1}}
  spec: {taints: [{key: gpu, value: "true", effect: NoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: small, labels: {kubernetes.io/hostname: small}}
  status: {allocatable: {cpu: "1", memory: 2Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: tiny, namespace: default}
  spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: batch, namespace: default}
  spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
"""

NO_TAINT_FILTER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: TaintToleration}]
"""

LEVELS = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: level-5, labels: {kubernetes.io/hostname: level-5}}
  spec: {taints: [{key: level, value: "5", effect: NoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: above-3, namespace: default}
  spec:
    tolerations: [{key: level, operator: Gt, value: "3", effect: NoSchedule}]
    containers: [{name: c, image: x}]
"""


def _write(tmp_path: Path, **files: str) -> dict[str, str]:
    out = {}
    for name, text in files.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        out[name] = str(path)
    return out


@pytest.fixture
def web(tmp_path):
    return _write(tmp_path, cluster=NODES + "".join(WEB.format(i=i) for i in (1, 2, 3)),
                  binpack=BIN_PACKING, taint=TAINTED, notaint=NO_TAINT_FILTER, levels=LEVELS)


def test_bin_packing_moves_a_pod_and_names_the_score_plugin(web):
    result = run_cli("diff", web["cluster"], "--config", "", "--config", web["binpack"], "-o", "json")
    assert result.exit_code == 1, result.output  # differences found, as diff(1)
    out = result.json
    assert out["summary"] == {"moved": 1, "unscheduled": 0, "scheduled": 0, "deleted": 0, "status": 0, "devices": 0}
    [change] = out["changes"]
    # LeastAllocated spreads the second pod away from the first; MostAllocated packs it with it
    assert change["pod"] == "default/web-2" and change["change"] == "moved"
    assert (change["a"]["node"], change["b"]["node"]) == ("n1", "n2")
    why_b, why_a = change["decidedBy"]["b"], change["decidedBy"]["a"]
    assert why_b["kind"] == "score" and why_b["chosen"] == "n2" and why_b["other"] == "n1"
    assert why_b["plugins"][0] == "NodeResourcesFit" and why_b["scoreDifferences"]["NodeResourcesFit"] > 0
    assert why_b["totals"]["n2"] > why_b["totals"]["n1"]
    assert why_a["kind"] == "score" and why_a["chosen"] == "n1" and why_a["plugins"] == ["NodeResourcesFit"]
    assert why_a["totals"]["n1"] > why_a["totals"]["n2"]
    nodes = {n["node"]: n for n in out["nodes"]}
    assert (nodes["n2"]["a"]["pods"], nodes["n2"]["b"]["pods"]) == (2, 3)
    assert (nodes["n1"]["a"]["cpuRequested"], nodes["n1"]["b"]["cpuRequested"]) == (1000, 0)
    assert nodes["n2"]["b"]["memoryRequested"] == 3 * 2**30 and nodes["n2"]["b"]["cpuAllocatable"] == 4000


def test_text_output_fits_100_columns_and_reads_as_a_report(web):
    result = run_cli("diff", web["cluster"], "--config", "", "--config", web["binpack"])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == ["A: default configuration", f"B: --config {web['binpack']}"]
    assert "1 of 3 pods differ: 1 moved" in result.stdout
    assert "default/web-2: n1 -> n2" in lines
    assert any(line.startswith("  B: n2 (total ") and "NodeResourcesFit +" in line for line in lines)
    assert any(line.startswith("n2") and line.split()[-2:] == ["2", "3"] for line in lines)
    assert max(len(line) for line in lines) <= 100


def test_disabling_a_filter_makes_a_pending_pod_schedulable(web):
    result = run_cli("diff", web["taint"], "--config", "", "--config", web["notaint"], "-o", "json")
    assert result.exit_code == 1, result.output
    change, tiny = result.json["changes"]
    assert change["pod"] == "default/batch" and change["change"] == "scheduled"
    assert change["a"]["status"] == "Pending" and change["b"]["node"] == "gpu-1"
    why_a = change["decidedBy"]["a"]
    # the FitError of A's last attempt, and who rejected which node
    assert why_a["rejectedNodes"] == {"NodeResourcesFit": 1, "TaintToleration": 1}
    assert why_a["message"].startswith("0/2 nodes are available: 1 Insufficient cpu, "
                                       "1 node(s) had untolerated taint(s).")
    assert change["decidedBy"]["b"]["kind"] == "placed"
    assert change["decidedBy"]["b"]["rejectedNodes"] == {"NodeResourcesFit": 1}
    # without the filter the small pod prefers the emptier tainted node; with it, it had no choice
    assert (tiny["pod"], tiny["a"]["node"], tiny["b"]["node"]) == ("default/tiny", "small", "gpu-1")
    assert tiny["decidedBy"]["a"] == {"kind": "filter", "chosen": "small", "other": "gpu-1",
                                      "plugins": ["TaintToleration"],
                                      "message": "node(s) had untolerated taint(s)"}
    assert tiny["decidedBy"]["b"]["kind"] == "score"


def test_the_reverse_makes_the_pod_pending_with_its_rejecting_plugins(web):
    result = run_cli("diff", web["taint"], "--config", web["notaint"], "--config", "")
    assert result.exit_code == 1, result.output
    assert "default/batch: gpu-1 -> Pending" in result.stdout
    assert "  B: rejected by NodeResourcesFit (1 node), TaintToleration (1 node): 0/2 nodes" in result.stdout
    assert "1 no longer scheduled" in result.stdout
    assert "  B: small, as gpu-1 was rejected by TaintToleration: node(s) had untolerated taint(s)" \
        in result.stdout


def test_a_feature_gate_difference(web):
    result = run_cli("diff", web["levels"], "--feature-gates", "",
                     "--feature-gates", "TaintTolerationComparisonOperators=true", "-o", "json")
    assert result.exit_code == 1, result.output
    out = result.json
    assert out["b"] == "default configuration --feature-gates TaintTolerationComparisonOperators=true"
    [change] = out["changes"]
    assert change["pod"] == "default/above-3" and change["change"] == "scheduled"
    assert change["b"]["node"] == "level-5"  # taint level=5 is tolerated by "level Gt 3"
    why_a = change["decidedBy"]["a"]
    assert why_a["kind"] == "refused"
    assert 'spec.tolerations[0].operator: Unsupported value: "Gt"' in why_a["message"]


def test_same_setup_on_both_sides_is_no_difference(web):
    result = run_cli("diff", web["cluster"], "--config", web["binpack"])
    assert result.exit_code == 0, result.output
    assert "no differences: all 3 pods end the same on both sides" in result.stdout
    assert "all 2 nodes unchanged" in result.stdout


@pytest.mark.parametrize("args, message", [
    (("--config", "missing.yaml"), "error: --config missing.yaml: no such file or directory"),
    (("--feature-gates", "NoSuchGate=true"), "kschedfw diff: --feature-gates: unrecognized feature gate"),
    (("--config", "", "--config", "", "--config", ""), "--config given 3 times: at most twice"),
])
def test_trouble_is_exit_2(web, args, message):
    result = run_cli("diff", web["cluster"], *args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_an_invalid_configuration_is_exit_2_not_a_difference(web, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles: [{schedulerName: default-scheduler, plugins: {score: {enabled: [{name: Nope}]}}}]\n")
    result = run_cli("diff", web["cluster"], "--config", "", "--config", str(bad))
    assert result.exit_code == 2, result.output
    assert f"kschedfw diff: {bad} is not a valid configuration" in result.stderr


def test_help_documents_the_exit_status():
    result = run_cli("diff", "--help")
    assert result.exit_code == 0
    assert "diff(1)" in result.stdout and "0 when every pod ends the same" in result.stdout


PREEMPTION = """\
apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: low, namespace: default}
  spec: {nodeName: n1, priority: 0, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: high, namespace: default}
  spec: {priorityClassName: high, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}
"""

NO_PREEMPTION = NO_TAINT_FILTER.replace("TaintToleration", "DefaultPreemption")


def test_preemption_names_victims_and_preemptor(tmp_path):
    files = _write(tmp_path, cluster=PREEMPTION, nopreempt=NO_PREEMPTION)
    result = run_cli("diff", files["cluster"], "--config", "", "--config", files["nopreempt"], "-o", "json")
    assert result.exit_code == 1, result.output
    high, low = result.json["changes"]
    # A: DefaultPreemption evicts the lower-priority pod; B: without it the pod stays pending
    assert (high["pod"], high["a"]["node"], high["b"]["status"]) == ("default/high", "n1", "Pending")
    assert high["decidedBy"]["a"]["preempted"] == ["default/low"]
    assert high["decidedBy"]["b"]["rejectedNodes"] == {"NodeResourcesFit": 1}
    assert (low["pod"], low["a"]["status"], low["a"]["node"], low["b"]["status"]) == (
        "default/low", "Preempted", "n1", "Running")
    assert low["decidedBy"]["a"] == {"kind": "preempted", "chosen": "n1", "other": "default/high"}


def test_pods_created_by_scenario_steps_are_compared(tmp_path):
    files = _write(tmp_path, nodes=NODES, binpack=BIN_PACKING)
    scenario = tmp_path / "scenario.yaml"
    pods = textwrap.indent("".join(WEB.format(i=i) for i in (1, 2, 3)), "  ")
    scenario.write_text(f"kind: Scenario\ncluster: [nodes.yaml]\nsteps:\n- at: 10s\n  create:\n{pods}")
    result = run_cli("diff", str(scenario), "--config", "", "--config", files["binpack"], "-o", "json")
    assert result.exit_code == 1, result.output
    [change] = result.json["changes"]
    assert (change["pod"], change["a"]["node"], change["b"]["node"]) == ("default/web-2", "n1", "n2")


def test_an_object_refused_on_both_sides_is_reported_once_and_is_no_difference(web):
    result = run_cli("diff", web["levels"], "--config", "", "--config", web["binpack"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("rejected Pod default/above-3 (") == 1
    assert 'spec.tolerations[0].operator: Unsupported value: "Gt"' in result.stderr


NO_SCORE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
"""


def test_ties_and_unfiltered_nodes_are_said_as_such(web, tmp_path):
    # upstream: with no Score plugin, Filter stops at the first feasible node (numFeasibleNodesToFind
    # is 1) and it is chosen; equal totals go to a node picked at random (seeded here)
    files = _write(tmp_path, noscore=NO_SCORE)
    result = run_cli("diff", web["cluster"], "--config", "", "--config", files["noscore"], "-o", "json")
    assert result.exit_code == 1, result.output
    first = result.json["changes"][0]
    assert first["pod"] == "default/web-1"
    assert first["decidedBy"]["b"]["kind"] == "unevaluated"
    tie = first["decidedBy"]["a"]
    assert tie["kind"] == "score" and "plugins" not in tie and len(set(tie["totals"].values())) == 1
    text = run_cli("diff", web["cluster"], "--config", "", "--config", files["noscore"]).stdout
    assert f"  A: {tie['chosen']} over {tie['other']}, equal totals " in text
    assert "the seed broke the tie" in text


def test_unusable_cluster_files_are_exit_2(tmp_path):
    missing = run_cli("diff", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "nope.yaml: no such file or directory" in missing.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n")
    invalid = run_cli("diff", str(bad))  # simulate says 1 here; diff keeps 1 for "differences"
    assert invalid.exit_code == 2 and f"{bad}:" in invalid.stderr, invalid.output


GPU_POD = """\
- apiVersion: v1
  kind: Pod
  metadata: {{name: train-{i}, namespace: default}}
  spec:
    containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1", memory: 1Gi}}, claims: [{{name: gpu}}]}}}}]
    resourceClaims: [{{name: gpu, resourceClaimTemplateName: one-gpu}}]
"""

DEVICES = """\
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu}
  spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: one-gpu, namespace: default}
  spec: {spec: {devices: {requests: [{name: gpus, exactly: {deviceClassName: gpu}}]}}}
""" + "".join(f"""\
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: {n}-gpus}}
  spec:
    driver: gpu.example.com
    nodeName: {n}
    pool: {{name: {n}, generation: 1, resourceSliceCount: 1}}
    devices: [{{name: gpu-0}}, {{name: gpu-1}}]
""" for n in ("n1", "n2"))


def test_moved_pods_with_claims_show_their_devices_on_each_side(tmp_path):
    # as the bin-packing case, with a GPU claim per pod and two GPUs per node: MostAllocated packs
    # the second pod onto the first one's node, which leaves the third no GPU there
    files = _write(tmp_path, cluster=NODES + DEVICES + "".join(GPU_POD.format(i=i) for i in (1, 2, 3)),
                   binpack=BIN_PACKING)
    result = run_cli("diff", files["cluster"], "--config", "", "--config", files["binpack"], "-o", "json")
    assert result.exit_code == 1, result.output
    changes = {c["pod"]: c for c in result.json["changes"]}
    assert set(changes) == {"default/train-2", "default/train-3"}
    moved = changes["default/train-2"]
    assert (moved["a"]["node"], moved["b"]["node"]) == ("n1", "n2")
    assert moved["a"]["claims"] == [{"name": "gpu", "devices": ["gpus: gpu.example.com/n1/gpu-0"]}]
    assert moved["b"]["claims"] == [{"name": "gpu", "devices": ["gpus: gpu.example.com/n2/gpu-1"]}]
    third = changes["default/train-3"]
    assert third["decidedBy"]["b"]["kind"] == "filter"
    assert third["decidedBy"]["b"]["plugins"] == ["DynamicResources"]
    assert third["decidedBy"]["b"]["message"] == "cannot allocate all claims"
    text = run_cli("diff", files["cluster"], "--config", "", "--config", files["binpack"]).output
    assert "  A claim gpu: gpus: gpu.example.com/n1/gpu-0" in text
    assert "  B claim gpu: gpus: gpu.example.com/n2/gpu-1" in text


def test_json_names_a_node_that_only_one_side_has():
    """A node on one side only (a library caller comparing two different clusters) is a row with
    ``null`` usage on the other side, named all the same."""
    from kschedfw.cli.diff import as_json
    from kschedfw.diff import Comparison, NodeUsage, Setup
    only_b = NodeUsage("n9", cpu_requested=500, cpu_allocatable=4000, memory_requested=0,
                       memory_allocatable=2**30, pods=1)
    comparison = Comparison(Setup("A", None, {}, ()), Setup("B", None, {}, ()), pods=0, changes=(),
                            usage_a=(), usage_b=(only_b,))
    (row,) = as_json(comparison)["nodes"]
    assert (row["node"], row["a"], row["b"]["cpuRequested"]) == ("n9", None, 500)
