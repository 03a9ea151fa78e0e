"""Upstream's TestPodGroupScheduling (test/integration/scheduler/podgroup), its 15 cases each
with TopologyAwareWorkloadScheduling on and off (the two that need it only on): 28 runs through
the embedded cluster (``pod_group_steps`` says how the steps are played). One node of 4 CPUs in
zone1; gangs pg1 and pg2 of minCount 3 and priority 100, mid-pg of minCount 2 and priority 50
(with or without a zone constraint), a basic pg1; 1-CPU pods, blockers of 2 CPUs."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from tests.scheduler.pod_group_steps import (BASIC, Delete, Expect, StepT, create, gang_policy, node, pod,
                                             pod_group, run_table, workload)

ZONE = "topology.kubernetes.io/zone"


NODE = node("node", "4", {ZONE: "zone1"})
WORKLOADS = [workload("workload", ("t1", gang_policy(3)), ("t2", BASIC), ("t-mid", gang_policy(2))),
             workload("other-workload", ("t", gang_policy(3)))]


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


@attrs.frozen
class Case:
    name: str
    steps: tuple[StepT, ...]
    workload_aware_preemption: bool = False
    requires_tas: bool = False


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
        workload_aware_preemption=True),
    Case("gang schedules with partial workload-aware preemption", (
        create(VERY_LOW_P1, VERY_LOW_P2, LOW_P1, LOW_P2),
        Expect(scheduled=("very-low-p1", "very-low-p2", "low-p1", "low-p2")),
        create(MID_PG), create(MID_P1, MID_P2),
        Expect(scheduled=("mid-p1", "mid-p2", "low-p1", "low-p2")),
        Expect(removed=("very-low-p1", "very-low-p2"))),
        workload_aware_preemption=True),
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
            out.append(pytest.param(case, tas, id=f"{case.name} (TopologyAwareWorkloadScheduling enabled: {tas})"))
    return out


@pytest.mark.parametrize("case, tas", _runs())
def test_pod_group_scheduling(case: Case, tas: bool) -> None:
    run_table([NODE, *WORKLOADS], case.steps,
              f"GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling={str(tas).lower()},"
              f"WorkloadAwarePreemption={str(case.workload_aware_preemption).lower()}")


def test_the_table_has_upstreams_runs():
    """15 cases, each with the topology gate on and off, but the two that require it: 28 runs."""
    assert len(CASES) == 15 and len(_runs()) == 28
