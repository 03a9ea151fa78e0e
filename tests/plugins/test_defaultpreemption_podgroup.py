"""DefaultPreemption with the workload gates, as upstream's default_preemption_test.go states it
(TestPostFilter's pod-group cases, TestPreEnqueue's), and the pod-group preemption scenarios of
upstream's integration test podgrouppreemption_test.go driven through the entry point.

PostFilter does not preempt for a pod of a group when WorkloadAwarePreemption is on (the group's
cycle does), nor, with TopologyAwareWorkloadScheduling, for a pod of a group with a topology
constraint. While a group's asynchronous preemption runs, PreEnqueue holds every pod of that
group. Victims of a group's preemption are told "Preempted by podgroup <PodGroup uid> on node
cluster" and get the DisruptionTarget condition; the snapshot is as before afterwards."""

from __future__ import annotations

import pytest

from kschedfw import testing as kit
from kschedfw.api.workload import (DISRUPTION_MODE_POD_GROUP, POD_GROUP_KIND, GangSchedulingPolicy, PodGroup,
                                   PodGroupSchedulingConstraints, PodGroupSchedulingPolicy, TopologyConstraint)
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeToStatus, PostFilterResult
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.preemption import run_workload_aware_preemption
from kschedfw.preemption.podgroup import ERR_NOT_REGISTERED, ERR_SCHEDULING_CONSTRAINTS

from .defaultpreemption_builders import HIGH, ONE_POD, Env, st_node

WAP = "WorkloadAwarePreemption"
TAS = "TopologyAwareWorkloadScheduling"
ASYNC = "SchedulerAsyncPreemption"


def statuses(explicit):
    """Filter's verdicts: ``explicit`` per node, UnschedulableAndUnresolvable for the others."""
    m = NodeToStatus({n: Status(c) for n, c in explicit.items()})
    m.absent_nodes_status = Status.unresolvable()
    return m


def member(name, group=None, *, node="", priority=None, cpu=None, labels=None):
    extra = {"schedulingGroup": {"podGroupName": group}} if group else {}
    containers = [kit.container("image", requests={"cpu": cpu})] if cpu else [kit.container("image")]
    return kit.make_pod(name, uid=name, node_name=node, priority=priority, labels=labels, containers=containers,
                        scheduler_name="default-scheduler", terminationGracePeriodSeconds=0, **extra)


def pod_group(name, *, priority=None, min_count=None, mode=None, topology=None):
    policy = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count=min_count)) if min_count \
        else PodGroupSchedulingPolicy(basic=True)
    constraints = PodGroupSchedulingConstraints(topology=(TopologyConstraint(topology),)) if topology else None
    return PodGroup(name=name, uid=f"uid-{name}", priority=priority, scheduling_policy=policy,
                    scheduling_constraints=constraints, disruption_mode=mode or "Pod")


def env_with(nodes, pods, groups=(), preemptors=(), pdbs=(), **features):
    env = Env(nodes, pods, plugins=[NodeResourcesFit], preemptors=preemptors, pdbs=pdbs, features=features)
    for g in groups:
        env.cluster.create(g)
    return env


# =========================================================================== TestPostFilter (pod groups)

