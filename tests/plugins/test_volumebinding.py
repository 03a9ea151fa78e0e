"""Port of upstream volumebinding/volume_binding_test.go (TestVolumeBinding, Test_PreBindPreFlight,
TestIsSchedulableAfterCSINodeChange, TestIsSchedulableAfterPersistentVolumeClaimChange,
TestIsSchedulableAfterStorageClassChange, TestIsSchedulableAfterCSIStorageCapacityChange,
TestIsSchedulableAfterCSIDriverChange), plus Reserve/PreBind/Unreserve through the plugin and the
no-PVC fast path."""

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.volumebinding import VolumeBinding
from kschedfw.plugins.volumebinding.binder import PodVolumes
from kschedfw.plugins.volumebinding.volume_binding import STATE_KEY, _StateData

from .fakes import FakeLister

HOSTNAME = "kubernetes.io/hostname"
NODE_LABEL_KEY = "nodeKey"
GI = 1024 ** 3


def sc(name, mode, provisioner=""):
    return kit.make_storage_class(name, binding_mode=mode, provisioner=provisioner)


IMMEDIATE_SC = sc("immediate-sc", "Immediate")
WAIT_SC = sc("wait-sc", "WaitForFirstConsumer")
WAIT_HDD_SC = sc("wait-hdd-sc", "WaitForFirstConsumer")
WAIT_SC_WITH_STORAGE_CAPACITY = sc("wait-sc-with-storage-capacity", "WaitForFirstConsumer",
                                   "driver-with-storage-capacity")
DRIVER_WITH_STORAGE_CAPACITY = parse_object({
    "apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "driver-with-storage-capacity"},
    "spec": {"storageCapacity": True}})
BASE_OBJECTS = [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, WAIT_SC_WITH_STORAGE_CAPACITY, DRIVER_WITH_STORAGE_CAPACITY]
DEFAULT_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def make_pvc(name, class_name, bound_pv="", request=None, phase=None):
    annotations = {"pv.kubernetes.io/bind-completed": "true"} if bound_pv else None
    return kit.make_pvc(name, storage_class=class_name, volume_name=bound_pv, request=request, access_modes=(),
                        phase=phase or "Pending", annotations=annotations)


def make_pv(name, class_name, capacity=None, affinity=None, phase="Available"):
    terms = [[{"key": k, "operator": "In", "values": v} for k, v in affinity.items()]] if affinity else []
    return kit.make_pv(name, storage_class=class_name, capacity=capacity, access_modes=(), node_affinity_terms=terms,
                       phase=phase, source={})


def make_capacity(name, class_name, node, capacity):
    return parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                         "metadata": {"name": name, "namespace": "default"}, "storageClassName": class_name,
                         "nodeTopology": {"matchLabels": {NODE_LABEL_KEY: node.labels[NODE_LABEL_KEY]}},
                         "capacity": capacity})


def st(status):
    return None if status is None else (status.code, status.message())


SKIP = (Code.Skip, "")
BIND_CONFLICT = (Code.UnschedulableAndUnresolvable, "node(s) didn't find available persistent volumes to bind")


def _uau(*reasons):
    return (Code.UnschedulableAndUnresolvable, ", ".join(reasons))


def case(name, pod, nodes, pvcs=(), pvs=(), capacities=(), scoring=False, shape=None, want_pre_filter=None,
         want_claims=None, want_filter=None, want_pre_score=SKIP, want_scores=None):
    return pytest.param(pod, nodes, list(pvcs), list(pvs), list(capacities), scoring, shape, want_pre_filter,
                        want_claims, want_filter, want_pre_score, want_scores, id=name)


def _pvs_by_zone(prefix, cls, zone_caps):
    out = []
    for zone, cap in zone_caps:
        for i in (0, 1):
            out.append(make_pv(f"pv-{zone}-{i}", cls, cap, {"topology.kubernetes.io/region": [f"region-{zone}"],
                                                            "topology.kubernetes.io/zone": [f"zone-{zone}"]}))
    return out


