"""How often a pod group that cannot be scheduled is tried again (upstream v1.36
``backend/queue/scheduling_queue.go`` determineSchedulingHintForInFlightPod, with
SchedulerPopFromBackoffQ on).

Upstream's rule: a pod of a pod group that failed goes to backoffQ whatever its rejectors'
queueing hints say ("event-based requeueing logic is not yet implemented for pod group level"),
and when activeQ is empty Pop takes backoffQ's head early. So kube-scheduler v1.36.2 tries an
infeasible gang again and again while it has nothing else to do: measured at about 900 cycles a
second for a gang of three with a rack constraint on two racks of two 4-cpu nodes (one pod can
fit, or none: the same), each cycle seeing the cluster the one before saw. kschedfw makes the
cycles that can decide otherwise: one after every cluster event (the first cycle of the spin
that sees it), and one at each backoff expiry (1 s, 2 s, 4 s, ... 10 s), not the spin between."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw.api import parse_object
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.scheduler import schedule_one_podgroup
from kschedfw.simulation import Simulation

GATES = FeatureGates.parse("GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true")
RACK = "example.com/rack"


def node(name: str, rack: str, cpu: str = "4") -> Any:
    return parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {RACK: rack}},
                         "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}})


def gang(cpu: str) -> list[Any]:
    """A gang of three pods of ``cpu`` each, minCount 3, in one rack."""
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "t"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 3}},
                      "schedulingConstraints": {"topology": [{"key": RACK}]}}}
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"g{i}", "namespace": "t"},
             "spec": {"schedulingGroup": {"podGroupName": "g"},
                      "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}} for i in range(3)]
    return [parse_object(o) for o in (group, *pods)]


@pytest.fixture
def cycles(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The simulated times at which pod-group cycles begin."""
    times: list[float] = []
    schedule = schedule_one_podgroup.PodGroupCycle.schedule

    def counted(self: Any, qpi: Any, group_name: str) -> None:
        times.append(self.cycle.clock.now())
        schedule(self, qpi, group_name)
    monkeypatch.setattr(schedule_one_podgroup.PodGroupCycle, "schedule", counted)
    return times


def simulation(objects: list[Any]) -> Simulation:
    registry = default_registry()
    return Simulation(default_config(registry, GATES), registry, objects, feature_gates=GATES)


def racks() -> list[Any]:
    return [node("n0", "r1"), node("n1", "r1"), node("n2", "r2"), node("n3", "r2")]


def test_an_infeasible_gang_is_tried_again_after_each_backoff_without_any_event(cycles: list[float]) -> None:
    """Pods of 5 cpu on 4-cpu nodes: no event comes, yet the group is tried again after its
    backoff (initial 1 s, doubled per failure, at most 10 s; backoffQ is flushed every whole
    second), where a single pod NodeResourcesFit rejects would wait for an event."""
    sim = simulation([*racks(), *gang("5")])
    sim.run(until=60)
    gaps = [b - a for a, b in zip(cycles, cycles[1:])]
    assert len(gaps) >= 6, cycles
    for n, gap in enumerate(gaps[:8], start=1):
        backoff = min(2 ** (n - 1), 10)
        assert backoff <= gap <= backoff + 1, (n, cycles)


def test_an_infeasible_gang_is_tried_at_once_after_a_cluster_event(cycles: list[float]) -> None:
    """Upstream's spin sees a new node within its next cycle: a rack that can hold the gang,
    added 3.5 s in (between two backoff expiries), takes it then, not at the next expiry."""
    sim = simulation([*racks(), *gang("3")])
    big = node("n4", "r3", cpu="16")
    sim.cluster.call_at(3.5, lambda: sim.cluster.create(big))
    sim.run(until=30)
    assert 3.5 in cycles
    bound = {p.name: p.node_name for p in sim.cluster.list("Pod", "t")}
    assert bound == {"g0": "n4", "g1": "n4", "g2": "n4"}
    assert all(t <= 3.5 for t in cycles)  # scheduled then: no cycle after
