"""`simulate --explain` reports the pod's real scheduling attempts, as they happened.

Upstream has no explain command; what it has is the cycle itself (schedulePod, then PostFilter,
Reserve, Permit, Bind) and the FailedScheduling message. These tests hold explain to that: the
node an attempt ranks first is the node the pod was bound to, the rejection reasons are the
scheduler's, and a pending pod lists the events its rejecting plugins registered.
"""

from __future__ import annotations

import json
import pickle
import textwrap
from pathlib import Path

from kschedfw.cli.main import main
from kschedfw.explain import DecisionLog, render
from kschedfw.framework.registry import Registry
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for, make_node, make_pod, run_cli

HERE = Path(__file__).parent


def simulate_json(*args):
    return run_cli("simulate", "-o", "json", *args).assert_ok().json


def test_explain_ranks_first_the_node_the_pod_was_bound_to_at_the_time():
    # web-1 goes first (priority 100) and lands on pricey, which has the most room then; filler
    # pods fill pricey afterwards. Re-running web-1 on the final state ranked pricey last (the
    # contradiction explain once showed); the recorded attempt shows the scores the scheduler used.
    payload = simulate_json(str(HERE / "pricey.yaml"), "--explain", "default/web-1")
    (web,) = payload["explain"]
    assert (web["status"], web["node"]) == ("Bound", "pricey")
    (attempt,) = web["attempts"]
    assert attempt["result"] == "Scheduled" and attempt["node"] == "pricey"
    totals = {n: v["total"] for n, v in attempt["nodes"].items()}
    assert max(totals, key=totals.get) == "pricey"
    # every Score plugin's raw, normalized and weighted score per node; the totals add up
    for node, total in totals.items():
        assert sum(s[node]["weighted"] for s in attempt["scores"].values()) == total
    taint = attempt["scores"]["TaintToleration"]["pricey"]
    assert (taint["raw"], taint["normalized"], taint["weighted"]) == (0, 100, 300)  # reversed, weight 3


PREEMPTION = textwrap.dedent("""\
    apiVersion: v1
    kind: List
    items:
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: urgent}, value: 1000}
    - {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
       status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: victim}
      spec: {nodeName: n1, priority: 0, containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: urgent}
      spec: {priorityClassName: urgent, containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]}
    """)


def test_preemption_names_the_nominated_node_and_the_victims(tmp_path):
    # upstream: the first attempt fails, PostFilter (DefaultPreemption) nominates n1 and evicts
    # the lower-priority victim; once it is gone the pod is scheduled on n1
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(PREEMPTION)
    payload = simulate_json(str(cluster), "--explain", "default/urgent")
    (urgent,) = payload["explain"]
    assert (urgent["status"], urgent["node"]) == ("Bound", "n1")
    first, *_, last = urgent["attempts"]
    assert first["result"] == "Unschedulable"
    assert first["nodes"]["n1"] == {"fits": False, "plugin": "NodeResourcesFit", "reason": "Insufficient cpu",
                                    "total": None}
    assert first["nominatedNode"] == "n1" and first["victims"] == [{"pod": "default/victim", "priority": 0}]
    assert urgent["priority"] == 1000
    assert last["result"] == "Scheduled" and last["node"] == "n1"
    text = render(urgent)
    assert "nominated node n1; victims: default/victim (priority 0)" in text
    assert "why n1: evicting pods of priority up to 0 (this pod: 1000) makes it fit there" in text


def test_pending_pod_says_what_would_wake_it(tmp_path):
    # upstream NodeResourcesFit and TaintToleration register Node add / update events (EventsToRegister);
    # the pod is moved back to the active queue only by one of those
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(PREEMPTION.replace("value: 1000}", "value: 0, preemptionPolicy: Never}"))
    payload = simulate_json(str(cluster), "--explain", "default/urgent")
    (urgent,) = payload["explain"]
    assert urgent["status"] == "Pending"
    wake = {w["plugin"]: w["events"] for w in urgent["wakeUpEvents"]}
    assert list(wake) == ["NodeResourcesFit"]
    assert any(e.startswith("NodeAdd") for e in wake["NodeResourcesFit"])
    assert any(e.startswith("Pod") and "Delete" in e for e in wake["NodeResourcesFit"])
    assert urgent["attempts"][-1]["message"] == urgent["message"]


