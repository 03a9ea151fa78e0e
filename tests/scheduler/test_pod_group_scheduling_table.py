"""Upstream's TestPodGroupScheduling (test/integration/scheduler/podgroup), its 15 cases each
with TopologyAwareWorkloadScheduling on and off (the two that need it only on): 28 runs through
the embedded cluster. One node of 4 CPUs in zone1; gangs pg1 and pg2 of minCount 3 and priority
100, mid-pg of minCount 2 and priority 50 (with or without a zone constraint), a basic pg1;
1-CPU pods, blockers of 2 CPUs.

Upstream's steps act (create, delete) or wait for an outcome; here a wait is checked at the last
moment before the next action, once the run has settled. The API server of upstream's
integration tests runs without the Priority admission plugin (pods carry their priority), and
so does the cluster here."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedfw.api.load import parse_object
from kschedfw.api.workload import POD_GROUP_KIND
from kschedfw.cluster.apiserver.podadmission import ADMISSION_PLUGINS
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.simulation import Simulation

WAP_PENDING = "workload-aware preemption not yet called by the cycle"
ZONE = "topology.kubernetes.io/zone"


def _template(name: str, policy: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": policy}


def gang_policy(n: int) -> dict[str, Any]:
    return {"gang": {"minCount": n}}


BASIC: dict[str, Any] = {"basic": {}}

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node", "labels": {ZONE: "zone1"}},
        "status": {"allocatable": {"cpu": "4", "pods": "32"}, "capacity": {"cpu": "4", "pods": "32"}}}
WORKLOADS = [
    {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "workload"},
     "spec": {"podGroupTemplates": [_template("t1", gang_policy(3)), _template("t2", BASIC),
                                    _template("t-mid", gang_policy(2))]}},
    {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "other-workload"},
     "spec": {"podGroupTemplates": [_template("t", gang_policy(3))]}},
]


def pod_group(name: str, workload: str, template: str, policy: dict[str, Any], *,
              priority: int | None = None, topology_key: str | None = None) -> Any:
    spec: dict[str, Any] = {"podGroupTemplateRef": {"workload": {"workloadName": workload,
                                                                 "podGroupTemplateName": template}},
                            "schedulingPolicy": policy}
    if priority is not None:
        spec["priority"] = priority
    if topology_key:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    return parse_object({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                         "metadata": {"name": name}, "spec": spec})


def pod(name: str, priority: int, *, cpu: str = "1", group: str | None = None, zero_grace: bool = False) -> Any:
    spec: dict[str, Any] = {"priority": priority,
                            "containers": [{"name": "c", "image": "image", "resources": {"requests": {"cpu": cpu}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if zero_grace:
        spec["terminationGracePeriodSeconds"] = 0
    return parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


GANG_PG = pod_group("pg1", "workload", "t1", gang_policy(3), priority=100)
OTHER_GANG_PG = pod_group("pg2", "other-workload", "t", gang_policy(3), priority=100)
BASIC_PG = pod_group("pg1", "workload", "t2", BASIC)
MID_PG = pod_group("mid-pg", "workload", "t-mid", gang_policy(2), priority=50)
MID_PG_IN_A_ZONE = pod_group("mid-pg", "workload", "t-mid", gang_policy(2), priority=50, topology_key=ZONE)

P1, P2, P3, P4 = (pod(f"p{i}", 100, group="pg1") for i in range(1, 5))
BLOCKER = pod("blocker", 100, cpu="2", zero_grace=True)
SMALL_BLOCKER = pod("small-blocker", 100, zero_grace=True)
LOW_PRIORITY_BLOCKER = pod("low-priority-blocker", 10, cpu="2", zero_grace=True)
LOW_P1, LOW_P2, LOW_P3, LOW_P4 = (pod(f"low-p{i}", 10, zero_grace=True) for i in range(1, 5))
VERY_LOW_P1, VERY_LOW_P2 = (pod(f"very-low-p{i}", 5, zero_grace=True) for i in (1, 2))
MID_P1, MID_P2 = (pod(f"mid-p{i}", 50, group="mid-pg") for i in (1, 2))
OTHER_P1, OTHER_P2, OTHER_P3 = (pod(f"other-p{i}", 100, group="pg2") for i in range(1, 4))


# ----------------------------------------------------------------------------- steps

@attrs.frozen
class Create:
    objects: tuple[Any, ...]


@attrs.frozen
class Delete:
    names: tuple[str, ...]


@attrs.frozen
class Expect:
    """What upstream waits for: pods gated at PreEnqueue (in the unschedulable pool with no
    condition), unschedulable, scheduled or removed; ``some`` scheduled and unschedulable
    counts among ``of``; the PodGroupScheduled condition of a group."""

    gated: tuple[str, ...] = ()
    unschedulable: tuple[str, ...] = ()
    scheduled: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    some: tuple[int, int] | None = None
    of: tuple[str, ...] = ()
    condition: tuple[str, str, str] | None = None  # (group, status, reason)


def create(*objects: Any) -> Create:
    return Create(objects)


@attrs.frozen
class Case:
    name: str
    steps: tuple[Create | Delete | Expect, ...]
    workload_aware_preemption: bool = False
    requires_tas: bool = False
    #: needs workload-aware preemption run by the cycle (xfail until it is)
    needs_wap: bool = False


CASES = [
    Case("gang schedules when pod group and resources are available", (
        create(GANG_PG), create(P1, P2, P3),
        Expect(scheduled=("p1", "p2", "p3")),
        Expect(condition=("pg1", "True", "Scheduled")))),
    Case("gang waits for quorum to start, then schedules", (
        create(GANG_PG), create(P1, P2),
        Expect(gated=("p1", "p2")),
        create(P3),
        Expect(scheduled=("p1", "p2", "p3")))),
    Case("gang waits for pod group, then for resources, then schedules", (
        create(BLOCKER), Expect(scheduled=("blocker",)),
        create(P1, P2, P3), Expect(gated=("p1", "p2", "p3")),
        create(GANG_PG),
        Expect(unschedulable=("p1", "p2", "p3")),
        Expect(condition=("pg1", "False", "Unschedulable")),
        Delete(("blocker",)),
        Expect(scheduled=("p1", "p2", "p3")),
        Expect(condition=("pg1", "True", "Scheduled")))),
    Case("minCount is scheduled, but one pod from a gang remain unschedulable until the blocked resources "
         "are released", (
             create(SMALL_BLOCKER), Expect(scheduled=("small-blocker",)),
             create(P1, P2, P3, P4), create(GANG_PG),
             Expect(some=(3, 1), of=("p1", "p2", "p3", "p4")),
             Delete(("small-blocker",)),
             Expect(scheduled=("p1", "p2", "p3", "p4")))),
    Case("two gangs competing for the same resources shouldn't deadlock, reversed order", (
        create(GANG_PG), create(OTHER_GANG_PG), create(OTHER_P3, P3, OTHER_P2, P2, OTHER_P1, P1),
        Expect(scheduled=("other-p1", "other-p2", "other-p3")),
        Expect(unschedulable=("p1", "p2", "p3")))),
    Case("two gangs competing for the same resources shouldn't deadlock", (
        create(GANG_PG), create(OTHER_GANG_PG), create(P1, OTHER_P1, P2, OTHER_P2, P3, OTHER_P3),
        Expect(scheduled=("p1", "p2", "p3")),
        Expect(unschedulable=("other-p1", "other-p2", "other-p3")))),
    Case("gang schedules with preemption", (
        create(LOW_PRIORITY_BLOCKER), Expect(scheduled=("low-priority-blocker",)),
        create(GANG_PG), create(P1, P2, P3, P4),
        Expect(scheduled=("p1", "p2", "p3", "p4")),
        Expect(condition=("pg1", "True", "Scheduled")),
        Expect(removed=("low-priority-blocker",)))),
    Case("basic group schedules when pod group and resources are available, without gang enforcement", (
        create(BASIC_PG), create(P1), Expect(scheduled=("p1",)),
        create(P2, P3), Expect(scheduled=("p1", "p2", "p3")))),
    Case("basic group waits for pod group, part of it waits for resources, then schedules", (
        create(BLOCKER), Expect(scheduled=("blocker",)),
        create(P1, P2, P3), Expect(gated=("p1", "p2", "p3")),
        create(BASIC_PG),
        Expect(some=(2, 1), of=("p1", "p2", "p3")),
        Delete(("blocker",)),
        Expect(scheduled=("p1", "p2", "p3")))),
    Case("basic group schedules with preemption", (
        create(LOW_PRIORITY_BLOCKER), Expect(scheduled=("low-priority-blocker",)),
        create(BASIC_PG), create(P1, P2, P3, P4),
        Expect(scheduled=("p1", "p2", "p3", "p4")),
        Expect(removed=("low-priority-blocker",)))),
    # upstream's case of this name runs with WorkloadAwarePreemption off, as the one before
    Case("basic group schedules with workload-aware preemption", (
        create(LOW_PRIORITY_BLOCKER), Expect(scheduled=("low-priority-blocker",)),
        create(BASIC_PG), create(P1, P2, P3, P4),
        Expect(scheduled=("p1", "p2", "p3", "p4")),
        Expect(removed=("low-priority-blocker",)))),
    Case("gang schedules with workload-aware preemption", (
        create(LOW_P1, LOW_P2, LOW_P3, LOW_P4), Expect(scheduled=("low-p1", "low-p2", "low-p3", "low-p4")),
        create(GANG_PG), create(P1, P2, P3, P4),
        Expect(scheduled=("p1", "p2", "p3", "p4")),
        Expect(removed=("low-p1", "low-p2", "low-p3", "low-p4"))),
        workload_aware_preemption=True, needs_wap=True),
    Case("gang schedules with partial workload-aware preemption", (
        create(VERY_LOW_P1, VERY_LOW_P2, LOW_P1, LOW_P2),
        Expect(scheduled=("very-low-p1", "very-low-p2", "low-p1", "low-p2")),
        create(MID_PG), create(MID_P1, MID_P2),
        Expect(scheduled=("mid-p1", "mid-p2", "low-p1", "low-p2")),
        Expect(removed=("very-low-p1", "very-low-p2"))),
        workload_aware_preemption=True, needs_wap=True),
    Case("tas gang with constraint does not use pod by pod preemption", (
        create(VERY_LOW_P1, VERY_LOW_P2, LOW_P1, LOW_P2),
        Expect(scheduled=("very-low-p1", "very-low-p2", "low-p1", "low-p2")),
        create(MID_PG_IN_A_ZONE), create(MID_P1, MID_P2),
        Expect(unschedulable=("mid-p1", "mid-p2"))),
        requires_tas=True),
    Case("tas gang with constraint does not use workload preemption", (
        create(VERY_LOW_P1, VERY_LOW_P2, LOW_P1, LOW_P2),
        Expect(scheduled=("very-low-p1", "very-low-p2", "low-p1", "low-p2")),
        create(MID_PG_IN_A_ZONE), create(MID_P1, MID_P2),
        Expect(unschedulable=("mid-p1", "mid-p2"))),
        workload_aware_preemption=True, requires_tas=True),
]


def _runs() -> list[Any]:
    out = []
    for case in CASES:
        for tas in (True, False):
            if case.requires_tas and not tas:
                continue
            marks = [pytest.mark.xfail(strict=True, reason=WAP_PENDING)] if case.needs_wap else []
            out.append(pytest.param(case, tas, id=f"{case.name} (TopologyAwareWorkloadScheduling enabled: {tas})",
                                    marks=marks))
    return out


# ----------------------------------------------------------------------------- playing

SPACING = 100.0  # simulated seconds between actions: each settles before the next


def play(case: Case, tas: bool, until: float) -> Simulation:
    gates = FeatureGates.parse(f"GenericWorkload=true,GangScheduling=true,"
                               f"TopologyAwareWorkloadScheduling={str(tas).lower()},"
                               f"WorkloadAwarePreemption={str(case.workload_aware_preemption).lower()}")
    steps, at = [], 1.0
    for step in case.steps:
        if isinstance(step, Create):
            steps.append(Step(at, "create", step.objects))
        elif isinstance(step, Delete):
            steps.extend(Step(at, "delete", target={"kind": "Pod", "name": n, "namespace": "default"})
                         for n in step.names)
        else:
            continue
        at += SPACING
    registry = default_registry()
    sim = Simulation(default_config(registry, gates), registry, [parse_object(NODE), *map(parse_object, WORKLOADS)],
                     [s for s in steps if s.at <= until], feature_gates=gates,
                     admission_plugins=ADMISSION_PLUGINS - {"Priority"})
    sim.run()
    return sim


def checkpoints(case: Case) -> list[tuple[float, list[Expect]]]:
    """Each run of expectations with the moment it is checked at: just before the next action
    (the actions are SPACING apart from 1s), or once everything has settled."""
    out: list[tuple[float, list[Expect]]] = []
    actions = 0
    pending: list[Expect] = []
    for step in case.steps:
        if isinstance(step, Expect):
            pending.append(step)
            continue
        if pending:
            out.append((1.0 + actions * SPACING - 1.0, pending))
            pending = []
        actions += 1
    if pending:
        out.append((1e12, pending))
    return out


def check(sim: Simulation, expect: Expect) -> None:
    pods = {p.name: p for p in sim.cluster.list("Pod")}

    def scheduled(name: str) -> bool:
        return name in pods and bool(pods[name].node_name)

    def unschedulable(name: str) -> bool:
        cond = pods[name].condition("PodScheduled") if name in pods else None
        return not scheduled(name) and cond is not None and cond.reason == "Unschedulable"

    pool = {qpi.pod.name for qpi in sim.scheduler.queue.unschedulable_pods.values()}
    for name in expect.gated:
        assert name in pool and pods[name].condition("PodScheduled") is None, f"{name} not gated at PreEnqueue"
    for name in expect.unschedulable:
        assert unschedulable(name), f"{name} not unschedulable"
    for name in expect.scheduled:
        assert scheduled(name), f"{name} not scheduled"
    for name in expect.removed:
        assert name not in pods, f"{name} not removed"
    if expect.some is not None:
        got = (sum(map(scheduled, expect.of)), sum(map(unschedulable, expect.of)))
        assert got == expect.some, f"(scheduled, unschedulable) of {expect.of}"
    if expect.condition is not None:
        name, status, reason = expect.condition
        group = sim.cluster.get(POD_GROUP_KIND, name, "default")
        cond = group.condition("PodGroupScheduled") if group is not None else None
        assert cond is not None and (cond.status, cond.reason) == (status, reason), f"{name}: {cond}"


@pytest.mark.parametrize("case, tas", _runs())
def test_pod_group_scheduling(case: Case, tas: bool) -> None:
    for until, expectations in checkpoints(case):
        sim = play(case, tas, until)
        for expect in expectations:
            check(sim, expect)


def test_the_table_has_upstreams_runs():
    """15 cases, each with the topology gate on and off, but the two that require it: 28 runs."""
    assert len(CASES) == 15 and len(_runs()) == 28
