"""Upstream's TestUpdatePodGroupCondition (pkg/scheduler/schedule_one_podgroup_test.go): the
PodGroupScheduled condition the pod-group cycle writes on an existing group. A True condition
is never taken back to False; ``lastTransitionTime`` changes only with the status (a
SchedulerError becoming Unschedulable keeps it); ``observedGeneration`` is the group's
generation; a group that is gone gets nothing, and nothing fails."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import attrs
import pytest

from kschedfw.api.load import parse_object
from kschedfw.api.workload import POD_GROUP_KIND, Condition
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.simulation import Simulation

BEFORE = "2020-01-01T00:00:00Z"  # before the simulated clock starts
BEFORE_TIME = _dt.datetime(2020, 1, 1, tzinfo=_dt.timezone.utc)


@attrs.frozen
class Case:
    name: str
    group: str
    condition: tuple[str, str, str]  # status, reason, message written
    expected: tuple[str, str, str]
    existing: tuple[str, str, str] | None = None  # the group's condition before
    exists: bool = True
    generation: int | None = None
    keeps_transition_time: bool = False


def existing_group(case: Case) -> Any:
    meta: dict[str, Any] = {"name": case.group, "namespace": "ns1"}
    if case.generation is not None:
        meta["generation"] = case.generation
    manifest: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta,
                                "spec": {"schedulingPolicy": {"basic": {}}}}
    if case.existing is not None:
        status, reason, message = case.existing
        manifest["status"] = {"conditions": [{"type": "PodGroupScheduled", "status": status, "reason": reason,
                                              "message": message, "lastTransitionTime": BEFORE}]}
    return parse_object(manifest)


TRUE_DONE = ("True", "Scheduled", "All required pods have been successfully scheduled")
WAS_SCHEDULED = ("True", "Scheduled", "All pods scheduled")

CASES = [
    Case("set Scheduled condition to True on empty status", "pg1",
         ("True", "SomeReason", "All required pods have been successfully scheduled"),
         ("True", "SomeReason", "All required pods have been successfully scheduled")),
    Case("set Scheduled condition to False with Unschedulable reason", "pg2",
         ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu"),
         ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu")),
    Case("set Scheduled condition to False with SchedulerError reason", "pg3",
         ("False", "SchedulerError", "Internal scheduling error"),
         ("False", "SchedulerError", "Internal scheduling error")),
    Case("transition from Unschedulable to Scheduled", "pg4", TRUE_DONE, TRUE_DONE,
         existing=("False", "Unschedulable", "previously unschedulable")),
    Case("transition from SchedulerError to Scheduled", "pg-se-to-true", TRUE_DONE, TRUE_DONE,
         existing=("False", "SchedulerError", "internal error")),
    Case("do not regress Scheduled to Unschedulable", "pg-true-to-unsched",
         ("False", "Unschedulable", "extra pods could not be placed"), WAS_SCHEDULED, existing=WAS_SCHEDULED,
         keeps_transition_time=True),
    Case("do not regress Scheduled to SchedulerError", "pg-true-to-se",
         ("False", "SchedulerError", "internal error"), WAS_SCHEDULED, existing=WAS_SCHEDULED,
         keeps_transition_time=True),
    Case("transition from Unschedulable to SchedulerError preserves LastTransitionTime", "pg-unsched-to-se",
         ("False", "SchedulerError", "internal error"), ("False", "SchedulerError", "internal error"),
         existing=("False", "Unschedulable", "not enough resources"), keeps_transition_time=True),
    Case("transition from SchedulerError to Unschedulable preserves LastTransitionTime", "pg-se-to-unsched",
         ("False", "Unschedulable", "not enough resources"), ("False", "Unschedulable", "not enough resources"),
         existing=("False", "SchedulerError", "internal error"), keeps_transition_time=True),
    Case("Scheduled to Scheduled preserves LastTransitionTime", "pg-true-to-true",
         ("True", "Scheduled", "New condition message"), ("True", "Scheduled", "New condition message"),
         existing=WAS_SCHEDULED, keeps_transition_time=True),
    Case("PodGroup not found does not panic", "nonexistent", ("True", "SomeReason", "test"),
         ("True", "SomeReason", "test"), exists=False),
    Case("ObservedGeneration is set from PodGroup generation", "pg-gen", WAS_SCHEDULED, WAS_SCHEDULED,
         generation=7),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_update_pod_group_condition(case: Case) -> None:
    gates = FeatureGates.parse("GenericWorkload=true")
    registry = default_registry()
    sim = Simulation(default_config(registry, gates), registry, [existing_group(case)] if case.exists else [],
                     feature_gates=gates)
    status, reason, message = case.condition
    sim.scheduler.scheduling.pod_groups.update_condition(
        "ns1", case.group, Condition(type="PodGroupScheduled", status=status, reason=reason, message=message))

    group = sim.cluster.get(POD_GROUP_KIND, case.group, "ns1")
    if not case.exists:
        assert group is None
        return
    cond = group.condition("PodGroupScheduled")
    assert cond is not None and (cond.status, cond.reason, cond.message) == case.expected
    assert cond.observed_generation == (case.generation or 0)
    if case.keeps_transition_time:
        assert cond.last_transition_time == BEFORE_TIME
    elif case.existing is not None:
        assert cond.last_transition_time != BEFORE_TIME


def test_the_table_has_upstreams_cases():
    assert len(CASES) == 12
