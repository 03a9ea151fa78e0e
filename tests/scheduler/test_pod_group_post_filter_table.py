"""Upstream's TestPodGroupCycle_PodGroupPostFilter (pkg/scheduler/schedule_one_podgroup_test.go):
a group whose pods never fit runs the PodGroupPostFilter of the profile's DefaultPreemption only
while WorkloadAwarePreemption is on, and not when another plugin is the profile's PostFilter."""

from __future__ import annotations

import pytest

from kschedfw import Status, hookimpl
from kschedfw.framework.registry import Registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for
from tests.scheduler.pod_group_fakes import objects



class FakePodGroupPlugin:
    """Filter fails p1 and p2; PostFilter finds nothing; PodGroupPostFilter records its call."""

    name = "FakePodGroupPlugin"
    calls: list[str]

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable(f"always fail {pod.name}")

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        return None, Status.unschedulable("default fake postfilter failure")

    @hookimpl
    def pod_group_post_filter(self, pod_group, pods, pod_group_scheduling_func):
        type(self).calls.append(pod_group.name)
        return Status.unschedulable("default fake podgroup postfilter failure")


@pytest.mark.parametrize("name, workload_aware_preemption, post_filter_plugin, called", [
    pytest.param("runs pod group post filter when WAP is enabled and DefaultPreemption is registered",
                 True, "DefaultPreemption", True),
    ("disables pod group post filter when WAP feature gate is disabled", False, "DefaultPreemption", False),
    ("disables pod group post filter when DefaultPreemption is not registered", True, "FakePodGroupPlugin", False),
])
def test_pod_group_post_filter(name, workload_aware_preemption, post_filter_plugin, called):
    plugin = type(post_filter_plugin, (FakePodGroupPlugin,), {"name": post_filter_plugin, "calls": []})
    classes = [PrioritySort, plugin, DefaultBinder]
    registry = Registry.from_classes(classes)
    gates = FeatureGates.parse("GenericWorkload=true,GangScheduling=true,"
                               f"WorkloadAwarePreemption={str(workload_aware_preemption).lower()}")
    sim = Simulation(config_for(classes, registry=registry), registry, objects(("p1", "p2")), feature_gates=gates)
    sim.run()
    assert all(p.condition("PodScheduled") is not None for p in sim.cluster.list("Pod"))  # the group was tried
    assert bool(plugin.calls) is called
