"""Preemption actuation against the embedded cluster.

Ported from upstream ``default_preemption_test.go`` TestPreempt (extender cases left out: kschedfw
has no extenders) and ``preemption/executor_test.go`` (TestIsPodRunningPreemption,
TestPrepareCandidate, TestRemoveNominatedNodeName, TestPreemptPod: single pods only), plus a run
of the whole scheduler: preempt, wait for the victims' grace period, bind on the nominated node.
"""

from __future__ import annotations

import pytest

from kschedfw import hookimpl
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.testing.priorities import named, with_priority_classes
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.expand import SchedulerConfig
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import Registry
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NominatingInfo, NominatingMode, PostFilterResult
from kschedfw.framework.waiting_pods import WaitingPod
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.defaultpreemption import DefaultPreemption
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.podtopologyspread import PodTopologySpread
from kschedfw.preemption import Candidate, Executor, PodPreemptor, Victims
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.queue.nominator import Nominator
from kschedfw.simulation import Simulation
from kschedfw.testing import profile_for

from .defaultpreemption_builders import (HIGH, LARGE, LOW, MEDIUM, MID, SMALL, VERY_LARGE, Env,
                                              all_unschedulable, st_node, st_pod, topology_node)

P = st_pod
CONDITION_MESSAGE = "default-scheduler: preempting to accommodate a higher priority pod"


def _preempted(cluster: MemoryCluster) -> list[str]:
    """Pods that are terminating with the scheduler's DisruptionTarget condition."""
    return sorted(p.name for p in cluster.list("Pod")
                  if p.deletion_timestamp is not None and p.condition("DisruptionTarget") is not None)


def _assert_disruption_target(pod, message=CONDITION_MESSAGE):
    condition = pod.condition("DisruptionTarget")
    assert condition is not None
    assert (condition.status, condition.reason, condition.message) == ("True", "PreemptionByScheduler", message)


# =========================================================================== TestPreempt

