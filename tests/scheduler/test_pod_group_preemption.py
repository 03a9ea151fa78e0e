"""Workload-aware preemption in the pod-group cycle, through the embedded cluster, as upstream's
integration tests state it (podgrouppreemption_test.go's TestPodGroupPreemption, and
podgroup_test.go's TestWorkloadAwarePreemptionInvocation and TestPostFilterInvocationCount).

With GenericWorkload, GangScheduling and WorkloadAwarePreemption on, a pod group that does not fit
preempts as a whole: DefaultPreemption picks victims across the cluster (a pod, or every pod of a
PodGroup in PodGroup disruption mode, with the group's priority), each victim gets the
DisruptionTarget condition and the event "Preempted by podgroup <PodGroup uid> on node cluster",
and the group is bound once they are gone. A pod without a group still preempts alone."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw import hookimpl
from kschedfw import testing as kit
from kschedfw.api.workload import (DISRUPTION_MODE_POD_GROUP, POD_GROUP_KIND, GangSchedulingPolicy, PodGroup,
                                   PodGroupSchedulingPolicy)
from kschedfw.config.validate import default_config, load_config_text
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGates
from kschedfw.fwk.status import Status
from kschedfw.simulation import Simulation

GATES = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"
#: upstream's integration API server admits a pod's spec.priority as given (no Priority plugin)
ADMISSION = frozenset({"LimitRanger", "DefaultTolerationSeconds", "RuntimeClass"})


def node(name: str, cpu: str) -> Any:
    return kit.make_node(name, cpu=cpu, memory="4Gi", pods="32")


def pod(name: str, priority: int, *, cpu: str = "1", group: str | None = None, node_name: str = "",
        labels: dict[str, str] | None = None) -> Any:
    extra = {"schedulingGroup": {"podGroupName": group}} if group else {}
    return kit.make_pod(name, cpu=cpu, priority=priority, node_name=node_name, labels=labels,
                        terminationGracePeriodSeconds=0, **extra)


def pod_group(name: str, priority: int, min_count: int | None = None, mode: str = "Pod") -> PodGroup:
    """A gang of ``min_count``, or a basic group without it."""
    policy = PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count=min_count)) if min_count \
        else PodGroupSchedulingPolicy(basic=True)
    return PodGroup(name=name, uid=f"uid-{name}", priority=priority, scheduling_policy=policy, disruption_mode=mode)


def simulation(objects: list[Any], config: Any = None, registry: Any = None) -> Simulation:
    gates = FeatureGates.parse(GATES)
    registry = registry if registry is not None else default_registry()
    config = config if config is not None else default_config(registry, gates)
    return Simulation(config, registry, objects, feature_gates=gates, admission_plugins=ADMISSION)


def scheduled(sim: Simulation, name: str) -> bool:
    p = sim.cluster.get("Pod", name, "default")
    return p is not None and bool(p.node_name) and p.deletion_timestamp is None


def preempted(sim: Simulation, name: str) -> bool:
    """Gone, being deleted, or with the DisruptionTarget condition (upstream's check)."""
    p = sim.cluster.get("Pod", name, "default")
    return p is None or p.deletion_timestamp is not None or p.condition("DisruptionTarget") is not None


def unschedulable(sim: Simulation, name: str) -> bool:
    p = sim.cluster.get("Pod", name, "default")
    cond = p.condition("PodScheduled") if p is not None else None
    return cond is not None and (cond.status, cond.reason) == ("False", "Unschedulable")


def preempted_by_pod_group(sim: Simulation, names: list[str]) -> int:
    """How many of ``names`` got a "Preempted by podgroup" event (one each at most)."""
    return sum(any(e.reason == "Preempted" and e.message.startswith("Preempted by podgroup")
                   and e.object_key == f"default/{n}" for e in sim.cluster.events) for n in names)


LOW_3 = [pod("low-1", 10), pod("low-2", 10), pod("low-3", 10)]
HIGH_3 = [pod("high-1", 100, group="pg1"), pod("high-2", 100, group="pg1"), pod("high-3", 100, group="pg1")]
PG2_LOW = [pod("low-1", 10, group="pg2"), pod("low-2", 10, group="pg2"), pod("low-3", 10, group="pg2")]

# upstream TestPodGroupPreemption, its 13 cases in order
CASES = [
    dict(name="Full PodGroup Preemption", nodes=[node("node1", "3")], groups=[pod_group("pg1", 100, 3)],
         initial=LOW_3, preemptors=HIGH_3, scheduled=["high-1", "high-2", "high-3"],
         preempted=["low-1", "low-2", "low-3"], by_wap=3),
    dict(name="Full PodGroup Preemption for basic policy", nodes=[node("node1", "3")], groups=[pod_group("pg1", 100)],
         initial=LOW_3, preemptors=HIGH_3, scheduled=["high-1", "high-2", "high-3"],
         preempted=["low-1", "low-2", "low-3"], by_wap=3),
    dict(name="Partial Preemption", nodes=[node("node1", "2"), node("node2", "2")], groups=[pod_group("pg1", 100, 3)],
         initial=[pod("low-1", 10, cpu="2", node_name="node1"), pod("low-2", 10, node_name="node2")],
         preemptors=HIGH_3, scheduled=["high-1", "high-2", "high-3", "low-2"], preempted=["low-1"], by_wap=1),
    dict(name="Partial Preemption with basic policy", nodes=[node("node1", "2"), node("node2", "2")],
         groups=[pod_group("pg1", 100)],
         initial=[pod("low-1", 10, node_name="node1"), pod("very-low-1", 5, cpu="2", node_name="node2")],
         preemptors=HIGH_3, scheduled=["high-1", "high-2", "high-3", "low-1"], preempted=["very-low-1"], by_wap=1),
    dict(name="PDB Violation Handling (Reprieve)", nodes=[node("node1", "3")], groups=[pod_group("pg1", 100, 2)],
         initial=[pod("low-1", 10, labels={"app": "foo"}), pod("low-2", 10, labels={"app": "foo"}), pod("low-3", 10)],
         pdb=kit.make_pdb("foo-pdb", match_labels={"app": "foo"}, min_available=2),
         preemptors=[pod("high-1", 100, cpu="500m", group="pg1"), pod("high-2", 100, cpu="500m", group="pg1")],
         scheduled=["high-1", "high-2"], preempted=["low-3"], by_wap=1),
    dict(name="Multi-node Preemption", nodes=[node("node1", "2"), node("node2", "2")],
         groups=[pod_group("pg1", 100, 4)],
         initial=[pod("low-1", 10, node_name="node1"), pod("low-2", 10, node_name="node1"),
                  pod("low-3", 10, node_name="node2"), pod("low-4", 10, node_name="node2")],
         preemptors=[*HIGH_3, pod("high-4", 100, group="pg1")], scheduled=["high-1", "high-2", "high-3", "high-4"],
         preempted=["low-1", "low-2", "low-3", "low-4"], by_wap=4),
    dict(name="Insufficient Resources (No Preemption)", nodes=[node("node1", "3")], groups=[pod_group("pg1", 100, 3)],
         initial=[pod("mid-1", 500), pod("low-1", 10), pod("low-2", 10)], preemptors=HIGH_3,
         scheduled=["mid-1", "low-1", "low-2"], preempted=[], unschedulable=["high-1", "high-2", "high-3"], by_wap=0),
    dict(name="Priority-based Victim Selection", nodes=[node("node1", "3")], groups=[pod_group("pg1", 100, 2)],
         initial=[pod("mid-1", 50), pod("low-1", 10), pod("low-2", 10)], preemptors=HIGH_3[:2],
         scheduled=["high-1", "high-2", "mid-1"], preempted=["low-1", "low-2"], by_wap=2),
    dict(name="Preempt the whole PodGroup even if preempting a single Pod would suffice", nodes=[node("node1", "3")],
         groups=[pod_group("pg1", 100, 1), pod_group("pg2", 10, 3, DISRUPTION_MODE_POD_GROUP)],
         initial=PG2_LOW, preemptors=HIGH_3[:1], scheduled=["high-1"], preempted=["low-1", "low-2", "low-3"],
         by_wap=3),
    dict(name="Preempt the whole basic PodGroup with a PodGroup disruption mode", nodes=[node("node1", "3")],
         groups=[pod_group("pg1", 100, 1), pod_group("pg2", 10, None, DISRUPTION_MODE_POD_GROUP)],
         initial=PG2_LOW, preemptors=HIGH_3[:1], scheduled=["high-1"], preempted=["low-1", "low-2", "low-3"],
         by_wap=3),
    dict(name="Priority divergence in PodGroups - preemptor PodGroup has higher priority than the victim candidate "
              "PodGroup", nodes=[node("node1", "3")],
         groups=[pod_group("pg1", 100, 1), pod_group("pg2", 10, 3, DISRUPTION_MODE_POD_GROUP)],
         initial=[pod("high-1", 100, group="pg2"), pod("high-2", 100, group="pg2"), pod("high-3", 100, group="pg2")],
         preemptors=[pod("low-1", 10, group="pg1")], scheduled=["low-1"], preempted=["high-1", "high-2", "high-3"],
         by_wap=3),
    dict(name="Priority divergence in PodGroups - preemptor PodGroup has too low priority", nodes=[node("node1", "3")],
         groups=[pod_group("pg1", 10, 1), pod_group("pg2", 100, 3, DISRUPTION_MODE_POD_GROUP)],
         initial=PG2_LOW, preemptors=HIGH_3[:1], scheduled=["low-1", "low-2", "low-3"], preempted=[],
         unschedulable=["high-1"], by_wap=0),
    dict(name="Preemptor Pod without PodGroupName does not respect the PodGroup disruption mode",
         nodes=[node("node1", "3")], groups=[pod_group("pg1", 10, 1)],
         initial=[pod("low-1", 30, group="pg1"), pod("low-2", 20, group="pg1"), pod("low-3", 10, group="pg1")],
         preemptors=[pod("high-1", 100)], scheduled=["high-1", "low-1", "low-2"], preempted=["low-3"], by_wap=0),
]


def run_case(tc: dict[str, Any]) -> Simulation:
    """Upstream's steps: nodes, the PDB, the PodGroups and the initial pods, all scheduled; then
    the preemptors, and the run until it settles."""
    objects = [*tc["nodes"], *([tc["pdb"]] if "pdb" in tc else []), *tc["groups"], *tc["initial"]]
    sim = simulation(objects)
    sim.run()
    assert [p.name for p in tc["initial"] if not scheduled(sim, p.name)] == []
    for p in tc["preemptors"]:
        sim.cluster.create(p)
    sim.run()
    return sim


@pytest.mark.parametrize("tc", CASES, ids=[c["name"] for c in CASES])
def test_pod_group_preemption(tc: dict[str, Any]) -> None:
    sim = run_case(tc)
    assert preempted_by_pod_group(sim, tc["preempted"]) == tc["by_wap"]
    assert [n for n in tc.get("unschedulable", []) if not unschedulable(sim, n)] == []
    assert [n for n in tc["scheduled"] if not scheduled(sim, n)] == []
    assert [n for n in tc["preempted"] if not preempted(sim, n)] == []


def test_victims_are_told_which_podgroup_preempted_them():
    """Full PodGroup Preemption: each victim's event names the PodGroup's uid and the literal node
    "cluster", its condition the podgroup; the group is Scheduled in the end."""
    sim = run_case(CASES[0])
    messages = sorted((e.object_key.partition("/")[2], e.message) for e in sim.cluster.events if e.reason == "Preempted")
    assert messages == [(n, "Preempted by podgroup uid-pg1 on node cluster") for n in ("low-1", "low-2", "low-3")]
    group = sim.cluster.get(POD_GROUP_KIND, "pg1", "default")
    cond = group.condition("PodGroupScheduled")
    assert (cond.status, cond.reason) == ("True", "Scheduled")


# --------------------------------------------------------------------------- podgroup_test.go

def invocation_objects() -> list[Any]:
    """One node of 4 CPUs full of priority-10 pods, then a gang of 3 (minCount 3, PodGroup
    disruption mode, priority 100) of a Workload's template."""
    from kschedfw.api.load import parse_manifests
    (workload,) = parse_manifests("""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: workload, namespace: default}
spec:
  podGroupTemplates:
  - name: t1
    schedulingPolicy: {gang: {minCount: 3}}
""")
    (group,) = parse_manifests("""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg1, namespace: default}
spec:
  podGroupTemplateRef: {workload: {workloadName: workload, podGroupTemplateName: t1}}
  schedulingPolicy: {gang: {minCount: 3}}
  disruptionMode: PodGroup
  priority: 100
""")
    return [workload, group]


LOW_4 = [kit.make_pod(f"low-{i}", cpu="1", priority=10) for i in range(1, 5)]
HIGH_GANG = [kit.make_pod(f"high-{i}", cpu="1", priority=100, schedulingGroup={"podGroupName": "pg1"})
             for i in range(1, 4)]


def run_invocation(config: Any = None, registry: Any = None) -> Simulation:
    sim = simulation([kit.make_node("node", cpu="4", pods="32"), *LOW_4], config, registry)
    sim.run()
    assert all(scheduled(sim, p.name) for p in LOW_4)
    for obj in [*invocation_objects(), *HIGH_GANG]:
        sim.cluster.create(obj)
    sim.run()
    return sim


def test_workload_aware_preemption_invocation():
    """TestWorkloadAwarePreemptionInvocation: a low-priority pod gets a "Preempted by podgroup"
    event."""
    sim = run_invocation()
    assert preempted_by_pod_group(sim, [p.name for p in LOW_4]) > 0
    assert all(scheduled(sim, p.name) for p in HIGH_GANG)


class MockPostFilter:
    """Counts its calls and rejects (upstream mockPostFilterPlugin)."""

    name = "MockPostFilter"
    count = 0
    #: (simulated time, pod) of each call
    calls: list[tuple[float, str]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        MockPostFilter.count = 0
        MockPostFilter.calls = []
        self.clock = handle.clock

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        MockPostFilter.count += 1
        MockPostFilter.calls.append((self.clock.now(), pod.name))
        return None, Status.unschedulable()


def test_post_filter_invocation_count():
    """TestPostFilterInvocationCount: with postFilter MockPostFilter then DefaultPreemption, the
    mock runs once per pod of the group in its cycle, and never in workload-aware preemption's
    reruns of the group's algorithm. Upstream counts the first cycle's calls (3), with no backoff;
    here the group's pods are also retried after their backoff while the victims terminate, and
    each such cycle calls the mock once per pod again, at one instant, never more."""
    registry = default_registry()
    registry.add_class(MockPostFilter)
    config, diagnostics = load_config_text("""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    postFilter:
      enabled: [{name: MockPostFilter}, {name: DefaultPreemption}]
""", "config.yaml", registry, FeatureGates.parse(GATES))
    assert config is not None, diagnostics
    sim = run_invocation(config, registry)
    cycles: dict[float, list[str]] = {}
    for at, pod in MockPostFilter.calls:
        cycles.setdefault(at, []).append(pod)
    assert all(sorted(pods) == sorted(p.name for p in HIGH_GANG) for pods in cycles.values()), cycles
    assert MockPostFilter.count == 3 * len(cycles)
    assert all(scheduled(sim, p.name) for p in HIGH_GANG)


# --------------------------------------------------------------------------- schedule_one_podgroup_test.go

def fake_plugin(name: str, pod_group_post_filter_status: Status | None = None) -> type:
    """Upstream's fakePodGroupPlugin under ``name``: Filter rejects every pod, PostFilter and
    Permit reject, PodGroupPostFilter records its call and returns the status it is given
    (Unschedulable "default fake podgroup postfilter failure" without one)."""
    calls: list[str] = []

    class Fake:
        called = calls

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        @hookimpl
        def filter(self, state, pod, node_info):
            return Status.unschedulable(f"always fail {pod.name}")

        @hookimpl
        def post_filter(self, state, pod, filtered_node_status_map):
            return None, Status.unschedulable("default fake postfilter failure")

        @hookimpl
        def permit(self, state, pod, node_name):
            return Status.unschedulable("default fake permit failure"), 0

        @hookimpl
        def pod_group_post_filter(self, pod_group, pods, pod_group_scheduling_func):
            calls.append(pod_group.name)
            if pod_group_post_filter_status is not None:
                return pod_group_post_filter_status
            return Status.unschedulable("default fake podgroup postfilter failure")

    Fake.name = name
    return Fake


def cycle_with(plugin: type | None, *, wap: bool, objects: list[Any] = ()) -> Simulation:
    """A "test-scheduler" profile of PrioritySort, DefaultBinder and ``plugin``, gates on but
    WorkloadAwarePreemption as ``wap`` says, on the embedded cluster holding ``objects``."""
    from kschedfw.framework.registry import Registry
    from kschedfw.plugins.defaultbinder import DefaultBinder
    from kschedfw.plugins.queuesort import PrioritySort
    classes = [PrioritySort, DefaultBinder, *([plugin] if plugin is not None else [])]
    registry = Registry.from_classes(classes)
    gates = FeatureGates.parse(f"GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption={str(wap).lower()}")
    return Simulation(kit.config_for(classes, registry=registry, scheduler_name="test-scheduler"), registry,
                      objects, feature_gates=gates, admission_plugins=ADMISSION)


def constrained_group(name: str) -> PodGroup:
    from kschedfw.api.workload import PodGroupSchedulingConstraints, TopologyConstraint
    return PodGroup(name=name, uid=name, scheduling_constraints=PodGroupSchedulingConstraints(
        topology=(TopologyConstraint(),)))


NOT_FOUND = 'failed to get pod group object: podgroup.scheduling.k8s.io "{}" not found'

# upstream TestRunWorkloadAwarePreemption, its 6 cases in order
RUN_WAP_CASES = [
    ("error when no PodGroupPostFilter plugin is registered", "pg1", [], False, None,
     Status.unschedulable("default preemption plugin is not registered, workload aware preemption is disabled")),
    ("error when pod group is not found in informer", "missing-pg", [], True, None,
     Status.as_status(NOT_FOUND.format("missing-pg"))),
    ("error when pod group has scheduling constraints", "pg-with-constraints",
     [constrained_group("pg-with-constraints")], True, None,
     Status.unschedulable("workload aware preemption is not supported for pod groups with scheduling constraints")),
    ("success when plugin returns success status", "pg-success", [PodGroup(name="pg-success", uid="pg-success")],
     True, Status.success(), Status.success()),
    ("failure when plugin returns unschedulable status", "pg-unschedulable",
     [PodGroup(name="pg-unschedulable", uid="pg-unschedulable")], True, Status.unschedulable("not enough resources"),
     Status.unschedulable("not enough resources")),
    ("error when pod group does not exist", "pg-unschedulable", [], True, Status.success(),
     Status.as_status(NOT_FOUND.format("pg-unschedulable"))),
]


@pytest.mark.parametrize("name,group,groups,registered,plugin_status,want", RUN_WAP_CASES,
                         ids=[c[0] for c in RUN_WAP_CASES])
def test_run_workload_aware_preemption(name, group, groups, registered, plugin_status, want):
    """The cycle's entry point: no DefaultPreemption (the gate off: none registered), a PodGroup
    the lister does not have, or one with a topology constraint are refused before the plugin
    runs; otherwise the plugin's status is the result."""
    from kschedfw.fwk.cycle_state import CycleState
    plugin = fake_plugin("DefaultPreemption", plugin_status) if registered else None
    sim = cycle_with(plugin, wap=registered, objects=groups)
    fwk = sim.scheduler.frameworks["test-scheduler"]
    queued = [sim.scheduler.queue.new_queued_pod_info(kit.make_pod("p1", scheduler_name="test-scheduler"))]
    status = sim.scheduler.scheduling.pod_groups.run_workload_aware_preemption(fwk, CycleState(), queued,
                                                                               "default", group)
    assert (status.code, status.message()) == (want.code, want.message())
    reached = plugin_status is not None and bool(groups)
    assert plugin is None or plugin.called == ([group] if reached else [])


# upstream TestPodGroupCycle_PodGroupPostFilter, its 3 cases in order
POST_FILTER_CASES = [
    ("runs pod group post filter when WAP is enabled and DefaultPreemption is registered", True,
     "DefaultPreemption", True),
    ("disables pod group post filter when WAP feature gate is disabled", False, "DefaultPreemption", False),
    ("disables pod group post filter when DefaultPreemption is not registered", True, "FakePodGroupPlugin", False),
]


@pytest.mark.parametrize("name,wap,plugin_name,called", POST_FILTER_CASES, ids=[c[0] for c in POST_FILTER_CASES])
def test_pod_group_cycle_runs_pod_group_post_filter(name, wap, plugin_name, called):
    """A group whose pods every node rejects: its cycle calls PodGroupPostFilter only with the
    gate on, and only the plugin named DefaultPreemption's."""
    plugin = fake_plugin(plugin_name)
    objects = [kit.make_node("node1"), PodGroup(name="pg", uid="pg"),
               *(kit.make_pod(n, uid=n, scheduler_name="test-scheduler", schedulingGroup={"podGroupName": "pg"})
                 for n in ("p1", "p2"))]
    sim = cycle_with(plugin, wap=wap, objects=objects)
    sim.run()
    assert bool(plugin.called) is called
    assert not any(scheduled(sim, n) for n in ("p1", "p2"))


def test_a_victim_the_group_has_anti_affinity_to_is_preempted():
    """The reruns see the cluster without the victims, pod indexes included: a group pod with
    required anti-affinity to a lower-priority pod preempts it (upstream's PreFilter walks the
    NodeInfos, which the victims have left)."""
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "victim"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    sim = simulation([node("node1", "4"), pod_group("pg1", 100, 1), pod("low-1", 10, labels={"app": "victim"})])
    sim.run()
    sim.cluster.create(kit.make_pod("high-1", cpu="1", priority=100, affinity=anti, terminationGracePeriodSeconds=0,
                                    schedulingGroup={"podGroupName": "pg1"}))
    sim.run()
    assert preempted_by_pod_group(sim, ["low-1"]) == 1
    assert scheduled(sim, "high-1") and preempted(sim, "low-1")
