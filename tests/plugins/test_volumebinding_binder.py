"""Port of upstream volumebinding/binder_test.go core cases (TestFindPodVolumesWithoutProvisioning,
TestFindPodVolumesWithProvisioning, TestFindPodVolumesWithCSIMigration, TestAssumePodVolumes,
TestRevertAssumedPodVolumes, TestFindAssumeVolumes, TestCapacity) and the assume cache."""

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.framework.handle import Handle
from kschedfw.plugins.volumebinding.binder import (ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT,
                                                   ERR_REASON_NOT_ENOUGH_SPACE, ERR_REASON_PV_NOT_EXIST,
                                                   BinderError, BindingInfo, DynamicProvision,
                                                   PodVolumes, VolumeBinder)
from kschedfw.plugins.volumebinding.storagehelpers import ANN_SELECTED_NODE

from .fakes import FakeLister

PROVISIONER = "test-provisioner"
NODE_LABEL_KEY = "nodeKey"
NODE_LABEL_VALUE = "node1"
WAIT_CLASS = "waitClass"
IMMEDIATE_CLASS = "immediateClass"
WAIT_CLASS_WITH_PROVISIONER = "waitClassWithProvisioner"
TOPO_MISMATCH_CLASS = "topoMismatchClass"
UNBOUND, PREBOUND, BOUND, SELECTED_NODE = "unbound", "prebound", "bound", "selectedNode"


def make_test_pvc(name, size, node, state, pv_name, version, class_name, owner=None):
    meta = {"name": name, "namespace": "testns", "uid": "pvc-uid", "resourceVersion": version}
    if owner is not None:
        meta["ownerReferences"] = [{"name": owner.name, "uid": owner.uid, "controller": True,
                                    "kind": "Pod", "apiVersion": "v1"}]
    spec = {"resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem"}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if state == SELECTED_NODE:
        meta["annotations"] = {ANN_SELECTED_NODE: node}
    elif state == BOUND:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        spec["volumeName"] = pv_name
    elif state == PREBOUND:
        spec["volumeName"] = pv_name
    return parse_object({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                         "spec": spec})


def make_test_pv(name, node, capacity, version, bound_to=None, class_name=WAIT_CLASS, labels=None,
                 source=None, affinity=True):
    meta = {"name": name, "resourceVersion": version}
    if labels:
        meta["labels"] = labels
    spec = {"capacity": {"storage": capacity}, "storageClassName": class_name,
            "volumeMode": "Filesystem"}
    if source:
        spec.update(source)
    if node and affinity:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": NODE_LABEL_KEY, "operator": "In", "values": [node]}]}]}}
    if bound_to is not None:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                            "resourceVersion": bound_to.raw["metadata"]["resourceVersion"],
                            "name": bound_to.name, "namespace": bound_to.namespace, "uid": bound_to.uid}
        meta["annotations"] = {"pv.kubernetes.io/bound-by-controller": "yes"}
    return parse_object({"kind": "PersistentVolume", "metadata": meta, "spec": spec,
                         "status": {"phase": "Available"}})


def binder_pod(*pvcs, ephemeral=None):
    """Upstream's ``test-pod`` (namespace testns, on node1) mounting ``pvcs`` and, if given, one
    generic ephemeral volume."""
    vols = [kit.pvc_volume(p.name, f"vol{i}") for i, p in enumerate(pvcs)]
    if ephemeral is not None:
        vols.append({"name": ephemeral, "ephemeral": {}})
    return kit.make_pod("test-pod", namespace="testns", node_name="node1", volumes=vols)


def make_csi_node(name, migrated):
    return kit.make_csi_node(name, annotations={"storage.alpha.kubernetes.io/migrated-plugins": migrated})


def make_csi_driver(name, storage_capacity):
    return parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
                         "spec": {"storageCapacity": storage_capacity}})


def make_capacity(name, class_name, node, capacity, max_size):
    d = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
         "metadata": {"name": name, "namespace": "default"},
         "storageClassName": class_name, "nodeTopology": {}}
    if node is not None:
        d["nodeTopology"] = {"matchLabels": {NODE_LABEL_KEY: node.labels[NODE_LABEL_KEY]}}
    if capacity:
        d["capacity"] = capacity
    if max_size:
        d["maximumVolumeSize"] = max_size
    return parse_object(d)


