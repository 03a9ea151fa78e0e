"""Explain speaks pod groups: each attempt of a group, each placement tried with its pods' nodes,
every PlacementScore plugin's weighted score and the total, the placement chosen, and for a group
left pending one line that says why.

Upstream (schedule_one_podgroup.go, podGroupSchedulingPlacementAlgorithm and findBestPlacement):
the group is tried in every placement the PlacementGenerate plugin proposes; none feasible gives
"0/N placements are available, first placement status: ..."; one feasible is chosen as is; more
are scored by the PlacementScore plugins (weighted, summed) and the highest total wins, equal
totals going to the highest randomizer drawn per placement.
"""

from __future__ import annotations

import json

import pytest

from kschedfw.api.load import parse_manifests
from kschedfw.cli.main import main
from kschedfw.config.validate import default_config
from kschedfw.explain import DecisionLog, render_group
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.simulation import Simulation

TAS = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
NO_TAS = "GenericWorkload=true,GangScheduling=true"


def gang_cluster(cpu: str = "1", *, pods: int = 3, policy: str = "{gang: {minCount: 3}}",
                 racks: tuple[str, ...] = ("2", "2"), topology: bool = True, name: str = "train") -> str:
    """One node per rack (r1, r2, ...) with the given CPUs, a Workload and its PodGroup (with a
    ``rack`` topology constraint when ``topology``), and ``pods`` pods of ``cpu`` each."""
    docs = [f"""\
apiVersion: v1
kind: Node
metadata: {{name: n{i}, labels: {{rack: r{i}}}}}
status: {{allocatable: {{cpu: "{c}", memory: 8Gi, pods: "110"}}}}
""" for i, c in enumerate(racks, start=1)]
    constraints = "\n  schedulingConstraints: {topology: [{key: rack}]}" if topology else ""
    docs.append(f"""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {{name: {name}}}
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy: {policy}
""")
    docs.append(f"""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {{name: {name}}}
spec:
  podGroupTemplateRef: {{workload: {{workloadName: {name}, podGroupTemplateName: workers}}}}
  schedulingPolicy: {policy}{constraints}
""")
    docs += [f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}-{i}}}
spec:
  schedulingGroup: {{podGroupName: {name}}}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