def test_explain_all_summarises_every_pod_with_bounded_records(tmp_path):
    cluster = tmp_path / "cluster.yaml"
    nodes = "".join(f"- {{apiVersion: v1, kind: Node, metadata: {{name: n{i}}}, "
                    f"status: {{allocatable: {{cpu: '1', memory: 4Gi, pods: '110'}}}}}}\n" for i in range(6))
    cluster.write_text("apiVersion: v1\nkind: List\nitems:\n" + nodes + textwrap.dedent("""\
        - apiVersion: v1
          kind: Pod
          metadata: {name: big}
          spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]}
        - apiVersion: v1
          kind: Pod
          metadata: {name: small}
          spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]}
        """))
    payload = simulate_json(str(cluster), "--explain", "all", "--explain", "default/small")
    explained = {e["pod"]: e for e in payload["explain"]}
    assert set(explained) == {"default/big", "default/small"}
    big = explained["default/big"]["attempts"][0]
    # a summary: rejections counted per (plugin, message), nothing per node
    assert "nodes" not in big
    assert big["rejections"] == [{"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": 6}]
    small = explained["default/small"]["attempts"][0]  # asked by name: in full
    assert len(small["nodes"]) == 6 and small["node"] == explained["default/small"]["node"]


def test_summary_keeps_the_best_scored_nodes_only():
    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.noderesources.fit import NodeResourcesFit
    from kschedfw.plugins.queuesort import PrioritySort
    classes = [PrioritySort, NodeResourcesFit, DefaultBinder]
    registry = Registry.from_classes(classes)
    objects = [make_node(f"n{i}", cpu=str(i + 1)) for i in range(8)] + [make_pod("p", cpu="1")]
    sim = Simulation(config_for(classes, registry=registry), registry, objects)
    log = DecisionLog(sim.scheduler, summarize_all=True, top_n=3).attach()
    result = sim.run()
    ((_, (attempt,)),) = [(k, v) for k, v in log.cycles.items()]
    record = attempt.record
    # LeastAllocated: the biggest nodes score best; only the top three are kept
    assert [s.node for s in record.top] == ["n7", "n6", "n5"]
    assert result.pods[0].node == "n7" == record.node
    assert record.evaluated == 8 and record.feasible_count == 8


def test_permit_wait_is_recorded():
    # upstream: a Permit plugin returning Wait parks the pod among the waiting pods until allowed or
    # timed out; the timeout rejects it (the Unschedulable message names the plugin)
    from tests.scheduler.plugins import BASE, Gatekeeper
    classes = [*BASE, Gatekeeper]
    registry = Registry.from_classes(classes)
    sim = Simulation(config_for(classes, registry=registry), registry, [make_node("n1"), make_pod("p")])
    log = DecisionLog(sim.scheduler, ["default/p"]).attach()
    result = sim.run(until=100)
    (explained,) = log.explain(result, ["default/p"])
    first = explained["attempts"][0]
    assert first["permitWaits"] == {"Gatekeeper": 60.0}
    assert first["result"] == "Unschedulable" and "Gatekeeper" in first["message"]
    assert first["endedAt"] == 60.0
    second = explained["attempts"][1]  # the next attempt waits again
    assert (second["time"], second["result"], second["node"]) == (60.0, "Waiting", "n1")
    assert "Permit: Gatekeeper made it wait (timeout 60s)" in render(explained)


