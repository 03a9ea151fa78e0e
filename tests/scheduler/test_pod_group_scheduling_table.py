"""Upstream's TestPodGroupScheduling cases without preemption (test/integration/scheduler/podgroup),
played through the embedded cluster: one node of 4 CPUs, a gang PodGroup pg1 of minCount 3,
a second gang pg2 of minCount 3, a basic PodGroup, and 1-CPU pods. Upstream's steps wait for an
outcome; here each step is a moment of simulated time, checked after the run reaches it."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw.api.load import parse_manifests
from kschedfw.api.workload import POD_GROUP_KIND
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.simulation import Simulation

GATES = FeatureGates.parse("GenericWorkload=true,GangScheduling=true")

BASE = """\
apiVersion: v1
kind: Node
metadata: {name: node, labels: {topology.kubernetes.io/zone: zone1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: workload}
spec:
  podGroupTemplates:
  - {name: t1, schedulingPolicy: {gang: {minCount: 3}}}
  - {name: t2, schedulingPolicy: {basic: {}}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: other-workload}
spec:
  podGroupTemplates:
  - {name: t, schedulingPolicy: {gang: {minCount: 3}}}
"""

GROUPS = {
    "gang": ("pg1", "workload", "t1", "{gang: {minCount: 3}}"),
    "other": ("pg2", "other-workload", "t", "{gang: {minCount: 3}}"),
    "basic": ("pg1", "workload", "t2", "{basic: {}}"),
}


def pod_group(which: str) -> Any:
    name, workload, template, policy = GROUPS[which]
    [obj] = parse_manifests(f"""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {{name: {name}}}
spec:
  podGroupTemplateRef: {{workload: {{workloadName: {workload}, podGroupTemplateName: {template}}}}}
  schedulingPolicy: {policy}
""")
    return obj


def pod(name: str, group: str | None = None, cpu: str = "1") -> Any:
    joins = f"\n  schedulingGroup: {{podGroupName: {group}}}" if group else ""
    [obj] = parse_manifests(f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:{joins}
  terminationGracePeriodSeconds: 0
  containers: [{{name: c, image: image, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
""")
    return obj


def gang(*names: str, group: str = "pg1") -> list[Any]:
    return [pod(n, group) for n in names]


class Run:
    """A simulation advanced step by step: ``create`` / ``delete`` at the next moment, then
    ``settle`` runs until nothing more happens before the moment after."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.at = 1.0

    def create(self, *objects: Any) -> "Run":
        self.steps.append(Step(self.at, "create", tuple(objects)))
        self.at += 100.0
        return self

    def delete(self, name: str) -> "Run":
        self.steps.append(Step(self.at, "delete", target={"kind": "Pod", "name": name, "namespace": "default"}))
        self.at += 100.0
        return self

    def play(self, until: float) -> Simulation:
        registry = default_registry()
        sim = Simulation(default_config(registry, GATES), registry, parse_manifests(BASE),
                         [s for s in self.steps if s.at <= until], feature_gates=GATES)
        sim.run()
        return sim


def bound(sim: Simulation) -> set[str]:
    return {p.name for p in sim.cluster.list("Pod") if p.node_name}


def unschedulable(sim: Simulation) -> set[str]:
    return {p.name for p in sim.cluster.list("Pod")
            if not p.node_name and (c := p.condition("PodScheduled")) is not None and c.reason == "Unschedulable"}


def condition(sim: Simulation, name: str = "pg1") -> tuple[str, str] | None:
    group = sim.cluster.get(POD_GROUP_KIND, name, "default")
    cond = group.condition("PodGroupScheduled") if group is not None else None
    return (cond.status, cond.reason) if cond is not None else None


def test_gang_schedules_when_pod_group_and_resources_are_available():
    sim = Run().create(pod_group("gang")).create(*gang("p1", "p2", "p3")).play(1e9)
    assert bound(sim) == {"p1", "p2", "p3"}
    assert condition(sim) == ("True", "Scheduled")


def test_gang_waits_for_quorum_to_start_then_schedules():
    run = Run().create(pod_group("gang")).create(*gang("p1", "p2"))
    held = run.play(run.at - 1)
    assert bound(held) == set() and unschedulable(held) == set()  # gated at PreEnqueue: no condition
    run.create(pod("p3", "pg1"))
    assert bound(run.play(1e9)) == {"p1", "p2", "p3"}


def test_gang_waits_for_pod_group_then_for_resources_then_schedules():
    run = Run().create(pod("blocker", cpu="2")).create(*gang("p1", "p2", "p3"))
    gated = run.play(run.at - 1)
    assert bound(gated) == {"blocker"} and unschedulable(gated) == set()
    run.create(pod_group("gang"))
    blocked = run.play(run.at - 1)
    assert bound(blocked) == {"blocker"}
    assert unschedulable(blocked) == {"p1", "p2", "p3"}
    assert condition(blocked) == ("False", "Unschedulable")
    run.delete("blocker")
    done = run.play(1e9)
    assert bound(done) == {"p1", "p2", "p3"}
    assert condition(done) == ("True", "Scheduled")


def test_min_count_is_scheduled_and_the_extra_pod_waits_for_the_blocked_resources():
    run = Run().create(pod("small-blocker")).create(*gang("p1", "p2", "p3", "p4")).create(pod_group("gang"))
    partial = run.play(run.at - 1)
    assert len(bound(partial) - {"small-blocker"}) == 3
    assert len(unschedulable(partial)) == 1
    run.delete("small-blocker")
    assert bound(run.play(1e9)) == {"p1", "p2", "p3", "p4"}


@pytest.mark.parametrize("order, winner, loser", [
    (("other-p3", "p3", "other-p2", "p2", "other-p1", "p1"), "other-p", "p"),
    (("p1", "other-p1", "p2", "other-p2", "p3", "other-p3"), "p", "other-p"),
])
def test_two_gangs_competing_for_the_same_resources_do_not_deadlock(order, winner, loser):
    """The gang whose pod is popped first takes the node whole; the other is unschedulable."""
    pods = [pod(n, "pg2" if n.startswith("other") else "pg1") for n in order]
    sim = Run().create(pod_group("gang")).create(pod_group("other")).create(*pods).play(1e9)
    assert bound(sim) == {f"{winner}{i}" for i in (1, 2, 3)}
    assert unschedulable(sim) == {f"{loser}{i}" for i in (1, 2, 3)}


def test_basic_group_schedules_without_gang_enforcement():
    sim = Run().create(pod_group("basic")).create(*gang("p1", "p2", "p3")).play(1e9)
    assert bound(sim) == {"p1", "p2", "p3"}
    assert condition(sim) == ("True", "Scheduled")


def test_basic_group_part_of_which_waits_for_resources():
    run = Run().create(pod("blocker", cpu="2")).create(*gang("p1", "p2", "p3")).create(pod_group("basic"))
    partial = run.play(run.at - 1)
    assert len(bound(partial) - {"blocker"}) == 2
    assert len(unschedulable(partial)) == 1
    run.delete("blocker")
    assert bound(run.play(1e9)) == {"p1", "p2", "p3"}