""" for i in range(pods)]
    return "---\n".join(docs)


def run(text: str, gates: str = TAS, *, explain: bool = True, ties: str = "random",
        seed: int = 0) -> tuple[Simulation, DecisionLog | None]:
    feature_gates = FeatureGates.parse(gates)
    registry = default_registry()
    sim = Simulation(default_config(registry, feature_gates), registry, parse_manifests(text),
                     feature_gates=feature_gates, ties=ties, seed=seed)
    log = DecisionLog(sim.scheduler, summarize_all=True).attach() if explain else None
    sim.run()
    return sim, log


def explained_group(text: str, gates: str = TAS, **kwargs) -> dict:
    sim, log = run(text, gates, **kwargs)
    assert log is not None
    (group,) = log.explain_groups(sim.result())
    return group


def test_a_gang_that_fits_in_two_racks_shows_both_placements_scores_and_the_chosen_one():
    """Both racks hold the whole gang: each placement has its 3 pods' nodes, NodeResourcesFit's
    and PodGroupPodsCount's weighted scores and their total; equal totals go to the highest
    randomizer (upstream findBestPlacement)."""
    group = explained_group(gang_cluster("500m", racks=("2", "2")))
    (attempt,) = group["attempts"]
    assert attempt["result"] == "scheduled"
    assert [p["placement"] for p in attempt["placements"]] == ["rack=r1", "rack=r2"]
    for placement in attempt["placements"]:
        assert placement["feasible"] and placement["fit"] == 3
        assert {p["node"] for p in placement["pods"]} == {"n" + placement["placement"][-1]}
        assert set(placement["scores"]) == {"NodeResourcesFit", "PodGroupPodsCount"}
        assert placement["total"] == sum(placement["scores"].values())
    totals = {p["placement"]: (p["total"], p["randomizer"]) for p in attempt["placements"]}
    assert totals["rack=r1"][0] == totals["rack=r2"][0]
    assert attempt["chosen"] == max(totals, key=lambda name: totals[name][1])
    assert "randomizer" in attempt["tieBreak"]
    assert group["message"] == "gang default/train: 3 of 3 pods bound (minCount 3); PodGroupScheduled"
    pods = sorted(p["pod"] for p in attempt["placements"][0]["pods"])
    assert pods == ["default/train-0", "default/train-1", "default/train-2"]


def test_with_ties_by_name_the_smallest_placement_name_wins_equal_totals():
    group = explained_group(gang_cluster("500m"), ties="name")
    (attempt,) = group["attempts"]
    assert attempt["chosen"] == "rack=r1"
    assert "smallest placement name" in attempt["tieBreak"]
    assert all("randomizer" not in p for p in attempt["placements"])


def test_the_highest_total_wins_when_the_placements_differ():
    """A basic group (no quorum) of 3: rack r1 holds all 3, rack r2 only 2, so
    PodGroupPodsCount (the pods it would schedule) scores r1 higher, and r1 is chosen."""
    group = explained_group(gang_cluster("1", policy="{basic: {}}", racks=("3", "2")))
    (attempt,) = group["attempts"]
    by_name = {p["placement"]: p for p in attempt["placements"]}
    assert (by_name["rack=r1"]["fit"], by_name["rack=r2"]["fit"]) == (3, 2)
    assert by_name["rack=r1"]["scores"]["PodGroupPodsCount"] > by_name["rack=r2"]["scores"]["PodGroupPodsCount"]
    assert by_name["rack=r1"]["total"] > by_name["rack=r2"]["total"]
    assert attempt["chosen"] == "rack=r1"
    assert "tieBreak" not in attempt


def test_a_gang_that_fits_in_no_rack_says_how_many_pods_fit_where_and_upstreams_message():
    """Two racks of 2 CPUs, a gang of 3 pods of 1 CPU: in each rack 2 of minCount 3 pods fit,
    no placement is feasible: upstream's "0/2 placements are available, first placement
    status: pod group is unschedulable"; the pod that found no node says why."""
    group = explained_group(gang_cluster("1"))
    message = "0/2 placements are available, first placement status: pod group is unschedulable"
    assert group["condition"] == {"status": "False", "reason": "Unschedulable", "message": message}
    assert group["message"] == (f"gang default/train: 2 of minCount 3 pods fit; placement rack=r1 fits the "
                                f"most (of 2); {message}")
    assert group["pendingReason"]["state"] == "Unschedulable"
    attempt = group["attempts"][0]
    assert attempt["result"] == "unschedulable" and "chosen" not in attempt
    for placement in attempt["placements"]:
        assert not placement["feasible"] and placement["fit"] == 2 and "scores" not in placement
        (left,) = [p for p in placement["pods"] if not p["node"]]
        assert left["reason"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    text = render_group(group)
    assert "rack=r1        1    2  pod group is unschedulable" in text
    assert f"=> {message}" in text


def test_without_the_topology_gate_the_group_is_tried_once_on_all_nodes():
    """Without TopologyAwareWorkloadScheduling the default algorithm runs once over every node;
    the condition message is the gang's "pod group is unschedulable"."""
    group = explained_group(gang_cluster("1500m", pods=4, policy="{gang: {minCount: 4}}", topology=False), NO_TAS)
    attempt = group["attempts"][0]
    (placement,) = attempt["placements"]
    assert placement["placement"] == "(all nodes)" and placement["nodes"] == 2 and placement["fit"] == 2
    assert group["message"] == "gang default/train: 2 of minCount 4 pods fit; pod group is unschedulable"


def test_a_gang_short_of_min_count_pods_waits_for_them():
    """GangScheduling's PreEnqueue keeps a gang's pods out of the queue until minCount exist:
    no attempt, no condition."""
    group = explained_group(gang_cluster("500m", pods=2))
    assert group["attempts"] == [] and "condition" not in group
    assert group["pendingReason"]["state"] == "WaitingForPods"
    assert group["message"].startswith("gang default/train: 2 of minCount 3 pods exist;")


def test_without_explain_the_cycle_keeps_only_each_groups_last_attempt():
    sim, _ = run(gang_cluster("1"), explain=False)
    cycle = sim.scheduler.scheduling.pod_groups
    assert cycle is not None and cycle.recorder_for is None
    last = cycle.last_attempts["default/train"]
    assert (last.tried, last.fit, last.placements, last.placement, last.result) == (3, 2, 2, "r1", "unschedulable")


@pytest.mark.parametrize("output", ["table", "json"])
def test_simulate_explain_prints_the_group_of_the_pod_asked_about(capsys, tmp_path, output):
    cluster = tmp_path / "gang.yaml"
    cluster.write_text(gang_cluster("500m"))
    assert main(["simulate", str(cluster), "--feature-gates", TAS, "--explain", "train-0", "-o", output]) == 0
    out = capsys.readouterr().out
    if output == "json":
        payload = json.loads(out)
        (pod,) = payload["explain"]
        assert pod["podGroup"] == "default/train"
        (group,) = payload["explainPodGroups"]
        assert group["podGroup"] == "default/train" and group["attempts"][0]["chosen"] in ("rack=r1", "rack=r2")
    else:
        assert "scheduled with its pod group default/train" in out
        assert "pod group default/train (gang, minCount 3): 3 of 3 pods bound" in out
        assert "NodeResourcesFit  PodGroupPodsCount  TOTAL" in out
        assert "<- chosen" in out
