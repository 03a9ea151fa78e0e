"""One scheduling cycle: the scheduler, `explain` and PluginHarness run the same code."""

from __future__ import annotations

import json

from kschedfw import Status, hookimpl
from kschedfw.cli.main import main
from kschedfw.framework.recorder import CycleRecord
from kschedfw.fwk.types import PreFilterResult
from kschedfw.scheduler.schedule_one import new_cycle_state
from kschedfw.testing import PluginHarness, simulate_with

from .plugins import BASE, CpuFit

NARROWED_CLUSTER = """\
apiVersion: v1
kind: List
items:
""" + "".join(f"""\
- apiVersion: v1
  kind: Node
  metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}}}}}
  status: {{allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "110"}}}}
""" for n, cpu in (("n1", "1"), ("n2", "8"), ("n3", "8"))) + """\
- apiVersion: v1
  kind: Pod
  metadata: {name: pinned, namespace: default}
  spec:
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
    containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
"""


def test_explain_names_the_plugin_whose_pre_filter_result_narrowed_the_nodes(capsys, tmp_path):
    # upstream findNodesThatFitPod: nodes outside the PreFilter result get
    # "node(s) didn't satisfy plugin(s) [NodeAffinity]"; explain must say the same, with the plugin
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NARROWED_CLUSTER)
    code = main(["simulate", str(cluster), "-o", "json", "--explain", "default/pinned"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    payload = json.loads(out)
    pod = next(p for p in payload["pods"] if p["pod"] == "default/pinned")
    narrowed = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    assert pod["message"].startswith(f"0/3 nodes are available: 1 Insufficient cpu, 2 {narrowed}.")
    (explained,) = payload["explain"]
    attempt = explained["attempts"][-1]
    for node in ("n2", "n3"):
        assert attempt["nodes"][node] == {"fits": False, "plugin": "NodeAffinity", "reason": narrowed,
                                          "total": None}
    assert attempt["nodes"]["n1"]["plugin"] == "NodeResourcesFit"
    assert attempt["preFilter"] == {"plugin": "NodeAffinity", "narrowedTo": 1, "reason": narrowed}
    assert pod["message"] == explained["message"] == attempt["message"]


class Narrow:
    """PreFilter narrows to n2 and n3; Filter rejects n3."""

    name = "Narrow"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return PreFilterResult(frozenset({"n2", "n3"})), None

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable("not n3") if node_info.name == "n3" else None


class Halves:
    """Scores 10 per node index; normalize halves them."""

    name = "Halves"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return 10 * int(node_info.name[1:])

    @hookimpl
    def normalize_score(self, state, pod, scores):
        for s in scores:
            s.score //= 2


def test_harness_filter_reports_pre_filter_narrowing_like_the_scheduler(node, pod):
    harness = PluginHarness(Narrow, nodes=[node("n1"), node("n2"), node("n3")])
    statuses = harness.filter(pod("p")).statuses
    assert statuses["n1"].plugin == "Narrow"
    assert statuses["n1"].message() == "node(s) didn't satisfy plugin(s) [Narrow]"
    assert statuses["n2"].is_success()
    assert (statuses["n3"].plugin, statuses["n3"].message()) == ("Narrow", "not n3")


def test_recorder_receives_every_fact_of_the_cycle(node, pod):
    harness = PluginHarness(CpuFit, Halves, nodes=[node("n1", cpu="1"), node("n2"), node("n3"), node("n4")],
                            weights={"Halves": 3})
    record = harness.cycle(pod("p", cpu="2"))
    assert record.pre_filter_status is None and record.narrowing == ()
    assert record.nodes == ["n1", "n2", "n3", "n4"]
    assert record.feasible == ["n2", "n3", "n4"]
    assert record.node_status("n1").message() == "Insufficient cpu"
    scores = record.plugin_scores["Halves"]
    assert scores.raw == {"n2": 20, "n3": 30, "n4": 40}
    assert scores.normalized == {"n2": 10, "n3": 15, "n4": 20}
    assert scores.weighted == {"n2": 30, "n3": 45, "n4": 60}
    assert record.node_totals == {"n2": 30, "n3": 45, "n4": 60}
    assert (record.evaluated, record.feasible_count, record.node, record.status) == (4, 3, "n4", None)


def test_scheduler_cycle_accepts_a_recorder(node, pod):
    # ScheduleResult.evaluated_nodes/feasible_nodes reach the recorder of a real cycle
    result = simulate_with([*BASE, CpuFit, Halves], [node("n1", cpu="1"), node("n2"), node("n3")])
    scheduler = result.scheduler
    fwk = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot()
    state, _ = new_cycle_state()
    record = CycleRecord()
    schedule_result, status = scheduler.scheduling.schedule_pod(fwk, state, pod("q", cpu="2"), record)
    assert status is None and schedule_result.suggested_host == "n3" == record.node
    assert (schedule_result.evaluated_nodes, schedule_result.feasible_nodes) == (3, 2)
    assert (record.evaluated, record.feasible_count) == (3, 2)


class Unbounded:
    name = "Unbounded"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return 150


def test_harness_applies_the_schedulers_score_range_check(node, pod):
    harness = PluginHarness(Unbounded, nodes=[node("n1"), node("n2")])
    report = harness.score(pod("p"))
    assert report.status is not None
    assert report.status.message() == (
        'applying score defaultWeights on Score plugins: plugin "Unbounded" returns an invalid score 150, '
        "it should in the range of [0, 100] after normalizing")
    assert report.scores["Unbounded"].normalized == {"n1": 150, "n2": 150}
    # the scheduler reports the same Error for the pod
    result = simulate_with([*BASE, Unbounded], [node("n1"), node("n2"), pod("p")], until=0)
    assert result.pods[0].message == report.status.message()


def test_run_score_plugins_gives_each_plugins_weighted_score_per_node(node, pod):
    # upstream NodePluginScores: Scores (one PluginScore per plugin) and TotalScore
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.types import NodeInfo
    from kschedfw.testing import framework_for
    fwk = framework_for([Halves], weights={"Halves": 2})
    infos = [NodeInfo(node=node(n)) for n in ("n1", "n2")]
    scores, status = fwk.run_score_plugins(CycleState(), pod("p"), infos)
    assert status is None
    assert [(s.name, s.scores, s.total_score) for s in scores] == [("n1", [("Halves", 10)], 10),
                                                                    ("n2", [("Halves", 20)], 20)]


def test_explain_ranks_first_the_node_the_scheduler_chose(node, pod):
    from kschedfw.explain import explain
    result = simulate_with([*BASE, CpuFit, Halves], [node("n1"), node("n2"), node("n3", cpu="1"), pod("p", cpu="2")])
    bound = result.pods[0]
    assert bound.status == "Bound"
    explanation = explain(result.scheduler, result.cluster.get("Pod", "p", "default"))
    best = max(explanation.totals, key=explanation.totals.get)
    assert best == bound.node == "n2"
    assert explanation.node_statuses["n3"].message() == "Insufficient cpu"
    assert "n2" in explanation.render().splitlines()[2]  # first row under the header
