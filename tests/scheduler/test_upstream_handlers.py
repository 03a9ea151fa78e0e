"""Event handling and failure bookkeeping as upstream's eventhandlers.go and schedule_one.go do it."""

from __future__ import annotations

import attrs
import pytest

from kschedfw.api import parse_object
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, node_scheduling_properties_change
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import Registry, default_registry
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for, simulate_with

from .plugins import BASE, CpuFit, ManyReasons, Quorum, RejectingPreBind


def by_key(result):
    return {p.key: p for p in result.pods}


def default_simulation(objects, steps=()):
    registry = default_registry()
    return Simulation(default_config(registry), registry, objects, steps)


def test_completed_pods_free_their_resources(node, pod):
    done = parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "done-job", "namespace": "default"},
                         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x",
                                                                    "resources": {"requests": {"cpu": "3"}}}]},
                         "status": {"phase": "Succeeded"}})
    result = default_simulation([node("n1", cpu="4"), done, pod("web", cpu="2")]).run()
    assert by_key(result)["default/web"].status == "Bound"
    assert by_key(result)["default/done-job"].status == "Succeeded"


def test_relabelled_assigned_pod_wakes_the_pod_it_repelled(node, pod):
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    db = pod("db", node_name="n1", labels={"app": "db"})
    web = parse_object({**pod("web").raw, "spec": {**pod("web").raw["spec"], "affinity": anti}})
    relabelled = attrs.evolve(db, labels={"app": "other"}, raw={**db.raw, "metadata": {**db.raw["metadata"],
                                                                                       "labels": {"app": "other"}}})
    sim = default_simulation([node("n1"), db, web], [Step(30, "update", objects=(relabelled,))])
    result = sim.run()
    assert by_key(result)["default/web"].status == "Bound"
    bound_at = next(e.time for e in result.cluster.events if e.reason == "Scheduled" and "web" in e.message)
    assert bound_at < 60  # woken by the update event, not by the 5-minute flush


def test_pod_narrowed_to_missing_nodes_waits_for_an_event(node, pod):
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-x"]}]}]}}}
    pinned = parse_object({**pod("pinned").raw, "spec": {**pod("pinned").raw["spec"], "affinity": affinity}})
    result = default_simulation([node("n1"), node("n2"), pinned]).run()
    attempts = [a for a in result.scheduler.attempts if a.pod == "default/pinned"]
    assert len(attempts) == 1  # parked with NodeAffinity as the rejector, not retried on backoff
    assert attempts[0].message.startswith("0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_waiting_pod_is_nominated_to_its_node(node, pod, monkeypatch):
    # NominatedNodeNameForExpectation (on in v1.36): a pod waiting at Permit shows where it goes
    monkeypatch.setattr(Quorum, "size", 2)
    monkeypatch.setattr(Quorum, "timeout", 30.0)
    classes = [*BASE, Quorum]
    sim = Simulation(config_for(classes), Registry.from_classes(classes), [node("n1"), pod("g0")])
    sim.run(until=10)
    assert sim.cluster.get("Pod", "g0", "default").nominated_node_name == "n1"


def test_pre_bind_rejection_is_reported_as_unschedulable(node, pod):
    result = simulate_with([*BASE, RejectingPreBind], [node("n1"), pod("p")])
    p = by_key(result)["default/p"]
    assert p.status == "Pending" and p.reason == "Unschedulable"
    assert p.message == "volume not attachable on this node"


def test_condition_keeps_the_whole_message_events_are_truncated(node, pod):
    nodes = [node(f"node-{i:02d}") for i in range(30)]
    result = simulate_with([*BASE, ManyReasons], [*nodes, pod("p")])
    p = by_key(result)["default/p"]
    assert len(p.message) > 1024 and p.message.endswith("try again later please.")
    event = next(e for e in result.cluster.events if e.reason == "FailedScheduling")
    assert len(event.message) == 1024 and event.message.endswith(" ...")


def test_no_nodes_clears_the_nomination(pod):
    nominated = parse_object({**pod("p").raw, "status": {"nominatedNodeName": "gone"}})
    result = simulate_with([*BASE, CpuFit], [nominated])
    assert result.cluster.get("Pod", "p", "default").nominated_node_name == ""


def _node(**changes):
    from kschedfw.testing import make_node
    base = make_node("n", labels={"a": "1"})
    return attrs.evolve(base, **changes)


@pytest.mark.parametrize("new, expected", [
    pytest.param(_node(unschedulable=True), [], id="cordon is no event"),
    pytest.param(_node(labels={"kubernetes.io/hostname": "n", "a": "2"}), [ActionType.UpdateNodeLabel], id="label"),
    pytest.param(_node(allocatable={"cpu": 8000, "memory": 1, "pods": 110}), [ActionType.UpdateNodeAllocatable],
                 id="allocatable"),
    pytest.param(_node(annotations={"x": "y"}), [ActionType.UpdateNodeAnnotation], id="annotation"),
    pytest.param(_node(), [], id="nothing"),
])
def test_node_update_events_as_upstream(new, expected):
    assert node_scheduling_properties_change(new, _node()) == [ClusterEvent(EventResource.Node, a) for a in expected]


def test_uncordon_is_a_taint_update():
    assert node_scheduling_properties_change(_node(), _node(unschedulable=True)) == [
        ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)]


def test_deleting_a_nominated_pod_wakes_lower_priority_pods(node, pod):
    # "hi" is nominated to n1 and counts as running there for lower-priority pods (two-pass
    # Filter), so "lo" does not fit; deleting "hi" is an AssignedPod/Delete event for "lo".
    hi = parse_object({**pod("hi", cpu="5", priority=100).raw, "status": {"nominatedNodeName": "n1"}})
    lo = pod("lo", cpu="2", priority=0)
    steps = [Step(20, "delete", target={"kind": "Pod", "name": "hi", "namespace": "default"})]
    result = simulate_with([*BASE, CpuFit], [node("n1", cpu="4"), hi, lo], steps)
    assert by_key(result)["default/lo"].status == "Bound"
    bound_at = next(e.time for e in result.cluster.events if e.reason == "Scheduled" and "lo" in e.message)
    assert 20 <= bound_at < 60
