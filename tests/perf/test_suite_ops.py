"""The DRA, volume and update ops of scheduler_perf at tiny sizes, run end to end on the embedded
cluster (configs and templates copied from upstream's dra/, volumes/ and event_handling/ suites,
see suite_fixtures/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.perf.runner import RunOptions, WorkloadRunner, build_config
from benchmarks.perf.updates import UpdateRefused, update_states
from benchmarks.perf.workload import (AllocResourceClaims, CreatePods, CreateResourceDriver, UpdateAny,
                                      WorkloadError, find_test_case, load_test_cases, unroll)

FIXTURES = Path(__file__).parent / "suite_fixtures"


@pytest.fixture(scope="module")
def registry():
    from kschedfw.framework.registry import default_registry
    return default_registry()


@pytest.fixture(scope="module")
def default_profile(registry):
    config, _ = build_config(registry)
    return config


def run(suite, test, workload, registry, config):
    tc = find_test_case(load_test_cases(FIXTURES / suite), test)
    runner = WorkloadRunner(unroll(tc, workload), config, registry, RunOptions(pace="instant"))
    return runner, runner.run()


def allocation_devices(claim):
    results = claim.raw["status"]["allocation"]["devices"]["results"]
    return [(r["pool"], r["device"]) for r in results]


# --------------------------------------------------------------------------- unrolling

def test_dra_ops_are_read_with_their_params():
    tc = find_test_case(load_test_cases(FIXTURES / "dra"), "AllocatedClaimsLeaveOneDevice")
    ops = unroll(tc, "3nodes").ops
    driver = next(o for o in ops if isinstance(o, CreateResourceDriver))
    assert (driver.driver_name, driver.nodes, driver.max_claims_per_node) == \
        ("test-driver.cdi.k8s.io", "scheduler-perf-dra-*", 3)
    alloc = next(o for o in ops if isinstance(o, AllocResourceClaims))
    assert alloc.namespace == "init"
    assert not unroll(tc, "3nodes").unsupported


def test_threshold_per_topic_is_the_suites():
    """upstream thresholds.Get(topic): a threshold map is read under the suite's topic (dra)."""
    tc = find_test_case(load_test_cases(FIXTURES / "dra"), "SchedulingWithResourceClaimTemplate")
    assert tc.workload("5000pods_500nodes").threshold_value == 40
    assert tc.workload("fast").threshold_value is None


def test_update_any_reads_rate_and_subresources():
    tc = find_test_case(load_test_cases(FIXTURES / "event_handling"), "PodUpdateRemovesGateAndResizesBlockers")
    resize = [o for o in unroll(tc, "1Node_10Pods").ops if isinstance(o, UpdateAny)][0]
    assert (resize.count, resize.per_second, resize.namespace, resize.subresources) == (10, 100, "blocker", ("resize",))


def test_volume_templates_must_come_as_a_pair(tmp_path):
    """upstream reads the PV template only along with a claim template; a claim template alone
    has no volume to bind to."""
    (tmp_path / "pvc.yaml").write_text((FIXTURES / "templates" / "pvc.yaml").read_text())
    (tmp_path / "performance-config.yaml").write_text(
        "- name: T\n  workloadTemplate:\n  - opcode: createPods\n    count: 1\n"
        "    persistentVolumeClaimTemplatePath: pvc.yaml\n  workloads:\n  - name: w\n")
    tc = load_test_cases(tmp_path)[0]
    with pytest.raises(WorkloadError, match="needs persistentVolumeTemplatePath"):
        unroll(tc, "w")


# --------------------------------------------------------------------------- DRA