PREEMPT_CASES = [
    dict(name="basic preemption logic",
         pod=P("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
         pods=[P("p1.1", node="node1", priority=LOW, req=SMALL), P("p1.2", node="node1", priority=LOW, req=SMALL),
               P("p2.1", node="node2", priority=HIGH, req=LARGE), P("p3.1", node="node3", priority=MID, req=MEDIUM)],
         nodes=["node1", "node2", "node3"], plugin=NodeResourcesFit,
         want=PostFilterResult.nominate("node1"), expected=["p1.1", "p1.2"]),
    dict(name="preemption for topology spread constraints",
         pod=P("p", labels={"foo": ""}, priority=HIGH, spread=[(1, "zone"), (1, "hostname")]),
         pods=[P("p-a1", node="node-a", labels={"foo": ""}, priority=HIGH),
               P("p-a2", node="node-a", labels={"foo": ""}, priority=HIGH),
               P("p-b1", node="node-b", labels={"foo": ""}, priority=LOW),
               P("p-x1", node="node-x", labels={"foo": ""}, priority=HIGH),
               P("p-x2", node="node-x", labels={"foo": ""}, priority=HIGH)],
         nodes=["node-a/zone1", "node-b/zone1", "node-x/zone2"], plugin=PodTopologySpread,
         want=PostFilterResult.nominate("node-b"), expected=["p-b1"]),
    dict(name="no preempting in pod",
         pod=P("p", priority=HIGH, req=VERY_LARGE, policy="Never"),
         pods=[P("p1.1", node="node1", priority=LOW, req=SMALL), P("p1.2", node="node1", priority=LOW, req=SMALL),
               P("p2.1", node="node2", priority=HIGH, req=LARGE), P("p3.1", node="node3", priority=MID, req=MEDIUM)],
         nodes=["node1", "node2", "node3"], plugin=NodeResourcesFit, want=None, expected=[]),
    dict(name="PreemptionPolicy is nil",
         pod=P("p", priority=HIGH, req=VERY_LARGE),
         pods=[P("p1.1", node="node1", priority=LOW, req=SMALL), P("p1.2", node="node1", priority=LOW, req=SMALL),
               P("p2.1", node="node2", priority=HIGH, req=LARGE), P("p3.1", node="node3", priority=MID, req=MEDIUM)],
         nodes=["node1", "node2", "node3"], plugin=NodeResourcesFit,
         want=PostFilterResult.nominate("node1"), expected=["p1.1", "p1.2"]),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("tc", PREEMPT_CASES, ids=[c["name"] for c in PREEMPT_CASES])
def test_preempt(tc, async_preemption):
    nodes = [topology_node(spec, VERY_LARGE) for spec in tc["nodes"]]
    env = Env(nodes, tc["pods"], plugins=[tc["plugin"]], preemptors=[tc["pod"]],
              features={"SchedulerAsyncPreemption": async_preemption})
    pod = env.preemptors[0]
    state = env.pre_filtered_state(pod)
    result, status = env.plugin.evaluator.preempt(state, pod, all_unschedulable(n.name for n in nodes))
    assert status.is_success() or status.is_rejected()
    assert result == tc["want"]
    assert _preempted(env.cluster) == tc["expected"]
    for name in tc["expected"]:
        victim = env.pod(name)
        _assert_disruption_target(victim)
    events = sorted((e.object_key, e.reason, e.message) for e in env.cluster.events)
    assert events == [(f"default/{name}", "Preempted", f"Preempted by pod p on node {result.nominating_info.nominated_node_name}")
                      for name in tc["expected"]]
    assert not env.plugin.executor.preempting

    if result is not None:
        # As the scheduler does after PostFilter: nominate, then retry with a fresh snapshot.
        env.cluster.set_nominated_node_name(pod, result.nominating_info.nominated_node_name)
        env.refresh_snapshot()
        before = len(env.cluster.events)
        result, status = env.plugin.evaluator.preempt(state, env.pod("p"), all_unschedulable(n.name for n in nodes))
        assert result is None
        assert status.code is Code.Unschedulable
        assert status.message() == "not eligible due to a terminating pod on the nominated node."
        assert _preempted(env.cluster) == tc["expected"]
        assert len(env.cluster.events) == before


def test_preempt_victims_removed_after_grace_period():
    env = Env([st_node("node1", VERY_LARGE)],
              [P("v1", node="node1", priority=LOW, req=LARGE, grace=10),
               P("v2", node="node1", priority=LOW, req=SMALL, grace=0)],
              plugins=[NodeResourcesFit], preemptors=[P("p", priority=HIGH, req=VERY_LARGE)])
    pod = env.preemptors[0]
    result, status = env.plugin.evaluator.preempt(env.pre_filtered_state(pod), pod, all_unschedulable(["node1"]))
    assert status.is_success() and result == PostFilterResult.nominate("node1")
    assert env.pod("v2") is None  # no grace period: gone at once
    assert env.pod("v1").deletion_timestamp is not None
    env.cluster.clock.advance(10)
    env.cluster.run_due_timers()
    assert env.pod("v1") is None


# =========================================================================== executor

class FailingCluster(MemoryCluster):
    """Patches and deletes of pods named ``fail-*`` fail (upstream's fake client reactors)."""

    fail_patch = False
    fail_delete = False

    def add_pod_condition(self, pod, type_, status, reason, message):
        if self.fail_patch and pod.name.startswith("fail"):
            raise RuntimeError("patch pod status failed")
        return super().add_pod_condition(pod, type_, status, reason, message)

    def delete_pod(self, pod, grace_period_seconds=None):
        if self.fail_delete and pod.name.startswith("fail"):
            raise RuntimeError("delete pod failed")
        return super().delete_pod(pod, grace_period_seconds)


def _executor_env(pods, *, cluster=None, async_preemption=True, nominator=None):
    cluster = cluster or MemoryCluster(admission_plugins=())  # a fake client, as in the upstream tests
    cluster.create(st_node("node1", VERY_LARGE))
    created = [cluster.create(p) for p in pods]
    activated: list = []
    handle = Handle(backend=cluster, nominator=nominator if nominator is not None else Nominator(),
                    waiting_pods={}, activate=activated.extend)
    return Executor(handle, async_preemption=async_preemption), cluster, created, activated


def _victim(name, uid=None, *, priority=MID, conditions=(), terminating=False):
    return P(name, uid=uid or name, node="node1", priority=priority, containers=1, conditions=conditions,
             terminating=terminating)


PREEMPTOR = P("preemptor", priority=HIGH, containers=1)


@pytest.mark.parametrize("preempting,last,pods,want", [
    (set(), {}, [], False),
    (set(), {"preemptor": ("ns", "victim1")}, [], False),
    ({"preemptor"}, {"otherPod": ("ns", "victim1")}, [], True),
    ({"preemptor"}, {"preemptor": ("ns", "victim1")}, [], False),
    ({"preemptor"}, {"preemptor": ("ns", "victim1")}, ["victim1", "victim2"], True),
    ({"preemptor"}, {"preemptor": ("ns", "victim-deleted")}, ["victim1", "victim-deleted"], False),
], ids=["preemptor not in preemptingSet", "preemptor not in preemptingSet, lastVictimSet not empty",
        "preemptor in preemptingSet, no lastVictim for preemptor",
        "preemptor in preemptingSet, victim in lastVictimSet, not in PodLister",
        "preemptor in preemptingSet, victim in lastVictimSet and in PodLister",
        "preemptor in preemptingSet, victim in lastVictimSet and in PodLister with deletion timestamp"])
def test_is_pod_running_preemption(preempting, last, pods, want):
    objs = [P(n, ns="ns", node="node", priority=MID, containers=1, terminating=n == "victim-deleted")
            for n in pods]
    executor, *_ = _executor_env(objs)
    executor.preempting = set(preempting)
    executor.last_victims_pending_preemption = dict(last)
    assert executor.is_pod_running_preemption("preemptor") is want


PREPARE_CASES = [
    dict(name="no victims", victims=[], pods=[_victim("victim1")], deleted=[], error=None, preempting=False),
    dict(name="one victim without condition", victims=["victim1"], pods=[_victim("victim1")],
         deleted=["victim1"], error=None, preempting=True),
    dict(name="one victim, but victim is already being deleted", victims=["victim1-with-deletion-timestamp"],
         pods=[_victim("victim1-with-deletion-timestamp", terminating=True)], deleted=[], error=None,
         preempting=False, no_events=True),
    dict(name="one victim, but victim is already deleted", victims=["not-found-victim"], pods=[],
         deleted=[], error=None, preempting=True, no_events=True),
    dict(name="one victim with same condition", victims=["victim1"],
         pods=[_victim("victim1", conditions=[("DisruptionTarget", "True", "PreemptionByScheduler")])],
         deleted=["victim1"], error=None, preempting=True),
    dict(name="one victim, but pod deletion failed", victims=["fail-victim"], pods=[_victim("fail-victim")],
         fail_delete=True, deleted=[], error="delete pod failed", preempting=True),
    dict(name="one victim, but patch pod failed", victims=["fail-victim"], pods=[_victim("fail-victim")],
         fail_patch=True, deleted=[], error="patch pod status failed", preempting=True),
    dict(name="two victims without condition, one passes successfully and the second fails",
         victims=["victim2", "fail-victim"], pods=[_victim("victim2", priority=50000), _victim("fail-victim")],
         fail_patch=True, deleted=["victim2"], error="patch pod status failed", preempting=True),
]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("tc", PREPARE_CASES, ids=[c["name"] for c in PREPARE_CASES])
def test_prepare_candidate(tc, async_preemption):
    cluster = FailingCluster(admission_plugins=())
    cluster.fail_patch = tc.get("fail_patch", False)
    cluster.fail_delete = tc.get("fail_delete", False)
    executor, cluster, created, activated = _executor_env(tc["pods"], cluster=cluster,
                                                          async_preemption=async_preemption)
    by_name = {p.name: p for p in created}
    victims = [by_name.get(n) or _victim(n) for n in tc["victims"]]
    held = []
    executor.spawn = held.append
    status = executor.actuate_pod_preemption("node1", Victims(victims), PREEMPTOR, "DefaultPreemption")
    if async_preemption:
        assert status is None
        assert (PREEMPTOR.uid in executor.preempting) is tc["preempting"]
        for run in held:
            run()
        assert not executor.preempting and not executor.last_victims_pending_preemption
        assert activated == ([PREEMPTOR] if tc["error"] else [])
    else:
        assert not held
        if tc["error"]:
            assert status.code is Code.Error and status.message() == tc["error"]
        else:
            assert status is None
    assert _preempted(cluster) == sorted(tc["deleted"])
    for name in tc["deleted"]:
        _assert_disruption_target(cluster.get("Pod", name, "default"))
    if tc.get("no_events"):
        assert cluster.events == []


def test_preempt_waiting_pod_in_memory():
    executor, cluster, (victim,), _ = _executor_env([_victim("victim1")])
    resolved = []
    waiting = WaitingPod(victim, "node1", {"Permit": 100.0}, resolved.append)
    executor.handle.waiting_pods[victim.uid] = waiting
    error = executor.preempt_pod(Candidate("node1", Victims([victim])), PodPreemptor(PREEMPTOR), victim, "DefaultPreemption")
    assert error is None
    assert resolved == [waiting]
    assert waiting.status.code is Code.Error and waiting.status.plugin == "DefaultPreemption"
    assert waiting.status.message() == "preempted"
    assert cluster.get("Pod", "victim1", "default").deletion_timestamp is None  # no API call
    (event,) = cluster.events
    assert (event.reason, event.message) == (
        "Preempted", "Preempted by pod preemptor on node node1 (in kube-scheduler memory).")


def test_preempt_waiting_pod_already_resolved_falls_back_to_delete():
    executor, cluster, (victim,), _ = _executor_env([_victim("victim1")])
    waiting = WaitingPod(victim, "node1", {"Permit": 100.0})
    waiting.allow("Permit")
    executor.handle.waiting_pods[victim.uid] = waiting
    assert executor.preempt_pod(Candidate("node1", Victims([victim])), PodPreemptor(PREEMPTOR), victim, "DefaultPreemption") is None
    assert cluster.get("Pod", "victim1", "default").deletion_timestamp is not None


def test_preempt_pod_not_found_is_ignored():
    executor, cluster, _, _ = _executor_env([])
    ghost = _victim("ghost")
    assert executor.preempt_pod(Candidate("node1", Victims([ghost])), PodPreemptor(PREEMPTOR), ghost, "DefaultPreemption") is None
    assert cluster.events == []


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
def test_remove_nominated_node_name(async_preemption):
    """Lower-priority pods nominated to the target node lose their nomination; others keep it."""
    nominator = Nominator()
    pods = [_victim("victim1"),
            P("low", priority=LOW, nominated="node1"), P("high", priority=HIGH + 1, nominated="node1"),
            P("elsewhere", priority=LOW, nominated="node2")]
    executor, cluster, created, _ = _executor_env(pods, async_preemption=async_preemption, nominator=nominator)
    for p in created[1:]:
        nominator.add_nominated_pod(p, NominatingInfo(p.nominated_node_name, NominatingMode.Override))
    executor.actuate_pod_preemption("node1", Victims([created[0]]), PREEMPTOR, "DefaultPreemption")
    assert cluster.get("Pod", "low", "default").nominated_node_name == ""
    assert cluster.get("Pod", "high", "default").nominated_node_name == "node1"
    assert cluster.get("Pod", "elsewhere", "default").nominated_node_name == "node2"
    assert [p.name for p in nominator.nominated_pods_for_node("node1")] == ["high"]
    assert [p.name for p in nominator.nominated_pods_for_node("node2")] == ["elsewhere"]


def test_async_last_victim_gates_until_its_deletion_starts():
    executor, cluster, created, _ = _executor_env([_victim("v1"), _victim("v2"), _victim("v3")])
    seen = []
    original = executor.preempt_pod

    def spy(candidate, preemptor, victim, plugin):
        seen.append((victim.name, executor.is_pod_running_preemption(preemptor.uid)))
        return original(candidate, preemptor, victim, plugin)

    executor.preempt_pod = spy
    held = []
    executor.spawn = held.append
    executor.actuate_pod_preemption("node1", Victims(created), PREEMPTOR, "DefaultPreemption")
    assert executor.is_pod_running_preemption(PREEMPTOR.uid)
    held[0]()
    # all running until the last one's deletion has started
    assert seen == [("v1", True), ("v2", True), ("v3", True)]
    assert not executor.is_pod_running_preemption(PREEMPTOR.uid)
    assert _preempted(cluster) == ["v1", "v2", "v3"]


# =========================================================================== the whole scheduler

def _config(async_preemption: bool = True) -> tuple[SchedulerConfig, Registry]:
    classes = [PrioritySort, NodeResourcesFit, DefaultPreemption, DefaultBinder]
    profile = profile_for(classes)
    config = SchedulerConfig(profiles=(profile,), percentage_of_nodes_to_score=0, pod_initial_backoff_seconds=1,
                             pod_max_backoff_seconds=10, parallelism=16, document={})
    return config, Registry.from_classes(classes)


def test_scheduler_preempts_and_binds_on_nominated_node():
    config, registry = _config()
    objects = [st_node("node1", {"cpu": "1", "memory": "1Gi"}),
               P("low1", node="node1", priority=LOW, req={"cpu": "500m"}, grace=30),
               P("low2", node="node1", priority=LOW, req={"cpu": "500m"}, grace=30),
               P("high", priority=HIGH, req={"cpu": "400m"})]
    sim = Simulation(config, registry, with_priority_classes(objects))
    result = sim.run()
    cluster = sim.cluster
    high = cluster.get("Pod", "high", "default")
    assert high.node_name == "node1"
    # evicting one low pod is enough: the first one in importance order is reprieved
    survivors = [p.name for p in cluster.list("Pod") if p.name.startswith("low")]
    assert survivors == ["low1"]
    failed = [e for e in cluster.events if e.reason == "FailedScheduling"]
    assert failed and failed[0].message == "0/1 nodes are available: 1 Insufficient cpu."
    preempted = [e for e in cluster.events if e.reason == "Preempted"]
    assert len(preempted) == 1 and preempted[0].message == f"Preempted by pod {high.uid} on node node1"
    assert result.end_time >= 30


def test_scheduler_reports_when_preemption_cannot_help():
    config, registry = _config()
    objects = [st_node("node1", {"cpu": "1"}), st_node("node2", {"cpu": "1"}),
               P("peer", node="node1", priority=HIGH, req={"cpu": "500m"}),
               P("other", node="node2", priority=HIGH, req={"cpu": "600m"}),
               P("low", node="node2", priority=LOW, req={"cpu": "100m"}),
               P("big", priority=HIGH, req={"cpu": "1"}),
               P("huge", priority=HIGH, req={"cpu": "2"})]
    sim = Simulation(config, registry, with_priority_classes(objects))
    sim.run()
    events = {e.object_key: e.message for e in sim.cluster.events if e.reason == "FailedScheduling"}
    assert events["default/big"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "1 Insufficient cpu, 1 No preemption victims found for incoming pod.")
    # more than a node's allocatable: UnschedulableAndUnresolvable everywhere
    assert events["default/huge"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.")
    assert not [e for e in sim.cluster.events if e.reason == "Preempted"]
    assert all(p.deletion_timestamp is None for p in sim.cluster.list("Pod"))


class WaitForever:
    """A Permit plugin holding pods labelled ``hold`` for 100 s."""

    name = "WaitForever"

    def __init__(self, args=None, handle=None) -> None:
        pass

    @hookimpl
    def permit(self, state, pod, node_name):
        if "hold" in pod.labels:
            return Status.wait(), 100.0
        return None, 0.0


def _waiting_pod_simulation():
    classes = [PrioritySort, NodeResourcesFit, DefaultPreemption, WaitForever, DefaultBinder]
    config = SchedulerConfig(profiles=(profile_for(classes),), percentage_of_nodes_to_score=0,
                             pod_initial_backoff_seconds=1, pod_max_backoff_seconds=10, parallelism=16, document={})
    objects = [st_node("node1", {"cpu": "1"}), P("held", labels={"hold": ""}, priority=LOW, req={"cpu": "800m"})]
    later = (P("high", priority=HIGH, req={"cpu": "500m"}),)
    steps = [Step(at=1.0, action="create", objects=tuple(named(p) for p in later))]
    sim = Simulation(config, Registry.from_classes(classes), with_priority_classes(objects, later), steps)
    sim.run(until=30)
    return sim


def test_scheduler_preempts_a_waiting_pod_in_memory():
    sim = _waiting_pod_simulation()
    cluster = sim.cluster
    held = cluster.get("Pod", "held", "default")
    assert held.node_name == "" and held.deletion_timestamp is None  # not deleted: back in the queue
    assert held.condition("DisruptionTarget") is None
    (event,) = [e for e in cluster.events if e.reason == "Preempted"]
    assert event.message == f"Preempted by pod {cluster.get('Pod', 'high', 'default').uid} on node node1 " \
                            "(in kube-scheduler memory)."
    assert not sim.scheduler.waiting_pods
    assert cluster.get("Pod", "high", "default").nominated_node_name == "node1"


def test_scheduler_binds_the_preemptor_of_a_waiting_pod():
    sim = _waiting_pod_simulation()
    assert sim.cluster.get("Pod", "high", "default").node_name == "node1"
