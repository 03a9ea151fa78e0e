"""A pod deleted during a run keeps its row: ``Preempted`` (by which pod, when, on which node,
in spite of which PodDisruptionBudgets) or ``Deleted`` (by a scenario step).

Upstream rules: DefaultPreemption sets the victim's DisruptionTarget condition (reason
PreemptionByScheduler), deletes it with its grace period and records a ``Preempted`` event
naming the preemptor; the pod is terminating (deletionTimestamp set) until the grace period
ends, then gone. Preemption prefers victims that break no PodDisruptionBudget but evicts in
spite of one when nothing else makes room (``filterPodsWithPDBViolation``: a matching budget
with no disruption allowed left).
"""

from __future__ import annotations

import pytest

from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import STATUSES, Simulation
from kschedfw.testing import make_node, make_pdb, make_pod
from kschedfw.testing.priorities import with_priority_classes

READY = [{"type": "Ready", "status": "True"}]


def web(name, **kw):
    return make_pod(name, cpu="1", labels={"app": "web"}, node_name="n1", conditions=READY, **kw)


def cluster(*, disruptions_allowed=0, grace=None):
    grace_spec = {} if grace is None else {"terminationGracePeriodSeconds": grace}
    return [make_node("n1", cpu="3"),
            make_pdb("web-pdb", match_labels={"app": "web"}, min_available=3, disruptions_allowed=disruptions_allowed),
            web("web-0", **grace_spec), web("web-1", **grace_spec), web("web-2", **grace_spec),
            make_pod("urgent", cpu="1", priority=1000)]


def simulate(objects, steps=(), until=None):
    registry = default_registry()
    return Simulation(default_config(registry), registry, with_priority_classes(objects), steps).run(until)


def rows(result):
    return {p.key: p for p in result.pods}


def victim_of(result):
    [victim] = [p for p in result.pods if p.status == "Preempted"]
    return victim


def test_a_preempted_pod_keeps_its_row_with_the_preemptor_time_and_node():
    result = simulate(cluster())
    victim = victim_of(result)
    assert (victim.deleted_by, victim.deleted_at, victim.node, victim.scheduler_name) == (
        "default/urgent", 0, "n1", "default-scheduler")
    assert victim.gone_at == 30  # the default grace period, on the simulated clock
    assert victim.reason == "PreemptionByScheduler"
    assert victim.message.startswith("preempted by default/urgent at 0s on n1")
    assert len(result.pods) == 4  # every input pod
    assert result.summary()["total"] == {"Preempted": 1, "Running": 2, "Bound": 1}


def test_a_preemption_that_breaks_a_budget_says_which_one():
    result = simulate(cluster(disruptions_allowed=0))
    victim = victim_of(result)
    [budget] = victim.broken_budgets
    assert budget.describe() == "PodDisruptionBudget default/web-pdb (minAvailable 3, 0 disruptions allowed)"
    assert victim.message.endswith("; evicted despite PodDisruptionBudget default/web-pdb "
                                   "(minAvailable 3, 0 disruptions allowed)")
    assert result.broken_budgets() == {budget: [victim.key]}


def test_a_preemption_within_the_budget_breaks_none():
    result = simulate(cluster(disruptions_allowed=1))
    victim = victim_of(result)
    assert victim.broken_budgets == () and "despite" not in victim.message
    assert result.broken_budgets() == {}


def test_a_victim_still_in_its_grace_period_is_preempted_and_terminating():
    result = simulate(cluster(grace=600), until=10)
    victim = victim_of(result)
    assert victim.gone_at is None and "still terminating" in victim.message
    namespace, _, name = victim.key.partition("/")
    pod = result.cluster.get("Pod", name, namespace)
    assert pod.deletion_timestamp is not None
    written = [o for o in result.written_objects() if type(o).__name__ == "Pod" and o.key == victim.key]
    assert written and written[0].raw["metadata"]["deletionGracePeriodSeconds"] == 600
    conditions = {c["type"]: c for c in written[0].raw["status"]["conditions"]}
    assert (conditions["DisruptionTarget"]["status"], conditions["DisruptionTarget"]["reason"]) == (
        "True", "PreemptionByScheduler")


def test_a_victim_whose_grace_period_ended_is_gone_from_the_written_objects():
    result = simulate(cluster())
    victim = victim_of(result)
    assert victim.key not in {o.key for o in result.written_objects() if type(o).__name__ == "Pod"}


def test_the_written_budget_has_the_disruption_controllers_status_after_the_run():
    result = simulate(cluster())
    [pdb] = [o for o in result.written_objects() if type(o).__name__ == "PodDisruptionBudget"]
    status = pdb.raw["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"],
            status["disruptionsAllowed"]) == (2, 3, 2, 0)


def test_a_pod_deleted_by_a_scenario_step_says_so():
    objects = [make_node("n1"), make_pod("done", cpu="1", node_name="n1"), make_pod("queued", cpu="100")]
    steps = [Step(10, "delete", target={"kind": "Pod", "name": "done"}),
             Step(20, "delete", target={"kind": "Pod", "name": "queued"})]
    pods = rows(simulate(objects, steps))
    done, queued = pods["default/done"], pods["default/queued"]
    assert (done.status, done.deleted_by, done.deleted_at, done.node, done.gone_at) == (
        "Deleted", "scenario step at 10s", 10, "n1", 40)
    assert done.message == "deleted by scenario step at 10s on n1"
    # a pod on no node goes at once
    assert (queued.status, queued.node, queued.gone_at) == ("Deleted", "", 20)


def test_a_pod_deleted_and_created_again_has_both_rows():
    objects = [make_node("n1"), make_pod("again", cpu="1")]
    steps = [Step(10, "delete", target={"kind": "Pod", "name": "again"}),
             Step(50, "create", objects=(make_pod("again", cpu="1"),))]  # once the first is gone (40s)
    result = simulate(objects, steps)
    assert [(p.key, p.status) for p in result.pods] == [("default/again", "Deleted"), ("default/again", "Bound")]


@pytest.mark.parametrize("status", ["Preempted", "Deleted"])
def test_the_new_statuses_are_listed(status):
    assert status in STATUSES