def test_resource_driver_publishes_one_slice_per_matching_node(registry, default_profile):
    """createResourceDriver: a ResourceSlice named after each node matching the glob, its own
    pool, maxClaimsPerNode devices instance-<i> with the test driver's attributes; the node
    without DRA gets none, so every pod with a claim lands on the DRA node, one device each."""
    runner, r = run("dra", "SchedulingWithResourceClaimTemplate", "fast", registry, default_profile)
    assert r.status == "ok", r.error
    slices = runner.cluster.list("ResourceSlice")
    dra_nodes = [n.name for n in runner.cluster.list("Node") if n.name.startswith("scheduler-perf-dra-")]
    assert len(dra_nodes) == 1 and [s.name for s in slices] == dra_nodes
    spec = slices[0].raw["spec"]
    assert spec["nodeName"] == dra_nodes[0] and spec["pool"]["name"] == dra_nodes[0]
    assert [d["name"] for d in spec["devices"]] == [f"instance-{i}" for i in range(10)]
    assert spec["devices"][3]["attributes"]["dra.example.com/numa"] == {"int": 3}
    assert spec["devices"][0]["capacity"]["memory"] == {"value": "1Gi"}
    pods = runner.cluster.list("Pod", "test")
    assert len(pods) == 10 and {p.node_name for p in pods} == set(dra_nodes)
    devices = [d for c in runner.cluster.list("ResourceClaim", "test") for d in allocation_devices(c)]
    assert sorted(devices) == sorted((dra_nodes[0], f"instance-{i}") for i in range(10))


def test_shared_claims_serve_five_pods_each(registry, default_profile):
    """SchedulingWithResourceClaim: pods test-dra-<i> use claim test-claim-<i/5>; two claims, one
    device each, reserved for five pods."""
    runner, r = run("dra", "SchedulingWithResourceClaim", "fast", registry, default_profile)
    assert r.status == "ok", r.error
    assert r.measured.bound_pods == 10
    claims = sorted(runner.cluster.list("ResourceClaim", "test"), key=lambda c: c.name)
    assert [c.name for c in claims] == ["test-claim-0", "test-claim-1"]
    for claim in claims:
        assert len(claim.raw["status"]["reservedFor"]) == 5
    assert len({d for c in claims for d in allocation_devices(c)}) == 2


def test_alloc_resource_claims_takes_devices_before_pods_come(registry, default_profile):
    """allocResourceClaims stores each allocation before the next claim, so eight claims take
    eight different devices of the nine, and the pod then gets the one left."""
    runner, r = run("dra", "AllocatedClaimsLeaveOneDevice", "3nodes", registry, default_profile)
    assert r.status == "ok", r.error
    init = runner.cluster.list("ResourceClaim", "init")
    taken = [d for c in init for d in allocation_devices(c)]
    assert len(init) == 8 and len(set(taken)) == 8
    assert all(c.raw["status"]["allocation"]["nodeSelector"] for c in init)
    (pod,) = runner.cluster.list("Pod", "test")
    (claim,) = runner.cluster.list("ResourceClaim", "test")
    (device,) = allocation_devices(claim)
    assert device not in taken and device[0] == pod.node_name


def test_alloc_resource_claims_fails_when_a_claim_fits_nowhere(registry, default_profile):
    """upstream: "Could not allocate claim i out of n" ends the workload."""
    _, r = run("dra", "AllocatedClaimsLeaveOneDevice", "tooManyClaims", registry, default_profile)
    assert r.status == "failed"
    assert "could not allocate claim 2 out of 3" in r.error


# --------------------------------------------------------------------------- volumes

