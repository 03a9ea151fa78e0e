import attrs
import pytest

from kschedfw.api import (CSINode, GenericObject, Namespace, Node, PersistentVolume,
                          PersistentVolumeClaim, PodDisruptionBudget, PriorityClass, StorageClass,
                          Taint, load_manifests, parse_object)
from kschedfw.api.field import ManifestError

GI = 2**30


def test_snapshot_nodes(snapshot_objects):
    nodes = {o.name: o for o in snapshot_objects if isinstance(o, Node)}
    assert sorted(nodes) == ["node-1", "node-2", "node-3"]
    n1 = nodes["node-1"]
    assert n1.allocatable == {"cpu": 3920, "ephemeral-storage": 93478772582, "hugepages-1Gi": 0,
                              "hugepages-2Mi": 0, "memory": 15242268 * 1024, "pods": 110}
    assert n1.capacity["cpu"] == 4000 and n1.capacity["ephemeral-storage"] == 101430960 * 1024
    assert n1.labels["topology.kubernetes.io/zone"] == "zone-a"
    assert n1.is_ready and n1.condition("MemoryPressure").status == "False"
    assert n1.uid == "1fd6b3a4-d1bb-4896-89a6-fcea4de5190a" and n1.resource_version == "252"
    assert not n1.unschedulable and n1.taints == ()


def test_node_allocatable_falls_back_to_capacity(fixtures):
    (n,) = load_manifests(fixtures / "templates" / "node-default.yaml")
    assert n.allocatable == n.capacity == {"pods": 110, "cpu": 4000, "memory": 32 * GI}
    assert n.generate_name == "scheduler-perf-" and n.is_ready
    (t,) = load_manifests(fixtures / "templates" / "node-with-taint.yaml")
    assert t.taints == (Taint("foo", "", "NoSchedule"),)


def test_node_fields_and_helpers():
    n = parse_object({"kind": "Node", "metadata": {"name": "n", "labels": {"a": "b"}},
                      "spec": {"unschedulable": True,
                               "taints": [{"key": "k", "value": "v", "effect": "NoExecute",
                                           "timeAdded": "2024-01-01T00:00:00Z"}]},
                      "status": {"allocatable": {"cpu": "2", "example.com/gpu": "4"},
                                 "capacity": {"cpu": "4"},
                                 "images": [{"names": ["reg/img:1", "reg/img@sha256:ab"],
                                             "sizeBytes": 1000}]}})
    assert n.unschedulable and n.taints[0] == Taint("k", "v", "NoExecute")
    assert n.allocatable == {"cpu": 2000, "example.com/gpu": 4} and n.capacity == {"cpu": 4000}
    assert n.images[0].names == ("reg/img:1", "reg/img@sha256:ab") and n.images[0].size_bytes == 1000
    assert hash(n) == hash("n") and not n.is_ready
    m = n.with_labels({"x": "y"}).with_taints([]).with_unschedulable(False)
    assert m.labels == {"x": "y"} and m.taints == () and not m.unschedulable
    assert m.raw["metadata"]["labels"] == {"x": "y"} and "taints" not in m.raw["spec"]
    assert n.raw["metadata"]["labels"] == {"a": "b"}  # original untouched
    a = n.with_allocatable({"cpu": 1500, "memory": GI})
    assert a.allocatable == {"cpu": 1500, "memory": GI}
    assert a.raw["status"]["allocatable"] == {"cpu": "1500m", "memory": "1Gi"}
    assert parse_object(a.raw).allocatable == a.allocatable
    assert attrs.evolve(n, name="n2").name == "n2"


@pytest.mark.parametrize("spec, field, fragment", [
    pytest.param({"taints": [{"key": "k", "effect": "Sometimes"}]}, "spec.taints[0].effect",
                 "Unsupported value: 'Sometimes'", id="bad-effect"),
    pytest.param({"taints": [{"key": "k"}]}, "spec.taints[0].effect", "Unsupported value: ''",
                 id="missing-effect"),
    pytest.param({"taints": [{"effect": "NoSchedule"}]}, "spec.taints[0].key", "Required",
                 id="missing-key"),
    pytest.param({"unschedulable": "yes please"}, "spec.unschedulable", "true or false",
                 id="bad-bool"),
    pytest.param(["x"], "spec", "expected a mapping, got a list", id="spec-not-mapping"),
])
def test_node_errors(spec, field, fragment):
    with pytest.raises(ManifestError) as err:
        parse_object({"kind": "Node", "metadata": {"name": "n"}, "spec": spec}, source="nodes.yaml",
                     line=3)
    e = err.value
    assert (e.field, e.obj, e.source, e.line) == (field, "Node n", "nodes.yaml", 3)
    assert fragment in str(e)
    assert str(e).startswith(f"nodes.yaml:3: Node n: {field}: ")