def _class(name, mode, provisioner="", topologies=None):
    d = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
         "volumeBindingMode": mode, "provisioner": provisioner}
    if topologies:
        d["allowedTopologies"] = [{"matchLabelExpressions": [{"key": NODE_LABEL_KEY, "values": topologies}]}]
    return parse_object(d)


CLASSES = [
    _class(WAIT_CLASS_WITH_PROVISIONER, "WaitForFirstConsumer", PROVISIONER, [NODE_LABEL_VALUE, "reference-value"]),
    _class(IMMEDIATE_CLASS, "Immediate"),
    _class(WAIT_CLASS, "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
    _class(TOPO_MISMATCH_CLASS, "WaitForFirstConsumer", PROVISIONER, ["reference-value"]),
]

UNBOUND_PVC = make_test_pvc("unbound-pvc", "1G", "", UNBOUND, "", "1", WAIT_CLASS)
UNBOUND_PVC2 = make_test_pvc("unbound-pvc2", "5G", "", UNBOUND, "", "1", WAIT_CLASS)
PREBOUND_PVC = make_test_pvc("prebound-pvc", "1G", "", PREBOUND, "pv-node1a", "1", WAIT_CLASS)
BOUND_PVC = make_test_pvc("bound-pvc", "1G", "", BOUND, "pv-bound", "1", WAIT_CLASS)
IMMEDIATE_UNBOUND_PVC = make_test_pvc("immediate-unbound-pvc", "1G", "", UNBOUND, "", "1", IMMEDIATE_CLASS)
IMMEDIATE_BOUND_PVC = make_test_pvc("immediate-bound-pvc", "1G", "", BOUND, "pv-bound-immediate", "1",
                                    IMMEDIATE_CLASS)
PROVISIONED_PVC = make_test_pvc("provisioned-pvc", "1Gi", "", UNBOUND, "", "1", WAIT_CLASS_WITH_PROVISIONER)
PROVISIONED_PVC2 = make_test_pvc("provisioned-pvc2", "1Gi", "", UNBOUND, "", "1", WAIT_CLASS_WITH_PROVISIONER)
PROVISIONED_PVC_HIGHER_VERSION = make_test_pvc("provisioned-pvc2", "1Gi", "", UNBOUND, "", "2",
                                               WAIT_CLASS_WITH_PROVISIONER)
NO_PROVISIONER_PVC = make_test_pvc("no-provisioner-pvc", "1Gi", "", UNBOUND, "", "1", WAIT_CLASS)
TOPO_MISMATCH_PVC = make_test_pvc("topo-mismatch-pvc", "1Gi", "", UNBOUND, "", "1", TOPO_MISMATCH_CLASS)
SELECTED_NODE_PVC = make_test_pvc("provisioned-pvc", "1Gi", NODE_LABEL_VALUE, SELECTED_NODE, "", "1",
                                  WAIT_CLASS_WITH_PROVISIONER)
BOUND_MIGRATION_PVC = make_test_pvc("pvc-migration-bound", "1G", "", BOUND, "pv-migration-bound", "1", WAIT_CLASS)

GENERIC_POD = binder_pod(ephemeral="test-volume")
CONFLICTING_GENERIC_PVC = make_test_pvc("test-pod-test-volume", "1G", "", BOUND, "pv-bound", "1", IMMEDIATE_CLASS)
CORRECT_GENERIC_PVC = make_test_pvc("test-pod-test-volume", "1G", "", BOUND, "pv-bound", "1", IMMEDIATE_CLASS,
                                    owner=GENERIC_POD)

PV_BOUND_GENERIC = make_test_pv("pv-bound", "node1", "1G", "1", CORRECT_GENERIC_PVC)
PV_NODE1A = make_test_pv("pv-node1a", "node1", "5G", "1")
PV_NODE1B = make_test_pv("pv-node1b", "node1", "10G", "1")
PV_NODE1C = make_test_pv("pv-node1b", "node1", "5G", "1")
PV_NODE2 = make_test_pv("pv-node2", "node2", "1G", "1")
PV_BOUND = make_test_pv("pv-bound", "node1", "1G", "1", BOUND_PVC)
PV_NODE1A_BOUND = make_test_pv("pv-node1a", "node1", "5G", "1", UNBOUND_PVC)
PV_NODE1B_BOUND = make_test_pv("pv-node1b", "node1", "10G", "1", UNBOUND_PVC2)
PV_BOUND_IMMEDIATE = make_test_pv("pv-bound-immediate", "node1", "1G", "1", IMMEDIATE_BOUND_PVC, IMMEDIATE_CLASS)
PV_BOUND_IMMEDIATE_NODE2 = make_test_pv("pv-bound-immediate", "node2", "1G", "1", IMMEDIATE_BOUND_PVC,
                                        IMMEDIATE_CLASS)

ZONE1_LABELS = {"failure-domain.beta.kubernetes.io/zone": "us-east-1",
                "failure-domain.beta.kubernetes.io/region": "us-east-1a"}
MIGRATION_PV_BOUND = make_test_pv("pv-migration-bound", "node1", "1G", "1", BOUND_MIGRATION_PVC,
                                  labels=ZONE1_LABELS, affinity=False,
                                  source={"gcePersistentDisk": {"pdName": "test-disk", "fsType": "ext4"}})

NODE1 = kit.make_node("node1", labels={"nodeKey": "node1"}, hostname_label=False)
NODE2 = kit.make_node("node2", labels={"nodeKey": "node2"}, hostname_label=False)
TEST_NODE = NODE1


def new_binder(*objects):
    lister = FakeLister(*CLASSES, *objects)
    return VolumeBinder(Handle(lister=lister)), lister


def find_pod_volumes(binder, pod, node):
    """upstream findPodVolumes: GetPodVolumeClaims, refuse unbound immediate claims, FindPodVolumes."""
    claims = binder.get_pod_volume_claims(pod)
    if claims.unbound_claims_immediate:
        raise BinderError("pod has unbound immediate PersistentVolumeClaims")
    return binder.find_pod_volumes(pod, claims, node)


def binding_names(bindings):
    return [(b.pvc.name, b.pv.name) for b in bindings or ()]


def provision_names(provisions):
    return [p.pvc.name for p in provisions or ()]


CSI_DRIVERS = {
    "no CSIDriver": None,
    "CSIDriver with capacity tracking": make_csi_driver(PROVISIONER, True),
    "CSIDriver without capacity tracking": make_csi_driver(PROVISIONER, False),
}


def _sc(name, *, pvs=(), pod_pvcs=(), cache_pvcs=None, pod=None, bindings=(), reasons=(), fail=False,
        provisions=(), needs_capacity=False):
    return pytest.param(list(pvs), list(pod_pvcs), cache_pvcs, pod, list(bindings), list(reasons), fail,
                        list(provisions), needs_capacity, id=name)


WITHOUT_PROVISIONING = [
    _sc("no-volumes", pod=binder_pod()),
    _sc("no-pvcs", pod=parse_object({"kind": "Pod", "metadata": {"name": "test-pod", "namespace": "testns"},
                                      "spec": {"volumes": [{"name": "e", "emptyDir": {}}]}})),
    _sc("pvc-not-found", pod_pvcs=[BOUND_PVC], cache_pvcs=[], fail=True),
    _sc("bound-pvc", pod_pvcs=[BOUND_PVC], pvs=[PV_BOUND]),
    _sc("bound-pvc,pv-not-exists", pod_pvcs=[BOUND_PVC], reasons=[ERR_REASON_PV_NOT_EXIST]),
    _sc("prebound-pvc", pod_pvcs=[PREBOUND_PVC], pvs=[PV_NODE1A_BOUND], fail=True),
    _sc("unbound-pvc,pv-same-node", pod_pvcs=[UNBOUND_PVC], pvs=[PV_NODE2, PV_NODE1A, PV_NODE1B],
        bindings=[("unbound-pvc", "pv-node1a")]),
    _sc("unbound-pvc,pv-different-node", pod_pvcs=[UNBOUND_PVC], pvs=[PV_NODE2],
        reasons=[ERR_REASON_BIND_CONFLICT]),
    _sc("two-unbound-pvcs", pod_pvcs=[UNBOUND_PVC, UNBOUND_PVC2], pvs=[PV_NODE1A, PV_NODE1B],
        bindings=[("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")]),
    _sc("two-unbound-pvcs,order-by-size", pod_pvcs=[UNBOUND_PVC2, UNBOUND_PVC], pvs=[PV_NODE1A, PV_NODE1B],
        bindings=[("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")]),
    _sc("two-unbound-pvcs,partial-match", pod_pvcs=[UNBOUND_PVC, UNBOUND_PVC2], pvs=[PV_NODE1A],
        bindings=[("unbound-pvc", "pv-node1a")], reasons=[ERR_REASON_BIND_CONFLICT]),
    _sc("one-bound,one-unbound", pod_pvcs=[UNBOUND_PVC, BOUND_PVC], pvs=[PV_BOUND, PV_NODE1A],
        bindings=[("unbound-pvc", "pv-node1a")]),
    _sc("one-bound,one-unbound,no-match", pod_pvcs=[UNBOUND_PVC, BOUND_PVC], pvs=[PV_BOUND, PV_NODE2],
        reasons=[ERR_REASON_BIND_CONFLICT]),
    _sc("one-prebound,one-unbound", pod_pvcs=[UNBOUND_PVC, PREBOUND_PVC], pvs=[PV_NODE1A, PV_NODE1B], fail=True),
    _sc("immediate-bound-pvc", pod_pvcs=[IMMEDIATE_BOUND_PVC], pvs=[PV_BOUND_IMMEDIATE]),
    _sc("immediate-bound-pvc-wrong-node", pod_pvcs=[IMMEDIATE_BOUND_PVC], pvs=[PV_BOUND_IMMEDIATE_NODE2],
        reasons=[ERR_REASON_NODE_CONFLICT]),
    _sc("immediate-unbound-pvc", pod_pvcs=[IMMEDIATE_UNBOUND_PVC], fail=True),
    _sc("immediate-unbound-pvc,delayed-mode-bound", pod_pvcs=[IMMEDIATE_UNBOUND_PVC, BOUND_PVC], pvs=[PV_BOUND],
        fail=True),
    _sc("immediate-unbound-pvc,delayed-mode-unbound", pod_pvcs=[IMMEDIATE_UNBOUND_PVC, UNBOUND_PVC], fail=True),
    _sc("generic-ephemeral,no-pvc", pod=binder_pod(ephemeral="no-such-pvc"), fail=True),
    _sc("generic-ephemeral,with-pvc", pod=GENERIC_POD, cache_pvcs=[CORRECT_GENERIC_PVC], pvs=[PV_BOUND_GENERIC]),
    _sc("generic-ephemeral,wrong-pvc", pod=GENERIC_POD, cache_pvcs=[CONFLICTING_GENERIC_PVC],
        pvs=[PV_BOUND_GENERIC], fail=True),
]

WITH_PROVISIONING = [
    _sc("one-provisioned", pod_pvcs=[PROVISIONED_PVC], provisions=["provisioned-pvc"], needs_capacity=True),
    _sc("two-unbound-pvcs,one-matched,one-provisioned", pod_pvcs=[UNBOUND_PVC, PROVISIONED_PVC], pvs=[PV_NODE1A],
        bindings=[("unbound-pvc", "pv-node1a")], provisions=["provisioned-pvc"], needs_capacity=True),
    _sc("one-bound,one-provisioned", pod_pvcs=[BOUND_PVC, PROVISIONED_PVC], pvs=[PV_BOUND],
        provisions=["provisioned-pvc"], needs_capacity=True),
    _sc("one-binding,one-selected-node", pod_pvcs=[BOUND_PVC, SELECTED_NODE_PVC], pvs=[PV_BOUND],
        provisions=["provisioned-pvc"], needs_capacity=True),
    _sc("immediate-unbound-pvc", pod_pvcs=[IMMEDIATE_UNBOUND_PVC], fail=True),
    _sc("one-immediate-bound,one-provisioned", pod_pvcs=[IMMEDIATE_BOUND_PVC, PROVISIONED_PVC],
        pvs=[PV_BOUND_IMMEDIATE], provisions=["provisioned-pvc"], needs_capacity=True),
    _sc("invalid-provisioner", pod_pvcs=[NO_PROVISIONER_PVC], reasons=[ERR_REASON_BIND_CONFLICT]),
    _sc("volume-topology-unsatisfied", pod_pvcs=[TOPO_MISMATCH_PVC], reasons=[ERR_REASON_BIND_CONFLICT]),
]

_ARGS = "pvs,pod_pvcs,cache_pvcs,pod,bindings,reasons,fail,provisions,needs_capacity"


def _run_find(driver_name, pvs, pod_pvcs, cache_pvcs, pod, bindings, reasons, fail, provisions,
              needs_capacity):
    driver = CSI_DRIVERS[driver_name]
    claims = pod_pvcs if cache_pvcs is None else cache_pvcs
    binder, _ = new_binder(*pvs, *claims, *([driver] if driver is not None else []))
    pod = pod if pod is not None else binder_pod(*pod_pvcs)
    try:
        got, got_reasons = find_pod_volumes(binder, pod, TEST_NODE)
    except BinderError:
        assert fail, "returned error"
        return
    assert not fail, "returned success but expected error"
    want_reasons, want_provisions = list(reasons), list(provisions)
    if needs_capacity and driver is not None and driver_name == "CSIDriver with capacity tracking":
        # Without CSIStorageCapacity objects, provisioning is blocked.
        want_reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        want_provisions = []
    assert got_reasons == want_reasons
    assert binding_names(got.static_bindings) == bindings
    assert provision_names(got.dynamic_provisions) == want_provisions


@pytest.mark.parametrize("driver_name", list(CSI_DRIVERS))
@pytest.mark.parametrize(_ARGS, WITHOUT_PROVISIONING)
def test_find_pod_volumes_without_provisioning(driver_name, pvs, pod_pvcs, cache_pvcs, pod, bindings, reasons,
                                               fail, provisions, needs_capacity):
    _run_find(driver_name, pvs, pod_pvcs, cache_pvcs, pod, bindings, reasons, fail, provisions, needs_capacity)


@pytest.mark.parametrize("driver_name", list(CSI_DRIVERS))
@pytest.mark.parametrize(_ARGS, WITH_PROVISIONING)
def test_find_pod_volumes_with_provisioning(driver_name, pvs, pod_pvcs, cache_pvcs, pod, bindings, reasons,
                                            fail, provisions, needs_capacity):
    _run_find(driver_name, pvs, pod_pvcs, cache_pvcs, pod, bindings, reasons, fail, provisions, needs_capacity)


# ---------------------------------------------------------------- CSI migration

NODE1_ZONE1 = kit.make_node("node1", labels={"topology.gke.io/zone": "us-east-1"}, hostname_label=False)
NODE1_ZONE2 = kit.make_node("node1", labels={"topology.gke.io/zone": "us-east-2"}, hostname_label=False)


@pytest.mark.parametrize("node,csi_nodes,reasons", [
    pytest.param(NODE1_ZONE1, [make_csi_node("node1", "kubernetes.io/gce-pd")], [], id="pvc-bound"),
    pytest.param(NODE1_ZONE1, [make_csi_node("node1", "")], [], id="pvc-bound,csinode-not-migrated"),
    pytest.param(NODE1_ZONE1, [], [], id="pvc-bound,missing-csinode"),
    pytest.param(NODE1_ZONE2, [make_csi_node("node1", "kubernetes.io/gce-pd")], [ERR_REASON_NODE_CONFLICT],
                 id="pvc-bound,node-different-zone"),
])
def test_find_pod_volumes_with_csi_migration(node, csi_nodes, reasons):
    binder, _ = new_binder(MIGRATION_PV_BOUND, BOUND_MIGRATION_PVC, node, *csi_nodes)
    _, got = find_pod_volumes(binder, binder_pod(BOUND_MIGRATION_PVC), node)
    assert got == reasons


# ---------------------------------------------------------------- assume / revert

def _assumed_claim_ref(binder, pv_name):
    return binder.pv_cache.get(pv_name).claim_ref


@pytest.mark.parametrize("pod_pvcs,pvs,bindings,provisions,fail,all_bound,want_bindings,want_provisions", [
    pytest.param([BOUND_PVC], [PV_BOUND], [], [], False, True, [], [], id="all-bound"),
    pytest.param([UNBOUND_PVC], [PV_NODE1A], [(UNBOUND_PVC, PV_NODE1A)], [], False, False,
                 [("unbound-pvc", "pv-node1a")], [], id="one-binding"),
    pytest.param([UNBOUND_PVC, UNBOUND_PVC2], [PV_NODE1A, PV_NODE1B],
                 [(UNBOUND_PVC, PV_NODE1A), (UNBOUND_PVC2, PV_NODE1B)], [], False, False,
                 [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], id="two-bindings"),
    pytest.param([UNBOUND_PVC], [PV_NODE1A_BOUND], [(UNBOUND_PVC, PV_NODE1A_BOUND)], [], False, False,
                 [("unbound-pvc", "pv-node1a")], [], id="pv-already-bound"),
    pytest.param([UNBOUND_PVC], [PV_NODE1A], [(UNBOUND_PVC, PV_NODE1A), (UNBOUND_PVC2, PV_NODE1B)], [], True,
                 False, None, None, id="tmpupdate-failed"),
    pytest.param([UNBOUND_PVC, PROVISIONED_PVC], [PV_NODE1A], [(UNBOUND_PVC, PV_NODE1A)], [PROVISIONED_PVC],
                 False, False, [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"],
                 id="one-binding, one-pvc-provisioned"),
    pytest.param([UNBOUND_PVC, PROVISIONED_PVC_HIGHER_VERSION], [PV_NODE1A], [(UNBOUND_PVC, PV_NODE1A)],
                 [PROVISIONED_PVC2], True, False, None, None, id="one-binding, one-provision-tmpupdate-failed"),
])
def test_assume_pod_volumes(pod_pvcs, pvs, bindings, provisions, fail, all_bound, want_bindings, want_provisions):
    binder, _ = new_binder(*pod_pvcs, *pvs)
    pod = binder_pod(*pod_pvcs)
    pod_volumes = PodVolumes([BindingInfo(c, v) for c, v in bindings], [DynamicProvision(p) for p in provisions])
    if fail:
        with pytest.raises(BinderError):
            binder.assume_pod_volumes(pod, "node1", pod_volumes)
        # validateCacheRestored: nothing stays assumed
        assert binder.pv_cache.assumed() == {} and binder.pvc_cache.assumed() == {}
        return
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is all_bound
    if all_bound:
        return
    assert binding_names(pod_volumes.static_bindings) == want_bindings
    for pvc_name, pv_name in want_bindings:
        assert _assumed_claim_ref(binder, pv_name) == ("testns", pvc_name)
        assert binder.pv_cache.get(pv_name).annotations.get("pv.kubernetes.io/bound-by-controller") == "yes"
    assert provision_names(pod_volumes.dynamic_provisions) == want_provisions
    for name in want_provisions:
        assert binder.pvc_cache.get(f"testns/{name}").annotations[ANN_SELECTED_NODE] == "node1"


def test_revert_assumed_pod_volumes():
    binder, _ = new_binder(UNBOUND_PVC, PROVISIONED_PVC, PV_NODE1A)
    pod = binder_pod(UNBOUND_PVC, PROVISIONED_PVC)
    pod_volumes = PodVolumes([BindingInfo(UNBOUND_PVC, PV_NODE1A)], [DynamicProvision(PROVISIONED_PVC)])
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is False
    assert _assumed_claim_ref(binder, "pv-node1a") == ("testns", "unbound-pvc")
    assert ANN_SELECTED_NODE in binder.pvc_cache.get("testns/provisioned-pvc").annotations
    binder.revert_assumed_pod_volumes(pod_volumes)
    assert binder.pv_cache.get("pv-node1a").claim_ref is None
    assert ANN_SELECTED_NODE not in binder.pvc_cache.get("testns/provisioned-pvc").annotations


def test_find_assume_volumes():
    """After assuming, finding PVs again always returns the PV chosen first."""
    binder, _ = new_binder(PV_NODE2, PV_NODE1A, PV_NODE1C, UNBOUND_PVC)
    pod = binder_pod(UNBOUND_PVC)
    pod_volumes, reasons = find_pod_volumes(binder, pod, TEST_NODE)
    assert reasons == []
    expected = binding_names(pod_volumes.static_bindings)
    assert binder.assume_pod_volumes(pod, "node1", pod_volumes) is False
    for _ in range(5):
        again, reasons = find_pod_volumes(binder, pod, TEST_NODE)
        assert reasons == []
        assert binding_names(again.static_bindings) == expected


def test_assumed_pv_is_not_offered_to_another_claim():
    other = make_test_pvc("other-pvc", "1G", "", UNBOUND, "", "1", WAIT_CLASS)
    binder, _ = new_binder(PV_NODE1A, UNBOUND_PVC, other)
    pod_volumes, _ = find_pod_volumes(binder, binder_pod(UNBOUND_PVC), TEST_NODE)
    binder.assume_pod_volumes(binder_pod(UNBOUND_PVC), "node1", pod_volumes)
    _, reasons = find_pod_volumes(binder, binder_pod(other), TEST_NODE)
    assert reasons == [ERR_REASON_BIND_CONFLICT]


def test_assumption_expires_when_the_api_object_changes():
    binder, lister = new_binder(PV_NODE1A, UNBOUND_PVC)
    pod_volumes, _ = find_pod_volumes(binder, binder_pod(UNBOUND_PVC), TEST_NODE)
    binder.assume_pod_volumes(binder_pod(UNBOUND_PVC), "node1", pod_volumes)
    assert _assumed_claim_ref(binder, "pv-node1a") is not None
    lister.add(make_test_pv("pv-node1a", "node1", "5G", "2"))     # a newer version, still unbound
    assert _assumed_claim_ref(binder, "pv-node1a") is None


# ---------------------------------------------------------------- bind through the client

class RecordingClient:
    def __init__(self, fail_on=None):
        self.calls = []
        self.fail_on = fail_on

    def bind_pvc(self, pvc, pv):
        if self.fail_on is not None and pvc.name == self.fail_on:
            raise RuntimeError("api-update-failed")
        self.calls.append((pvc.name, None if pv is None else pv.name,
                           None if pv is None else pv.claim_ref,
                           pvc.annotations.get(ANN_SELECTED_NODE)))


def test_bind_pod_volumes_calls_bind_pvc():
    binder, _ = new_binder(UNBOUND_PVC, PROVISIONED_PVC, PV_NODE1A)
    client = RecordingClient()
    binder.handle.client = client
    pod = binder_pod(UNBOUND_PVC, PROVISIONED_PVC)
    pod_volumes = PodVolumes([BindingInfo(UNBOUND_PVC, PV_NODE1A)], [DynamicProvision(PROVISIONED_PVC)])
    binder.assume_pod_volumes(pod, "node1", pod_volumes)
    binder.bind_pod_volumes(pod, pod_volumes)
    assert client.calls == [("unbound-pvc", "pv-node1a", ("testns", "unbound-pvc"), None),
                            ("provisioned-pvc", None, None, "node1")]


def test_bind_pod_volumes_failure_reverts_unwritten():
    binder, _ = new_binder(UNBOUND_PVC, PROVISIONED_PVC, PV_NODE1A)
    binder.handle.client = RecordingClient(fail_on="provisioned-pvc")
    pod = binder_pod(UNBOUND_PVC, PROVISIONED_PVC)
    pod_volumes = PodVolumes([BindingInfo(UNBOUND_PVC, PV_NODE1A)], [DynamicProvision(PROVISIONED_PVC)])
    binder.assume_pod_volumes(pod, "node1", pod_volumes)
    with pytest.raises(RuntimeError, match="api-update-failed"):
        binder.bind_pod_volumes(pod, pod_volumes)
    assert ANN_SELECTED_NODE not in binder.pvc_cache.get("testns/provisioned-pvc").annotations
    assert _assumed_claim_ref(binder, "pv-node1a") == ("testns", "unbound-pvc")   # already written


@pytest.mark.parametrize("bindings,provisions,message", [
    pytest.param(None, [], 'failed to get cached bindings for pod "testns/test-pod"',
                 id="nothing-to-bind-bindings-nil"),
    pytest.param([], None, 'failed to get cached claims to provision for pod "testns/test-pod"',
                 id="nothing-to-bind-provisionings-nil"),
])
def test_bind_pod_volumes_nil(bindings, provisions, message):
    binder, _ = new_binder()
    with pytest.raises(BinderError, match=message):
        binder.bind_pod_volumes(binder_pod(), PodVolumes(bindings, provisions))


# ---------------------------------------------------------------- TestCapacity

NETWORK_ATTACHED_CAPACITY = make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, None, "1Gi", "")
# Same name as upstream: in "multiple" the later objects replace the earlier ones in the lister.
NODE1_CAPACITY = make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE1, "1Gi", "")
NODE2_CAPACITY = make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE2, "1Gi", "")


