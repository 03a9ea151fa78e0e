"""What upstream's schedule_one_podgroup_test.go builds its cases from: one node ``node1``, a
PodGroup ``pg`` of pods p1, p2, p3, and ``fakePodGroupPlugin``, whose Filter, PostFilter and
Permit answer by pod name. A scheduler is built for them with the embedded cluster, the group
gathered from its queue as the cycle gathers it."""

from __future__ import annotations

from typing import Any, Mapping

from kschedfw import Status, hookimpl
from kschedfw.api.load import parse_object
from kschedfw.fwk.features import FeatureGates
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import PostFilterResult
from kschedfw.framework.registry import Registry
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.simulation import Simulation
from kschedfw.testing import config_for

NODE = "node1"
OK = None
WAIT = Code.Wait
UNSCHEDULABLE = Code.Unschedulable
UNRESOLVABLE = Code.UnschedulableAndUnresolvable
ERROR = Code.Error


def status(code: Code | None, reason: str = "") -> Status | None:
    if code is None:
        return None
    if code is ERROR:
        return Status.as_status(reason or "fake error")
    return Status(code, (reason,) if reason else ())


class FakePodGroupPlugin:
    """upstream fakePodGroupPlugin: Filter, PostFilter and Permit by pod name (class attributes
    set per case); a pod it has no answer for is Unschedulable ("default fake ... failure"), and
    PostFilter nominates ``node1`` for the pods ``nominate`` names."""

    name = "FakePodGroupPlugin"
    filter_status: Mapping[str, Code | None] = {}
    post_filter_status: Mapping[str, Code | None] = {}
    nominate: frozenset[str] = frozenset()
    permit_status: Mapping[str, Code | None] = {}

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        if pod.name in self.filter_status:
            return status(self.filter_status[pod.name])
        return Status.unschedulable("default fake filter failure")

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        if pod.name in self.post_filter_status:
            result = PostFilterResult.nominate(NODE) if pod.name in self.nominate else None
            return result, status(self.post_filter_status[pod.name])
        return None, Status.unschedulable("default fake postfilter failure")

    @hookimpl
    def permit(self, state, pod, node_name):
        if pod.name in self.permit_status:
            return status(self.permit_status[pod.name]), 0
        return Status.unschedulable("default fake permit failure"), 0


def fake_plugin(*, filter: Mapping[str, Code | None] | None = None,
                post_filter: Mapping[str, Code | None] | None = None, nominate: tuple[str, ...] = (),
                permit: Mapping[str, Code | None] | None = None) -> type[FakePodGroupPlugin]:
    """A FakePodGroupPlugin class with the answers of one case."""
    return type("FakePodGroupPlugin", (FakePodGroupPlugin,), {
        "filter_status": dict(filter or {}), "post_filter_status": dict(post_filter or {}),
        "nominate": frozenset(nominate), "permit_status": dict(permit or {})})


def objects(pods: tuple[str, ...] = ("p1", "p2", "p3"), conditions: tuple[dict[str, Any], ...] = ()) -> list[Any]:
    group: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                             "metadata": {"name": "pg"}, "spec": {"schedulingPolicy": {"basic": {}}}}
    if conditions:
        group["status"] = {"conditions": list(conditions)}
    out = [parse_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE},
                         "status": {"allocatable": {"cpu": "4", "pods": "32"}}}),
           parse_object(group)]
    out += [parse_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                          "spec": {"schedulingGroup": {"podGroupName": "pg"},
                                   "containers": [{"name": "c", "image": "image"}]}}) for name in pods]
    return out


def scheduler_with(*plugins: type, topology_aware: bool = False, pods: tuple[str, ...] = ("p1", "p2", "p3"),
                   conditions: tuple[dict[str, Any], ...] = ()) -> Simulation:
    """A simulation of the objects above whose one profile runs ``plugins`` between PrioritySort
    and DefaultBinder; nothing scheduled yet."""
    gates = FeatureGates.parse(f"GenericWorkload=true,TopologyAwareWorkloadScheduling={str(topology_aware).lower()}")
    classes = [PrioritySort, *plugins, DefaultBinder]
    registry = Registry.from_classes(classes)
    return Simulation(config_for(classes, registry=registry), registry, objects(pods, conditions),
                      feature_gates=gates)


def gathered(sim: Simulation) -> list[Any]:
    """The group as the cycle gathers it at pop (p1, p2, p3), with the snapshot brought up to date."""
    cycle = sim.scheduler.scheduling
    cycle.cluster.deliver()
    first = cycle.queue.pop()
    assert first is not None and cycle.pod_groups is not None
    group = sorted(cycle.pod_groups.gather(first, "pg"), key=lambda q: q.pod.name)
    cycle.cache.update_snapshot()
    return group