POST_FILTER_CASES = [
    ("pod with SchedulingGroup with TAS with scheduling constraint enabled should not preempt",
     "rack", {TAS: True}, None, "preemption: not eligible due to placement-based pod group scheduling limitation"),
    ("pod with SchedulingGroup with TAS with scheduling constraint enabled should not preempt even when WAP is enabled",
     "rack", {TAS: True, WAP: True}, None,
     "preemption: not eligible due to placement-based pod group scheduling limitation"),
    ("pod with SchedulingGroup with TAS without scheduling constraint enabled should preempt",
     "", {TAS: True}, "node1", ""),
    ("pod with SchedulingGroup with TAS with WAP enabled should not preempt",
     "", {TAS: True, WAP: True}, None, "preemption: not eligible due to workload aware preemption enabled"),
    ("pod with SchedulingGroup with WAP enabled should not preempt",
     None, {WAP: True}, None, "preemption: not eligible due to workload aware preemption enabled"),
    ("pod with SchedulingGroup with TAS and WAP disabled should preempt", None, {TAS: False, WAP: False}, "node1", ""),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("name,topology,features,nominated,message", POST_FILTER_CASES,
                         ids=[c[0] for c in POST_FILTER_CASES])
def test_post_filter_for_a_pod_of_a_group(name, topology, features, nominated, message, async_preemption):
    """``topology``: None, no PodGroup at all; "" a PodGroup without a constraint."""
    groups = [] if topology is None else [pod_group("foo", topology=topology or None)]
    env = env_with([st_node("node1", ONE_POD)], [member("p1", node="node1")], groups,
                   preemptors=[member("p-with-podgroup", "foo", priority=HIGH)],
                   **{ASYNC: async_preemption, **features})
    pod = env.preemptors[0]
    result, status = env.plugin.post_filter(env.pre_filtered_state(pod), pod, statuses({"node1": Code.Unschedulable}))
    if nominated is None:
        assert result is None
        assert status.code is Code.Unschedulable and status.message() == message
    else:
        assert status.is_success() and result == PostFilterResult.nominate(nominated)


def test_post_filter_pod_group_not_found_with_topology_gate():
    env = env_with([st_node("node1", ONE_POD)], [member("p1", node="node1")],
                   preemptors=[member("p", "missing", priority=HIGH)], **{TAS: True})
    pod = env.preemptors[0]
    result, status = env.plugin.post_filter(env.pre_filtered_state(pod), pod, statuses({"node1": Code.Unschedulable}))
    assert result is None
    assert (status.code, status.message()) == (Code.Unschedulable, "preemption: pod group for pod not found")


# =========================================================================== TestPreEnqueue (pod groups)

PRE_ENQUEUE_CASES = [
    ("WAP enabled, pod in same PodGroup, returns UnschedulableAndUnresolvable", "pg1", "pg1", ["pg1"], True,
     "waiting for the preemption for this pod group to be finished"),
    ("WAP disabled, pod in same PodGroup, returns nil", "pg1", "pg1", ["pg1"], False, None),
    ("WAP enabled, pod in different PodGroup, returns nil", "pg1", "pg2", ["pg1", "pg2"], True, None),
    ("WAP enabled, pod group not found, returns nil", "pg1", "pg_missing", ["pg1"], True, None),
]


@pytest.mark.parametrize("name,trigger_group,check_group,groups,wap,want", PRE_ENQUEUE_CASES,
                         ids=[c[0] for c in PRE_ENQUEUE_CASES])
def test_pre_enqueue_pod_groups(name, trigger_group, check_group, groups, wap, want):
    env = env_with([st_node("node1", ONE_POD)], [member("p1", node="node1")],
                   [pod_group(g, priority=HIGH if wap else None) for g in groups],
                   preemptors=[member("p", trigger_group, priority=HIGH), member("p_other", check_group, priority=HIGH)],
                   **{ASYNC: True, WAP: wap})
    held = []
    env.plugin.executor.spawn = held.append  # the "goroutine" does not run yet
    trigger = env.pod("p")
    if wap:
        node1 = env.handle.snapshot.get("node1")
        status = env.plugin.pod_group_post_filter(
            env.cluster.get(POD_GROUP_KIND, trigger_group, "default"), [trigger],
            lambda: Status.success() if not node1.pods else Status.unschedulable("need to preempt"))
        assert status.is_success()
    else:
        env.plugin.post_filter(env.pre_filtered_state(trigger), trigger, statuses({"node1": Code.Unschedulable}))
    got = env.plugin.pre_enqueue(env.pod("p_other"))
    if want is None:
        assert got is None
    else:
        assert got.code is Code.UnschedulableAndUnresolvable and got.message() == want
    for run in held:
        run()
    assert env.plugin.pre_enqueue(env.pod("p_other")) is None


# =========================================================================== the entry point

def preempt_for(env, group, algorithm, post_filters=None):
    """The cycle's entry point for ``group`` of ``env``'s cluster, with the plugin's hook."""
    hooks = [env.plugin.pod_group_post_filter] if post_filters is None else post_filters
    return run_workload_aware_preemption(hooks, env.handle.lister, group.namespace, group.name, env.preemptors,
                                         algorithm, env.handle.snapshot)


def test_entry_point_refuses_groups_with_topology_constraints_and_missing_plugins():
    calls = []

    def post_filter(group, pods, func):
        calls.append(group.name)
        return None

    env = env_with([st_node("node1", ONE_POD)], [], [pod_group("plain"), pod_group("racked", topology="rack")])
    plain, racked = (env.cluster.get(POD_GROUP_KIND, n, "default") for n in ("plain", "racked"))
    assert preempt_for(env, plain, Status.success, []).message() == ERR_NOT_REGISTERED
    refused = preempt_for(env, racked, Status.success, [post_filter])
    assert (refused.code, refused.message()) == (Code.Unschedulable, ERR_SCHEDULING_CONSTRAINTS)
    assert preempt_for(env, plain, Status.success, [post_filter]).is_success()
    assert calls == ["plain"]


def test_gate_off_has_no_pod_group_preemption():
    env = env_with([st_node("node1", ONE_POD)], [member("p1", node="node1")])
    status = env.plugin.pod_group_post_filter(pod_group("pg"), [], Status.success)
    assert (status.code, status.message()) == (Code.Unschedulable, ERR_NOT_REGISTERED)


# =========================================================================== TestPodGroupPreemption

def greedy_group_algorithm(env, group, pods):
    """A stand-in for the group's algorithm without post filters: each pod in order on the first
    node NodeResourcesFit admits, in memory; the group fits when minCount pods (a basic group: all)
    found one. The snapshot is left as it was."""
    def schedule():
        placed = []
        try:
            for p in pods:
                state = CycleState()
                nodes = env.handle.snapshot.node_infos()
                env.framework.run_pre_filter_plugins(state, p, nodes)
                for node_info in nodes:
                    status = env.framework.run_filter_plugins_with_nominated_pods(state, p, node_info)
                    if status is None or status.is_success():
                        assumed = p.with_node(node_info.name)
                        node_info.add_pod(assumed)
                        placed.append((node_info, assumed))
                        break
        finally:
            for node_info, assumed in placed:
                node_info.remove_pod(assumed)
        need = group.scheduling_policy.min_count if group.scheduling_policy.gang is not None else len(pods)
        return Status.success() if len(placed) >= need else Status.unschedulable("pod group is unschedulable")
    return schedule


def evicted(env, names):
    """Those of ``names`` deleted or being deleted (no grace period: they are gone at once)."""
    pods = {n: env.cluster.get("Pod", n, "default") for n in names}
    return sorted(n for n, p in pods.items() if p is None or p.deletion_timestamp is not None)


def cpu_node(name, cpu):
    return st_node(name, {"cpu": cpu, "memory": "4Gi", "pods": "32"})


def low(name, cpu="1", priority=10, node="node1", group=None, labels=None):
    return member(name, group, node=node, priority=priority, cpu=cpu, labels=labels)


def high(name, group="pg1", cpu="1", priority=100):
    return member(name, group, priority=priority, cpu=cpu)


POD_GROUP_PREEMPTION_CASES = [
    dict(name="Full PodGroup Preemption", nodes=[cpu_node("node1", "3")], groups=[pod_group("pg1", priority=100, min_count=3)],
         initial=[low("low-1"), low("low-2"), low("low-3")], preemptors=[high("high-1"), high("high-2"), high("high-3")],
         preempted=["low-1", "low-2", "low-3"]),
    dict(name="Full PodGroup Preemption for basic policy", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100)],
         initial=[low("low-1"), low("low-2"), low("low-3")], preemptors=[high("high-1"), high("high-2"), high("high-3")],
         preempted=["low-1", "low-2", "low-3"]),
    dict(name="Partial Preemption", nodes=[cpu_node("node1", "2"), cpu_node("node2", "2")],
         groups=[pod_group("pg1", priority=100, min_count=3)],
         initial=[low("low-1", cpu="2"), low("low-2", node="node2")],
         preemptors=[high("high-1"), high("high-2"), high("high-3")], preempted=["low-1"]),
    dict(name="Partial Preemption with basic policy", nodes=[cpu_node("node1", "2"), cpu_node("node2", "2")],
         groups=[pod_group("pg1", priority=100)],
         initial=[low("low-1"), low("very-low-1", cpu="2", priority=5, node="node2")],
         preemptors=[high("high-1"), high("high-2"), high("high-3")], preempted=["very-low-1"]),
    dict(name="PDB Violation Handling (Reprieve)", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100, min_count=2)],
         initial=[low("low-1", labels={"app": "foo"}), low("low-2", labels={"app": "foo"}), low("low-3")],
         pdbs=[kit.make_pdb("foo-pdb", match_labels={"app": "foo"}, min_available=2, disruptions_allowed=0)],
         preemptors=[high("high-1", cpu="500m"), high("high-2", cpu="500m")], preempted=["low-3"]),
    dict(name="Multi-node Preemption", nodes=[cpu_node("node1", "2"), cpu_node("node2", "2")],
         groups=[pod_group("pg1", priority=100, min_count=4)],
         initial=[low("low-1"), low("low-2"), low("low-3", node="node2"), low("low-4", node="node2")],
         preemptors=[high("high-1"), high("high-2"), high("high-3"), high("high-4")],
         preempted=["low-1", "low-2", "low-3", "low-4"]),
    dict(name="Insufficient Resources (No Preemption)", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100, min_count=3)],
         initial=[low("mid-1", priority=500), low("low-1"), low("low-2")],
         preemptors=[high("high-1"), high("high-2"), high("high-3")], preempted=[], code=Code.Unschedulable),
    dict(name="Priority-based Victim Selection", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100, min_count=2)],
         initial=[low("mid-1", priority=50), low("low-1"), low("low-2")],
         preemptors=[high("high-1"), high("high-2")], preempted=["low-1", "low-2"]),
    dict(name="Preempt the whole PodGroup even if preempting a single Pod would suffice", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100, min_count=1),
                 pod_group("pg2", priority=10, min_count=3, mode=DISRUPTION_MODE_POD_GROUP)],
         initial=[low("low-1", group="pg2"), low("low-2", group="pg2"), low("low-3", group="pg2")],
         preemptors=[high("high-1")], preempted=["low-1", "low-2", "low-3"]),
    dict(name="Preempt the whole basic PodGroup with a PodGroup disruption mode", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100, min_count=1), pod_group("pg2", priority=10, mode=DISRUPTION_MODE_POD_GROUP)],
         initial=[low("low-1", group="pg2"), low("low-2", group="pg2"), low("low-3", group="pg2")],
         preemptors=[high("high-1")], preempted=["low-1", "low-2", "low-3"]),
    dict(name="Priority divergence in PodGroups - preemptor PodGroup has higher priority than the victim candidate "
              "PodGroup", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=100, min_count=1),
                 pod_group("pg2", priority=10, min_count=3, mode=DISRUPTION_MODE_POD_GROUP)],
         initial=[low("high-1", group="pg2", priority=100), low("high-2", group="pg2", priority=100),
                  low("high-3", group="pg2", priority=100)],
         preemptors=[high("low-1", priority=10)], preempted=["high-1", "high-2", "high-3"]),
    dict(name="Priority divergence in PodGroups - preemptor PodGroup has too low priority", nodes=[cpu_node("node1", "3")],
         groups=[pod_group("pg1", priority=10, min_count=1),
                 pod_group("pg2", priority=100, min_count=3, mode=DISRUPTION_MODE_POD_GROUP)],
         initial=[low("low-1", group="pg2"), low("low-2", group="pg2"), low("low-3", group="pg2")],
         preemptors=[high("high-1")], preempted=[], code=Code.UnschedulableAndUnresolvable),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("tc", POD_GROUP_PREEMPTION_CASES, ids=[c["name"] for c in POD_GROUP_PREEMPTION_CASES])
