"""Upstream's TestSubmitPodGroupAlgorithmResult (pkg/scheduler/schedule_one_podgroup_test.go): a
given algorithm result for the group p1, p2, p3 submitted by the pod-group cycle on a profile of
PrioritySort and DefaultBinder only. Each case states the pods bound, the pods handed to the
failure handler with a nominated node ("preempting") and without one ("failed"), and the
PodGroupScheduled condition the group is left with (a True one is never taken back)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedfw.cycle import CLEAR_NOMINATION, ScheduleResult
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NominatingInfo, NominatingMode
from kschedfw.scheduler.schedule_one import new_cycle_state
from kschedfw.scheduler.schedule_one_podgroup import GroupResult, PodResult
from tests.scheduler.pod_group_fakes import NODE, gathered, scheduler_with

NOMINATED = NominatingInfo(NODE, NominatingMode.Override)
ALL = frozenset({"p1", "p2", "p3"})
NONE: frozenset[str] = frozenset()
SCHEDULED_BEFORE = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                    "message": "All pods scheduled", "lastTransitionTime": "2026-01-01T00:00:00Z"}


@attrs.frozen
class Pod:
    """One pod's algorithm result: fit (node1), fit but Permit waits, preempting (node1
    nominated, status Unschedulable), unschedulable (cleared or no nomination) or an error."""

    host: str = NODE
    status: Status | None = None
    permit: Status | None = None
    nominating: NominatingInfo | None = None
    requires_preemption: bool = False


FIT = Pod()
WAITING = Pod(permit=Status.wait())
PREEMPTING = Pod(status=Status(Code.Unschedulable), nominating=NOMINATED, requires_preemption=True)
PREEMPTING_WAITING = attrs.evolve(PREEMPTING, permit=Status.wait())
UNSCHEDULABLE = Pod(host="", status=Status(Code.Unschedulable), nominating=CLEAR_NOMINATION)
UNSCHEDULABLE_NO_NOMINATION = Pod(host="", status=Status(Code.Unschedulable))


def error(message: str = "") -> Pod:
    return Pod(host="", status=Status(Code.Error, (message,) if message else ()), nominating=CLEAR_NOMINATION)


def unschedulable(message: str) -> Status:
    return Status(Code.Unschedulable, (message,))


@attrs.frozen
class Case:
    name: str
    status: Status | None
    pods: tuple[Pod, ...]
    bound: frozenset[str] = NONE
    preempting: frozenset[str] = NONE
    failed: frozenset[str] = NONE
    condition: tuple[str, str, str] = ("True", "Scheduled", "")  # status, reason, message
    waiting_on_preemption: bool = False
    scheduled_before: bool = False


CASES = [
    Case("All pods feasible", None, (FIT, FIT, FIT), bound=ALL),
    Case("All pods feasible, but all waiting", unschedulable("not enough capacity for the gang"),
         (WAITING, WAITING, WAITING), failed=ALL,
         condition=("False", "Unschedulable", "not enough capacity for the gang")),
    Case("All pods feasible, but last waiting", None, (FIT, FIT, WAITING), bound=ALL),
    Case("All pods feasible, one waiting, one unschedulable", None, (WAITING, UNSCHEDULABLE, FIT),
         bound=frozenset({"p1", "p3"}), failed=frozenset({"p2"})),
    Case("All pods require preemption", unschedulable("waiting for preemption to complete"),
         (PREEMPTING, PREEMPTING, PREEMPTING), preempting=ALL, waiting_on_preemption=True,
         condition=("False", "Unschedulable", "waiting for preemption to complete")),
    Case("All pods require preemption, but waiting", unschedulable("preemption required but not feasible"),
         (PREEMPTING_WAITING, PREEMPTING_WAITING, PREEMPTING_WAITING), failed=ALL,
         condition=("False", "Unschedulable", "preemption required but not feasible")),
    Case("One pod requires preemption, but waiting, two are feasible",
         unschedulable("waiting for preemption to complete"), (PREEMPTING_WAITING, WAITING, FIT),
         preempting=ALL, waiting_on_preemption=True,
         condition=("False", "Unschedulable", "waiting for preemption to complete")),
    Case("One pod unschedulable, one requires preemption, one feasible",
         unschedulable("waiting for preemption to complete"), (PREEMPTING, UNSCHEDULABLE, FIT),
         preempting=frozenset({"p1", "p3"}), failed=frozenset({"p2"}), waiting_on_preemption=True,
         condition=("False", "Unschedulable", "waiting for preemption to complete")),
    Case("All pods unschedulable", unschedulable("0/3 nodes are available: insufficient cpu"),
         (UNSCHEDULABLE, UNSCHEDULABLE, UNSCHEDULABLE), failed=ALL,
         condition=("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    Case("All pods unschedulable with nil nominatingInfo", unschedulable("0/3 nodes are available: insufficient cpu"),
         (UNSCHEDULABLE_NO_NOMINATION,) * 3, failed=ALL,
         condition=("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    Case("Unschedulable for the entire pod group", unschedulable("node affinity mismatch"), (), failed=ALL,
         condition=("False", "Unschedulable", "node affinity mismatch")),
    Case("Error for one pod", Status.as_status("plugin returned error"), (FIT, error("plugin returned error")),
         failed=ALL, condition=("False", "SchedulerError", "plugin returned error")),
    Case("Error for one pod while waiting on preemption", Status.as_status("internal failure"),
         (PREEMPTING, error("internal failure")), failed=ALL,
         condition=("False", "SchedulerError", "internal failure")),
    Case("Already Scheduled, successful cycle keeps condition", None, (FIT, FIT, FIT), bound=ALL,
         scheduled_before=True),
    Case("Already Scheduled, rejected cycle does not regress condition", unschedulable("extra pods could not be placed"),
         (UNSCHEDULABLE, UNSCHEDULABLE, UNSCHEDULABLE), failed=ALL, scheduled_before=True,
         condition=("True", "Scheduled", "All pods scheduled")),
    Case("Already Scheduled, error cycle does not regress condition", Status(Code.Error), (FIT, error()),
         failed=ALL, scheduled_before=True, condition=("True", "Scheduled", "All pods scheduled")),
]


def result_of(case: Case, group: list[Any]) -> GroupResult:
    results = []
    for qpi, pod in zip(group, case.pods):
        state, pods_to_activate = new_cycle_state()
        results.append(PodResult(qpi, ScheduleResult(suggested_host=pod.host, nominating_info=pod.nominating), state,
                                 pods_to_activate, pod.status, pod.permit, pod.requires_preemption))
    return GroupResult(pod_results=results, status=case.status, waiting_on_preemption=case.waiting_on_preemption)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_submit_pod_group_algorithm_result(case: Case) -> None:
    sim = scheduler_with(conditions=(SCHEDULED_BEFORE,) if case.scheduled_before else ())
    group = gathered(sim)
    cycle = sim.scheduler.scheduling
    preempting: set[str] = set()
    failed: set[str] = set()
    handle_failure = cycle.handle_failure

    def failure_handler(fwk, qpi, status, nominating_info, number):
        """Records the pod, then hands it to the scheduler's failure handler (which queues it)."""
        nominated = nominating_info is not None and nominating_info.nominated_node_name
        (preempting if nominated else failed).add(qpi.pod.name)
        handle_failure(fwk, qpi, status, nominating_info, number)

    cycle.handle_failure = failure_handler
    cycle.pod_groups.submit(cycle.frameworks["default-scheduler"], group, "default", "pg", result_of(case, group))
    sim.run(until=sim.clock.now())  # the binding cycles finish; the failed pods wait out their backoff

    assert {p.name for p in sim.cluster.list("Pod") if p.node_name} == case.bound
    assert (preempting, failed) == (case.preempting, case.failed)
    cond = sim.cluster.get("scheduling.k8s.io/PodGroup", "pg", "default").condition("PodGroupScheduled")
    assert cond is not None and (cond.status, cond.reason, cond.message) == case.condition


def test_the_table_has_upstreams_cases():
    assert len(CASES) == 16