ZONAL_NODES = [kit.make_node(f"zone-{z}-node-{n}", labels={"topology.kubernetes.io/region": f"region-{z}",
                                                          "topology.kubernetes.io/zone": f"zone-{z}"})
               for z in "abc" for n in "ab"]
CAP_NODES = [kit.make_node(n, labels={NODE_LABEL_KEY: n}) for n in ("node-a", "node-b", "node-c")]
LOCAL_PVS = [make_pv(f"pv-{n}-{i}", "wait-sc", cap, {HOSTNAME: [f"node-{n}"]})
             for n, cap in (("a", "200Gi"), ("b", "100Gi")) for i in (0, 1)]
LOCAL_HDD_PVS = [make_pv(f"pv-{n}-{i}", "wait-hdd-sc", cap, {HOSTNAME: [f"node-{n}"]})
                 for n, cap in (("a", "200Gi"), ("b", "100Gi")) for i in (2, 3)]


def _caps(*sizes):
    return [make_capacity(node.name, "wait-sc-with-storage-capacity", node, size)
            for node, size in zip(CAP_NODES, sizes)]


VOLUME_BINDING_CASES = [
    case("pod has not pvcs", kit.make_pod("pod-a"), [kit.make_node("node-a")], want_pre_filter=SKIP,
         want_filter=[None]),
    case("all bound", kit.make_pod("pod-a", pvcs=["pvc-a"]), [kit.make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], pvs=[make_pv("pv-a", "wait-sc")],
         want_claims=(["pvc-a"], [], {}), want_filter=[None]),
    case("PVC does not exist", kit.make_pod("pod-a", pvcs=["pvc-a"]), [kit.make_node("node-a")],
         want_pre_filter=_uau('persistentvolumeclaim "pvc-a" not found')),
    case("Part of PVCs do not exist", kit.make_pod("pod-a", pvcs=["pvc-a", "pvc-b"]), [kit.make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
         want_pre_filter=_uau('persistentvolumeclaim "pvc-b" not found')),
    case("immediate claims not bound", kit.make_pod("pod-a", pvcs=["pvc-a"]), [kit.make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "immediate-sc")],
         want_pre_filter=_uau("pod has unbound immediate PersistentVolumeClaims")),
    case("unbound claims no matches", kit.make_pod("pod-a", pvcs=["pvc-a"]), [kit.make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc")], want_claims=([], ["pvc-a"], {"wait-sc": []}),
         want_filter=[BIND_CONFLICT]),
    case("bound and unbound unsatisfied", kit.make_pod("pod-a", pvcs=["pvc-a", "pvc-b"]),
         [kit.make_node("node-a", labels={"foo": "barbar"})],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc")],
         pvs=[make_pv("pv-a", "wait-sc", affinity={"foo": ["bar"]})],
         want_claims=(["pvc-a"], ["pvc-b"], {"wait-sc": ["pv-a"]}),
         want_filter=[_uau("node(s) didn't match PersistentVolume's node affinity",
                           "node(s) didn't find available persistent volumes to bind")]),
    case("pv not found", kit.make_pod("pod-a", pvcs=["pvc-a"]), [kit.make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], want_claims=(["pvc-a"], [], {}),
         want_filter=[_uau("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")]),
    case("pv not found claim lost", kit.make_pod("pod-a", pvcs=["pvc-a"]), [kit.make_node("node-a")],
         pvcs=[make_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")],
         want_pre_filter=_uau('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"')),
    # --- StorageCapacityScoring (alpha gate, enabled explicitly in these cases)
    case("local volumes with close capacity are preferred", kit.make_pod("pod-a", pvcs=["pvc-a"]),
         [kit.make_node("node-a"), kit.make_node("node-b"), kit.make_node("node-c")],
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")], pvs=LOCAL_PVS, scoring=True,
         want_claims=([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
         want_filter=[None, None, BIND_CONFLICT], want_pre_score=None, want_scores=[25, 50, 0]),
    case("local volumes with close capacity are preferred (multiple pvcs)",
         kit.make_pod("pod-a", pvcs=["pvc-0", "pvc-1"]),
         [kit.make_node("node-a"), kit.make_node("node-b"), kit.make_node("node-c")],
         pvcs=[make_pvc("pvc-0", "wait-sc", request="50Gi"), make_pvc("pvc-1", "wait-hdd-sc", request="100Gi")],
         pvs=LOCAL_PVS + LOCAL_HDD_PVS, scoring=True,
         want_filter=[None, None, BIND_CONFLICT], want_pre_score=None, want_scores=[38, 75, 0]),
    case("zonal volumes with close capacity are preferred", kit.make_pod("pod-a", pvcs=["pvc-a"]), ZONAL_NODES,
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")],
         pvs=_pvs_by_zone("pv", "wait-sc", [("a", "200Gi"), ("b", "100Gi")]), scoring=True,
         want_filter=[None, None, None, None, BIND_CONFLICT, BIND_CONFLICT], want_pre_score=None,
         want_scores=[25, 25, 50, 50, 0, 0]),
    case("zonal volumes with close capacity are preferred (custom shape)", kit.make_pod("pod-a", pvcs=["pvc-a"]),
         ZONAL_NODES,
         pvcs=[make_pvc("pvc-a", "wait-sc", request="50Gi")],
         pvs=_pvs_by_zone("pv", "wait-sc", [("a", "200Gi"), ("b", "100Gi")]), scoring=True,
         shape=[{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3}, {"utilization": 100, "score": 5}],
         want_filter=[None, None, None, None, BIND_CONFLICT, BIND_CONFLICT], want_pre_score=None,
         want_scores=[15, 15, 30, 30, 0, 0]),
    case("storage capacity score", kit.make_pod("pod-a", pvcs=["pvc-dynamic"]), CAP_NODES,
         pvcs=[make_pvc("pvc-dynamic", "wait-sc-with-storage-capacity", request="10Gi")],
         capacities=_caps("100Gi", "50Gi", "10Gi"), scoring=True,
         want_claims=([], ["pvc-dynamic"], {"wait-sc-with-storage-capacity": []}),
         want_filter=[None, None, None], want_pre_score=None, want_scores=[10, 20, 100]),
    case("storage capacity score with static binds", kit.make_pod("pod-a", pvcs=["pvc-dynamic", "pvc-static"]),
         CAP_NODES,
         pvcs=[make_pvc("pvc-dynamic", "wait-sc-with-storage-capacity", request="10Gi"),
               make_pvc("pvc-static", "wait-sc", request="50Gi")],
         pvs=[make_pv(f"pv-static-{n}", "wait-sc", "100Gi", {HOSTNAME: [f"node-{n}"]}) for n in "abc"],
         capacities=_caps("100Gi", "50Gi", "10Gi"), scoring=True,
         want_filter=[None, None, None], want_pre_score=None, want_scores=[50, 50, 50]),
    case("dynamic provisioning with multiple PVCs of the same StorageClass",
         kit.make_pod("pod-a", pvcs=["pvc-dynamic-0", "pvc-dynamic-1"]),
         CAP_NODES[:1],
         pvcs=[make_pvc("pvc-dynamic-0", "wait-sc-with-storage-capacity", request="50Gi"),
               make_pvc("pvc-dynamic-1", "wait-sc-with-storage-capacity", request="50Gi")],
         capacities=_caps("100Gi"), scoring=True,
         want_filter=[None], want_pre_score=None, want_scores=[100]),
    case("prefer node with least allocatable", kit.make_pod("pod-a", pvcs=["pvc-dynamic"]), CAP_NODES,
         pvcs=[make_pvc("pvc-dynamic", "wait-sc-with-storage-capacity", request="10Gi")],
         capacities=_caps("100Gi", "20Gi", "10Gi"), scoring=True,
         want_filter=[None, None, None], want_pre_score=None, want_scores=[10, 50, 100]),
    case("prefer node with maximum allocatable", kit.make_pod("pod-a", pvcs=["pvc-dynamic"]), CAP_NODES,
         pvcs=[make_pvc("pvc-dynamic", "wait-sc-with-storage-capacity", request="10Gi")],
         capacities=_caps("100Gi", "20Gi", "10Gi"), scoring=True,
         shape=[{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
         want_filter=[None, None, None], want_pre_score=None, want_scores=[90, 50, 0]),
]


@pytest.mark.parametrize("pod,nodes,pvcs,pvs,capacities,scoring,shape,want_pre_filter,want_claims,want_filter,"
                         "want_pre_score,want_scores", VOLUME_BINDING_CASES)
def test_volume_binding(pod, nodes, pvcs, pvs, capacities, scoring, shape, want_pre_filter, want_claims,
                        want_filter, want_pre_score, want_scores):
    args = {"bindTimeoutSeconds": 300}
    if scoring:
        args["shape"] = shape or DEFAULT_SHAPE
    lister = FakeLister(*BASE_OBJECTS, *nodes, *pvcs, *pvs, *capacities)
    plugin = VolumeBinding(args, Handle(lister=lister), features={"StorageCapacityScoring": scoring})
    node_infos = [NodeInfo(node=n) for n in nodes]
    state = CycleState()
    result, pre = plugin.pre_filter(state, pod, node_infos)
    assert result is None
    assert st(pre) == want_pre_filter
    if pre is not None:
        return   # the framework skips Filter after a failed or skipped PreFilter
    data = state.read(STATE_KEY)
    if want_claims is not None:
        claims = data.pod_volume_claims
        assert [c.name for c in claims.bound_claims] == want_claims[0]
        assert [c.name for c in claims.unbound_claims_delay_binding] == want_claims[1]
        assert {k: sorted(p.name for p in v) for k, v in claims.unbound_volumes_delay_binding.items()} == \
            want_claims[2]
    assert [st(plugin.filter(state, pod, ni)) for ni in node_infos] == want_filter
    pre_score = plugin.pre_score(state, pod, node_infos)
    assert st(pre_score) == want_pre_score
    if pre_score is None:
        assert [plugin.score(state, pod, ni) for ni in node_infos] == want_scores


def test_pod_without_pvcs_costs_no_lookups():
    class Exploding:
        def get(self, *a, **k):
            raise AssertionError("no lookups for a pod without volumes")

        list = get

    plugin = VolumeBinding({"bindTimeoutSeconds": 600}, Handle(lister=Exploding()))
    pod = kit.make_pod("pod-a")
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status.code is Code.Skip
    assert st(plugin.pre_score(state, pod, [])) == SKIP      # StorageCapacityScoring is off in v1.36
    assert plugin.reserve(state, pod, "node-a") is None
    assert st(plugin.pre_bind_pre_flight(state, pod, "node-a")[1]) == SKIP
    assert plugin.pre_bind(state, pod, "node-a") is None
    assert plugin.unreserve(state, pod, "node-a") is None


# ---------------------------------------------------------------- Test_PreBindPreFlight

def _state(all_bound=False, by_node=None):
    data = _StateData()
    data.all_bound = all_bound
    data.pod_volumes_by_node = by_node
    return data


@pytest.mark.parametrize("data,want", [
    pytest.param(_state(all_bound=True), SKIP, id="all bound"),
    pytest.param(_state(by_node={"node-a": PodVolumes()}), None, id="volume to be bound"),
    pytest.param(None, (Code.Error, "not found"), id="error: state is nil"),
    pytest.param(_state(by_node={"node-b": PodVolumes()}), (Code.Error, 'no pod volume found for node "node-a"'),
                 id="error: node is not found in podVolumesByNode"),
])
def test_pre_bind_pre_flight(data, want):
    state = CycleState()
    if data is not None:
        state.write(STATE_KEY, data)
    result, status = VolumeBinding({}, Handle()).pre_bind_pre_flight(state, kit.make_pod("pod-a"), "node-a")
    assert result.allow_parallel is True
    assert st(status) == want


# ---------------------------------------------------------------- reserve / prebind / unreserve

class RecordingClient:
    def __init__(self):
        self.calls = []

    def bind_pvc(self, pvc, pv):
        self.calls.append((pvc.name, pv.name if pv is not None else None))


def test_reserve_prebind_unreserve_cycle():
    pvc = make_pvc("pvc-a", "wait-sc", request="1Gi")
    other = make_pvc("pvc-b", "wait-sc", request="1Gi")
    pv = make_pv("pv-a", "wait-sc", "5Gi", {HOSTNAME: ["node-a"]})
    node = kit.make_node("node-a")
    client = RecordingClient()
    handle = Handle(lister=FakeLister(*BASE_OBJECTS, node, pvc, other, pv), client=client)
    plugin = VolumeBinding({"bindTimeoutSeconds": 600}, handle)
    pod, pod2 = kit.make_pod("pod-a", pvcs=["pvc-a"]), kit.make_pod("pod-b", pvcs=["pvc-b"])
    ni = NodeInfo(node=node)

    state = CycleState()
    assert plugin.pre_filter(state, pod, [ni]) == (None, None)
    assert plugin.filter(state, pod, ni) is None
    assert plugin.reserve(state, pod, "node-a") is None
    assert st(plugin.pre_bind_pre_flight(state, pod, "node-a")[1]) is None

    # While pod-a's binding is assumed, pod-b cannot take the same PV.
    state2 = CycleState()
    assert plugin.pre_filter(state2, pod2, [ni]) == (None, None)
    assert st(plugin.filter(state2, pod2, ni)) == BIND_CONFLICT

    # Unreserve gives it back.
    plugin.unreserve(state, pod, "node-a")
    state3 = CycleState()
    plugin.pre_filter(state3, pod2, [ni])
    assert plugin.filter(state3, pod2, ni) is None

    # Reserve again and bind through the client.
    assert plugin.reserve(state, pod, "node-a") is None
    assert plugin.pre_bind(state, pod, "node-a") is None
    assert client.calls == [("pvc-a", "pv-a")]


# ---------------------------------------------------------------- queueing hints

def _csi_node(migrated=None):
    annotations = None if migrated is None else {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return kit.make_csi_node("csinode-a", annotations=annotations)


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, _csi_node(), QueueingHint.Queue, id="CSINode is newly created"),
    pytest.param(_csi_node(), _csi_node("test1"), QueueingHint.Queue,
                 id="CSINode's migrated-plugins annotations is added"),
    pytest.param(_csi_node("test1"), _csi_node("test2"), QueueingHint.Queue,
                 id="CSINode's migrated-plugins annotation is updated"),
    pytest.param(_csi_node("test1"), _csi_node("test1"), QueueingHint.QueueSkip,
                 id="CSINode is updated but migrated-plugins annotation gets unchanged"),
])
def test_is_schedulable_after_csi_node_change(old, new, want):
    assert VolumeBinding({}, Handle()).is_schedulable_after_csi_node_change(kit.make_pod("pod-a"), old, new) == want


@pytest.mark.parametrize("pod,old,new,want", [
    pytest.param(parse_object({"kind": "Pod", "metadata": {"name": "pod-a"},
                               "spec": {"volumes": [{"name": "e", "emptyDir": {}}]}}),
                 make_pvc("pvc-b", "sc-a"), make_pvc("pvc-b", "sc-a"), QueueingHint.QueueSkip,
                 id="pod has no pvc or ephemeral volumes"),
    pytest.param(kit.make_pod("pod-a", namespace="ns-a", pvcs=["pvc-a", "pvc-b"]), None, make_pvc("pvc-b", ""),
                 QueueingHint.QueueSkip,
                 id="pvc with the same name as the one used by the pod in a different namespace is modified"),
    pytest.param(kit.make_pod("pod-a", pvcs=["pvc-a", "pvc-c"]), make_pvc("pvc-b", ""), make_pvc("pvc-b", ""),
                 QueueingHint.QueueSkip,
                 id="pod has no pvc that is being modified"),
    pytest.param(kit.make_pod("pod-a",
                              volumes=[{"name": "ephemeral-a", "ephemeral": {}},
                                       {"name": "ephemeral-c", "ephemeral": {}}]), make_pvc("pod-a-ephemeral-b", ""),
                 make_pvc("pod-a-ephemeral-b", ""), QueueingHint.QueueSkip,
                 id="pod has no generic ephemeral volume that is being modified"),
    pytest.param(kit.make_pod("pod-a", pvcs=["pvc-a", "pvc-b"]), make_pvc("pvc-b", ""), make_pvc("pvc-b", ""),
                 QueueingHint.Queue,
                 id="pod has the pvc that is being modified"),
    pytest.param(kit.make_pod("pod-a",
                              volumes=[{"name": "ephemeral-a", "ephemeral": {}},
                                       {"name": "ephemeral-b", "ephemeral": {}}]), make_pvc("pod-a-ephemeral-b", ""),
                 make_pvc("pod-a-ephemeral-b", ""), QueueingHint.Queue,
                 id="pod has the generic ephemeral volume that is being modified"),
])
def test_is_schedulable_after_persistent_volume_claim_change(pod, old, new, want):
    assert VolumeBinding({}, Handle()).is_schedulable_after_persistent_volume_claim_change(pod, old, new) == want


def _sc_topo(values=None):
    return kit.make_storage_class("sc-a", provisioner="", allowed_topologies={HOSTNAME: values} if values else None)


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, _sc_topo(), QueueingHint.Queue, id="When a new StorageClass is created, it returns Queue"),
    pytest.param(_sc_topo(["node-a"]), _sc_topo(["node-b"]), QueueingHint.Queue,
                 id="When the AllowedTopologies are changed, it returns Queue"),
    pytest.param(_sc_topo(["node-a"]), _sc_topo(["node-a"]), QueueingHint.QueueSkip,
                 id="When there are no changes to the StorageClass, it returns QueueSkip"),
])
def test_is_schedulable_after_storage_class_change(old, new, want):
    assert VolumeBinding({}, Handle()).is_schedulable_after_storage_class_change(kit.make_pod("pod-a"), old,
                                                                                 new) == want


def _cap(capacity=None, maximum=None):
    d = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
         "metadata": {"name": "cap-a", "namespace": "default"}}
    if capacity is not None:
        d["capacity"] = capacity
    if maximum is not None:
        d["maximumVolumeSize"] = maximum
    return parse_object(d)


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, _cap(), QueueingHint.Queue, id="When a new CSIStorageCapacity is created, it returns Queue"),
    pytest.param(_cap(), _cap(100), QueueingHint.Queue,
                 id="When the volume limit is increase(Capacity set), it returns Queue"),
    pytest.param(_cap(), _cap(maximum=100), QueueingHint.Queue,
                 id="When the volume limit is increase(MaximumVolumeSize set), it returns Queue"),
    pytest.param(_cap(50), _cap(100), QueueingHint.Queue,
                 id="When the volume limit is increase(Capacity increase), it returns Queue"),
    pytest.param(_cap(100, 50), _cap(100), QueueingHint.Queue,
                 id="When the volume limit is increase(MaximumVolumeSize unset), it returns Queue"),
    pytest.param(_cap(100, 50), _cap(100, 60), QueueingHint.Queue,
                 id="When the volume limit is increase(MaximumVolumeSize increase), it returns Queue"),
    pytest.param(_cap(100, 50), _cap(100, 50), QueueingHint.QueueSkip,
                 id="When there are no changes to the CSIStorageCapacity, it returns QueueSkip"),
    pytest.param(_cap(100), _cap(100), QueueingHint.QueueSkip,
                 id="When the volume limit is equal(Capacity), it returns QueueSkip"),
    pytest.param(_cap(100, 50), _cap(50), QueueingHint.QueueSkip,
                 id="When the volume limit is equal(MaximumVolumeSize unset), it returns QueueSkip"),
    pytest.param(_cap(100), _cap(90), QueueingHint.QueueSkip,
                 id="When the volume limit is decrease(Capacity), it returns QueueSkip"),
    pytest.param(_cap(maximum=100), _cap(maximum=90), QueueingHint.QueueSkip,
                 id="When the volume limit is decrease(MaximumVolumeSize), it returns QueueSkip"),
])
def test_is_schedulable_after_csi_storage_capacity_change(old, new, want):
    plugin = VolumeBinding({}, Handle())
    assert plugin.is_schedulable_after_csi_storage_capacity_change(kit.make_pod("pod-a"), old, new) == want