def test_pods_get_bound_claims_and_volumes(registry, default_profile):
    """CreatePodWithPersistentVolume: pod i's only volume is claim pvc-<i>, bound to PV
    <namespace>-vol-<i> (claimRef, phase Bound both ways); an AWS EBS volume keeps ID vol-<i>."""
    runner, r = run("volumes", "SchedulingInTreePVs", "5Nodes", registry, default_profile)
    assert r.status == "ok", r.error
    assert r.total_bound == 15
    ns = "namespace-2"  # the measured createPods op, opIndex 2
    pvc = runner.cluster.get("PersistentVolumeClaim", "pvc-7", ns)
    pv = runner.cluster.get("PersistentVolume", f"{ns}-vol-7")
    assert pvc.raw["spec"]["volumeName"] == pv.name and pvc.raw["status"]["phase"] == "Bound"
    assert pv.raw["spec"]["claimRef"]["name"] == "pvc-7" and pv.raw["spec"]["claimRef"]["namespace"] == ns
    assert pv.raw["status"]["phase"] == "Bound"
    assert pv.raw["spec"]["awsElasticBlockStore"]["volumeID"] == "vol-7"
    claims = sorted(p.raw["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
                    for p in runner.cluster.list("Pod", ns))
    assert claims == sorted(f"pvc-{i}" for i in range(10))


def test_csi_volumes_count_against_the_node_limit(registry, default_profile):
    """NodeVolumeLimits: a node whose CSINode allows 39 ebs.csi.aws.com volumes takes 39 pods
    with one distinct CSI volume each (handle = the PV's name); the 40th stays pending."""
    runner, r = run("volumes", "SchedulingCSIPVs", "1Node_40Pods", registry, default_profile)
    assert r.status == "failed"
    assert r.total_bound == 39
    pv = runner.cluster.get("PersistentVolume", "namespace-2-vol-0")
    assert pv.raw["spec"]["csi"]["volumeHandle"] == "namespace-2-vol-0"
    assert "NodeVolumeLimits" in r.unschedulable_reasons


# --------------------------------------------------------------------------- updateAny

def test_pod_updates_remove_gates_and_resize_blockers(registry, default_profile):
    """updateAny on pods: removing the scheduling gate lets the gated pods be scheduled; the
    resize subresource shrinks the blockers' memory so the pods they kept out fit."""
    runner, r = run("event_handling", "PodUpdateRemovesGateAndResizesBlockers", "1Node_10Pods",
                    registry, default_profile)
    assert r.status == "ok", r.error
    assert r.measured.bound_pods == 20
    blocker = runner.cluster.get("Pod", "pod-blocker-3", "blocker")
    assert blocker.raw["spec"]["containers"][0]["resources"]["requests"]["memory"] == "1Mi"
    assert blocker.labels.get("color") == "green-3"  # resize changes the resources only
    assert not runner.cluster.get("Pod", "pod-schedulinggates-0", "schedulinggates").scheduling_gates


def test_node_updates_replace_the_stored_node(registry, default_profile):
    """updateAny on nodes: the template's capacity lets the waiting pods in; the update replaces
    labels too (the hostname label createNodes added is gone) and keeps the node's uid."""
    runner, r = run("event_handling", "NodeUpdateGivesCapacity", "2Nodes_20Pods", registry, default_profile)
    assert r.status == "ok", r.error
    assert r.measured.bound_pods == 20
    node = runner.cluster.get("Node", "node-low-capacity-0")
    assert "kubernetes.io/hostname" not in node.labels
    assert node.uid
    assert sorted(p.node_name for p in runner.cluster.list("Pod", "noderesources")).count("node-low-capacity-0") == 10


def test_update_states_follow_update_then_update_status():
    """Update takes metadata and spec and keeps the stored status; UpdateStatus then takes the
    template's; uid and creationTimestamp stay the stored ones."""
    current = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": "n", "uid": "u1", "creationTimestamp": "t0",
                            "labels": {"a": "1"}},
               "spec": {"schedulingGates": [{"name": "g"}], "containers": [{"name": "c"}]},
               "status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}}
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"b": "2"}},
                "spec": {"containers": [{"name": "c"}]}}
    first, second = update_states("Pod", current, template)
    assert first["metadata"]["uid"] == "u1" and first["metadata"]["labels"] == {"b": "2"}
    assert "schedulingGates" not in first["spec"] and first["status"] == current["status"]
    assert "status" not in second and second["spec"] == first["spec"]
    with pytest.raises(UpdateRefused, match="spec.nodeName"):
        update_states("Pod", {**current, "spec": {**current["spec"], "nodeName": "n1"}}, template)


def test_update_states_skip_writes_that_change_nothing():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "uid": "u"},
            "status": {"capacity": {"cpu": "4"}}}
    template = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "8"}}}
    (only,) = update_states("Node", node, template)
    assert only["status"] == {"capacity": {"cpu": "8"}}
    assert update_states("Node", node, {**template, "status": node["status"]}) == []


def test_create_pods_op_keeps_volume_templates():
    tc = find_test_case(load_test_cases(FIXTURES / "volumes"), "SchedulingCSIPVs")
    measured = [o for o in unroll(tc, "5Nodes").ops if isinstance(o, CreatePods)][-1]
    pvc, pv = measured.volume_objects(4)
    assert (pvc.name, pv.name) == ("pvc-4", "namespace-2-vol-4")
