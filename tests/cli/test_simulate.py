"""`kschedfw simulate` as a user runs it."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from kschedfw.cli.main import main

CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: small, namespace: default}
  spec:
    containers: [{name: c, image: busybox, resources: {requests: {cpu: 500m}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: huge, namespace: default}
  spec:
    containers: [{name: c, image: busybox, resources: {requests: {cpu: "8"}}}]
"""


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_runs_with_no_arguments(capsys):
    code, out, err = run(capsys, "simulate")
    assert code == 0, err
    assert "default/web-1" in out and "Bound" in out
    assert "Scheduling is blocked due to non-empty scheduling gates" in out


def test_json_output_and_write_out(capsys, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    after = tmp_path / "after.yaml"
    code, out, err = run(capsys, "simulate", str(cluster), "--output", "json", "--write-out", str(after))
    assert code == 0, err
    result = json.loads(out)
    pods = {p["pod"]: p for p in result["pods"]}
    assert pods["default/small"]["status"] == "Bound" and pods["default/small"]["node"] == "n1"
    assert pods["default/huge"]["status"] == "Pending"
    assert pods["default/huge"]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    assert result["summary"]["total"] == {"Bound": 1, "Pending": 1}
    written = {i["metadata"]["name"]: i for i in yaml.safe_load(after.read_text())["items"]}
    assert written["small"]["spec"]["nodeName"] == "n1"
    condition = next(c for c in written["huge"]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert condition["status"] == "False" and condition["reason"] == "Unschedulable"


def test_write_out_writes_each_pod_by_itself(capsys, tmp_path):
    # kube-apiserver's DefaultTolerationSeconds gives every pod the same two tolerations; the
    # written cluster has them in full in each pod, as `kubectl get -o yaml` shows them, never
    # as YAML aliases of the first pod's
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    after = tmp_path / "after.yaml"
    code, _, err = run(capsys, "simulate", str(cluster), "--write-out", str(after))
    assert code == 0, err
    text = after.read_text()
    assert "&id" not in text and "*id" not in text
    for pod in ("small", "huge"):
        written = {i["metadata"]["name"]: i for i in yaml.safe_load(text)["items"]}[pod]
        assert [(t["key"], t["tolerationSeconds"]) for t in written["spec"]["tolerations"]] == [
            ("node.kubernetes.io/not-ready", 300), ("node.kubernetes.io/unreachable", 300)]


def test_same_seed_same_result(capsys, tmp_path):
    nodes = "\n".join(textwrap.dedent(f"""\
        ---
        apiVersion: v1
        kind: Node
        metadata: {{name: n{i}}}
        status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}""") for i in range(6))
    pods = "\n".join(textwrap.dedent(f"""\
        ---
        apiVersion: v1
        kind: Pod
        metadata: {{name: p{i}}}
        spec: {{containers: [{{name: c, image: x}}]}}""") for i in range(12))
    path = tmp_path / "c.yaml"
    path.write_text(nodes + "\n" + pods)
    outs = [run(capsys, "simulate", str(path), "-o", "json", "--seed", "7")[1] for _ in range(2)]
    assert outs[0] == outs[1]


def test_malformed_manifest_names_file_line_and_field(capsys, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(CLUSTER.replace("cpu: 500m", "cpu: 5x0m"))
    code, out, err = run(capsys, "simulate", str(path))
    assert code == 1
    rejected = [line for line in out.splitlines() if line.startswith("rejected ")]
    assert len(rejected) == 1
    assert rejected[0].startswith(f"rejected Pod default/small ({path}:")
    assert "spec.containers[0].resources.requests.cpu" in rejected[0]
    assert "Traceback" not in err


def test_invalid_config_exits_1(capsys, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "podInitialBackoffSeconds: 0\n")
    code, out, err = run(capsys, "simulate", "--config", str(cfg))
    assert code == 1
    assert "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0" in err


@pytest.mark.parametrize("command", ["simulate", "run"])
def test_missing_config_file_exits_2_as_a_missing_cluster_file(capsys, tmp_path, command):
    missing = tmp_path / "nope.yaml"
    code, out, err = run(capsys, command, "--config", str(missing))
    assert (code, err) == (2, f"error: --config {missing}: no such file or directory\n")
    cluster = run(capsys, "simulate", str(missing))
    assert cluster[0] == 2 and cluster[2] == f"error: {missing}: no such file or directory\n"


def test_unreadable_config_exits_2(capsys, tmp_path):
    code, out, err = run(capsys, "simulate", "--config", str(tmp_path))
    assert (code, err) == (2, f"error: --config {tmp_path}: cannot read file: Is a directory\n")


def test_scenario_gate_removed_later(capsys, tmp_path):
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(textwrap.dedent("""\
        kind: Scenario
        cluster: [cluster.yaml]
        steps:
        - at: 0s
          create:
            apiVersion: v1
            kind: Pod
            metadata: {name: gated, namespace: default}
            spec:
              schedulingGates: [{name: example.com/a}, {name: example.com/b}]
              containers: [{name: c, image: busybox}]
        - at: 10s
          removeSchedulingGate: {pod: default/gated, gate: example.com/a}
        - at: 20s
          removeSchedulingGate: {pod: default/gated, gate: example.com/b}
        """))
    code, out, err = run(capsys, "simulate", str(scenario), "-o", "json")
    assert code == 0, err
    pods = {p["pod"]: p for p in json.loads(out)["pods"]}
    assert pods["default/gated"]["status"] == "Bound"


def test_scenario_errors_name_the_step(capsys, tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("kind: Scenario\nsteps:\n- at: 10s\n  create: []\n- at: 5s\n  advance: 1m\n")
    code, out, err = run(capsys, "simulate", str(scenario))
    assert code == 1
    assert f"{scenario}:5: steps[1].at: steps must be in time order" in err


def test_explain_shows_each_nodes_verdict_and_scores(capsys, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER + """\
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
  spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
""")
    code, out, err = run(capsys, "simulate", str(cluster), "-o", "json",
                         "--explain", "default/huge", "--explain", "default/small")
    assert code == 0, err
    huge, small = json.loads(out)["explain"]
    (attempt,) = huge["attempts"]
    assert attempt["result"] == "Unschedulable"
    assert attempt["nodes"]["n1"] == {"fits": False, "plugin": "NodeResourcesFit", "reason": "Insufficient cpu",
                                      "total": None}
    assert attempt["nodes"]["n2"]["reason"] == "node(s) had untolerated taint(s)"
    assert attempt["message"].startswith("0/2 nodes are available: 1 Insufficient cpu, "
                                         "1 node(s) had untolerated taint(s).")
    # the bound pod's attempt as it happened: only n1 fitted, and it was bound there
    (bound,) = small["attempts"]
    assert bound["nodes"]["n1"]["fits"] and not bound["nodes"]["n2"]["fits"]
    assert (small["status"], small["node"], bound["result"], bound["node"]) == ("Bound", "n1", "Scheduled", "n1")


def test_explain_unknown_pod_is_refused_before_the_run(capsys, tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    code, out, err = run(capsys, "simulate", str(cluster), "--explain", "default/nope")
    assert code == 2 and "--explain default/nope: no such pod" in err
    assert out == ""  # nothing was simulated
    code, out, err = run(capsys, "simulate", str(cluster), "--explain", "default/smal")
    assert code == 2 and "did you mean default/small?" in err


GT_CLUSTER = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  spec: {taints: [{key: priority-level, value: "999", effect: NoSchedule}]}
  status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: gt, namespace: default}
  spec:
    tolerations: [{key: priority-level, operator: Gt, value: "900", effect: NoSchedule}]
    containers: [{name: c, image: x}]
"""


def test_feature_gates_switch_alpha_behaviour(capsys, tmp_path):
    # upstream's integration test TestTaintTolerationFilter runs with the alpha gate on
    cluster = tmp_path / "gt.yaml"
    cluster.write_text(GT_CLUSTER)
    code, out, _ = run(capsys, "simulate", str(cluster), "-o", "json")
    # v1.36 default: the API server refuses Gt/Lt tolerations, as upstream's pod validation does
    assert json.loads(out)["rejected"] == [{"object": "Pod default/gt", "source": f"{cluster}:9", "reason": (
        'Pod "gt" is invalid: spec.tolerations[0].operator: Unsupported value: "Gt": '
        'supported values: "Equal", "Exists"')}]
    code, out, _ = run(capsys, "simulate", str(cluster), "-o", "json",
                       "--feature-gates", "TaintTolerationComparisonOperators=true")
    assert json.loads(out)["pods"][0]["node"] == "n1"
    code, _, err = run(capsys, "simulate", str(cluster), "--feature-gates", "NoSuchGate=true")
    assert code == 2 and "unrecognized feature gate: NoSuchGate" in err
