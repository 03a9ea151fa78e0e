"""DefaultPreemption, ported from upstream ``defaultpreemption/default_preemption_test.go`` (v1.36).

Tables: TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate, TestCustomSelection,
TestCustomOrdering, TestPodEligibleToPreemptOthers, TestPreEnqueue (single pods), plus
calculateNumCandidates and filterPodsWithPDBViolation. Cases about scheduler extenders and pod
groups (TAS / workload-aware preemption, alpha) are left out: kschedfw has neither.
Upstream's seeded ``getOffsetRand`` (seed 4: offsets 4, 1, 3 over 5 nodes) is replaced by an
injected offset sequence.
"""

from __future__ import annotations

import attrs
import pytest

from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, EventResource, QueueingHint
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeToStatus, NominatingMode, PostFilterResult
from kschedfw.plugins.defaultpreemption import DefaultPreemption
from kschedfw.preemption import filter_pods_with_pdb_violation
from kschedfw.fwk.victims import violated_budgets
from kschedfw.plugins.interpodaffinity import InterPodAffinity
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.podtopologyspread import PodTopologySpread
from kschedfw.preemption import get_pod_start_time, now_datetime
from kschedfw.plugins.tainttoleration import ERR_REASON_NOT_MATCH

from .defaultpreemption_builders import (HIGH, LARGE, LOW, MEDIUM, MID, NEG, ONE_POD, SMALL,
                                              VERY_HIGH, VERY_LARGE, Env, ErrorExtensionPlugin,
                                              FakeFilter, FalseFilter, MatchFilter, TrueFilter,
                                              epoch, st_node, make_pdb,
                                              st_pod, topology_node, victims_by_node)

P = st_pod
NODE_RES = {"cpu": "200m", "memory": "400"}
VIOLATING_KEY = "test.kubernetes.io/is-violating-pdb"
UAU = Status.unresolvable


def statuses(explicit: dict[str, Code], absent: Status | None = None) -> NodeToStatus:
    return NodeToStatus({n: Status(c) for n, c in explicit.items()}, absent or UAU())


# =========================================================================== TestPostFilter

POST_FILTER_CASES = [
    dict(
        name="pod with higher priority can be made schedulable",
        pod=P("p", priority=HIGH),
        pods=[P("p1", node="node1")],
        nodes=[st_node("node1", ONE_POD)],
        statuses=statuses({"node1": Code.Unschedulable}),
        want_result=PostFilterResult.nominate("node1"),
        want=(Code.Success, ""),
    ),
    dict(
        name="pod with tied priority is still unschedulable",
        pod=P("p"),
        pods=[P("p1", node="node1")],
        nodes=[st_node("node1", ONE_POD)],
        statuses=statuses({"node1": Code.Unschedulable}),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable,
              "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
    ),
    dict(
        name="preemption should respect filteredNodesStatuses",
        pod=P("p", priority=HIGH),
        pods=[P("p1", node="node1")],
        nodes=[st_node("node1", ONE_POD)],
        statuses=statuses({"node1": Code.UnschedulableAndUnresolvable}),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable,
              "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ),
    dict(
        name="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        pod=P("p", priority=HIGH),
        pods=[P("p1", node="node1")],
        nodes=[st_node("node1", ONE_POD)],
        statuses=NodeToStatus(),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable,
              "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ),
    dict(
        name="pod can be made schedulable on one node",
        pod=P("p", priority=MID),
        pods=[P("p1", priority=HIGH, node="node1"), P("p2", priority=LOW, node="node2")],
        nodes=[st_node("node1", ONE_POD), st_node("node2", ONE_POD)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.Unschedulable}),
        want_result=PostFilterResult.nominate("node2"),
        want=(Code.Success, ""),
    ),
    dict(
        name="pod can be made schedulable on minHighestPriority node",
        pod=P("p", priority=VERY_HIGH),
        pods=[P("p1", labels={VIOLATING_KEY: "non-violating"}, priority=HIGH, node="node1"),
              P("p2", labels={VIOLATING_KEY: "violating"}, priority=LOW, node="node1"),
              P("p3", labels={VIOLATING_KEY: "violating"}, priority=MID, node="node2")],
        pdbs=[make_pdb("violating-pdb", match_labels={VIOLATING_KEY: "violating"}, allowed=0),
              make_pdb("non-violating-pdb", match_labels={VIOLATING_KEY: "non-violating"},
                       allowed=2147483647)],
        nodes=[st_node("node1", ONE_POD), st_node("node2", ONE_POD)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.Unschedulable}),
        want_result=PostFilterResult.nominate("node2"),
        want=(Code.Success, ""),
    ),
    dict(
        name="no candidate nodes found, no enough resource after removing low priority pods",
        pod=P("p", priority=HIGH, req=LARGE),
        pods=[P("p1", node="node1"), P("p2", node="node2")],
        nodes=[st_node("node1", NODE_RES), st_node("node2", NODE_RES)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.Unschedulable}),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
    ),
    dict(
        name="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        pod=P("p", priority=HIGH, req=LARGE),
        pods=[P("p1", node="node1", priority=HIGH), P("p2", node="node2"),
              P("p3", node="node3", priority=HIGH)],
        nodes=[st_node("node1", ONE_POD), st_node("node2", NODE_RES), st_node("node3", ONE_POD)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.Unschedulable,
                           "node3": Code.Unschedulable}),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable, "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                                  "2 No preemption victims found for incoming pod."),
    ),
    dict(
        name="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
             "don't have enough CPU resource",
        pod=P("p", priority=HIGH, req=LARGE),
        pods=[P("p1", node="node1"), P("p2", node="node2")],
        nodes=[st_node(f"node{i}", NODE_RES) for i in range(1, 5)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.Unschedulable,
                           "node4": Code.UnschedulableAndUnresolvable}),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable, "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                                  "2 Preemption is not helpful for scheduling."),
    ),
    dict(
        name="only one node but failed with TestPlugin",
        pod=P("p", priority=HIGH, req=LARGE),
        pods=[P("p1", node="node1")],
        nodes=[st_node("node1", LARGE, {"error": "true"})],
        statuses=statuses({"node1": Code.Unschedulable}),
        want_result=None,
        want=(Code.Error,
              'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'),
    ),
    dict(
        name="one failed with TestPlugin and the other pass",
        pod=P("p", priority=HIGH, req=LARGE),
        pods=[P("p1", node="node1"), P("p2", node="node2", req=MEDIUM)],
        nodes=[st_node("node1", LARGE, {"error": "true"}), st_node("node2", LARGE)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.Unschedulable}),
        want_result=PostFilterResult.nominate("node2"),
        want=(Code.Success, ""),
    ),
    # v1.36.2's FitError message: 1 node without victims, 2 not helped.
    dict(
        name="mixed: one node without victims, two UnschedulableAndUnresolvable",
        pod=P("p", priority=HIGH, req=LARGE),
        pods=[P("p1", node="node1", priority=HIGH, req=LARGE)],
        nodes=[st_node("node1", LARGE), st_node("node2", LARGE), st_node("node3", LARGE)],
        statuses=statuses({"node1": Code.Unschedulable, "node2": Code.UnschedulableAndUnresolvable,
                           "node3": Code.UnschedulableAndUnresolvable}),
        want_result=PostFilterResult.nominate(""),
        want=(Code.Unschedulable, "preemption: 0/3 nodes are available: 1 No preemption victims found "
                                  "for incoming pod, 2 Preemption is not helpful for scheduling."),
    ),
    dict(
        name="preemptionPolicy Never is not eligible",
        pod=P("p", priority=HIGH, policy="Never"),
        pods=[P("p1", node="node1")],
        nodes=[st_node("node1", ONE_POD)],
        statuses=statuses({"node1": Code.Unschedulable}),
        want_result=None,
        want=(Code.Unschedulable, "preemption: not eligible due to preemptionPolicy=Never."),
    ),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("tc", POST_FILTER_CASES, ids=[c["name"] for c in POST_FILTER_CASES])