def test_summary_counts_nodes_narrowed_away_by_pre_filter(tmp_path):
    # upstream findNodesThatFitPod: nodes outside NodeAffinity's PreFilter result are rejected with
    # "node(s) didn't satisfy plugin(s) [NodeAffinity]"; the summary counts them under that plugin,
    # as the FailedScheduling message does ("2 node(s) didn't satisfy ...")
    from tests.scheduler.test_one_cycle import NARROWED_CLUSTER
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(NARROWED_CLUSTER)
    payload = simulate_json(str(cluster), "--explain", "all")
    (pinned,) = payload["explain"]
    attempt = pinned["attempts"][0]
    assert attempt["rejections"] == [
        {"plugin": "NodeAffinity", "reason": "node(s) didn't satisfy plugin(s) [NodeAffinity]", "nodes": 2},
        {"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": 1}]
    assert pinned["message"].startswith("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy")


def test_a_summary_does_not_grow_with_the_cluster():
    # "bounded memory at 5000 nodes": a summarised attempt of a pod that fits nowhere, and of one
    # that fits everywhere, is the same size on 10 nodes as on 400
    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.noderesources.fit import NodeResourcesFit
    from kschedfw.plugins.queuesort import PrioritySort
    classes = [PrioritySort, NodeResourcesFit, DefaultBinder]
    registry = Registry.from_classes(classes)

    def summarised(nodes: int) -> dict[str, int]:
        objects = [make_node(f"n{i:04d}", cpu="4") for i in range(nodes)]
        objects += [make_pod("fits", cpu="1"), make_pod("never", cpu="64")]
        sim = Simulation(config_for(classes, registry=registry, percentage_of_nodes_to_score=100),
                         registry, objects)
        log = DecisionLog(sim.scheduler, summarize_all=True).attach()
        result = sim.run()
        kept = {key: len(pickle.dumps([c.record for c in cycles])) for key, cycles in log.cycles.items()}
        shown = {e["pod"]: len(json.dumps(e["attempts"][0]).replace(str(nodes), "N")) for e in log.explain(result)}
        return kept, shown

    (kept_small, shown_small), (kept_big, shown_big) = summarised(10), summarised(400)
    assert shown_small == shown_big
    for key, size in kept_small.items():  # what the records hold: a few bytes more for bigger counts
        assert kept_big[key] - size < 64, key


def test_text_explanation_lists_the_chosen_node_first_with_each_score(capsys):
    code = main(["simulate", str(HERE / "pricey.yaml"), "--explain", "default/web-1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    text = out[out.index("pod default/web-1"):].splitlines()
    assert text[1].startswith("  attempt 1 (cycle 1, t=0s): Scheduled on pricey; 2 node(s) evaluated, 2 feasible")
    assert text[2].split()[0] == "NODE" and text[2].endswith("TOTAL   (raw/normalized/weighted)")
    assert text[3].split()[0] == "pricey" and text[4].split()[0] == "cheap"
    assert text[3].split()[1] == "0/100/300"  # TaintToleration: raw 0, normalized (reversed) 100, weight 3


def test_a_pod_retried_again_and_again_keeps_its_first_and_latest_attempts():
    from kschedfw.explain import MAX_ATTEMPTS_PER_POD
    from tests.scheduler.plugins import BASE, Gatekeeper
    classes = [*BASE, Gatekeeper]
    registry = Registry.from_classes(classes)
    sim = Simulation(config_for(classes, registry=registry), registry, [make_node("n1"), make_pod("p")],
                     settle_seconds=3600)
    log = DecisionLog(sim.scheduler, ["default/p"]).attach()
    result = sim.run(until=60 * 14 + 1)  # a Permit timeout every minute: 15 attempts
    (explained,) = log.explain(result, ["default/p"])
    times = [a["time"] for a in explained["attempts"]]
    assert len(times) == MAX_ATTEMPTS_PER_POD and explained["attemptsNotKept"] == 15 - MAX_ATTEMPTS_PER_POD
    assert times[0] == 0.0 and times[-1] == 60.0 * 14
    assert "(5 earlier attempts not kept)" in render(explained)
