"""SchedulingCycle.recorder_for: every real scheduling cycle can be recorded as it happens."""

from kschedfw.framework.recorder import CycleRecord
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for, make_node, make_pod
from kschedfw.framework.registry import Registry


def test_each_cycle_is_recorded_when_it_happens():
    classes = [PrioritySort, NodeResourcesFit, DefaultBinder]
    registry = Registry.from_classes(classes)
    objects = [make_node("small", cpu="1"), make_node("big", cpu="4"),
               make_pod("fits", cpu="2"), make_pod("too-big", cpu="8")]
    sim = Simulation(config_for(classes, registry=registry), registry, objects)
    records: dict[str, list[CycleRecord]] = {}

    def recorder_for(pod):
        record = CycleRecord()
        records.setdefault(pod.name, []).append(record)
        return record

    sim.scheduler.scheduling.recorder_for = recorder_for
    sim.run()
    fits = records["fits"][0]
    assert fits.node == "big" and fits.feasible == ["big"] and fits.status is None
    too_big = records["too-big"][0]
    assert too_big.node == "" and too_big.feasible == []
    # upstream Fit message for each node, recorded per node as the cycle saw it
    assert {n: s.message() for n, s in too_big.diagnosis.node_to_status.items()} == {
        "small": "Insufficient cpu", "big": "Insufficient cpu"}
