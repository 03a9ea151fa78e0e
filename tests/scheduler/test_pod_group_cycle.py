"""The pod-group scheduling cycle (gate GenericWorkload): a pod of a PodGroup is scheduled with
its whole group, all or nothing for a gang, and the PodGroup gets the PodGroupScheduled
condition, as kube-scheduler v1.36 does."""

from __future__ import annotations

import pytest

from kschedfw.api.load import parse_manifests
from kschedfw.api.workload import POD_GROUP_KIND, PodGroup
from kschedfw.config.defaults import default_plugins
from kschedfw.config.validate import default_config
from kschedfw.framework.registry import default_registry
from kschedfw.fwk.features import FeatureGateError, FeatureGates
from kschedfw.simulation import Simulation

GATES = "GenericWorkload=true,GangScheduling=true"


def cluster(cpu: str, *, policy: str = "{gang: {minCount: 4}}", pods: int = 4) -> str:
    """Two nodes of 2 CPUs, a Workload and its PodGroup, and ``pods`` pods of ``cpu`` each."""
    text = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: train}
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy: POLICY
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: POLICY
""".replace("POLICY", policy)
    for i in range(pods):
        text += f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: m-{i}}}
spec:
  schedulingGroup: {{podGroupName: train}}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""
    return text


def simulate(text: str, gates: str = GATES) -> Simulation:
    feature_gates = FeatureGates.parse(gates)
    registry = default_registry()
    sim = Simulation(default_config(registry, feature_gates), registry, parse_manifests(text),
                     feature_gates=feature_gates)
    sim.run()
    return sim


def bound(sim: Simulation) -> dict[str, str]:
    return {p.name: p.node_name for p in sim.cluster.list("Pod") if p.node_name}


def scheduled_condition(sim: Simulation) -> tuple[str, str, str]:
    group = sim.cluster.get(POD_GROUP_KIND, "train", "default")
    assert isinstance(group, PodGroup)
    cond = group.condition("PodGroupScheduled")
    assert cond is not None
    return cond.status, cond.reason, cond.message


def test_a_gang_of_which_only_some_pods_fit_binds_none_and_is_marked_unschedulable():
    """Gang of 4, minCount 4, room for 2: no pod is bound, and the PodGroup has
    PodGroupScheduled=False/Unschedulable "pod group is unschedulable". The pods that fitted
    and waited at Permit say why they wait; the others say why they did not fit."""
    sim = simulate(cluster("1500m"))
    assert bound(sim) == {}
    assert scheduled_condition(sim) == ("False", "Unschedulable", "pod group is unschedulable")
    messages = sorted(p.condition("PodScheduled").message for p in sim.cluster.list("Pod"))
    waited = ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
              "one or more plugins asked to wait and no plugin rejected pod")
    assert messages.count(waited) == 2
    assert sum(m.startswith("0/2 nodes are available: 2 Insufficient cpu.") for m in messages) == 2


def test_a_gang_that_fits_is_bound_whole_and_marked_scheduled():
    """Gang of 4 with room for all: all 4 bound, PodGroupScheduled=True/Scheduled, no message."""
    sim = simulate(cluster("1"))
    assert sorted(bound(sim)) == ["m-0", "m-1", "m-2", "m-3"]
    assert sorted(bound(sim).values()) == ["n1", "n1", "n2", "n2"]
    assert scheduled_condition(sim) == ("True", "Scheduled", "")


def test_a_basic_group_binds_the_pods_that_fit():
    """A basic policy has no quorum: the pods that fit are bound, the group is Scheduled."""
    sim = simulate(cluster("1500m", policy="{basic: {}}"))
    assert len(bound(sim)) == 2
    assert scheduled_condition(sim)[:2] == ("True", "Scheduled")


def test_a_gang_waits_out_of_the_queue_until_min_count_pods_exist():
    """GangScheduling PreEnqueue: with 3 of minCount 4 pods, none is tried, the PodGroup gets
    no condition and the pods no PodScheduled condition."""
    sim = simulate(cluster("1", pods=3))
    assert bound(sim) == {}
    group = sim.cluster.get(POD_GROUP_KIND, "train", "default")
    assert group.condition("PodGroupScheduled") is None
    assert all(p.condition("PodScheduled") is None for p in sim.cluster.list("Pod"))


def test_with_the_gates_off_the_pods_are_scheduled_one_by_one():
    """GenericWorkload off: the group means nothing to the scheduler; the 2 pods that fit are
    bound and the PodGroup gets no condition."""
    sim = simulate(cluster("1500m"), gates="")
    assert len(bound(sim)) == 2

    group = sim.cluster.get(POD_GROUP_KIND, "train", "default")
    assert group is None or group.condition("PodGroupScheduled") is None


@pytest.mark.parametrize("gates, message", [
    ("GangScheduling=true", "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("TopologyAwareWorkloadScheduling=true",
     "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("GenericWorkload=true,WorkloadAwarePreemption=true",
     "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]"),
    ("DRAWorkloadResourceClaims=true",
     "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload]"),
])
def test_a_gate_whose_dependency_is_off_is_refused(gates, message):
    """component-base featuregate refuses a gate on while one it depends on is off."""
    with pytest.raises(FeatureGateError) as err:
        FeatureGates.parse(gates)
    assert str(err.value) == message


def test_the_workload_gates_add_their_plugins_to_the_defaults():
    """default_plugins.go: GangScheduling appends GangScheduling to multiPoint;
    TopologyAwareWorkloadScheduling appends TopologyPlacementGenerator and PodGroupPodsCount
    (weight 1); with the gates off the defaults are v1.36's."""
    off = [r.name for r in default_plugins(FeatureGates())["multiPoint"].enabled]
    assert off[-1] == "DefaultBinder"
    on = default_plugins(FeatureGates.parse(GATES + ",TopologyAwareWorkloadScheduling=true"))["multiPoint"].enabled
    assert [r.name for r in on] == [*off, "GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount"]
    assert on[-1].weight == 1


