"""The kit's builders produce the objects the scheduler would read from the equivalent YAML."""

from __future__ import annotations

import pytest

from kschedfw.api import parse_object
from kschedfw.api.field import ManifestError
from kschedfw.testing import (HOSTNAME, ZONE, container, label_selector, make_csi_node, make_namespace,
                              make_node, make_pdb, make_pod, make_priority_class, make_pv, make_pvc,
                              make_storage_class, node_affinity, owner_reference, pod_affinity_term,
                              spread_constraint, taint, toleration)


def test_pod_equals_the_parsed_manifest():
    pod = make_pod("web", namespace="ns", cpu="500m", memory="1Gi", labels={"app": "web"}, priority=10,
                   node_selector={"disk": "ssd"}, tolerations=[toleration("k", "v", "NoSchedule")],
                   scheduling_gates=["example.com/gate"], uid="u1")
    assert pod == parse_object({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u1", "labels": {"app": "web"}},
        "spec": {"schedulerName": "default-scheduler", "priority": 10, "nodeSelector": {"disk": "ssd"},
                 "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
                 "schedulingGates": [{"name": "example.com/gate"}],
                 "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}})


def test_pod_fields():
    pod = make_pod("p", cpu="1", limits={"cpu": "2"}, host_ports=[80, (53, "UDP")], pvcs=["data"],
                   owner=owner_reference("ReplicaSet", "rs"), nominated_node_name="n1", terminating=True,
                   priority_class_name="high", preemption_policy="Never", phase="Running",
                   init_containers=[container("init", requests={"cpu": "2"}, restart_policy="Always")],
                   overhead={"cpu": "100m"}, hostNetwork=True)
    main = pod.containers[0]
    assert (main.requests, main.limits) == ({"cpu": 1000}, {"cpu": 2000})
    assert [(p.host_port, p.protocol) for p in main.ports] == [(80, "TCP"), (53, "UDP")]
    assert [v.claim_name for v in pod.volumes] == ["data"]
    assert pod.owner_references[0]["kind"] == "ReplicaSet"
    assert pod.nominated_node_name == "n1" and pod.deletion_timestamp is not None
    assert (pod.priority_class_name, pod.preemption_policy, pod.phase) == ("high", "Never", "Running")
    assert pod.init_containers[0].restart_policy == "Always"
    assert pod.overhead == {"cpu": 100} and pod.host_network


def test_pod_overhead_empty_is_written_and_none_is_left_out():
    """An empty overhead is a value of its own (RuntimeClass admission accepts it where a class
    sets none), so the builder writes ``overhead={}`` and leaves the field out only for None."""
    assert make_pod("p", overhead={}).raw["spec"]["overhead"] == {}
    assert "overhead" not in make_pod("p").raw["spec"]


def test_pod_with_explicit_containers_refuses_shortcut_resources():
    pod = make_pod("p", containers=[container("a", requests={"cpu": "1"}), container("b")])
    assert [c.name for c in pod.containers] == ["a", "b"]
    with pytest.raises(ValueError, match="containers"):
        make_pod("p", cpu="1", containers=[container("a")])


def test_pod_affinity_and_spread_fragments():
    pod = make_pod("p", affinity={
        **node_affinity([{"key": ZONE, "operator": "In", "values": ["a"]}], preferred=[(5, [
            {"key": "disk", "operator": "Exists"}])]),
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            pod_affinity_term(HOSTNAME, label_selector({"app": "x"}))]}},
        topology_spread_constraints=[spread_constraint(1, ZONE, "ScheduleAnyway", label_selector(exists=["app"]))])
    na = pod.affinity.node_affinity
    assert na.required.terms[0].match_expressions[0].values == ("a",)
    assert na.preferred[0].weight == 5
    assert pod.affinity.pod_anti_affinity.required[0].topology_key == HOSTNAME
    spread = pod.topology_spread_constraints[0]
    assert (spread.max_skew, spread.when_unsatisfiable) == (1, "ScheduleAnyway")
    assert spread.label_selector.match_expressions[0].operator == "Exists"


def test_bad_values_fail_as_they_would_in_yaml():
    with pytest.raises(ManifestError, match="cpu"):
        make_pod("p", cpu="lots")


def test_node_defaults_and_resources():
    node = make_node("n1", zone="a", taints=[taint("k", "v")], unschedulable=True, images=[(["img:1"], 100)])
    assert node.labels == {HOSTNAME: "n1", ZONE: "a"}
    assert node.allocatable == node.capacity == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}
    assert node.is_ready and node.unschedulable and node.taints[0].effect == "NoSchedule"
    assert node.images[0].size_bytes == 100
    # upstream st.MakeNode().Capacity(): the API server reports allocatable = capacity
    assert make_node("n", capacity={"cpu": "2", "pods": "3"}).allocatable == {"cpu": 2000, "pods": 3}
    exact = make_node("n", allocatable={"cpu": "1"}, extra_allocatable={"example.com/gpu": "2"})
    assert exact.allocatable == {"cpu": 1000, "example.com/gpu": 2}
    assert make_node("n", hostname_label=False, ready=False).labels == {}


def test_storage_objects():
    claim = make_pvc("c", storage_class="fast", volume_name="pv1")
    assert (claim.storage_class_name, claim.phase, claim.requests) == ("fast", "Bound", {"storage": 2**30})
    assert make_pvc("c").storage_class_name is None          # absent: the default class applies
    assert make_pvc("c", storage_class="").storage_class_name == ""
    volume = make_pv("pv1", storage_class="fast", claim=("default", "c"),
                     node_affinity_terms=[[{"key": ZONE, "operator": "In", "values": ["a"]}]],
                     source={"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "h"}})
    assert (volume.claim_ref, volume.phase, volume.csi_driver) == (("default", "c"), "Bound", "ebs.csi.aws.com")
    assert volume.node_affinity.terms[0].match_expressions[0].key == ZONE
    assert make_pv("pv2").phase == "Available"
    sc = make_storage_class("fast", binding_mode="WaitForFirstConsumer", allowed_topologies={ZONE: ["a", "b"]})
    assert sc.volume_binding_mode == "WaitForFirstConsumer"
    assert sc.allowed_topologies[0].match_expressions[0].values == ("a", "b")
    assert make_csi_node("n1", {"ebs.csi.aws.com": 25, "other": None}).drivers == {"ebs.csi.aws.com": 25,
                                                                                 "other": None}


def test_policy_objects():
    pdb = make_pdb("budget", match_labels={"app": "x"}, max_unavailable=1, disruptions_allowed=1,
                   disrupted_pods=["p1"])
    assert (pdb.max_unavailable, pdb.disruptions_allowed, list(pdb.disrupted_pods)) == (1, 1, ["p1"])
    assert pdb.selector.match_labels == {"app": "x"}
    pc = make_priority_class("high", 1000, preemption_policy="Never")
    assert (pc.value, pc.preemption_policy, pc.global_default) == (1000, "Never", False)
    ns = make_namespace("team-a", {"tier": "gold"})
    assert ns.labels == {"kubernetes.io/metadata.name": "team-a", "tier": "gold"}
