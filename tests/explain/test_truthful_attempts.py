"""`simulate --explain` says what each attempt did, completely: no total that is not one, the
pod's own attempt numbers, counts that agree with the nodes listed, a column for each plugin
that acted. Each test states the upstream rule it holds the explanation to."""

from __future__ import annotations

import json
import re

from kschedfw import hookimpl
from kschedfw.cli.main import main
from kschedfw.explain import DecisionLog, render
from kschedfw.framework.registry import Registry
from kschedfw.fwk.status import Status
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for, make_node, make_pod
from tests.scheduler.plugins import BASE, RaisingFilter
from tests.scheduler.test_one_cycle import NARROWED_CLUSTER


class Steady:
    """Scores every node 10."""

    name = "Steady"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return 10


class BrokenScore:
    """Score fails on every node."""

    name = "BrokenScore"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return Status.as_status("score backend unreachable")


def explained_run(classes, objects, key, until=None):
    registry = Registry.from_classes(classes)
    sim = Simulation(config_for(classes, registry=registry), registry, objects)
    log = DecisionLog(sim.scheduler, [key]).attach()
    result = sim.run(until=until)
    (explained,) = log.explain(result, [key])
    return explained, result


def test_a_cycle_that_ended_at_score_shows_no_total_and_says_why():
    # upstream RunScorePlugins: an Error from one Score plugin ends the cycle ("running Score
    # plugins: plugin ... failed with: ...") before any node has a total; the scores the plugins
    # before it gave are real, the totals do not exist
    explained, _ = explained_run([*BASE, Steady, BrokenScore], [make_node("n1"), make_node("n2"), make_pod("p")],
                                 "default/p", until=0)
    first = explained["attempts"][0]
    assert first["result"] == "SchedulerError"
    assert {n: v["total"] for n, v in first["nodes"].items()} == {"n1": None, "n2": None}
    assert first["noTotal"] == ('the cycle ended before the totals: running Score plugins: plugin "BrokenScore" '
                                "failed with: score backend unreachable")
    assert first["unscored"] == {"BrokenScore": "failed: " + first["noTotal"].split(": ", 1)[1]}
    text = render(explained)
    assert "None" not in text
    header = next(line for line in text.splitlines() if line.split()[:1] == ["NODE"])
    assert header.split()[1:4] == ["Steady", "BrokenScore", "TOTAL"]
    row = next(line for line in text.splitlines() if line.split()[:1] == ["n1"])
    assert row.split()[1:] == ["10/10/10", "-", "-"]
    assert "    no TOTAL: the cycle ended before the totals: running Score plugins" in text


def test_kept_attempts_keep_the_pods_own_attempt_numbers():
    # upstream QueuedPodInfo.Attempts goes up by one each time the pod is popped; a pod whose
    # Filter errs is retried after backoff again and again. The attempts explain keeps (the first
    # and the latest) carry that count, not their position in the list.
    explained, result = explained_run([*BASE, RaisingFilter], [make_node("n1"), make_pod("p", labels={"explode": "1"})],
                                      "default/p", until=200)
    ((_, qpi),) = [(q, p) for q, p in result.scheduler.queue.list_pending() if p.pod.key == "default/p"]
    numbers = [a["attempt"] for a in explained["attempts"]]
    dropped = explained["attemptsNotKept"]
    assert qpi.attempts > len(numbers) and dropped == qpi.attempts - len(numbers)
    assert numbers == [1] + list(range(dropped + 2, qpi.attempts + 1))
    lines = render(explained).splitlines()
    gap = lines.index(f"  ({dropped} earlier attempts not kept)")
    headers = [line for line in lines if line.startswith("  attempt ")]
    assert [line for line in lines[:gap] if line.startswith("  attempt ")] == headers[:1]
    assert re.match(r"  attempt 1 \(cycle 1,", headers[0])
    assert lines[gap + 1] == headers[1] and headers[1].startswith(f"  attempt {dropped + 2} (cycle")


def test_a_filter_error_lists_no_node_as_fitting():
    # upstream findNodesThatPassFilters: a Filter plugin's Error stops the search and the cycle
    # (SchedulerError, retried after backoff); no node was found feasible, and the nodes the
    # search had not reached were not evaluated
    explained, _ = explained_run([*BASE, RaisingFilter],
                                 [make_node("n1"), make_node("n2"), make_pod("p", labels={"explode": "1"})],
                                 "default/p", until=0)
    first = explained["attempts"][0]
    assert first["result"] == "SchedulerError" and "plugin bug" in first["message"]
    assert [v["fits"] for v in first["nodes"].values()] == [None, None]
    assert (first["evaluated"], first["feasible"], first["notEvaluated"]) == (0, 0, 2)
    assert first["notEvaluatedWhy"] == "Filter stopped at an error"
    text = render(explained)
    assert "fits:" not in text
    assert "0 node(s) evaluated, 0 feasible, 2 not evaluated" in text


def test_counts_add_up_to_the_nodes_listed_when_pre_filter_narrowed_them(capsys, tmp_path):
    # upstream findNodesThatFitPod: nodes outside the PreFilter result are not filtered (not
    # counted as evaluated) but have a status, "didn't satisfy plugin(s) [NodeAffinity]"
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NARROWED_CLUSTER)
    main(["simulate", str(cluster), "-o", "json", "--explain", "default/pinned"])
    (explained,) = json.loads(capsys.readouterr().out)["explain"]
    attempt = explained["attempts"][0]
    rejected_by_filter = [n for n, v in attempt["nodes"].items() if v["plugin"] == "NodeResourcesFit"]
    assert (attempt["evaluated"], attempt["leftOutByPreFilter"]) == (len(rejected_by_filter), 2)
    assert "1 node(s) evaluated, 0 feasible, 2 left out by PreFilter" in render(explained)


