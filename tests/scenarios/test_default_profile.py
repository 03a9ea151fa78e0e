"""The upstream default profile on the embedded cluster: the behaviours users rely on."""

from __future__ import annotations

import pytest

from kschedfw.cluster.inputs.scenario import Step
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import make_node, make_pod, make_priority_class

ZONE = "topology.kubernetes.io/zone"


def node(name, zone="zone-a", cpu="4", memory="8Gi"):
    return make_node(name, zone=zone, cpu=cpu, memory=memory)


def pod(name, cpu="1", priority_class="", labels=None, node_name="", gates=(), affinity=None, spread=None,
        grace=30, start=None):
    return make_pod(name, cpu=cpu, priority_class_name=priority_class or None, labels=labels, node_name=node_name,
                    scheduling_gates=gates, affinity=affinity, topology_spread_constraints=spread or (),
                    start_time=start, terminationGracePeriodSeconds=grace)


def priority_class(name, value, policy=None):
    return make_priority_class(name, value, preemption_policy=policy)


def simulate(objects, steps=(), seed=0):
    registry = default_registry()
    sim = Simulation(default_config(registry), registry, objects, steps, seed=seed)
    return sim.run()


def by_key(result):
    return {p.key: p for p in result.pods}


def test_gated_pod_waits_for_its_last_gate_then_schedules():
    gated = pod("gated", gates=("example.com/a", "example.com/b"))
    steps = [Step(10, "removeSchedulingGate", target={"pod": "default/gated", "gate": "example.com/a"}),
             Step(20, "removeSchedulingGate", target={"pod": "default/gated", "gate": "example.com/b"})]
    sim = Simulation(default_config(default_registry()), default_registry(), [node("n1"), gated], steps)
    at_15 = sim.run(until=15)
    gated_then = by_key(at_15)["default/gated"]
    assert gated_then.status == "Gated" and gated_then.reason == "SchedulingGated"
    assert sim.scheduler.queue.pending_pods()["gated"] == 1
    final = sim.run()
    assert by_key(final)["default/gated"].status == "Bound"
    # gated pods get no FailedScheduling events
    assert not [e for e in final.cluster.events if e.reason == "FailedScheduling"]


def test_high_priority_pod_preempts_lowest_priority_victims_and_lands_after_grace_period():
    objects = [priority_class("low", 10), priority_class("mid", 100), priority_class("high", 1000),
               node("n1", cpu="2"), node("n2", cpu="2"),
               pod("low-1", cpu="1", priority_class="low", node_name="n1", grace=30),
               pod("low-2", cpu="1", priority_class="low", node_name="n1", grace=30),
               pod("mid-1", cpu="1", priority_class="mid", node_name="n2"),
               pod("mid-2", cpu="1", priority_class="mid", node_name="n2"),
               pod("urgent", cpu="2", priority_class="high")]
    result = simulate(objects)
    pods = by_key(result)
    assert pods["default/urgent"].status == "Bound" and pods["default/urgent"].node == "n1"
    for victim in ("default/low-1", "default/low-2"):  # deleted, and reported as preempted
        assert (pods[victim].status, pods[victim].deleted_by, pods[victim].gone_at) == ("Preempted", "default/urgent", 30)
    assert pods["default/mid-1"].status == "Running" and pods["default/mid-2"].status == "Running"
    preempted = [e for e in result.cluster.events if e.reason == "Preempted"]
    assert sorted(e.object_key for e in preempted) == ["default/low-1", "default/low-2"]
    bound_at = next(e.time for e in result.cluster.events if e.reason == "Scheduled" and "urgent" in e.message)
    assert bound_at >= 30  # after the victims' grace period on the simulated clock


def test_non_preempting_pod_waits_without_evicting_anyone():
    objects = [priority_class("low", 10), priority_class("high-no-preempt", 1000, "Never"),
               node("n1", cpu="2"),
               pod("running", cpu="2", priority_class="low", node_name="n1"),
               pod("polite", cpu="1", priority_class="high-no-preempt")]
    result = simulate(objects)
    pods = by_key(result)
    assert pods["default/running"].status == "Running"
    assert pods["default/polite"].status == "Pending"
    assert pods["default/polite"].message.endswith("preemption: not eligible due to preemptionPolicy=Never.")
    assert not [e for e in result.cluster.events if e.reason == "Preempted"]


def test_non_preempting_high_priority_pod_is_ahead_of_lower_priority_pods():
    objects = [priority_class("low", 10), priority_class("high-no-preempt", 1000, "Never"),
               node("n1", cpu="2"),
               pod("running", cpu="2", priority_class="low", node_name="n1"),
               pod("polite", cpu="2", priority_class="high-no-preempt"),
               pod("lowly", cpu="2", priority_class="low")]
    steps = [Step(60, "delete", target={"kind": "Pod", "name": "running", "namespace": "default"})]
    pods = by_key(simulate(objects, steps))
    assert pods["default/polite"].status == "Bound"
    assert pods["default/lowly"].status == "Pending"


def test_pod_anti_affinity_across_zones():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}]}}
    objects = [node("a1", "zone-a"), node("a2", "zone-a"), node("b1", "zone-b"), node("c1", "zone-c")]
    objects += [pod(f"db-{i}", cpu="100m", labels={"app": "db"}, affinity=anti) for i in range(4)]
    pods = by_key(simulate(objects))
    bound = [p for p in pods.values() if p.status == "Bound"]
    zones = {"a1": "zone-a", "a2": "zone-a", "b1": "zone-b", "c1": "zone-c"}
    assert sorted(zones[p.node] for p in bound) == ["zone-a", "zone-b", "zone-c"]
    [pending] = [p for p in pods.values() if p.status == "Pending"]
    assert pending.message.startswith("0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules.")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_topology_spread_across_zones_with_max_skew_one(seed):
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    objects = [node("a1", "zone-a", cpu="16"), node("a2", "zone-a", cpu="16"), node("b1", "zone-b", cpu="16"),
               node("c1", "zone-c", cpu="16")]
    objects += [pod(f"web-{i}", cpu="100m", labels={"app": "web"}, spread=spread) for i in range(7)]
    pods = by_key(simulate(objects, seed=seed))
    zones = {"a1": "zone-a", "a2": "zone-a", "b1": "zone-b", "c1": "zone-c"}
    counts: dict[str, int] = {}
    for p in pods.values():
        assert p.status == "Bound"
        counts[zones[p.node]] = counts.get(zones[p.node], 0) + 1
    assert max(counts.values()) - min(counts.values()) <= 1
    assert sorted(counts.values()) == [2, 2, 3]


def test_pod_naming_a_missing_priority_class_is_refused():
    result = simulate([node("n1"), pod("orphan", priority_class="does-not-exist")])
    assert result.rejected == [("Pod default/orphan",
                                'pods "orphan" is forbidden: no PriorityClass with name does-not-exist was found')]
