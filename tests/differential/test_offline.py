"""The harness's pieces that need no API server: reading kube-scheduler's log, comparing
attempts, and reproduction folders that both the replay mode and `kschedfw simulate` read."""

from __future__ import annotations

import pytest

from kschedfw.cli.main import main
from tests.differential.conftest import parse_seeds
from tests.differential.decision import Attempt, compare_pod
from tests.differential.harness import read_reproduction, write_reproduction
from tests.differential.klog import SchedulerLog, parse_line
from tests.differential.manifests import namespace, node, pod, priority_class, scenario

#: kube-scheduler v1.36.2 -v=10 lines (a request dump between them, as it writes them)
LOG = r'''I1128 02:39:18.040801   23567 server.go:309] "Handlers synced"
I1128 02:39:18.133641   23567 schedule_one.go:123] "Attempting to schedule pod" pod="fuzz-a/l3"
I1128 02:39:18.059000   23567 schedule_one.go:123] "Attempting to schedule pod" pod="fuzz-a/l2"
I1128 02:39:18.059100   23567 batch.go:89] "OpportunisticBatch provided node hint" pod="fuzz-a/l2" profile="default-scheduler" cycleCount=4 hint="n2" remainingNodes=2
I1128 02:39:18.059800   23567 schedule_one.go:481] "Successfully bound pod to node" pod="fuzz-a/l2" node="n2" evaluatedNodes=1 feasibleNodes=1
I1128 02:39:18.134445   23567 schedule_one.go:982] "Plugin scored node for pod" pod="fuzz-a/l3" plugin="TaintToleration" node="n1" score=300
I1128 02:39:18.134452   23567 schedule_one.go:982] "Plugin scored node for pod" pod="fuzz-a/l3" plugin="NodeResourcesFit" node="n1" score=61
I1128 02:39:18.134470   23567 schedule_one.go:982] "Plugin scored node for pod" pod="fuzz-a/l3" plugin="TaintToleration" node="n2" score=300
I1128 02:39:18.134473   23567 schedule_one.go:982] "Plugin scored node for pod" pod="fuzz-a/l3" plugin="NodeResourcesFit" node="n2" score=62
I1128 02:39:18.134493   23567 schedule_one.go:1050] "Calculated node's final score for pod" pod="fuzz-a/l3" node="n1" score=361
I1128 02:39:18.134500   23567 schedule_one.go:1050] "Calculated node's final score for pod" pod="fuzz-a/l3" node="n2" score=362
I1128 02:39:18.134752   23567 pod_expansion.go:50] "Request Body" logger="Bind.DefaultBinder" pod="fuzz-a/l3" body=<
	{"kind":"Binding","apiVersion":"v1"}
 >
I1128 02:39:18.140152   23567 schedule_one.go:481] "Successfully bound pod to node" pod="fuzz-a/l3" node="n2" evaluatedNodes=3 feasibleNodes=2
I1128 02:39:18.159589   23567 schedule_one.go:123] "Attempting to schedule pod" pod="fuzz-a/h"
I1128 02:39:18.160060   23567 schedule_one.go:1239] "Unable to schedule pod; no fit; waiting" pod="fuzz-a/h" err="0/3 nodes are available: 3 Insufficient cpu."
I1128 02:39:18.160202   23567 schedule_one.go:1325] "Updating pod condition and nominated node name" pod="fuzz-a/h" conditionType="PodScheduled" conditionStatus="False" conditionReason="Unschedulable" nominatedNodeName="n3" nominatingMode=1
I1128 02:39:18.161793   23567 executor.go:251] "Start the preemption asynchronously" preemptor="fuzz-a/h" node="n3" numVictims=2 numVictimsToDelete=2
I1128 02:39:18.187903   23567 executor.go:152] "Preemptor Pod preempted victim Pod" preemptor="fuzz-a/h" victim="fuzz-a/l2" node="n3"
'''
VICTIM_L1 = ('I1128 02:39:18.212773   23567 executor.go:152] "Preemptor Pod preempted victim Pod" '
             'preemptor="fuzz-a/h" victim="fuzz-a/l1" node="n3"\n')


def test_parse_line_decodes_quoted_values():
    parsed = parse_line('I1128 02:39:18.249336   23567 schedule_one.go:1239] "Unable to schedule pod; no fit; '
                        'waiting" pod="fuzz-a/big" err="0/3 nodes: \\"x\\" y." n=3')
    assert parsed is not None
    message, kv = parsed
    assert message == "Unable to schedule pod; no fit; waiting"
    assert kv == {"pod": "fuzz-a/big", "err": '0/3 nodes: "x" y.', "n": "3"}