def test_post_filter(tc, async_preemption):
    env = Env(tc["nodes"], tc["pods"], plugins=[NodeResourcesFit, ErrorExtensionPlugin],
              preemptors=[tc["pod"]], pdbs=tc.get("pdbs", ()),
              features={"SchedulerAsyncPreemption": async_preemption})
    pod = env.preemptors[0]
    state = env.pre_filtered_state(pod)
    result, status = env.plugin.post_filter(state, pod, tc["statuses"])
    code, message = tc["want"]
    assert status.code is code
    assert status.message() == message
    assert result == tc["want_result"]


def test_post_filter_reads_the_latest_preemptor():
    """PostFilter works on the pod as the cluster has it now (here: its preemptionPolicy changed)."""
    env = Env([st_node("node1", ONE_POD)], [P("p1", node="node1")], plugins=[NodeResourcesFit],
              preemptors=[P("p", priority=HIGH)])
    stale = env.preemptors[0]
    env.cluster.update(attrs.evolve(env.pod("p"), preemption_policy="Never"))
    result, status = env.plugin.post_filter(env.pre_filtered_state(stale), stale,
                                            statuses({"node1": Code.Unschedulable}))
    assert result is None
    assert status.message() == "preemption: not eligible due to preemptionPolicy=Never."


def test_post_filter_preemptor_gone():
    env = Env([st_node("node1", ONE_POD)], [P("p1", node="node1")], plugins=[NodeResourcesFit])
    ghost = P("ghost", priority=HIGH)
    result, status = env.plugin.post_filter(CycleState(), ghost, statuses({"node1": Code.Unschedulable}))
    assert result is None
    assert status.code is Code.Error
    assert status.message() == 'preemption: pod "ghost" not found'


# =========================================================================== TestDryRunPreemption