def test_a_pod_placed_on_the_batchs_hint_says_why_the_other_nodes_were_not_evaluated(capsys, tmp_path):
    # upstream OpportunisticBatching: a pod with the previous pod's signature, whose node is now
    # full, is tried on the next node of that pod's scores alone; if it fits there, no other node
    # is filtered or scored
    nodes = "".join(f"- {{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}}}}}, "
                    f"status: {{allocatable: {{cpu: '1', memory: 4Gi, pods: '110'}}}}}}\n" for i in range(3))
    pods = "".join(f"- {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: [{{name: c, "
                   f"image: x, resources: {{requests: {{cpu: '1'}}}}}}]}}}}\n" for i in range(2))
    (tmp_path / "cluster.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + nodes + pods)
    # the default profile's PodTopologySpread makes every pod unsignable, so no batch
    (tmp_path / "config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins: {multiPoint: {disabled: [{name: PodTopologySpread}]}}\n")
    main(["simulate", str(tmp_path / "cluster.yaml"), "-c", str(tmp_path / "config.yaml"), "-o", "json",
          "--explain", "default/p1"])
    (explained,) = json.loads(capsys.readouterr().out)["explain"]
    (attempt,) = explained["attempts"]
    listed = [v["fits"] for v in attempt["nodes"].values()]
    assert (attempt["evaluated"], attempt["feasible"], attempt["notEvaluated"]) == (1, 1, 2)
    assert listed.count(True) == 1 and listed.count(None) == 2
    assert attempt["notEvaluatedWhy"].startswith("the opportunistic batch's hint")


def test_a_plugin_that_rejected_nodes_has_a_column_even_without_a_score(capsys, tmp_path):
    # upstream PodTopologySpread: with DoNotSchedule constraints only, Filter rejects the nodes
    # that would break maxSkew and PreScore returns Skip (SkipScorePlugins): no Score this cycle.
    # The score table still has its column, marked skip, and says why.
    nodes = "".join(f"- {{apiVersion: v1, kind: Node, metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}, "
                    f"topology.kubernetes.io/zone: {n[0]}}}}}, status: {{allocatable: {{cpu: '4', memory: 8Gi, "
                    f"pods: '110'}}}}}}\n" for n in ("a1", "a2", "b1", "b2"))
    (tmp_path / "cluster.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + nodes + """\
- apiVersion: v1
  kind: Pod
  metadata: {name: old, labels: {app: w}}
  spec: {nodeName: a1, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: new, labels: {app: w}}
  spec:
    containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
    topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,
                                 whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: w}}}]
""")
    main(["simulate", str(tmp_path / "cluster.yaml"), "-o", "json", "--explain", "default/new"])
    (explained,) = json.loads(capsys.readouterr().out)["explain"]
    (attempt,) = explained["attempts"]
    assert {n for n, v in attempt["nodes"].items() if v["plugin"] == "PodTopologySpread"} == {"a1", "a2"}
    assert "PodTopologySpread" not in attempt["scores"]
    assert attempt["unscored"] == {"PodTopologySpread": "its PreScore returned Skip"}
    lines = render(explained).splitlines()
    header = next(line for line in lines if line.split()[:1] == ["NODE"])
    column = header.split().index("PodTopologySpread")
    rows = [line.split() for line in lines if line.split()[:1] in (["b1"], ["b2"]) and "rejected" not in line]
    assert len(rows) == 2 and all(row[column] == "skip" for row in rows)
    assert "    no score from PodTopologySpread (its PreScore returned Skip)" in lines


def test_a_rejecting_plugin_with_no_score_extension_has_a_column():
    # a Filter-only plugin that rejected a node acted in the cycle too: its column is there, empty
    class NoN3:
        name = "NoN3"

        def __init__(self, args, handle):
            pass

        @hookimpl
        def filter(self, state, pod, node_info):
            return Status.unschedulable("not this one") if node_info.name == "n3" else None

    explained, _ = explained_run([*BASE, NodeResourcesFit, NoN3], [make_node(f"n{i}") for i in range(1, 4)]
                                 + [make_pod("p", cpu="1")], "default/p")
    (attempt,) = explained["attempts"]
    assert attempt["unscored"] == {"NoN3": "not a Score plugin of this profile"}
    header = next(line for line in render(explained).splitlines() if line.split()[:1] == ["NODE"])
    assert header.split()[1:4] == ["NodeResourcesFit", "NoN3", "TOTAL"]


def test_a_pod_placed_on_its_nominated_node_says_why_the_other_nodes_were_not_evaluated(capsys, tmp_path):
    # upstream findNodesThatFitPod: a pod with a nominated node (set by its preemption) is tried
    # there alone first; when it fits, no other node is filtered, and only that one is counted
    (tmp_path / "cluster.yaml").write_text("""\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: victim}, spec: {nodeName: n1, priority: 0,
   containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: keeper}, spec: {nodeName: n2, priorityClassName: keeper,
   containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: urgent}, spec: {priorityClassName: urgent,
   containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: keeper}, value: 10}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: urgent}, value: 1000}
""")
    main(["simulate", str(tmp_path / "cluster.yaml"), "-o", "json", "--explain", "default/urgent"])
    (explained,) = json.loads(capsys.readouterr().out)["explain"]
    first, last = explained["attempts"]
    assert first["nominatedNode"] == "n1"
    assert (last["result"], last["node"]) == ("Scheduled", "n1")
    assert (last["evaluated"], last["feasible"], last["notEvaluated"]) == (1, 1, 1)
    assert last["nodes"]["n2"]["fits"] is None
    assert last["notEvaluatedWhy"] == "the nominated node was tried alone first and fit"
    assert "1 node(s) evaluated, 1 feasible, 1 not evaluated" in render(explained)