def test_pod_group_preemption(tc, async_preemption):
    """The victims upstream's scenario expects are evicted, each told it was preempted by the
    PodGroup on node cluster; afterwards the group fits the cluster without them. The pods that
    then bind need the group's cycle (the scheduler's)."""
    env = env_with(tc["nodes"], tc["initial"], tc["groups"], preemptors=tc["preemptors"], pdbs=tc.get("pdbs", ()),
                   **{ASYNC: async_preemption, WAP: True})
    group = env.cluster.get(POD_GROUP_KIND, tc["preemptors"][0].scheduling_group.pod_group_name, "default")
    before = {ni.name: sorted(p.name for p in ni.pods) for ni in env.node_infos()}
    algorithm = greedy_group_algorithm(env, group, env.preemptors)
    assert not algorithm().is_success()  # the group needs preemption at all
    status = preempt_for(env, group, algorithm)
    assert status.code is tc.get("code", Code.Success), status
    assert {ni.name: sorted(p.name for p in ni.pods) for ni in env.node_infos()} == before
    assert not env.plugin.executor.preempting
    assert evicted(env, [p.name for p in tc["initial"]]) == sorted(tc["preempted"])
    messages = [(e.reason, e.message) for e in env.cluster.events if e.reason == "Preempted"]
    assert messages == [("Preempted", f"Preempted by podgroup {group.uid} on node cluster")] * len(tc["preempted"])
    if tc["preempted"]:
        env.refresh_snapshot()
        assert greedy_group_algorithm(env, group, env.preemptors)().is_success()


