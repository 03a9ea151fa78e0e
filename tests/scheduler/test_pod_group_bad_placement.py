"""A placement the scheduler cannot assume. Upstream podGroupSchedulingPlacementAlgorithm calls
the snapshot's AssumePlacement before trying the group in a placement; a node the snapshot does
not hold, or holds as another NodeInfo, is an error that ends the group's cycle at once: Error
status "failed to assume pod group placement: <AssumePlacement's error>", no further placement
tried, and the PodGroup's PodGroupScheduled condition False with reason SchedulerError and the
status's error text as message (submitPodGroupAlgorithmResult's default branch)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from kschedfw import hookimpl
from kschedfw.api.load import parse_object
from kschedfw.api.workload import POD_GROUP_KIND, PodGroup
from kschedfw.fwk.features import FeatureGates
from kschedfw.fwk.podgroup import GeneratePlacementsResult, Placement
from kschedfw.fwk.types import NodeInfo
from kschedfw.framework.registry import Registry
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for

from .pod_group_fakes import NODE, objects

OTHER = "node2"


def ghost(parent: Placement) -> NodeInfo:
    """A NodeInfo for a node the snapshot does not hold."""
    return NodeInfo(node=parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ghost"}}))


def copy_of_node1(parent: Placement) -> NodeInfo:
    """node1 as another NodeInfo than the snapshot's own."""
    return next(ni for ni in parent.nodes if ni.name == NODE).clone()


class FilterRecorder:
    """Filter: every node fits; records the nodes it was asked about, so a tried placement shows."""

    name = "FilterRecorder"
    seen: list[str] = []

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        self.seen.append(node_info.name)
        return None


def generator(first: Callable[[Placement], NodeInfo]) -> type:
    """A PlacementGenerate plugin proposing "bad" (``first`` alone, one node of two) then
    "good" (the snapshot's node1)."""
    def generate_placements(self: Any, state: Any, pod_group: Any, parent_placement: Placement) -> Any:
        good = [ni for ni in parent_placement.nodes if ni.name == NODE]
        return GeneratePlacementsResult([Placement("bad", [first(parent_placement)]), Placement("good", good)]), None
    return type("BadPlacements", (), {"name": "BadPlacements", "__init__": lambda self, args, handle: None,
                                      "generate_placements": hookimpl(generate_placements)})


def simulation(*plugins: type) -> Simulation:
    """upstream's test objects (node1, PodGroup pg of p1..p3) and a second node, so that a
    one-node placement is a placement (one of every node is none)."""
    gates = FeatureGates.parse("GenericWorkload=true,TopologyAwareWorkloadScheduling=true")
    classes = [PrioritySort, *plugins, DefaultBinder]
    node2 = parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": OTHER},
                          "status": {"allocatable": {"cpu": "4", "pods": "32"}}})
    return Simulation(config_for(classes, registry=Registry.from_classes(classes)), Registry.from_classes(classes),
                      [*objects(), node2], feature_gates=gates)


@pytest.mark.parametrize("first, error", [
    (ghost, "node ghost in placement is not present in snapshot"),
    (copy_of_node1, "node node1 in placement is not the same instance as in the snapshot"),
])
def test_a_placement_the_snapshot_cannot_assume_fails_the_group_with_an_error(first, error):
    recorder = type("FilterRecorder", (FilterRecorder,), {"seen": []})
    sim = simulation(recorder, generator(first))
    sim.run()
    message = f"failed to assume pod group placement: {error}"
    assert recorder.seen == []  # neither "bad" nor the feasible "good" placement was tried
    assert [p.name for p in sim.cluster.list("Pod") if p.node_name] == []
    group = sim.cluster.get(POD_GROUP_KIND, "pg", "default")
    assert isinstance(group, PodGroup)
    cond = group.condition("PodGroupScheduled")
    assert cond is not None
    assert (cond.status, cond.reason, cond.message) == ("False", "SchedulerError", message)
    cycle = sim.scheduler.scheduling.pod_groups
    assert cycle is not None
    attempt = cycle.last_attempts["default/pg"]
    assert (attempt.result, attempt.message) == ("error", message)
