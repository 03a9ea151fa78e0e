"""Upstream's tests of how the pod-group cycle gathers and vets its group
(pkg/scheduler/schedule_one_podgroup_test.go): TestPodGroupInfoForPod (2 cases: the popped pod's
group comes from the cache's unscheduled pods that are still queued, sorted by priority, highest
first, then by first attempt), TestFrameworkForPodGroup (3 cases: one profile for the whole group,
or every pod fails with an error), TestSkipPodGroupPodSchedule (a deleting pod and an assumed one
are dropped) and TestPodGroupCycle_UpdateSnapshotError (the snapshot's error is every pod's
failure)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import attrs
import pytest

from kschedfw.api.load import parse_object
from kschedfw.cluster.apiserver.podadmission import ADMISSION_PLUGINS
from kschedfw.framework.registry import Registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import QueuedPodInfo
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for
from kschedfw.testing.profiles import profile_for
from tests.scheduler.pod_group_fakes import gathered, scheduler_with


def pod(name: str, *, priority: int = 0, scheduler: str = "default-scheduler", namespace: str = "default") -> Any:
    return parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                         "spec": {"priority": priority, "schedulerName": scheduler,
                                  "schedulingGroup": {"podGroupName": "pg"},
                                  "containers": [{"name": "c", "image": "image"}]}})


def simulation(pods: list[Any], *scheduler_names: str) -> Simulation:
    """Pods of group ``pg`` (priorities as given, no Priority admission) and one profile per name."""
    classes = [PrioritySort, DefaultBinder]
    registry = Registry.from_classes(classes)
    config = config_for(classes, registry=registry)
    config = attrs.evolve(config, profiles=tuple(profile_for(classes, registry=registry, scheduler_name=n)
                                                 for n in scheduler_names or ("default-scheduler",)))
    gates = FeatureGates.parse("GenericWorkload=true")
    return Simulation(config, registry, pods, feature_gates=gates, admission_plugins=ADMISSION_PLUGINS - {"Priority"})


# ------------------------------------------------------------------ TestPodGroupInfoForPod

@pytest.mark.parametrize("name, unscheduled, queued, want", [
    ("Success with multiple pods, sorted by priority and timestamp", ("p2", "p3", "p4"), ("p2", "p3", "p4"),
     ["p2", "p4", "p3", "p1"]),
    ("Pods not in state or not in queue are skipped", ("p2", "p3"), ("p2", "p4"), ["p2", "p1"]),
])
def test_pod_group_info_for_pod(name, unscheduled, queued, want):
    pods = [pod("p1", priority=100, namespace="ns1"), pod("p2", priority=200, namespace="ns1"),
            pod("p3", priority=150, namespace="ns1"), pod("p4", priority=150, namespace="ns1")]
    sim = simulation(pods)
    cycle = sim.scheduler.scheduling
    cycle.cluster.deliver()
    by_name = {p.name: sim.cluster.get("Pod", p.name, "ns1") for p in pods}
    first = cycle.queue.pop_specific_pod(by_name["p1"])
    for other in ("p2", "p3", "p4"):
        if other not in unscheduled:
            cycle.cache.remove_pod_group_member(by_name[other])
        if other not in queued:
            cycle.queue.pop_specific_pod(by_name[other])
    # first attempts: p1 now, p2 and p4 a second later, p3 two seconds later
    first.initial_attempt_timestamp = 100.0
    for other, at in (("p2", 101.0), ("p3", 102.0), ("p4", 101.0)):
        queued_info = cycle.queue.get_pod(f"ns1/{other}")
        if queued_info is not None:
            queued_info.initial_attempt_timestamp = at
    group = cycle.pod_groups.gather(first, "pg")
    assert [q.pod.name for q in group] == want


# ------------------------------------------------------------------ TestFrameworkForPodGroup

def recording_failures(sim: Simulation) -> list[tuple[str, Any]]:
    """The (pod, status) of each failure the cycle hands on, in order (the pods still go on to
    the scheduler's failure handler)."""
    cycle = sim.scheduler.scheduling
    failures: list[tuple[str, Any]] = []
    handle_failure = cycle.handle_failure

    def failure_handler(fwk, qpi, status, nominating_info, number):
        failures.append((qpi.pod.name, status))
        handle_failure(fwk, qpi, status, nominating_info, number)

    cycle.handle_failure = failure_handler
    return failures


@pytest.mark.parametrize("name, schedulers, profiles, error", [
    ("success for same scheduler name", ("sched1", "sched1"), ("sched1",), None),
    ("failure for different scheduler names", ("sched1", "sched2"), ("sched1", "sched2"),
     'all pods in a single pod group should have the same .spec.schedulerName set, got: "sched2" and "sched1"'),
    ("failure when profile not found", ("sched1",), ("other",), None),
])
def test_framework_for_pod_group(name, schedulers, profiles, error):
    """One profile for the whole group; pods of different schedulers each fail with the error. A
    pod of no profile is not this scheduler's: it is only marked done (upstream logs it)."""
    sim = simulation([pod(f"p{i}", scheduler=s) for i, s in enumerate(schedulers, 1)], *profiles)
    failures = recording_failures(sim)
    cycle = sim.scheduler.scheduling
    cycle.cluster.deliver()
    p1 = sim.cluster.get("Pod", "p1", "default")
    first = cycle.queue.pop_specific_pod(p1) or QueuedPodInfo(pod=p1)
    cycle.pod_groups.schedule(first, "pg")
    if error is not None:
        assert [(n, s.code, s.message()) for n, s in failures] == [("p1", Code.Error, error), ("p2", Code.Error, error)]
    elif name.startswith("success"):  # tried by sched1's profile: no node exists, so both are rejected
        assert [(n, s.is_rejected(), s.message()) for n, s in failures] == [
            ("p1", True, "no nodes available to schedule pods"), ("p2", True, "no nodes available to schedule pods")]
    else:
        assert failures == []


# ------------------------------------------------------------------ TestSkipPodGroupPodSchedule

def test_skip_pod_group_pod_schedule():
    """p2 is being deleted, p3 is assumed already: only p1 is left to schedule."""
    sim = scheduler_with()
    group = gathered(sim)
    cycle = sim.scheduler.scheduling
    p2 = next(q for q in group if q.pod.name == "p2")
    p2.pod = attrs.evolve(p2.pod, deletion_timestamp=_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc))
    p3 = next(q for q in group if q.pod.name == "p3")
    cycle.cache.assume_pod(p3.pod.with_node("node1"))
    assert [q.pod.name for q in group if not cycle.pod_groups._skip(q)] == ["p1"]


# ------------------------------------------------------------------ TestPodGroupCycle_UpdateSnapshotError

def test_pod_group_cycle_update_snapshot_error():
    """The snapshot cannot be updated: every pod of the group fails with that error."""
    sim = scheduler_with(pods=("p1", "p2"))
    cycle = sim.scheduler.scheduling
    failures = recording_failures(sim)

    def broken_snapshot():
        raise RuntimeError("update snapshot error")

    cycle.cluster.deliver()
    first = cycle.queue.pop()
    cycle.cache.update_snapshot = broken_snapshot
    cycle.pod_groups.schedule(first, "pg")
    assert [(n, s.code, s.message()) for n, s in failures] == [
        ("p1", Code.Error, "update snapshot error"), ("p2", Code.Error, "update snapshot error")]