DRY_RUN_CASES = [
    dict(
        name="a pod that does not fit on any node",
        plugins=[FalseFilter], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH)],
        init=[P("p1", node="node1", priority=MID), P("p2", node="node2", priority=MID)],
        expected=[{}], calls=[2],
    ),
    dict(
        name="a pod that fits with no preemption",
        plugins=[TrueFilter], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH)],
        init=[P("p1", node="node1", priority=MID), P("p2", node="node2", priority=MID)],
        fake_rc=Code.Unschedulable, expected=[{}], calls=[2],
    ),
    dict(
        name="a pod that fits on one node with no preemption",
        plugins=[MatchFilter], nodes=["node1", "node2"],
        pods=[P("node1", priority=HIGH)],
        init=[P("p1", node="node1", priority=MID), P("p2", node="node2", priority=MID)],
        fake_rc=Code.Unschedulable, expected=[{}], calls=[2],
    ),
    dict(
        name="a pod that fits on both nodes when lower priority pods are preempted",
        plugins=[NodeResourcesFit], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1", node="node1", priority=MID, req=LARGE), P("p2", node="node2", priority=MID, req=LARGE)],
        expected=[{"node1": (["p1"], 0), "node2": (["p2"], 0)}], calls=[4],
    ),
    dict(
        name="a pod that would fit on the nodes, but other pods running are higher priority, no preemption "
             "would happen",
        plugins=[NodeResourcesFit], nodes=["node1", "node2"],
        pods=[P("p", priority=LOW, req=LARGE)],
        init=[P("p1", node="node1", priority=MID, req=LARGE), P("p2", node="node2", priority=MID, req=LARGE)],
        expected=[{}], calls=[0],
    ),
    dict(
        name="medium priority pod is preempted, but lower priority one stays as it is small",
        plugins=[NodeResourcesFit], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1.1", node="node1", priority=LOW, req=SMALL), P("p1.2", node="node1", priority=MID, req=LARGE),
              P("p2", node="node2", priority=MID, req=LARGE)],
        expected=[{"node1": (["p1.2"], 0), "node2": (["p2"], 0)}], calls=[5],
    ),
    dict(
        name="mixed priority pods are preempted",
        plugins=[NodeResourcesFit], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1.1", node="node1", priority=MID, req=SMALL), P("p1.2", node="node1", priority=LOW, req=SMALL),
              P("p1.3", node="node1", priority=MID, req=MEDIUM), P("p1.4", node="node1", priority=HIGH, req=SMALL),
              P("p2", node="node2", priority=HIGH, req=LARGE)],
        expected=[{"node1": (["p1.2", "p1.3"], 0)}], calls=[4],
    ),
    dict(
        name="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        plugins=[NodeResourcesFit], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1.1", node="node1", priority=LOW, req=SMALL, start=epoch(5)),
              P("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(4)),
              P("p1.3", node="node1", priority=MID, req=MEDIUM, start=epoch(3)),
              P("p1.4", node="node1", priority=HIGH, req=SMALL, start=epoch(2)),
              P("p2", node="node2", priority=HIGH, req=LARGE, start=epoch(1))],
        expected=[{"node1": (["p1.1", "p1.3"], 0)}], calls=[4],
    ),
    dict(
        name="pod with anti-affinity is preempted",
        plugins=[NodeResourcesFit, InterPodAffinity], nodes=["node1", "node2"],
        pods=[P("p", labels={"foo": ""}, priority=HIGH, req=SMALL)],
        init=[P("p1.1", node="node1", labels={"foo": ""}, priority=LOW, req=SMALL,
                anti_affinity_exists=("foo", "hostname")),
              P("p1.2", node="node1", priority=MID, req=SMALL),
              P("p1.3", node="node1", priority=HIGH, req=SMALL),
              P("p2", node="node2", priority=HIGH, req=SMALL)],
        expected=[{"node1": (["p1.1"], 0)}], calls=[3],
    ),
    dict(
        name="preemption to resolve pod topology spread filter failure",
        plugins=[PodTopologySpread], nodes=["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        pods=[P("p", labels={"foo": ""}, priority=HIGH, spread=[(1, "zone"), (1, "hostname")])],
        init=[P("pod-a1", node="node-a", labels={"foo": ""}, priority=MID),
              P("pod-a2", node="node-a", labels={"foo": ""}, priority=LOW),
              P("pod-b1", node="node-b", labels={"foo": ""}, priority=LOW),
              P("pod-x1", node="node-x", labels={"foo": ""}, priority=HIGH),
              P("pod-x2", node="node-x", labels={"foo": ""}, priority=HIGH)],
        expected=[{"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}], calls=[5],
    ),
    dict(
        name="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        plugins=[NodeResourcesFit], nodes=["node1", "node2"],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1", node="node1", priority=MID, req=LARGE), P("p2", node="node2", priority=MID, req=LARGE)],
        fake_rc=Code.Unschedulable, expected=[{}], calls=[2],
    ),
    dict(
        name="preemption with violation of same pdb",
        plugins=[NodeResourcesFit], nodes=["node1"],
        pods=[P("p", priority=HIGH, req=VERY_LARGE)],
        init=[P("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
              P("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
        pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=1)],
        expected=[{"node1": (["p1.1", "p1.2"], 1)}], calls=[3],
    ),
    dict(
        name="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't "
             "belong to DisruptedPods",
        plugins=[NodeResourcesFit], nodes=["node1"],
        pods=[P("p", priority=HIGH, req=VERY_LARGE)],
        init=[P("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
              P("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
        pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=1, disrupted=["p2"])],
        expected=[{"node1": (["p1.1", "p1.2"], 1)}], calls=[3],
    ),
    dict(
        name="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs "
             "to DisruptedPods",
        plugins=[NodeResourcesFit], nodes=["node1"],
        pods=[P("p", priority=HIGH, req=VERY_LARGE)],
        init=[P("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
              P("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
        pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=1, disrupted=["p1.2"])],
        expected=[{"node1": (["p1.1", "p1.2"], 0)}], calls=[3],
    ),
    dict(
        name="preemption with violation of the pdb with pod whose eviction was processed, the victim which "
             "belongs to DisruptedPods is treated as 'nonViolating'",
        plugins=[NodeResourcesFit], nodes=["node1"],
        pods=[P("p", priority=HIGH, req=VERY_LARGE)],
        init=[P("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
              P("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
              P("p1.3", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
        pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=1, disrupted=["p1.3"])],
        expected=[{"node1": (["p1.1", "p1.2", "p1.3"], 1)}], calls=[4],
    ),
    dict(
        name="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        plugins=[NodeResourcesFit], nodes=[f"node{i}" for i in range(1, 6)],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
        # offset=4 => node5 (yes), node1 (yes)
        expected=[{"node1": (["p1"], 0), "node5": (["p5"], 0)}], calls=[4],
    ),
    dict(
        name="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        plugins=[NodeResourcesFit], nodes=[f"node{i}" for i in range(1, 6)],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1", node="node1", priority=MID, req=LARGE), P("p2", node="node2", priority=VERY_HIGH, req=LARGE),
              P("p3", node="node3", priority=MID, req=LARGE), P("p4", node="node4", priority=MID, req=LARGE),
              P("p5", node="node5", priority=VERY_HIGH, req=LARGE)],
        # offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
        expected=[{"node1": (["p1"], 0), "node3": (["p3"], 0)}], calls=[4],
    ),
    dict(
        name="preemption offset across multiple scheduling cycles and wrap around",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        plugins=[NodeResourcesFit], nodes=[f"node{i}" for i in range(1, 6)],
        pods=[P("tp1", priority=HIGH, req=LARGE), P("tp2", priority=HIGH, req=LARGE),
              P("tp3", priority=HIGH, req=LARGE)],
        init=[P(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
        expected=[
            {"node1": (["p1"], 0), "node5": (["p5"], 0)},  # offset=4
            {"node2": (["p2"], 0), "node3": (["p3"], 0)},  # offset=1
            {"node4": (["p4"], 0), "node5": (["p5"], 0)},  # offset=3
        ],
        calls=[4, 4, 4],
    ),
    dict(
        name="preemption looks past numCandidates until a non-PDB violating node is found",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        plugins=[NodeResourcesFit], nodes=[f"node{i}" for i in range(1, 6)],
        pods=[P("p", priority=HIGH, req=LARGE)],
        init=[P("p1", node="node1", labels={"app": "foo"}, priority=MID, req=LARGE),
              P("p2", node="node2", labels={"app": "foo"}, priority=MID, req=LARGE),
              P("p3", node="node3", priority=MID, req=LARGE),
              P("p4", node="node4", priority=MID, req=LARGE),
              P("p5", node="node5", labels={"app": "foo"}, priority=MID, req=LARGE)],
        pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=0)],
        # offset=4 => node5 (yes, pdb), node1 (yes, pdb), node2 (dropped: list full), node3 (yes)
        expected=[{"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}], calls=[8],
    ),
]


@pytest.mark.parametrize("tc", DRY_RUN_CASES, ids=[c["name"] for c in DRY_RUN_CASES])
def test_dry_run_preemption(tc):
    nodes = [topology_node(spec, VERY_LARGE) for spec in tc["nodes"]]
    env = Env(nodes, tc["init"], plugins=[FakeFilter, *tc["plugins"]], args=tc.get("args"),
              pdbs=tc.get("pdbs", ()))
    fake = env.framework.plugins["FakeFilter"]
    # upstream keys the failure map by the full "name/zone" spec, so it only hits plain names
    fake.failed = {spec: tc.get("fake_rc", Code.Success) for spec in tc["nodes"]}
    offsets = iter([4, 1, 3])
    env.plugin.offset_rand = lambda n: next(offsets)
    node_infos = env.node_infos()
    pdbs = env.cluster.list("PodDisruptionBudget")
    previous = 0
    for cycle, pod in enumerate(tc["pods"]):
        state = env.pre_filtered_state(pod)
        offset, num = env.plugin.get_offset_and_num_candidates(len(node_infos))
        got, _, _ = env.plugin.evaluator.dry_run_preemption(state, pod, node_infos, pdbs, offset, num)
        assert fake.num_filter_called - previous == tc["calls"][cycle], f"cycle {cycle}"
        previous = fake.num_filter_called
        assert victims_by_node(got) == tc["expected"][cycle], f"cycle {cycle}"


def test_dry_run_non_violating_candidates_first():
    """Candidates without PDB violations are listed before the violating ones."""
    tc = DRY_RUN_CASES[-1]
    nodes = [topology_node(spec, VERY_LARGE) for spec in tc["nodes"]]
    env = Env(nodes, tc["init"], plugins=[NodeResourcesFit], args=tc["args"], pdbs=tc["pdbs"])
    pod = tc["pods"][0]
    got, node_statuses, err = env.plugin.evaluator.dry_run_preemption(
        env.pre_filtered_state(pod), pod, env.node_infos(), env.cluster.list("PodDisruptionBudget"), 4, 2)
    assert [c.name for c in got] == ["node3", "node5", "node1"]
    assert err == "" and len(node_statuses) == 0


def test_dry_run_records_statuses_and_errors():
    env = Env([st_node("node1", LARGE, {"error": "true"}), st_node("node2", SMALL)],
              [P("p1", node="node1"), P("p2", node="node2", priority=HIGH)],
              plugins=[NodeResourcesFit, ErrorExtensionPlugin])
    pod = P("p", priority=HIGH, req=LARGE)
    got, node_statuses, err = env.plugin.evaluator.dry_run_preemption(
        env.pre_filtered_state(pod), pod, env.node_infos(), [], 0, 2)
    assert got == []
    assert err == 'running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'
    assert node_statuses.get("node1").code is Code.Error
    assert node_statuses.get("node2").code is Code.UnschedulableAndUnresolvable
    assert node_statuses.get("node2").message() == "No preemption victims found for incoming pod"


# =========================================================================== TestSelectBestCandidate

SELECT_CASES = [
    dict(name="a pod that fits on both nodes when lower priority pods are preempted",
         nodes=["node1", "node2"], pod=P("p", priority=HIGH, req=LARGE),
         pods=[P("p1", node="node1", priority=MID, req=LARGE, start=epoch(0)),
               P("p2", node="node2", priority=MID, req=LARGE, start=epoch(0))],
         expected=["node1", "node2"]),
    dict(name="node with min highest priority pod is picked",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p1.2", node="node1", priority=MID, req=LARGE, start=epoch(0)),
               P("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("p3.1", node="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("p3.2", node="node3", priority=LOW, req=MEDIUM, start=epoch(0))],
         expected=["node3"]),
    dict(name="when highest priorities are the same, minimum sum of priorities is picked",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p1.2", node="node1", priority=MID, req=LARGE, start=epoch(0)),
               P("p2.1", node="node2", priority=MID, req=LARGE, start=epoch(0)),
               P("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(0))],
         expected=["node2"]),
    dict(name="when highest priority and sum are the same, minimum number of pods is picked",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=SMALL, start=epoch(0)),
               P("p1.2", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
               P("p1.3", node="node1", priority=MID, req=SMALL, start=epoch(0)),
               P("p1.4", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
               P("p2.1", node="node2", priority=MID, req=LARGE, start=epoch(0)),
               P("p2.2", node="node2", priority=NEG, req=MEDIUM, start=epoch(0)),
               P("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p3.2", node="node3", priority=NEG, req=SMALL, start=epoch(0)),
               P("p3.3", node="node3", priority=LOW, req=SMALL, start=epoch(0))],
         expected=["node2"]),
    dict(name="sum of adjusted priorities is considered",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=SMALL, start=epoch(0)),
               P("p1.2", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
               P("p1.3", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
               P("p2.1", node="node2", priority=MID, req=LARGE, start=epoch(0)),
               P("p2.2", node="node2", priority=NEG, req=MEDIUM, start=epoch(0)),
               P("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p3.2", node="node3", priority=NEG, req=SMALL, start=epoch(0)),
               P("p3.3", node="node3", priority=LOW, req=SMALL, start=epoch(0))],
         expected=["node2"]),
    dict(name="non-overlapping lowest high priority, sum priorities, and number of pods",
         nodes=["node1", "node2", "node3", "node4"], pod=P("p", priority=VERY_HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=SMALL, start=epoch(0)),
               P("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(0)),
               P("p1.3", node="node1", priority=LOW, req=SMALL, start=epoch(0)),
               P("p2.1", node="node2", priority=HIGH, req=LARGE, start=epoch(0)),
               P("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p3.2", node="node3", priority=LOW, req=SMALL, start=epoch(0)),
               P("p3.3", node="node3", priority=LOW, req=SMALL, start=epoch(0)),
               P("p3.4", node="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("p4.1", node="node4", priority=MID, req=MEDIUM, start=epoch(0)),
               P("p4.2", node="node4", priority=MID, req=SMALL, start=epoch(0)),
               P("p4.3", node="node4", priority=MID, req=SMALL, start=epoch(0)),
               P("p4.4", node="node4", priority=NEG, req=SMALL, start=epoch(0))],
         expected=["node1"]),
    dict(name="same priority, same number of victims, different start time for each node's pod",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
               P("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
               P("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(3)),
               P("p2.2", node="node2", priority=MID, req=MEDIUM, start=epoch(3)),
               P("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(1)),
               P("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(1))],
         expected=["node2"]),
    dict(name="same priority, same number of victims, different start time for all pods",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(4)),
               P("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
               P("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(5)),
               P("p2.2", node="node2", priority=MID, req=MEDIUM, start=epoch(1)),
               P("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(3)),
               P("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(6))],
         expected=["node3"]),
    dict(name="different priority, same number of victims, different start time for all pods",
         nodes=["node1", "node2", "node3"], pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=LOW, req=MEDIUM, start=epoch(4)),
               P("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
               P("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(6)),
               P("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(1)),
               P("p3.1", node="node3", priority=LOW, req=MEDIUM, start=epoch(3)),
               P("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(5))],
         expected=["node2"]),
]


@pytest.mark.parametrize("tc", SELECT_CASES, ids=[c["name"] for c in SELECT_CASES])
def test_select_best_candidate(tc):
    env = Env([st_node(n, VERY_LARGE) for n in tc["nodes"]], tc["pods"], plugins=[NodeResourcesFit],
              preemptors=[tc["pod"]])
    pod = env.preemptors[0]
    node_infos = env.node_infos(sort=False)
    state = env.pre_filtered_state(pod)
    offset, num = env.plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.plugin.evaluator.dry_run_preemption(state, pod, node_infos, [], offset, num)
    best = env.plugin.evaluator.select_candidate(candidates)
    assert best is not None and best.name in tc["expected"]


# =========================================================================== TestCustomSelection

def _label_is(key, value):
    return lambda node_info, victim, preemptor: victim.labels.get(key) == value


def _node_is(name):
    return lambda node_info, victim, preemptor: node_info.name == name


def _preemptor_at_least(minimum):
    return lambda node_info, victim, preemptor: preemptor.effective_priority >= minimum


def _victim_at_most(maximum):
    return lambda node_info, victim, preemptor: victim.effective_priority <= maximum


def _label_pods(prio_v1, prio_v2, prio_v3, pod_prio):
    return dict(
        nodes=["node1", "node2", "node3", "node4"],
        pod=P("px", priority=pod_prio, req=LARGE),
        pods=[P("v1", labels={"preemptible": "no"}, node="node1", priority=prio_v1, req=LARGE, start=epoch(0)),
              P("v2", labels={"preemptible": "yes"}, node="node2", priority=prio_v2, req=LARGE, start=epoch(0)),
              P("v3", labels={"preemptible": "yes"}, node="node3", priority=prio_v3, req=LARGE, start=epoch(0)),
              P("v4", node="node4", priority=LOW, req=LARGE, start=epoch(0))])


def _node1_pods(pod_prio, v1_req=MEDIUM):
    return dict(
        nodes=["node1", "node2", "node3"],
        pod=P("px", priority=pod_prio, req=LARGE),
        pods=[P("v1", node="node1", priority=HIGH, req=v1_req, start=epoch(0)),
              P("v2", node="node1", priority=MID, req=SMALL, start=epoch(0)),
              P("v3", node="node1", priority=LOW, req=SMALL, start=epoch(0)),
              P("v4", node="node2", priority=MID, req=LARGE, start=epoch(0)),
              P("v5", node="node3", priority=LOW, req=LARGE, start=epoch(0))])


def _one_per_node(pod_prio):
    return dict(
        nodes=["node1", "node2", "node3"],
        pod=P("px", priority=pod_prio, req=LARGE),
        pods=[P("v1", node="node1", priority=HIGH, req=LARGE, start=epoch(0)),
              P("v2", node="node2", priority=MID, req=LARGE, start=epoch(0)),
              P("v3", node="node3", priority=LOW, req=LARGE, start=epoch(0))])


CUSTOM_SELECTION_CASES = [
    dict(name="filter for matching pod label: high priority", eligible=_label_is("preemptible", "yes"),
         **_label_pods(MID, MID, LOW, HIGH), expected={"node2": ["v2"], "node3": ["v3"]}),
    dict(name="filter for matching pod label: mid priority", eligible=_label_is("preemptible", "yes"),
         **_label_pods(MID, MID, LOW, MID), expected={"node3": ["v3"]}),
    dict(name="filter for matching pod label: low priority", eligible=_label_is("preemptible", "yes"),
         **_label_pods(MID, MID, LOW, LOW), expected={}),
    dict(name="filter for matching victim node: high priority", eligible=_node_is("node1"),
         **_node1_pods(HIGH), expected={"node1": ["v2", "v3"]}),
    dict(name="filter for matching victim node: mid priority", eligible=_node_is("node1"),
         **_node1_pods(MID, SMALL), expected={"node1": ["v3"]}),
    dict(name="filter for matching victim node: low priority", eligible=_node_is("node1"),
         **_node1_pods(LOW, SMALL), expected={}),
    dict(name="only pods at or above specified priority can preempted: high priority",
         eligible=_preemptor_at_least(HIGH), **_one_per_node(HIGH), expected={"node2": ["v2"], "node3": ["v3"]}),
    dict(name="only pods at or above specified priority can preempted: mid priority",
         eligible=_preemptor_at_least(HIGH), **_one_per_node(MID), expected={}),
    dict(name="only pods at or below specified priority can be preempted: high priority",
         eligible=_victim_at_most(MID), **_one_per_node(HIGH), expected={"node2": ["v2"], "node3": ["v3"]}),
]


@pytest.mark.parametrize("tc", CUSTOM_SELECTION_CASES, ids=[c["name"] for c in CUSTOM_SELECTION_CASES])
def test_custom_selection(tc):
    env = Env([st_node(n, VERY_LARGE) for n in tc["nodes"]], tc["pods"], plugins=[NodeResourcesFit],
              preemptors=[tc["pod"]])
    env.plugin.is_eligible_pod = tc["eligible"]
    pod = env.preemptors[0]
    node_infos = env.node_infos(sort=False)
    offset, num = env.plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.plugin.evaluator.dry_run_preemption(env.pre_filtered_state(pod), pod, node_infos,
                                                               [], offset, num)
    assert len(candidates) == len(tc["expected"])
    while candidates:
        selected = env.plugin.evaluator.select_candidate(candidates)
        assert selected.name in tc["expected"]
        assert [p.name for p in selected.victims.pods] == tc["expected"][selected.name]
        candidates = [c for c in candidates if c.name != selected.name]


# =========================================================================== TestCustomOrdering

def _order_by_oldest_start(env):
    def order(a, b):
        now = now_datetime(env.handle)
        return get_pod_start_time(a, now) < get_pod_start_time(b, now)
    return order


CUSTOM_ORDERING_CASES = [
    dict(name="select newest pods", order=_order_by_oldest_start,
         pods=[P("v1", node="node1", priority=LOW, req=MEDIUM, start=epoch(2)),
               P("v2", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("v3", node="node1", priority=MID, req=MEDIUM, start=epoch(1))],
         expected=["v3", "v1"]),
    dict(name="select alphabetically-last pods", order=lambda env: (lambda a, b: a.name < b.name),
         pods=[P("foo", uid="v1", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("bar", uid="v2", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
               P("baz", uid="v3", node="node1", priority=MID, req=MEDIUM, start=epoch(0))],
         expected=["baz", "foo"]),
]


@pytest.mark.parametrize("tc", CUSTOM_ORDERING_CASES, ids=[c["name"] for c in CUSTOM_ORDERING_CASES])
def test_custom_ordering(tc):
    env = Env([st_node("node1", VERY_LARGE)], tc["pods"], plugins=[NodeResourcesFit],
              preemptors=[P("p2", priority=HIGH, req=LARGE)])
    env.plugin.more_important_pod = tc["order"](env)
    pod = env.preemptors[0]
    node_infos = env.node_infos()
    offset, num = env.plugin.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.plugin.evaluator.dry_run_preemption(env.pre_filtered_state(pod), pod, node_infos,
                                                               [], offset, num)
    assert len(candidates) == 1
    assert [p.name for p in candidates[0].victims.pods] == tc["expected"]


# =========================================================================== TestPodEligibleToPreemptOthers

ELIGIBLE_CASES = [
    dict(name="Pod with nominated node",
         pod=P("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=[P("p1", priority=LOW, node="node1", terminating=True)], nodes=["node1"],
         nominated_status=UAU(ERR_REASON_NOT_MATCH), expected=True),
    dict(name="Pod without nominated node",
         pod=P("p_without_nominated_node", uid="p", priority=HIGH), pods=[], nodes=[],
         nominated_status=None, expected=True),
    dict(name="Pod with 'PreemptNever' preemption policy",
         pod=P("p_with_preempt_never_policy", uid="p", priority=HIGH, policy="Never"), pods=[], nodes=[],
         nominated_status=None, expected=False, reason="not eligible due to preemptionPolicy=Never."),
    dict(name="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
         pod=P("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=[P("p1", priority=LOW, node="node1", terminating=True,
                 conditions=[("DisruptionTarget", "True", "PreemptionByScheduler")])],
         nodes=["node1"], nominated_status=None, expected=False,
         reason="not eligible due to a terminating pod on the nominated node."),
    dict(name="non-victim Pods terminating",
         pod=P("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=[P("p1", priority=LOW, node="node1", terminating=True)], nodes=["node1"],
         nominated_status=None, expected=True),
    # beyond upstream's table
    dict(name="terminating preemption victim of equal priority does not block",
         pod=P("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=[P("p1", priority=HIGH, node="node1", terminating=True,
                 conditions=[("DisruptionTarget", "True", "PreemptionByScheduler")])],
         nodes=["node1"], nominated_status=Status.unschedulable(), expected=True),
    dict(name="DisruptionTarget for another reason does not block",
         pod=P("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=[P("p1", priority=LOW, node="node1", terminating=True,
                 conditions=[("DisruptionTarget", "True", "EvictionByEvictionAPI")])],
         nodes=["node1"], nominated_status=None, expected=True),
]


@pytest.mark.parametrize("tc", ELIGIBLE_CASES, ids=[c["name"] for c in ELIGIBLE_CASES])
def test_pod_eligible_to_preempt_others(tc):
    env = Env([st_node(n) for n in tc["nodes"]], tc["pods"], plugins=[])
    ok, reason = env.plugin.pod_eligible_to_preempt_others(tc["pod"], tc["nominated_status"])
    assert ok is tc["expected"]
    assert reason == tc.get("reason", "")


# =========================================================================== TestPreEnqueue

@pytest.mark.parametrize("async_preemption,check,want", [
    (False, "p", None),
    (True, "p", "waiting for the preemption for this pod to be finished"),
    (True, "p_other", None),
], ids=["AsyncPreemption disabled, returns nil",
        "AsyncPreemption enabled, same pod, returns UnschedulableAndUnresolvable",
        "AsyncPreemption enabled, different pod, returns nil"])
def test_pre_enqueue(async_preemption, check, want):
    env = Env([st_node("node1", ONE_POD)], [P("p1", node="node1")], plugins=[NodeResourcesFit],
              preemptors=[P("p", priority=HIGH), P("p_other", priority=HIGH)],
              features={"SchedulerAsyncPreemption": async_preemption})
    held = []
    env.plugin.executor.spawn = held.append  # the "goroutine" does not run yet
    pod = env.pod("p")
    result, status = env.plugin.post_filter(env.pre_filtered_state(pod), pod,
                                            statuses({"node1": Code.Unschedulable}))
    assert status.is_success() and result == PostFilterResult.nominate("node1")
    got = env.plugin.pre_enqueue(env.pod(check))
    if want is None:
        assert got is None
    else:
        assert got.code is Code.UnschedulableAndUnresolvable and got.message() == want
    for run in held:
        run()
    assert env.plugin.pre_enqueue(env.pod(check)) is None


def test_events_to_register():
    on = DefaultPreemption({}, Handle())
    (event,) = on.events_to_register()
    assert event.event.resource is EventResource.Pod and event.event.action_type == ActionType.Delete
    assert event.queueing_hint_fn(P("x"), P("y"), None) is QueueingHint.QueueSkip
    off = DefaultPreemption({}, Handle(), features={"SchedulerAsyncPreemption": False})
    assert off.events_to_register() == []
    assert off.pre_enqueue(P("x")) is None


# =========================================================================== args and helpers

@pytest.mark.parametrize("pct,absolute,nodes,want", [
    (10, 100, 1000, 100), (10, 100, 50, 50), (40, 1, 5, 2), (40, 2, 5, 2), (50, 1, 3, 1),
    (10, 100, 5000, 500), (100, 0, 7, 7), (0, 3, 10, 3), (10, 0, 5, 0),
])
def test_calculate_num_candidates(pct, absolute, nodes, want):
    pl = DefaultPreemption({"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}, Handle())
    assert pl.calculate_num_candidates(nodes) == want


def test_args_validation():
    with pytest.raises(ValueError, match="minCandidateNodesPercentage: Invalid value: 101: not in valid range"):
        DefaultPreemption({"minCandidateNodesPercentage": 101}, Handle())
    pl = DefaultPreemption(None, Handle())
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)


def test_offset_is_reproducible():
    a = DefaultPreemption({}, Handle())
    b = DefaultPreemption({}, Handle())
    assert [a.get_offset_and_num_candidates(7)[0] for _ in range(20)] == \
        [b.get_offset_and_num_candidates(7)[0] for _ in range(20)]
    assert all(0 <= a.get_offset_and_num_candidates(7)[0] < 7 for _ in range(50))


def _pdb_victim(name, labels=None, ns="default"):
    return P(name, labels=labels, ns=ns, priority=LOW)


PDB_CASES = [
    dict(name="no victims, no PDBs", pods=[], pdbs=[], violating=[], non_violating=[]),
    dict(name="victim with no matching PDBs", pods=[_pdb_victim("v1", {"app": "bar"})],
         pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=0)], violating=[], non_violating=["v1"]),
    dict(name="victim matching PDB, adequate DisruptionsAllowed", pods=[_pdb_victim("v1", {"app": "foo"})],
         pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=1)], violating=[], non_violating=["v1"]),
    dict(name="victim matching PDB, no DisruptionsAllowed", pods=[_pdb_victim("v1", {"app": "foo"})],
         pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=0)], violating=["v1"], non_violating=[]),
    dict(name="multiple victims matching the same PDB",
         pods=[_pdb_victim("v1", {"app": "foo"}), _pdb_victim("v2", {"app": "foo"})],
         pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=1)], violating=["v2"], non_violating=["v1"]),
    dict(name="pod in DisruptedPods is ignored",
         pods=[_pdb_victim("v1", {"app": "foo"}), _pdb_victim("v2", {"app": "foo"})],
         pdbs=[make_pdb(match_labels={"app": "foo"}, allowed=0, disrupted=["v1"])],
         violating=["v2"], non_violating=["v1"]),
    dict(name="PDB with empty selector", pods=[_pdb_victim("v1", {"app": "foo"})],
         pdbs=[make_pdb(selector={}, allowed=0)], violating=[], non_violating=["v1"]),
    dict(name="PDB without selector", pods=[_pdb_victim("v1", {"app": "foo"})],
         pdbs=[make_pdb(allowed=0)], violating=[], non_violating=["v1"]),
    dict(name="PDB in another namespace", pods=[_pdb_victim("v1", {"app": "foo"})],
         pdbs=[make_pdb(ns="other", match_labels={"app": "foo"}, allowed=0)], violating=[], non_violating=["v1"]),
    dict(name="pod without labels matches nothing", pods=[_pdb_victim("v1")],
         pdbs=[make_pdb(selector={"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, allowed=0)],
         violating=[], non_violating=["v1"]),
    dict(name="Multiple PDBs",
         pods=[_pdb_victim("v1", {"app": "foo", "tier": "x"}), _pdb_victim("v2", {"app": "foo"}),
               _pdb_victim("v3", {"tier": "x"})],
         pdbs=[make_pdb("a", match_labels={"app": "foo"}, allowed=2),
               make_pdb("b", match_labels={"tier": "x"}, allowed=1)],
         violating=["v3"], non_violating=["v1", "v2"]),
]


@pytest.mark.parametrize("tc", PDB_CASES, ids=[c["name"] for c in PDB_CASES])
def test_filter_pods_with_pdb_violation(tc):
    violating, non_violating = filter_pods_with_pdb_violation(tc["pods"], tc["pdbs"])
    assert [p.name for p in violating] == tc["violating"]
    assert [p.name for p in non_violating] == tc["non_violating"]


@pytest.mark.parametrize("tc", PDB_CASES, ids=[c["name"] for c in PDB_CASES])
def test_violated_budgets_names_the_budgets_of_the_same_violations(tc):
    """The reports name the budgets a preemption broke by filterPodsWithPDBViolation's rule: a
    pod violates exactly when a matching budget goes negative with its eviction."""
    broken = violated_budgets(tc["pods"], tc["pdbs"])
    assert [p.name for p, b in zip(tc["pods"], broken) if b] == tc["violating"]
    for budgets in broken:
        assert all(b in tc["pdbs"] for b in budgets)


def test_post_filter_result_mode():
    assert PostFilterResult.nominate("n").nominating_info.mode is NominatingMode.Override