def test_snapshot_priority_classes_and_pdbs(snapshot_objects):
    pcs = {o.name: o for o in snapshot_objects if isinstance(o, PriorityClass)}
    assert pcs["kschedfw-high"].value == 100000
    assert pcs["kschedfw-high"].preemption_policy == "PreemptLowerPriority"
    assert pcs["kschedfw-low-never"].preemption_policy == "Never"
    assert pcs["system-node-critical"].value == 2000001000
    assert not pcs["kschedfw-high"].global_default
    assert pcs["kschedfw-high"].description.startswith("High priority")
    pdbs = {o.name: o for o in snapshot_objects if isinstance(o, PodDisruptionBudget)}
    web, batch = pdbs["web-pdb"], pdbs["batch-pdb"]
    assert web.namespace == "kschedfw-test" and web.key == "kschedfw-test/web-pdb"
    assert web.min_available == 1 and web.max_unavailable is None
    assert batch.max_unavailable == "50%" and batch.disruptions_allowed == 0
    assert batch.selector.matches({"app": "batch"}) and not batch.selector.matches({"app": "web"})
    assert web.disrupted_pods == {}


def test_priority_class_defaults_and_errors():
    pc = parse_object({"kind": "PriorityClass", "metadata": {"name": "x"}, "value": 5,
                       "globalDefault": True})
    assert pc == PriorityClass("x", 5, True, "PreemptLowerPriority", "")
    with pytest.raises(ManifestError, match="value: Required value"):
        parse_object({"kind": "PriorityClass", "metadata": {"name": "x"}})
    with pytest.raises(ManifestError, match="preemptionPolicy: Unsupported value: 'Sometimes'"):
        parse_object({"kind": "PriorityClass", "metadata": {"name": "x"}, "value": 1,
                      "preemptionPolicy": "Sometimes"})


def test_pdb_disrupted_pods():
    pdb = parse_object({"kind": "PodDisruptionBudget", "metadata": {"name": "p"},
                        "spec": {"minAvailable": "30%"},
                        "status": {"disruptionsAllowed": 2,
                                   "disruptedPods": {"web-1": "2024-01-01T00:00:00Z"}}})
    assert pdb.namespace == "default" and pdb.selector is None and pdb.min_available == "30%"
    assert pdb.disruptions_allowed == 2 and "web-1" in pdb.disrupted_pods


def test_namespace(fixtures):
    (ns,) = load_manifests(fixtures / "templates" / "namespace-with-labels.yaml", template=True)
    assert isinstance(ns, Namespace) and ns.labels == {"team": "devops"} and ns.name == ""
    ns = parse_object({"kind": "Namespace", "metadata": {"name": "sched-0", "namespace": "ignored"}})
    assert ns == Namespace("sched-0", {}, uid=ns.uid)


def test_storage_objects(fixtures):
    (pv,) = load_manifests(fixtures / "templates" / "pv-csi.yaml", template=True)
    assert isinstance(pv, PersistentVolume)
    assert pv.csi_driver == "ebs.csi.aws.com" and pv.source == "csi"
    assert pv.capacity == {"storage": GI} and pv.access_modes == ("ReadOnlyMany",)
    assert pv.claim_ref is None and pv.node_affinity is None
    (pvc,) = load_manifests(fixtures / "templates" / "pvc.yaml", template=True)
    assert isinstance(pvc, PersistentVolumeClaim)
    assert pvc.requests == {"storage": GI} and pvc.storage_class_name is None
    assert pvc.annotations == {"pv.kubernetes.io/bind-completed": "true"}
    bound = parse_object({
        "kind": "PersistentVolume", "metadata": {"name": "pv1", "labels": {"zone": "a"}},
        "spec": {"capacity": {"storage": "10Gi"}, "storageClassName": "fast",
                 "claimRef": {"namespace": "ns", "name": "c"},
                 "gcePersistentDisk": {"pdName": "d"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
        "status": {"phase": "Bound"}})
    assert bound.claim_ref == ("ns", "c") and bound.source == "gcePersistentDisk"
    assert bound.node_affinity.matches({"zone": "a"}, "n") and bound.phase == "Bound"
    assert bound.storage_class_name == "fast" and bound.csi_driver is None
    sc = parse_object({"kind": "StorageClass", "metadata": {"name": "wffc"},
                       "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
                       "allowedTopologies": [{"matchLabelExpressions": [
                           {"key": "zone", "values": ["a", "b"]}]}]})
    assert isinstance(sc, StorageClass) and sc.volume_binding_mode == "WaitForFirstConsumer"
    assert sc.allowed_topologies[0].matches({"zone": "b"}, "n")
    assert parse_object({"kind": "StorageClass", "metadata": {"name": "s"}}).volume_binding_mode == "Immediate"
    csi = parse_object({"kind": "CSINode", "metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}},
        {"name": "other", "nodeID": "x"}]}})
    assert isinstance(csi, CSINode) and csi.drivers == {"ebs.csi.aws.com": 25, "other": None}


def test_generic_objects(fixtures):
    (eq,) = load_manifests(fixtures / "elasticquota-example.yaml")
    assert isinstance(eq, GenericObject)
    assert (eq.api_version, eq.kind, eq.name, eq.namespace) == (
        "scheduling.x-k8s.io/v1alpha1", "ElasticQuota", "test", "test")
    assert eq.spec["max"]["nvidia.com/gpu"] == 2 and eq.raw["kind"] == "ElasticQuota"
    (svc,) = load_manifests(fixtures / "templates" / "service.yaml")
    assert svc.kind == "Service" and svc.namespace == "default" and svc.spec["selector"] == {
        "app": "scheduler-perf"}
    crd = parse_object({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                        "metadata": {"name": "podgroups.scheduling.x-k8s.io"}})
    assert crd.namespace == "" and crd.key == "podgroups.scheduling.x-k8s.io"
