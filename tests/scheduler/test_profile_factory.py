"""The scheduler builds each profile's Handle and Framework together (upstream profile.NewMap
passes every framework option at construction): a plugin's constructor already sees the
nominator, the waiting pods, the extenders, the metrics, the snapshot and its profile's runtime,
and the Handle is never changed afterwards (the snapshot is one object the cache refreshes, as
upstream's nodeInfoSnapshot)."""

from __future__ import annotations

from kschedfw import Code, Status, hookimpl
from kschedfw.cluster.memory import MemoryCluster
from kschedfw.framework.registry import Registry
from kschedfw.metrics import SchedulerMetrics
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.scheduler import Scheduler
from kschedfw.testing import config_for, make_node, make_pod

FACETS = ("nominator", "waiting_pods", "framework", "snapshot", "lister", "client", "event_recorder", "clock",
          "feature_gates", "extenders", "metrics")


class SeesTheHandle:
    """Notes, in its constructor, which Handle facets are missing; later, what the nominator
    and the snapshot it kept say during a cycle."""

    name = "SeesTheHandle"
    missing: list[str] = []
    seen_nodes: list[list[str]] = []

    def __init__(self, args, handle):
        type(self).missing = [facet for facet in FACETS if getattr(handle, facet) is None]
        self.nominator = handle.nominator
        self.snapshot = handle.snapshot
        self.handle = handle
        assert handle.nominator.nominated_pods_for_node("n1") == []

    @hookimpl
    def filter(self, state, pod, node_info):
        assert self.handle.nominator is self.nominator and self.handle.snapshot is self.snapshot
        type(self).seen_nodes.append([ni.name for ni in self.snapshot.node_infos()])
        return Status(Code.Success)


def test_a_plugin_constructor_sees_a_complete_handle_that_stays_the_same():
    classes = [PrioritySort, SeesTheHandle, DefaultBinder]
    registry = Registry.from_classes(classes)
    cluster = MemoryCluster()
    SeesTheHandle.seen_nodes = []
    scheduler = Scheduler(config_for(classes, registry=registry), registry, cluster, metrics=SchedulerMetrics())
    assert SeesTheHandle.missing == []
    plugin = scheduler.frameworks["default-scheduler"].plugins["SeesTheHandle"]
    assert plugin.nominator is scheduler.queue.nominator
    cluster.create(make_node("n1"))
    cluster.create(make_pod("a"))
    scheduler.run(until=0.0)
    cluster.create(make_node("n2"))  # a node came: the same snapshot object holds it
    cluster.create(make_pod("b"))
    scheduler.run(until=0.0)
    assert SeesTheHandle.seen_nodes[0] == ["n1"] and SeesTheHandle.seen_nodes[-1] == ["n1", "n2"]
    assert cluster.get("Pod", "b", "default").node_name