def test_pod_group_preemption_condition_names_the_podgroup():
    env = env_with([cpu_node("node1", "1")], [low("low-1")], [pod_group("pg1", priority=100, min_count=1)],
                   preemptors=[high("high-1")], **{ASYNC: False, WAP: True})
    group = env.cluster.get(POD_GROUP_KIND, "pg1", "default")
    held = env.cluster.get("Pod", "low-1", "default")
    seen = []
    env.cluster.add_pod_condition = lambda pod, *args: seen.append((pod.name,) + args) or pod
    status = preempt_for(env, group, greedy_group_algorithm(env, group, env.preemptors))
    assert status.is_success()
    assert seen == [("low-1", "DisruptionTarget", "True", "PreemptionByScheduler",
                     "default-scheduler: preempting to accommodate a higher priority podgroup")]
    assert held.name == "low-1"


def test_single_pod_preemptor_ignores_disruption_mode():
    """Preemptor Pod without PodGroupName does not respect the PodGroup disruption mode: plain
    preemption evicts the lowest-priority pod of the group alone."""
    env = env_with([cpu_node("node1", "3")],
                   [low("low-1", group="pg1", priority=30), low("low-2", group="pg1", priority=20),
                    low("low-3", group="pg1", priority=10)],
                   [pod_group("pg1", priority=10, min_count=1)], preemptors=[member("high-1", priority=100, cpu="1")],
                   **{ASYNC: False, WAP: True})
    pod = env.preemptors[0]
    result, status = env.plugin.post_filter(env.pre_filtered_state(pod), pod, statuses({"node1": Code.Unschedulable}))
    assert status.is_success() and result == PostFilterResult.nominate("node1")
    assert evicted(env, ["low-1", "low-2", "low-3"]) == ["low-3"]
    assert [e.message for e in env.cluster.events if e.reason == "Preempted"] == ["Preempted by pod high-1 on node node1"]