def test_log_is_read_incrementally_into_attempts(tmp_path):
    path = tmp_path / "kube-scheduler.log"
    head, tail = LOG[:1000], LOG[1000:]
    path.write_text(head)
    log = SchedulerLog(path)
    log.poll()
    assert log.synced and log.decided("fuzz-a/l3") == ""
    with path.open("a") as out:
        out.write(tail)
    log.poll()
    assert log.attempts("fuzz-a/l3") == [Attempt(
        feasible=2, scores={"TaintToleration": {"n1": 300, "n2": 300}, "NodeResourcesFit": {"n1": 61, "n2": 62}},
        totals={"n1": 361, "n2": 362}, chosen="n2")]
    assert log.attempts("fuzz-a/l2") == [Attempt(feasible=1, chosen="n2", hint="n2")]
    # nominated, one of two victims deleted so far: not settled until the second
    assert log.decided("fuzz-a/h") == ""
    with path.open("a") as out:
        out.write(VICTIM_L1)
    log.poll()
    assert log.decided("fuzz-a/h") == "preempting"
    assert log.attempts("fuzz-a/h") == [Attempt(feasible=0, message="0/3 nodes are available: 3 Insufficient cpu.",
                                                nominated="n3", victims=("fuzz-a/l1", "fuzz-a/l2"))]
    log.close()


def test_a_tie_is_no_mismatch_but_a_score_is():
    up = Attempt(feasible=2, scores={"P": {"a": 5, "b": 5}}, totals={"a": 5, "b": 5}, chosen="a")
    assert compare_pod("ns/p", [up], [Attempt(feasible=2, scores=up.scores, totals=up.totals, chosen="b")]).identical
    other = Attempt(feasible=2, scores={"P": {"a": 5, "b": 4}}, totals={"a": 5, "b": 4}, chosen="a")
    tally = compare_pod("ns/p", [up], [other])
    assert (tally.score_tables, tally.score_tables_identical, tally.outcomes_identical) == (1, 0, 1)
    assert "P b: 5 != 4" in tally.diffs[0]
    hinted = compare_pod("ns/p", [Attempt(feasible=1, chosen="a", hint="a")], [other])
    assert hinted.identical and (hinted.score_tables, hinted.hinted) == (0, 1)
    fewer = compare_pod("ns/p", [Attempt(nominated="a"), up], [Attempt(nominated="a")])
    assert "kube-scheduler made 2, kschedfw 1" in fewer.diffs[0]


def test_seed_lists():
    assert parse_seeds("0-3,7, 2") == [0, 1, 2, 3, 7]
    with pytest.raises(pytest.UsageError):
        parse_seeds("5-1")


def test_reproduction_is_read_by_replay_and_by_simulate(tmp_path, capsys):
    runtime_class = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "fuzz-rc"},
                     "handler": "h", "overhead": {"podFixed": {"cpu": "100m"}}}
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "fuzz-a"},
             "spec": {"selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                          {"name": "c", "image": "x"}]}}}}
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "fuzz-a"},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "fuzz-a"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    original = scenario([namespace("fuzz-a", team="x"), priority_class("fuzz-low", 10), runtime_class, owner, budget,
                         service, node("n1", "2"), node("n2", "4")],
                        [pod("a", "1", labels={"app": "web"}, priorityClassName="fuzz-low"), pod("b", "3")], seed=7)
    folder = write_reproduction(original, tmp_path / "repro")
    assert read_reproduction(folder) == original
    assert main(["simulate", "--config", str(folder / "config.yaml"), str(folder / "cluster.yaml")]) == 0
    out = capsys.readouterr().out
    assert "fuzz-a/a" in out and "fuzz-a/b" in out and "2 bound" in out


def test_nodes_follow_kube_schedulers_cache_order():
    from kschedfw.api import parse_object
    from tests.differential.harness import in_cache_order

    objects = [parse_object(o) for o in (node("n0"), priority_class("fuzz-low", 1), node("n1"), node("n2"))]
    ordered = in_cache_order(objects, ["n2", "n0", "n1"])
    assert [getattr(o, "name", None) for o in ordered] == ["fuzz-low", "n2", "n0", "n1"]