def test_the_in_tree_pod_group_is_read_typed_and_the_coscheduling_one_stays_generic():
    """Manifests dispatch by API group: scheduling.k8s.io's PodGroup is a PodGroup stored under
    "scheduling.k8s.io/PodGroup"; scheduling.x-k8s.io's stays a generic "PodGroup"."""
    ours, theirs = parse_manifests("""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: a}
spec: {schedulingPolicy: {basic: {}}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: b}
spec: {minMember: 2}
""")
    assert isinstance(ours, PodGroup) and ours.kind == POD_GROUP_KIND
    assert not isinstance(theirs, PodGroup) and theirs.kind == "PodGroup"


def test_simulate_writes_the_pod_group_condition_out(tmp_path, capsys):
    """`simulate --write-out` with the gates on writes the PodGroup with its PodGroupScheduled
    condition, and the table shows every pod of a failed gang pending."""
    import yaml

    from kschedfw.cli.main import main
    manifests = tmp_path / "gang.yaml"
    manifests.write_text(cluster("1500m"))
    out = tmp_path / "after.yaml"
    main(["simulate", str(manifests), "--feature-gates", GATES, "--write-out", str(out)])
    table = capsys.readouterr().out
    assert "total: 4 pending" in table
    written = yaml.safe_load(out.read_text())["items"]
    group = next(o for o in written if o["kind"] == "PodGroup")
    [cond] = group["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == \
        ("PodGroupScheduled", "False", "Unschedulable", "pod group is unschedulable")


def racks(cpu: str) -> str:
    """Rack r1: two nodes of 4 CPUs; rack r2: two of 2 CPUs; a gang of 4 (minCount 4) that
    must share one rack, pods of ``cpu`` each."""
    nodes = "".join(f"""\
apiVersion: v1
kind: Node
metadata: {{name: {n}, labels: {{rack: {r}}}}}
status: {{allocatable: {{cpu: "{c}", memory: 8Gi, pods: "110"}}}}
---
""" for n, r, c in (("a1", "r1", "4"), ("a2", "r1", "4"), ("b1", "r2", "2"), ("b2", "r2", "2")))
    text = cluster(cpu).split("---\n", 2)[2]  # the Workload, PodGroup and pods
    pod_group_spec = "podGroupTemplateName: workers}}\n  schedulingPolicy: {gang: {minCount: 4}}\n"
    assert pod_group_spec in text
    text = text.replace(pod_group_spec, pod_group_spec + "  schedulingConstraints: {topology: [{key: rack}]}\n")
    return nodes + text


TAS = GATES + ",TopologyAwareWorkloadScheduling=true"


def test_a_gang_with_a_topology_constraint_goes_to_the_one_rack_it_fits_in():
    """TopologyPlacementGenerator: one placement per rack; only r1 holds 4 pods of 1.5 CPUs,
    so all 4 are bound there."""
    sim = simulate(racks("1500m"), gates=TAS)
    assert sorted(bound(sim).values()) == ["a1", "a1", "a2", "a2"]
    assert scheduled_condition(sim) == ("True", "Scheduled", "")


def test_of_two_feasible_racks_the_fuller_placement_wins():
    """Both racks hold 4 pods of 1 CPU; PodGroupPodsCount ties, NodeResourcesFit's placement
    score (MostAllocated) prefers r2, which the gang fills."""
    sim = simulate(racks("1"), gates=TAS)
    assert sorted(bound(sim).values()) == ["b1", "b1", "b2", "b2"]


def test_a_gang_that_fits_in_no_rack_says_so_for_the_first_placement():
    """No rack holds 4 pods of 3 CPUs: none is bound, and the PodGroup's message is upstream's
    "0/2 placements are available, first placement status: ..."."""
    sim = simulate(racks("3"), gates=TAS)
    assert bound(sim) == {}
    status, reason, message = scheduled_condition(sim)
    assert (status, reason) == ("False", "Unschedulable")
    assert message.startswith("0/2 placements are available, first placement status: pod group is unschedulable")


def test_a_pod_group_the_api_server_refuses_is_refused_on_create():
    """The embedded API server validates a PodGroup written in a manifest as kube-apiserver's
    strategy does, with its message (a gang's minCount is required)."""
    from kschedfw.cluster.apiserver.admission import AdmissionError, validate_create
    [pg] = parse_manifests("""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg}
spec:
  podGroupTemplateRef: {workload: {workloadName: w, podGroupTemplateName: t}}
  schedulingPolicy: {gang: {minCount: 0}}
""")
    with pytest.raises(AdmissionError) as err:
        validate_create(pg)
    assert str(err.value) == 'PodGroup.scheduling.k8s.io "pg" is invalid: spec.schedulingPolicy.gang.minCount: Required value'
    validate_create(parse_manifests(cluster("1"))[3])  # the valid PodGroup of the gang example passes


@pytest.mark.parametrize("gates, kept", [("", False), (GATES, True)])
def test_the_api_server_drops_the_scheduling_group_while_generic_workload_is_off(tmp_path, gates, kept):
    """A pod written with spec.schedulingGroup is stored without it while GenericWorkload is
    off (kube-apiserver's pod strategy), with it when the gate is on."""
    from kschedfw.cluster.inputs.manifests import admit, read_inputs
    path = tmp_path / "gang.yaml"
    path.write_text(cluster("1"))
    accepted, refused = admit(read_inputs([path]), FeatureGates.parse(gates))
    assert refused == []
    pods = [o for o in accepted.objects if type(o).__name__ == "Pod"]
    assert len(pods) == 4
    assert all((p.scheduling_group is not None) == kept and ("schedulingGroup" in p.raw["spec"]) == kept
               for p in pods)


def test_placements_are_scored_on_a_snapshot_without_the_pods_of_the_last_placement_tried():
    """PodGroupPodsCount scores a placement by the group's scheduled pods plus the pods it
    proposes. Upstream forgets each placement's assumed pods in the snapshot before scoring
    (ForgetPlacement), so with none scheduled rack r1 (3 pods) scores 100 and r2 (2 pods) 66;
    NodeResourcesFit's MostAllocated gives r1 46 (3 of 4 CPUs, 3 of 16Gi) and r2 75 (2 of 2, 2 of
    4Gi): r1 wins, 146 to 141. Counting the last placement's pods as scheduled would give r2
    80 or 83 and the win. (Found by the differential fuzzer's gang kind.)"""
    text = """\
apiVersion: v1
kind: Node
metadata: {name: a1, labels: {rack: r1}}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b1, labels: {rack: r2}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: train}
spec:
  podGroupTemplates:
  - {name: workers, schedulingPolicy: {basic: {}}, schedulingConstraints: {topology: [{key: rack}]}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: {basic: {}}
  schedulingConstraints: {topology: [{key: rack}]}
"""
    for i in range(3):
        text += f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: m-{i}}}
spec:
  schedulingGroup: {{podGroupName: train}}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]
"""
    sim = simulate(text, gates=TAS)
    assert sorted(bound(sim).values()) == ["a1", "a1", "a1"]
    assert scheduled_condition(sim) == ("True", "Scheduled", "")
