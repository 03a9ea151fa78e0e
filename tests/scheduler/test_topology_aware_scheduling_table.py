"""Upstream's topology-aware scheduling tables (test/integration/scheduler/podgroup/
topology_aware_scheduling): TestTopologyAwareSchedulingWithGangPolicy (12 cases, GangScheduling
on) and TestTopologyAwareSchedulingWithBasicPolicy (13 cases, each with GangScheduling on and
off), with GenericWorkload and TopologyAwareWorkloadScheduling on, through the embedded cluster
(``pod_group_steps`` says how the steps are played). Nodes of 2 CPUs labelled ``rack`` and
``zone``; group pods of 1 CPU (large: 2, unfittable: 3), priority 100; pods already bound
("assigned") consume the CPUs given. The placement a group gets follows upstream's default
placement scoring: PodGroupPodsCount, then NodeResourcesFit's MostAllocated over the placement."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.pod_group_steps import (BASIC, Delete, Expect, StepT, create, gang_policy, node, pod,
                                             pod_group, run_table, workload)

WORKLOAD = workload("workload", ("t1", gang_policy(1)))


def make_node(name: str, rack: str, zone: str) -> Any:
    return node(name, "2", {"rack": rack, "zone": zone})


def gang(name: str, key: str, min_count: int) -> Any:
    return pod_group(name, "workload", "t1", gang_policy(min_count), topology_key=key)


def basic(name: str, key: str) -> Any:
    return pod_group(name, "workload", "t1", BASIC, topology_key=key)


def group_pod(name: str, group: str, cpu: str = "1", zero_grace: bool = True) -> Any:
    return pod(name, 100, cpu=cpu, group=group, zero_grace=zero_grace)


def large(name: str, group: str) -> Any:
    return group_pod(name, group, "2", zero_grace=False)


def unfittable(name: str, group: str) -> Any:
    return group_pod(name, group, "3", zero_grace=False)


def assigned(name: str, node_name: str, cpu: str) -> Any:
    return pod(name, 100, cpu=cpu, zero_grace=True, node_name=node_name)


def on(pods: tuple[str, ...], *nodes: str) -> Expect:
    return Expect(on=(pods, frozenset(nodes)))


def one_rack(*pods: str) -> Expect:
    return Expect(one_domain=(pods, "rack"))


def scheduled(*pods: str) -> Expect:
    return Expect(scheduled=pods)


def unschedulable(*pods: str) -> Expect:
    return Expect(unschedulable=pods)


def pods(group: str, *names: str, make: Any = group_pod) -> tuple[Any, ...]:
    return tuple(make(n, group) for n in names)


P123 = ("p1", "p2", "p3")

GANG: list[tuple[str, tuple[StepT, ...]]] = [
    ("gang schedules on a single rack, when only one feasible rack is available", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack1", "rack-1", "zone-1"), make_node("node4-rack2", "rack-2", "zone-1"),
               make_node("node5-rack2", "rack-2", "zone-1"), make_node("node6-zone2", "rack-3", "zone-2")),
        create(assigned("existing1", "node4-rack2", "2")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
        scheduled(*P123), on(P123, "node1-rack1", "node2-rack1", "node3-rack1"))),
    ("gang remains pending when no feasible resources are found", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack2", "rack-2", "zone-1"), make_node("node4-zone2", "rack-3", "zone-2")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123, make=large)),
        unschedulable(*P123))),
    ("gang remains pending when resources are consumed by existing pods", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack1", "rack-1", "zone-1")),
        create(assigned("existing1", "node1-rack1", "2"), assigned("existing2", "node3-rack1", "2")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
        unschedulable(*P123),
        Delete(("existing1",)),
        scheduled(*P123))),
    ("gang schedules on a single rack, choosing placement with the highest score in default placement "
     "scoring algorithm", (
         create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
                make_node("node3-rack2", "rack-2", "zone-2"), make_node("node4-rack2", "rack-2", "zone-2"),
                make_node("node5-rack2", "rack-2", "zone-2"), make_node("node6-rack3", "rack-3", "zone-2")),
         create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
         scheduled(*P123), on(P123, "node1-rack1", "node2-rack1"))),
    ("gang schedules on a single rack, choosing placement with highest allocation percentage (default placement "
     "scoring algorithm) with pre-existing pods in cluster", (
         create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
                make_node("node3-rack2", "rack-2", "zone-2"), make_node("node4-rack2", "rack-2", "zone-2"),
                make_node("node5-rack2", "rack-2", "zone-2"), make_node("node6-rack3", "rack-3", "zone-2"),
                make_node("node7-rack3", "rack-3", "zone-2"), make_node("node8-rack3", "rack-3", "zone-2"),
                make_node("node9-rack4", "rack-4", "zone-2")),
         create(assigned("existing1", "node3-rack2", "2"), assigned("existing2", "node8-rack3", "1")),
         create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
         # rack1 (0+3)/4, rack2 (2+3)/6, rack3 (1+3)/6 allocated: rack2 wins
         scheduled(*P123), on(P123, "node3-rack2", "node4-rack2", "node5-rack2"))),
    ("two gangs schedule consecutively, each on a separate rack", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack1", "rack-1", "zone-1"), make_node("node4-rack2", "rack-2", "zone-1"),
               make_node("node5-rack2", "rack-2", "zone-1")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123, make=large)),
        scheduled(*P123),
        create(gang("pg2", "rack", 2)), create(*pods("pg2", "p4", "p5")),
        scheduled("p4", "p5"),
        on(P123, "node1-rack1", "node2-rack1", "node3-rack1"),
        on(("p4", "p5"), "node4-rack2", "node5-rack2"))),
    ("two gangs schedule consecutively, both on the same rack", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack1", "rack-1", "zone-1"), make_node("node4-rack2", "rack-2", "zone-1")),
        create(gang("pg1", "rack", 2)), create(large("p1", "pg1"), group_pod("p2", "pg1")),
        create(gang("pg2", "rack", 3)), create(*pods("pg2", "p3", "p4", "p5")),
        scheduled("p1", "p2"), on(("p1", "p2"), "node1-rack1", "node2-rack1", "node3-rack1"),
        scheduled("p3", "p4", "p5"), on(("p3", "p4", "p5"), "node1-rack1", "node2-rack1", "node3-rack1"))),
    ("two gangs schedule consecutively, different topology keys", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack2", "rack-2", "zone-1"), make_node("node4-zone2", "rack-3", "zone-2"),
               make_node("node5-zone2", "rack-3", "zone-2"), make_node("node6-zone2", "rack-3", "zone-2")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123, make=large)),
        scheduled(*P123),
        create(gang("pg2", "zone", 3)), create(*pods("pg2", "p4", "p5", "p6", make=large)),
        scheduled("p4", "p5", "p6"),
        on(P123, "node4-zone2", "node5-zone2", "node6-zone2"),
        on(("p4", "p5", "p6"), "node1-rack1", "node2-rack1", "node3-rack2"))),
    ("two gangs schedule consecutively, only one fits in the cluster", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
        scheduled(*P123),
        create(gang("pg2", "rack", 2)), create(*pods("pg2", "p4", "p5")),
        on(P123, "node1-rack1", "node2-rack1"),
        unschedulable("p4", "p5"))),
    ("gang with minCount < pod count schedules on a single rack", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack2", "rack-2", "zone-1"), make_node("node4-rack2", "rack-2", "zone-1")),
        create(gang("pg1", "rack", 2)), create(*pods("pg1", *P123)),
        scheduled(*P123), one_rack(*P123))),
    ("gang with minCount < pod count schedules on a single rack, choosing smaller rack", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack1", "rack-1", "zone-1"), make_node("node4-rack2", "rack-2", "zone-1"),
               make_node("node5-rack2", "rack-2", "zone-1"), make_node("node6-rack3", "rack-3", "zone-2")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
        scheduled(*P123),
        create(group_pod("p4", "pg1")),
        scheduled("p4"),
        # rack1 and rack2 both fit the 3 pods; MostAllocated prefers rack2
        on(("p1", "p2", "p3", "p4"), "node4-rack2", "node5-rack2"),
        create(group_pod("p5", "pg1")),
        unschedulable("p5"))),
    ("gang does not schedule on a single rack when preemption could free up enough resources", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1")),
        create(assigned("existing1", "node2-rack1", "2")),
        create(gang("pg1", "rack", 3)), create(*pods("pg1", *P123)),
        unschedulable(*P123))),
]

BASIC_CASES: list[tuple[str, tuple[StepT, ...]]] = [
    ("basic podgroup schedules on the only rack in the cluster", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1")),
        create(basic("pg1", "rack")), create(*pods("pg1", *P123)),
        scheduled(*P123), on(P123, "node1-rack1", "node2-rack1"))),
    ("basic podgroup schedules all pods on a single rack, when there are multiple racks fitting in the cluster", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack2", "rack-2", "zone-1"), make_node("node4-rack2", "rack-2", "zone-1"),
               make_node("node5-zone2", "rack-3", "zone-2"), make_node("node6-zone2", "rack-3", "zone-2")),
        create(basic("pg1", "rack")), create(*pods("pg1", *P123)),
        scheduled(*P123), one_rack(*P123))),
    ("basic podgroup cannot fit on a single rack, no pods get scheduled on a different rack", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack2", "rack-2", "zone-1")),
        create(basic("pg1", "rack")), create(*pods("pg1", *P123)),
        scheduled("p1", "p2"), unschedulable("p3"), one_rack("p1", "p2"))),
    ("basic podgroup does not schedule at all when no pods fit", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack2", "rack-2", "zone-1")),
        create(basic("pg1", "rack")), create(*pods("pg1", "p1", "p2", make=unfittable)),
        unschedulable("p1", "p2"))),
    ("basic podgroup schedules only some pods when others don't fit on any node", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack2", "rack-2", "zone-1")),
        create(basic("pg1", "rack")), create(unfittable("p1", "pg1"), group_pod("p2", "pg1")),
        scheduled("p2"), unschedulable("p1"))),
    ("basic podgroup schedules on a single rack, choosing placement with highest allocation percentage (default "
     "placement scoring algorithm)", (
         create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
                make_node("node3-rack2", "rack-2", "zone-2"), make_node("node4-rack2", "rack-2", "zone-2"),
                make_node("node5-rack2", "rack-2", "zone-2")),
         create(basic("pg1", "rack")), create(*pods("pg1", *P123)),
         scheduled(*P123), on(P123, "node1-rack1", "node2-rack1"))),
    ("basic podgroup schedules on a single rack, choosing placement with highest allocation percentage with "
     "pre-existing pods", (
         create(*(make_node(f"node{i}-rack1", "rack-1", "zone-1") for i in (1, 2, 3)),
                *(make_node(f"node{i}-rack2", "rack-2", "zone-2") for i in (4, 5, 6)),
                *(make_node(f"node{i}-rack3", "rack-3", "zone-2") for i in (7, 8, 9, 10))),
         create(assigned("existing1", "node1-rack1", "1"), assigned("existing2", "node5-rack2", "1"),
                assigned("existing3", "node6-rack2", "1")),
         create(basic("pg1", "rack")), create(*pods("pg1", *P123)),
         scheduled(*P123), on(P123, "node4-rack2", "node5-rack2", "node6-rack2"))),
    ("basic podgroup schedules on a single rack, choosing best scoring placement that will not fit all podgroup", (
        create(*(make_node(f"node{i}-rack1", "rack-1", "zone-1") for i in (1, 2, 3, 4)),
               make_node("node5-rack2", "rack-2", "zone-1")),
        create(assigned("existing1", "node1-rack1", "2")),
        create(basic("pg1", "rack")),
        create(group_pod("p1", "pg1")), scheduled("p1"),
        create(*pods("pg1", "p2", "p3")),
        # placement scores from the first pod: rack1 3/8, rack2 1/2 allocated
        scheduled("p2"), on(("p1", "p2"), "node5-rack2"), unschedulable("p3"))),
    ("two basic podgroups schedule consecutively, each on a single rack", (
        create(*(make_node(f"node{i}-rack1", "rack-1", "zone-1") for i in (1, 2, 3)),
               make_node("node4-rack2", "rack-2", "zone-1")),
        create(basic("pg1", "rack")), create(*pods("pg1", "p1", "p2")),
        create(basic("pg2", "rack")), create(*pods("pg2", "p3", "p4")),
        scheduled("p1", "p2"), on(("p1", "p2"), "node4-rack2"),
        scheduled("p3", "p4"), on(("p3", "p4"), "node1-rack1", "node2-rack1", "node3-rack1"))),
    ("two basic podgroups schedule consecutively on the only rack", (
        create(*(make_node(f"node{i}-rack1", "rack-1", "zone-1") for i in (1, 2, 3))),
        create(basic("pg1", "rack")), create(*pods("pg1", "p1", "p2")),
        create(basic("pg2", "rack")), create(*pods("pg2", "p3", "p4", "p5")),
        scheduled("p1", "p2", "p3", "p4", "p5"))),
    ("two basic podgroups schedule consecutively, different topology keys", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-zone2", "rack-2", "zone-2"),
               make_node("node3-zone2", "rack-2", "zone-2"), make_node("node4-zone2", "rack-3", "zone-2"),
               make_node("node5-zone2", "rack-3", "zone-2")),
        create(basic("pg1", "rack")), create(*pods("pg1", "p1", "p2")),
        create(basic("pg2", "zone")), create(*pods("pg2", "p3", "p4", "p5", make=large)),
        scheduled("p1", "p2", "p3", "p4", "p5"),
        on(("p1", "p2"), "node1-rack1"),
        on(("p3", "p4", "p5"), "node2-zone2", "node3-zone2", "node4-zone2", "node5-zone2"))),
    ("two basic podgroups schedule consecutively, one does not fit in the assigned rack", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack1", "rack-1", "zone-1"),
               make_node("node3-rack2", "rack-2", "zone-1")),
        create(basic("pg1", "rack")),
        create(group_pod("p1", "pg1")), scheduled("p1"),
        create(*pods("pg1", "p2", "p3")),
        scheduled("p2"), unschedulable("p3"), on(("p1", "p2"), "node3-rack2"),
        create(basic("pg2", "rack")), create(*pods("pg2", "p4", "p5", "p6")),
        scheduled("p4", "p5", "p6"), on(("p4", "p5", "p6"), "node1-rack1", "node2-rack1"))),
    ("basic podgroup continues to schedule pods when more resources become available", (
        create(make_node("node1-rack1", "rack-1", "zone-1"), make_node("node2-rack2", "rack-2", "zone-1")),
        create(assigned("existing1", "node1-rack1", "1")), scheduled("existing1"),
        create(basic("pg1", "rack")),
        create(group_pod("p1", "pg1")), scheduled("p1"),
        create(group_pod("p2", "pg1")),
        on(("p1",), "node1-rack1"), unschedulable("p2"),
        Delete(("existing1",)),
        scheduled("p1", "p2"), on(("p1", "p2"), "node1-rack1"))),
]


def _runs() -> list[Any]:
    runs = [pytest.param(steps, True, id=name) for name, steps in GANG]
    runs += [pytest.param(steps, gang_on, id=f"{name} (GangScheduling enabled: {gang_on})")
             for gang_on in (True, False) for name, steps in BASIC_CASES]
    return runs


@pytest.mark.parametrize("steps, gang_scheduling", _runs())
def test_topology_aware_scheduling(steps: tuple[StepT, ...], gang_scheduling: bool) -> None:
    run_table([WORKLOAD], steps, "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,"
              f"GangScheduling={str(gang_scheduling).lower()}")


def test_the_tables_have_upstreams_cases():
    """12 gang cases and 13 basic ones, the basic ones with GangScheduling on and off."""
    assert (len(GANG), len(BASIC_CASES), len(_runs())) == (12, 13, 38)
