"""Upstream's TestPodGroupSchedulingAlgorithm (pkg/scheduler/schedule_one_podgroup_test.go): the
group p1, p2, p3 tried on node1 by the pod-group algorithm with fakePodGroupPlugin's answers,
with TopologyAwareWorkloadScheduling off and on (the placement algorithm over the one placement
of all nodes; the four preemption cases are skipped there, as upstream skips them). Each case
states the group's status code and whether it waits on preemption, each pod's status code,
node (node1 when it fit or would after preemption, else none) and Permit status, and which pods
need preemption. A pod after an Error is not tried."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.status import Code
from tests.scheduler.pod_group_fakes import (ERROR, NODE, OK, UNRESOLVABLE, UNSCHEDULABLE, WAIT, fake_plugin,
                                             gathered, scheduler_with)

ALL_OK = {"p1": OK, "p2": OK, "p3": OK}
ALL_UNSCHEDULABLE = {"p1": UNSCHEDULABLE, "p2": UNSCHEDULABLE, "p3": UNSCHEDULABLE}
ALL = ("p1", "p2", "p3")


@attrs.frozen
class Case:
    name: str
    filter: dict[str, Code | None]
    permit: dict[str, Code | None] = attrs.field(factory=dict)
    post_filter: dict[str, Code | None] = attrs.field(factory=dict)
    nominate: tuple[str, ...] = ()
    group: Code = Code.Success
    waiting_on_preemption: bool = False
    pods: dict[str, Code | None] = attrs.field(factory=dict)  # the pods tried, with their status codes
    preemption: dict[str, bool] = attrs.field(factory=dict)
    skip_for_tas: bool = False


CASES = [
    Case("All pods feasible", ALL_OK, ALL_OK, pods=ALL_OK),
    Case("All pods feasible, two waiting", ALL_OK, {"p1": WAIT, "p2": WAIT, "p3": OK}, pods=ALL_OK),
    Case("All pods feasible, but all waiting", ALL_OK, {"p1": WAIT, "p2": WAIT, "p3": WAIT},
         group=Code.Unschedulable, pods=ALL_OK),
    Case("All pods feasible, but last waiting", ALL_OK, {"p1": OK, "p2": OK, "p3": WAIT}, pods=ALL_OK),
    Case("All pods feasible, one waiting, one unschedulable", ALL_OK, {"p1": WAIT, "p2": UNSCHEDULABLE, "p3": OK},
         pods={"p1": OK, "p2": UNSCHEDULABLE, "p3": OK}),
    Case("All pods require preemption", ALL_UNSCHEDULABLE, ALL_OK, post_filter=ALL_OK, nominate=ALL,
         group=Code.Unschedulable, waiting_on_preemption=True, pods=ALL_UNSCHEDULABLE,
         preemption=dict.fromkeys(ALL, True), skip_for_tas=True),
    Case("All pods require preemption, but waiting", ALL_UNSCHEDULABLE, {"p1": WAIT, "p2": WAIT, "p3": WAIT},
         post_filter=ALL_OK, nominate=ALL, group=Code.Unschedulable, pods=ALL_UNSCHEDULABLE,
         preemption=dict.fromkeys(ALL, True), skip_for_tas=True),
    Case("One pod requires preemption, but waiting, two are feasible", {"p1": UNSCHEDULABLE, "p2": OK, "p3": OK},
         {"p1": WAIT, "p2": WAIT, "p3": OK}, post_filter={"p1": OK}, nominate=("p1",), group=Code.Unschedulable,
         waiting_on_preemption=True, pods={"p1": UNSCHEDULABLE, "p2": OK, "p3": OK},
         preemption={"p1": True, "p2": False, "p3": False}, skip_for_tas=True),
    Case("One pod unschedulable, one requires preemption, one feasible",
         {"p1": UNSCHEDULABLE, "p2": UNSCHEDULABLE, "p3": OK}, {"p1": OK, "p3": OK},
         post_filter={"p1": OK, "p2": UNSCHEDULABLE}, nominate=("p1",), group=Code.Unschedulable,
         waiting_on_preemption=True, pods={"p1": UNSCHEDULABLE, "p2": UNSCHEDULABLE, "p3": OK},
         preemption={"p1": True, "p2": False, "p3": False}, skip_for_tas=True),
    Case("All pods unschedulable", {"p1": UNRESOLVABLE, "p2": UNSCHEDULABLE, "p3": UNSCHEDULABLE},
         group=Code.Unschedulable, pods=ALL_UNSCHEDULABLE),
    Case("Any filter returned Error", {"p1": OK, "p2": ERROR, "p3": OK}, ALL_OK, group=Code.Error,
         pods={"p1": OK, "p2": ERROR}),
    Case("Any permit returned Error", ALL_OK, {"p1": OK, "p2": ERROR, "p3": OK}, group=Code.Error,
         pods={"p1": OK, "p2": ERROR}),
    # upstream nominates p1 here without a PostFilter status for it: its fake then answers with
    # its default failure, so p1 does not wait on preemption
    Case("Any filter returned Error while waiting on preemption", {"p1": UNSCHEDULABLE, "p2": ERROR, "p3": OK},
         ALL_OK, nominate=("p1",), group=Code.Error, pods={"p1": UNSCHEDULABLE, "p2": ERROR}),
    Case("Any permit returned Error while waiting on preemption", {"p1": UNSCHEDULABLE, "p2": OK, "p3": OK},
         {"p1": OK, "p2": ERROR, "p3": OK}, nominate=("p1",), group=Code.Error,
         pods={"p1": UNSCHEDULABLE, "p2": ERROR}),
]


def _runs() -> list[Any]:
    return [pytest.param(case, tas, id=f"{case.name} (TopologyAwareWorkloadScheduling={str(tas).lower()})")
            for tas in (True, False) for case in CASES if not (tas and case.skip_for_tas)]


def code(status: Any) -> Code:
    return Code.Success if status is None else status.code


@pytest.mark.parametrize("case, tas", _runs())
def test_pod_group_scheduling_algorithm(case: Case, tas: bool) -> None:
    plugin = fake_plugin(filter=case.filter, post_filter=case.post_filter, nominate=case.nominate,
                         permit=case.permit)
    sim = scheduler_with(plugin, topology_aware=tas)
    group = gathered(sim)
    cycle = sim.scheduler.scheduling
    pod_groups = cycle.pod_groups
    fwk = cycle.frameworks["default-scheduler"]
    if tas:
        result = pod_groups.placement_algorithm(fwk, CycleState(), group, "default", "pg")
    else:
        result = pod_groups.algorithm(fwk, CycleState(), group)

    assert code(result.status) is case.group
    assert result.waiting_on_preemption is case.waiting_on_preemption
    got = {r.pod.name: code(r.status) for r in result.pod_results}
    assert got == {name: Code.Success if c is None else c for name, c in case.pods.items()}
    for r in result.pod_results:
        name = r.pod.name
        if code(r.status) is Code.Success or r.requires_preemption:
            assert r.node_name == NODE
            if name in case.permit:
                assert code(r.permit_status) is (Code.Success if case.permit[name] is None else case.permit[name])
        else:
            assert r.node_name == "" and r.permit_status is None
        if name in case.preemption:
            assert r.requires_preemption is case.preemption[name]
    assert not any(cycle.cache.is_assumed(q.pod.with_node(NODE)) for q in group)  # the trial is undone


def test_the_table_has_upstreams_runs():
    """14 cases, the four of preemption without the topology gate only: 24 runs."""
    assert len(CASES) == 14 and len(_runs()) == 24