def test_groups_without_uid_are_held_apart():
    """A PodGroup read without a uid is told apart by its namespace and name: another such group
    is not held while the first one's victims go."""
    groups = [PodGroup(name=n, priority=HIGH) for n in ("pg1", "pg2")]
    env = env_with([st_node("node1", ONE_POD)], [member("p1", node="node1")], groups,
                   preemptors=[member("a", "pg1", priority=HIGH), member("b", "pg2", priority=HIGH)],
                   **{ASYNC: True, WAP: True})
    held = []
    env.plugin.executor.spawn = held.append
    node1 = env.handle.snapshot.get("node1")
    status = env.plugin.pod_group_post_filter(env.cluster.get(POD_GROUP_KIND, "pg1", "default"), [env.pod("a")],
                                              lambda: Status.success() if not node1.pods else Status.unschedulable())
    assert status.is_success()
    assert env.plugin.pre_enqueue(env.pod("a")).message() == "waiting for the preemption for this pod group to be finished"
    assert env.plugin.pre_enqueue(env.pod("b")) is None
    held[0]()
    assert [e.message for e in env.cluster.events if e.reason == "Preempted"] == [
        "Preempted by podgroup default/pg1 on node cluster"]


def test_waiting_victim_is_preempted_in_memory_by_a_group():
    from kschedfw.framework.waiting_pods import WaitingPod
    env = env_with([cpu_node("node1", "1")], [low("low-1")], [pod_group("pg1", priority=100, min_count=1)],
                   preemptors=[high("high-1")], **{ASYNC: False, WAP: True})
    victim = env.pod("low-1")
    env.handle.waiting_pods[victim.uid] = WaitingPod(victim, "node1", {"Permit": 100.0})
    group = env.cluster.get(POD_GROUP_KIND, "pg1", "default")
    status = preempt_for(env, group, greedy_group_algorithm(env, group, env.preemptors))
    assert status.is_success()
    assert env.pod("low-1").deletion_timestamp is None  # no API call
    assert [e.message for e in env.cluster.events if e.reason == "Preempted"] == [
        "Preempted by podgroup uid-pg1 on node cluster (in kube-scheduler memory)."]
