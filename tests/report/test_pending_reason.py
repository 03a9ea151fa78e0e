"""Every pending pod's structured reason: valid against the shipped JSON Schema, and upstream's
message rebuilt from the structure alone is the message the pod reports (FitError's rules: the
counts sorted as ``"<count> <reason>"`` strings, the PreFilter message instead of the counts,
the PostFilter message last)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

from kschedfw.fwk.fit_error import NO_NODE_AVAILABLE, Diagnosis, FitError
from kschedfw.fwk.status import Code, Status
from kschedfw.scheduler.outcomes import Failure
from kschedfw.scheduler.pending_reason import message_of, pending_reason
from kschedfw.simulation import Simulation
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.testing import make_node, make_pod, run_cli
from tests.cli.test_simulate_dra import cluster as dra_cluster, pod as dra_pod
from tests.scenarios.test_random_clusters import random_run

FIXTURES = Path(__file__).parent.parent / "cli" / "fixtures"
SCHEMA = json.loads((resources.files("kschedfw") / "report" / "pending_reason.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def check(reason, message):
    VALIDATOR.validate(reason)
    assert message_of(reason) == message
    post = reason.get("postFilter") or {}
    if "reasons" in post:  # the per-node preemption verdicts are the ones its message counts
        counts = ", ".join(sorted(f"{r['nodes']} {r['reason']}" for r in post["reasons"]))
        assert f"{NO_NODE_AVAILABLE.format(reason['numAllNodes'])}: {counts}." in post["message"]
        assert sum(p["nodes"] for p in post["plugins"]) == reason["numAllNodes"]


def check_report(report):
    pending = [p for p in report["pods"] if p["status"] in ("Pending", "Gated")]
    for p in pending:
        check(p["pendingReason"], p["message"])
    assert all("pendingReason" not in p for p in report["pods"] if p not in pending)
    return {p["pod"]: p["pendingReason"] for p in pending}


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("seed", range(60))
def test_random_clusters_pending_reasons(seed):
    result = random_run(seed)
    for outcome in result.pods:
        reason = outcome.pending_reason()
        assert (reason is None) == (outcome.status not in ("Pending", "Gated"))
        if reason is not None:
            check(json.loads(json.dumps(reason)), outcome.message)


def test_the_demo_cluster_names_taints_cpu_gates_and_the_postfilter_outcome():
    reasons = check_report(run_cli("simulate", "-o", "json").assert_ok().json)
    assert reasons["default/gated-batch"] == {"type": "SchedulingGated", "schedulingGates": ["example.com/quota-check"]}
    too_big = reasons["default/too-big"]
    assert too_big["reasons"] == [{"reason": "node(s) had untolerated taint(s)", "nodes": 1},
                                  {"reason": "Insufficient cpu", "nodes": 2}]
    assert [(p["plugin"], p["nodes"]) for p in too_big["plugins"]] == [("NodeResourcesFit", 2), ("TaintToleration", 1)]
    assert too_big["postFilter"]["nominatedNodeName"] == ""  # preemption cannot help: nomination cleared


def test_preemption_nominates_and_the_victims_pod_reasons_hold(tmp_path):
    report = run_cli("simulate", str(FIXTURES / "preemption-pdb.yaml"), "-o", "json").assert_ok().json
    check_report(report)
    scenario = run_cli("simulate", str(FIXTURES / "preemption-pdb-scenario.yaml"), "-o", "json").assert_ok().json
    check_report(scenario)


def test_no_victims_on_a_node_is_a_counted_preemption_verdict():
    """``big`` does not fit beside ``busy``, which came bound and has the same priority: no victims."""
    registry = default_registry()
    objects = [make_node("n1", cpu="2", memory="4Gi"), make_node("n2", cpu="8", memory="4Gi",
                                                                  taints=[{"key": "t", "effect": "NoSchedule"}]),
               make_pod("busy", cpu="1500m", node_name="n1"), make_pod("big", cpu="1")]
    result = Simulation(default_config(registry), registry, objects).run()
    (big,) = [p for p in result.pods if p.key == "default/big"]
    reason = big.pending_reason()
    check(reason, big.message)
    post = reason["postFilter"]
    assert post["nominatedNodeName"] == ""
    assert post["reasons"] == [{"reason": "No preemption victims found for incoming pod", "nodes": 1},
                               {"reason": "Preemption is not helpful for scheduling", "nodes": 1}]
    # both verdicts are the evaluator's own (no plugin), as upstream's dry run gives them
    assert [(p["plugin"], p["code"], p["nodes"]) for p in post["plugins"]] == [("", "UnschedulableAndUnresolvable", 2)]


def test_dra_pending_pod_counts_the_nodes_without_devices(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(dra_cluster([dra_pod(f"p{i:02d}", "one-gpu") for i in range(17)])))
    reasons = check_report(run_cli("simulate", str(path), "-o", "json").assert_ok().json)
    (reason,) = reasons.values()
    assert reason["type"] == "Unschedulable" and reason["numAllNodes"] == 2
    assert {p["plugin"] for p in reason["plugins"]} == {"DynamicResources"}


def test_volumes_a_missing_claim_is_a_prefilter_rejection(tmp_path):
    pod = make_pod("db", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}]).raw
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [make_node("n1").raw, pod]}))
    reason = check_report(run_cli("simulate", str(path), "-o", "json").assert_ok().json)["default/db"]
    # VolumeRestrictions' PreFilter runs before VolumeBinding's and is first to miss the claim
    assert reason["preFilter"]["plugin"] == "VolumeRestrictions"
    assert reason["preFilter"]["code"] == "UnschedulableAndUnresolvable"
    assert reason["plugins"] == [{"plugin": "VolumeRestrictions", "code": "UnschedulableAndUnresolvable", "nodes": 1,
                                  "reasons": [{"reason": 'persistentvolumeclaim "missing" not found', "nodes": 1}]}]


def test_explain_carries_the_pending_reason():
    report = run_cli("simulate", "-o", "json", "--explain", "default/too-big").assert_ok().json
    (explained,) = report["explain"]
    check(explained["pendingReason"], explained["message"])


def _statuses(diagnosis, counts):
    i = 0
    for reason, plugin, n in counts:
        for _ in range(n):
            status = Status.unschedulable(reason)
            status.plugin = plugin
            diagnosis.node_to_status.set(f"n{i}", status)
            i += 1


@pytest.mark.parametrize("name,counts,absent,pre_filter,post", [
    ("counts sort as strings: 10 before 2", [("b", "P", 2), ("a", "Q", 10)], None, "", ""),
    ("nodes without a status count for the absent status", [("x", "P", 1)], ("narrowed", "R"), "", ""),
    ("a PreFilter message replaces the counts", [], ("pvc missing", "VolumeBinding"), "pvc missing", ""),
    ("the PostFilter message comes last", [("x", "P", 3)], None, "", "preemption: not helpful"),
])
def test_message_rebuilt_from_the_structure(name, counts, absent, pre_filter, post):
    diagnosis = Diagnosis()
    _statuses(diagnosis, counts)
    if absent is not None:
        diagnosis.node_to_status.absent_nodes_status = Status.unresolvable(absent[0])
        diagnosis.node_to_status.absent_nodes_status.plugin = absent[1]
    diagnosis.pre_filter_msg = pre_filter
    if post:
        diagnosis.post_filter_msg = post
        diagnosis.post_filter_status = Status(Code.Unschedulable, (post,), plugin="DefaultPreemption")
    fit_error = FitError("default/p", 20, diagnosis)
    reason = pending_reason(Failure(Status(Code.Unschedulable, error=fit_error), "n1" if post else None))
    check(reason, str(fit_error))
    if post:
        assert reason["postFilter"] == {"plugin": "DefaultPreemption", "code": "Unschedulable", "message": post,
                                        "nominatedNodeName": "n1"}


def test_scheduler_error_names_the_plugin_and_the_error():
    status = Status.as_status(RuntimeError("boom"))
    status.plugin = "Broken"
    reason = pending_reason(Failure(status))
    assert reason == {"type": "SchedulerError", "code": "Error", "plugin": "Broken", "statusReasons": [],
                      "error": "boom"}
    check(reason, status.message())


def test_the_guides_example_prints_what_the_demo_gives():
    """The explain guide's `simulate -o json | jq` lines are the demo's pending pods, projected as
    its jq program projects them (here in Python: jq need not be installed)."""
    guide = (Path(__file__).parents[2] / "docs" / "guides" / "explain.md").read_text()
    section = guide[guide.index("## Why a pod is pending, as data"):]
    start = section.index("```console\n") + len("```console\n")
    block = section[start:section.index("\n```", start)]
    shown = [json.loads(line) for line in block.splitlines()[1:]]
    report = run_cli("simulate", "-o", "json").assert_ok().json
    projected = [{"pod": p["pod"], "type": p["pendingReason"]["type"],
                  "plugins": [f"{x['plugin']} {x['code']} on {x['nodes']}" for x in p["pendingReason"].get("plugins", [])]}
                 for p in report["pods"] if "pendingReason" in p]
    assert projected == shown


# ---------------------------------------------------------------------- a PodGroup's form
def test_every_pod_groups_reason_is_valid_and_its_line_is_rebuilt_from_it():
    """Each PodGroup state (a gang short of minCount pods, unschedulable in every placement,
    without placements, scheduled, and a basic group) gives a reason valid against the schema,
    whose message is the group's line; a scheduled group has none. The Unschedulable line ends
    with the PodGroupScheduled condition's message, upstream's "0/N placements are available,
    first placement status: ..." with placements."""
    from tests.explain.test_pod_group_explain import NO_TAS, TAS, gang_cluster, run
    cases = [
        (gang_cluster("1"), TAS, "Unschedulable"),
        (gang_cluster("500m", pods=2), TAS, "WaitingForPods"),
        (gang_cluster("1500m", pods=4, policy="{gang: {minCount: 4}}", topology=False), NO_TAS, "Unschedulable"),
        (gang_cluster("8", policy="{basic: {}}"), TAS, "Unschedulable"),
        (gang_cluster("500m"), TAS, None),
    ]
    for text, gates, state in cases:
        sim, _ = run(text, gates, explain=False)
        (group,) = sim.result().pod_groups()
        reason = group.pending_reason()
        if state is None:
            assert reason is None and group.scheduled
            continue
        VALIDATOR.validate(reason)
        assert reason["state"] == state
        assert message_of(reason) == group.line()
        if state == "Unschedulable":
            assert group.line().endswith("; " + group.condition[2])


def test_a_basic_groups_line_counts_its_pods_not_a_quorum():
    from tests.explain.test_pod_group_explain import TAS, gang_cluster, run
    sim, _ = run(gang_cluster("8", policy="{basic: {}}"), TAS, explain=False)
    (group,) = sim.result().pod_groups()
    assert group.line().startswith("basic default/train: 0 of 3 pods fit; placement rack=r1 fits the most (of 2); "
                                   "0/2 placements are available, first placement status: ")


def test_a_pod_groups_error_and_preemption_wait_have_their_own_lines():
    from kschedfw.scheduler.pending_reason import pod_group_reason
    error = pod_group_reason("default/g", "gang", 2, 2, "SchedulerError", tried=2, message="boom")
    waiting = pod_group_reason("default/g", "gang", 2, 2, "WaitingOnPreemption", tried=2, fit=0, placements=3,
                               placement="rack=r2", message="pod group is waiting for preemption to complete")
    for reason in (error, waiting):
        VALIDATOR.validate(reason)
    assert message_of(error) == "gang default/g: SchedulerError: boom"
    assert message_of(waiting) == "gang default/g: waiting for preemption to complete in placement rack=r2 (chosen of 3)"