def _driver(name, storage_capacity):
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
                         "spec": spec})


@pytest.mark.parametrize("pod,old,new,want", [
    pytest.param(kit.make_pod("pod-a"), _driver("test1", True), _driver("test1", True), QueueingHint.QueueSkip,
                 id="pod has no CSIDriver"),
    pytest.param(kit.make_pod("pod-a", volumes=[{"name": "c", "csi": {"driver": "test1"}}]), _driver("test2", True),
                 _driver("test2", False), QueueingHint.QueueSkip,
                 id="driver name in pod and csidriver name are different"),
    pytest.param(kit.make_pod("pod-a", volumes=[{"name": "c", "csi": {"driver": "test1"}}]), _driver("test1", None),
                 _driver("test1", None), QueueingHint.QueueSkip,
                 id="original StorageCapacity is nil"),
    pytest.param(kit.make_pod("pod-a", volumes=[{"name": "c", "csi": {"driver": "test1"}}]), _driver("test1", False),
                 _driver("test1", False), QueueingHint.QueueSkip,
                 id="original StorageCapacity is false"),
    pytest.param(kit.make_pod("pod-a", volumes=[{"name": "c", "csi": {"driver": "test1"}}]), _driver("test1", True),
                 _driver("test1", None), QueueingHint.Queue,
                 id="modified StorageCapacity is nil"),
    pytest.param(kit.make_pod("pod-a", volumes=[{"name": "c", "csi": {"driver": "test1"}}]), _driver("test1", True),
                 _driver("test1", True), QueueingHint.QueueSkip,
                 id="modified StorageCapacity is true"),
    pytest.param(kit.make_pod("pod-a", volumes=[{"name": "c", "csi": {"driver": "test1"}}]), _driver("test1", True),
                 _driver("test1", False), QueueingHint.Queue,
                 id="modified StorageCapacity is false"),
])
def test_is_schedulable_after_csi_driver_change(pod, old, new, want):
    assert VolumeBinding({}, Handle()).is_schedulable_after_csi_driver_change(pod, old, new) == want


def test_events_to_register():
    got = [(e.event, e.queueing_hint_fn is not None) for e in VolumeBinding({}, Handle()).events_to_register()]
    assert got == [
        (ClusterEvent(EventResource.StorageClass, ActionType.Add | ActionType.Update), True),
        (ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add | ActionType.Update), True),
        (ClusterEvent(EventResource.PersistentVolume, ActionType.Add | ActionType.Update), False),
        (ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel), False),
        (ClusterEvent(EventResource.CSINode, ActionType.Add | ActionType.Update), True),
        (ClusterEvent(EventResource.CSIDriver, ActionType.Update), True),
        (ClusterEvent(EventResource.CSIStorageCapacity, ActionType.Add | ActionType.Update), True),
    ]
