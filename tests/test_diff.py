"""kschedfw.diff.DecisionRecorder: a scheduling cycle boiled down to what a comparison needs.

Upstream: a PreFilter result that names nodes (NodeAffinity's ``matchFields`` on
``metadata.name``) keeps every other node out with "node(s) didn't satisfy plugin(s) [..]"
(findNodesThatFitPod); Filter runs on at most numFeasibleNodesToFind nodes (100 at least) once
enough fit, so a large cluster leaves some nodes unexamined.
"""

from __future__ import annotations

from kschedfw.config.validate import default_config
from kschedfw.diff import DecisionRecorder
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.simulation import Simulation
from kschedfw import Code, Status, hookimpl
from kschedfw.testing import make_node, make_pod

ONLY_N1 = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}


def _record(objects, focus):
    registry = default_registry()
    sim = Simulation(default_config(registry, FeatureGates()), registry, objects)
    recorders: dict[str, DecisionRecorder] = {}

    def recorder_for(pod):
        handle = sim.scheduler.frameworks[pod.scheduler_name].handle
        recorders[pod.name] = DecisionRecorder(focus, lambda: len(handle.snapshot))
        return recorders[pod.name]

    sim.scheduler.scheduling.recorder_for = recorder_for
    sim.run()
    return {name: r.decision for name, r in recorders.items()}


def test_prefilter_narrowing_counts_for_the_nodes_it_kept_out():
    objects = [make_node(f"n{i}", cpu="1") for i in (1, 2, 3)] + [make_pod("p", cpu="2", affinity=ONLY_N1)]
    decision = _record(objects, focus=("n1", "n2"))["p"]
    assert decision.node == "" and decision.feasible == 0
    assert decision.rejectors == {"NodeResourcesFit": 1, "NodeAffinity": 2}
    assert decision.views["n1"].rejected_by == "NodeResourcesFit"
    assert decision.views["n1"].reason == "Insufficient cpu"
    assert decision.views["n2"].rejected_by == "NodeAffinity"
    assert decision.views["n2"].reason == "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    assert decision.message.startswith("0/3 nodes are available: 1 Insufficient cpu, "
                                       "2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_a_scored_node_keeps_its_weighted_scores_and_total():
    objects = [make_node("n1", cpu="2"), make_node("n2", cpu="8"), make_pod("p", cpu="1")]
    decision = _record(objects, focus=("n1",))["p"]
    assert decision.node == "n2" and decision.feasible == 2
    chosen, other = decision.views["n2"], decision.views["n1"]
    assert set(decision.views) == {"n1", "n2"}
    assert chosen.total == sum(chosen.scores.values()) and other.total == sum(other.scores.values())
    # LeastAllocated: the bigger node is emptier after placing the pod
    assert chosen.scores["NodeResourcesFit"] > other.scores["NodeResourcesFit"]
    assert chosen.total > other.total


def test_nodes_outside_the_filtered_sample_are_marked_unevaluated():
    names = [f"node-{i:03d}" for i in range(150)]
    objects = [make_node(n) for n in names] + [make_pod("p", cpu="1")]
    decision = _record(objects, focus=names)["p"]
    views = decision.views
    # 150 nodes: the adaptive percentage gives max(100, 150*49%) = 100 nodes to find
    assert sum(1 for v in views.values() if not v.evaluated) == 50
    assert sum(1 for v in views.values() if v.total is not None) == 100 == decision.feasible


class _WaitAtPermit:
    """A Permit plugin that holds every pod for 10 s, then lets the wait time out."""

    name = "WaitAtPermit"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def permit(self, state, pod, node_name):
        return Status(Code.Wait), 10.0


def test_a_pod_held_at_permit_is_recorded_like_any_other():
    # Every recorder the scheduler is handed also hears about Permit waits (CycleRecorder.permit_wait).
    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.noderesources.fit import NodeResourcesFit
    from kschedfw.plugins.queuesort import PrioritySort
    from kschedfw.framework.registry import Registry
    from kschedfw.testing import config_for

    classes = [PrioritySort, NodeResourcesFit, _WaitAtPermit, DefaultBinder]
    registry = Registry.from_classes(classes)
    sim = Simulation(config_for(classes, registry=registry), registry, [make_node("n1"), make_pod("p")])
    recorders: list[DecisionRecorder] = []

    def recorder_for(pod):
        recorders.append(DecisionRecorder((), lambda: 1))
        return recorders[-1]

    sim.scheduler.scheduling.recorder_for = recorder_for
    result = sim.run()
    assert recorders[0].decision is not None and recorders[0].decision.node == "n1"
    # each wait times out after 10 s and the pod is retried, to wait again: it ends held at Permit
    assert len(recorders) > 1 and [p.status for p in result.pods] == ["Waiting"]


def test_same_node_other_devices_is_a_devices_change():
    """A pod on the same node on both sides whose claim got other devices (here B's slice lists the
    GPUs the other way round, and the allocator takes them in slice order)."""
    from kschedfw.api import parse_object
    from kschedfw.diff import Setup, compare

    def objects(devices):
        return tuple(parse_object(o) for o in (
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
             "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                      "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                      "devices": [{"name": d} for d in devices]}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "train-gpu", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu"}}]}}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "image": "x"}],
                      "resourceClaims": [{"name": "gpu", "resourceClaimName": "train-gpu"}]}}))

    registry = default_registry()
    config = default_config(registry, FeatureGates())
    comparison = compare(Setup("A", config, {}, objects(["gpu-0", "gpu-1"])),
                         Setup("B", config, {}, objects(["gpu-1", "gpu-0"])), registry)
    [change] = comparison.changes
    assert (change.pod, change.change, change.a.node, change.b.node) == ("default/train", "devices", "n1", "n1")
    assert change.devices_a == (("gpu", ("gpus: gpu.example.com/n1/gpu-0",)),)
    assert change.devices_b == (("gpu", ("gpus: gpu.example.com/n1/gpu-1",)),)