@pytest.mark.parametrize("opt_in", [True, False], ids=["CSIDriver.StorageCapacity=true",
                                                        "CSIDriver.StorageCapacity=false"])
@pytest.mark.parametrize("capacities,expected_capacity,reasons", [
    pytest.param([NETWORK_ATTACHED_CAPACITY], NETWORK_ATTACHED_CAPACITY, [], id="network-attached"),
    pytest.param([NODE1_CAPACITY], NODE1_CAPACITY, [], id="local-storage"),
    pytest.param([NETWORK_ATTACHED_CAPACITY, NODE2_CAPACITY, NODE1_CAPACITY], NODE1_CAPACITY, [], id="multiple"),
    pytest.param([], None, [ERR_REASON_NOT_ENOUGH_SPACE], id="no-storage"),
    pytest.param([make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE2, "1Gi", "")], None,
                 [ERR_REASON_NOT_ENOUGH_SPACE], id="wrong-node"),
    pytest.param([make_capacity("net", WAIT_CLASS, NODE1, "1Gi", "")], None, [ERR_REASON_NOT_ENOUGH_SPACE],
                 id="wrong-storage-class"),
    pytest.param([make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE1, "1Mi", "")], None,
                 [ERR_REASON_NOT_ENOUGH_SPACE], id="insufficient-storage"),
    pytest.param([make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE1, "1Gi", "1Mi")], None,
                 [ERR_REASON_NOT_ENOUGH_SPACE], id="insufficient-volume-size"),
    pytest.param([make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE1, "0Mi", "")], None,
                 [ERR_REASON_NOT_ENOUGH_SPACE], id="zero-storage"),
    pytest.param([make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE1, "", "0Mi")], None,
                 [ERR_REASON_NOT_ENOUGH_SPACE], id="zero-volume-size"),
    pytest.param([make_capacity("net", WAIT_CLASS_WITH_PROVISIONER, NODE1, "", "")], None,
                 [ERR_REASON_NOT_ENOUGH_SPACE], id="nil-storage"),
])
def test_capacity(opt_in, capacities, expected_capacity, reasons):
    binder, _ = new_binder(make_csi_driver(PROVISIONER, opt_in), *capacities, PROVISIONED_PVC)
    got, got_reasons = find_pod_volumes(binder, binder_pod(PROVISIONED_PVC), TEST_NODE)
    if not opt_in:
        assert got_reasons == []
        assert [(p.pvc.name, p.node_capacity) for p in got.dynamic_provisions] == [("provisioned-pvc", None)]
        return
    assert got_reasons == reasons
    if reasons:
        assert got.dynamic_provisions is None
        return
    [provision] = got.dynamic_provisions
    assert provision.pvc.name == "provisioned-pvc"
    assert provision.node_capacity is expected_capacity
