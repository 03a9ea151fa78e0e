"""Port of upstream volumerestrictions/volume_restrictions_test.go (TestGCEDiskConflicts,
TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts,
Test_isSchedulableAfterPodDeleted, Test_isSchedulableAfterPersistentVolumeClaimChange), plus the
AddPod/RemovePod extensions and event registration."""

import itertools

import pytest

from kschedfw import testing as kit
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.volumerestrictions import (ERR_REASON_DISK_CONFLICT,
                                                 ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
                                                 VolumeRestrictions)

from .fakes import FakeLister

_names = itertools.count()


def pod_with_volumes(*volumes, name=None, namespace="default", node="", pvcs=()):
    """A pod of a fresh name mounting ``volumes`` and the claims ``pvcs`` (unnamed volumes get
    ``vol-<i>``)."""
    vols = list(volumes) + [kit.pvc_volume(c, f"pvc-{i}") for i, c in enumerate(pvcs)]
    for i, v in enumerate(vols):
        v.setdefault("name", f"vol-{i}")
    return kit.make_pod(name or f"pod-{next(_names)}", namespace=namespace, node_name=node, volumes=vols)


def make_pvc(name, *modes, namespace="default"):
    return kit.make_pvc(name, access_modes=modes, request=None, namespace=namespace)


def node_info(*pods):
    ni = NodeInfo()
    for p in pods:
        ni.add_pod(p)
    return ni


def new_plugin(pods=(), nodes=(), pvcs=()):
    node_objs = list(nodes)
    handle = Handle(snapshot=Snapshot.from_objects(node_objs, pods), lister=FakeLister(*pvcs))
    return VolumeRestrictions({}, handle)


def status_tuple(status):
    if status is None:
        return None
    return status.code, status.message()


def run(plugin, pod, ni):
    """PreFilter, then Filter if PreFilter succeeded (the framework skips Filter otherwise)."""
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [])
    got_filter = "not run"
    if pre is None:
        got_filter = status_tuple(plugin.filter(state, pod, ni))
    return status_tuple(pre), got_filter


SKIP = (Code.Skip, "")
DISK = (Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
NOT_RUN = "not run"

GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                   "fsType": "ext4", "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}}


def _disk_cases(kind, vol, vol2, extra=()):
    return [
        pytest.param(pod_with_volumes(), NodeInfo(), SKIP, NOT_RUN, id=f"{kind}: nothing"),
        pytest.param(pod_with_volumes(), node_info(pod_with_volumes(dict(vol))), SKIP, NOT_RUN,
                     id=f"{kind}: one state"),
        pytest.param(pod_with_volumes(dict(vol)), node_info(pod_with_volumes(dict(vol))), None, DISK,
                     id=f"{kind}: same state"),
        pytest.param(pod_with_volumes(dict(vol2)), node_info(pod_with_volumes(dict(vol))), None, None,
                     id=f"{kind}: different state"),
        *extra,
    ]


@pytest.mark.parametrize("pod,ni,want_pre_filter,want_filter", [
    *_disk_cases("GCE", GCE, GCE2, [
        pytest.param(pod_with_volumes({"name": "volume with no restriction", "emptyDir": {}}), NodeInfo(),
                     SKIP, NOT_RUN, id="GCE: pod with a volume that doesn't have restrictions"),
    ]),
    *_disk_cases("AWS", AWS, AWS2),
    *_disk_cases("RBD", RBD, RBD2),
    *_disk_cases("ISCSI", ISCSI, ISCSI2),
])
def test_disk_conflicts(pod, ni, want_pre_filter, want_filter):
    assert run(new_plugin(), pod, ni) == (want_pre_filter, want_filter)


@pytest.mark.parametrize("mine,theirs,conflict", [
    pytest.param({"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
                 {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}, False,
                 id="GCE: read-only on both sides may share"),
    pytest.param({"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
                 {"gcePersistentDisk": {"pdName": "foo"}}, True, id="GCE: one writer conflicts"),
    pytest.param({"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}},
                 {"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}, True,
                 id="AWS: never shared, even read-only"),
    pytest.param({"rbd": {"monitors": ["a"], "pool": "p", "image": "i", "readOnly": True}},
                 {"rbd": {"monitors": ["a"], "pool": "p", "image": "i", "readOnly": True}}, False,
                 id="RBD: read-only on both sides may share"),
    pytest.param({"rbd": {"monitors": ["a", "x"], "image": "i"}},
                 {"rbd": {"monitors": ["x"], "pool": "rbd", "image": "i"}}, True,
                 id="RBD: overlapping monitor, defaulted pool, same image"),
    pytest.param({"iscsi": {"iqn": "q", "readOnly": True}}, {"iscsi": {"iqn": "q", "readOnly": True}},
                 False, id="ISCSI: read-only on both sides may share"),
])
def test_read_only_rules(mine, theirs, conflict):
    pre, got = run(new_plugin(), pod_with_volumes(mine), node_info(pod_with_volumes(theirs)))
    assert pre is None
    assert got == (DISK if conflict else None)


# ---------------------------------------------------------------- TestAccessModeConflicts

POD_WITH_ONE_PVC = pod_with_volumes(name="pod-with-one-pvc", node="node-1", pvcs=["claim-with-rwop-1"])
POD_WITH_TWO_PVCS = pod_with_volumes(name="pod-with-two-pvcs", node="node-1",
                             pvcs=["claim-with-rwop-1", "claim-with-rwop-2"])
POD_WITH_ONE_CONFLICT = pod_with_volumes(name="pod-with-one-conflict", node="node-1", pvcs=["claim-with-rwop-1"])
POD_WITH_TWO_CONFLICTS = pod_with_volumes(name="pod-with-two-conflicts", node="node-1",
                                  pvcs=["claim-with-rwop-1", "claim-with-rwop-2"])
POD_WITH_RWX = pod_with_volumes(name="pod-with-rwx", node="node-1", pvcs=["claim-with-rwx"])
NODE_1 = kit.make_node("node-1")
RWOP_1 = make_pvc("claim-with-rwop-1", "ReadWriteOncePod")
RWOP_2 = make_pvc("claim-with-rwop-2", "ReadWriteOncePod")
RWX = make_pvc("claim-with-rwx", "ReadWriteMany")
RWOP_CONFLICT = (Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


@pytest.mark.parametrize("pod,ni,pods,nodes,pvcs,want_pre_filter,want_filter", [
    pytest.param(pod_with_volumes(), NodeInfo(), [], [], [], SKIP, NOT_RUN, id="nothing"),
    pytest.param(POD_WITH_ONE_PVC, NodeInfo(), [], [], [],
                 (Code.UnschedulableAndUnresolvable, 'persistentvolumeclaim "claim-with-rwop-1" not found'),
                 NOT_RUN, id="failed to get PVC"),
    pytest.param(POD_WITH_ONE_PVC, node_info(POD_WITH_RWX), [POD_WITH_RWX], [NODE_1], [RWOP_1, RWX],
                 SKIP, NOT_RUN, id="no access mode conflict"),
    pytest.param(POD_WITH_ONE_CONFLICT, node_info(POD_WITH_ONE_PVC, POD_WITH_RWX),
                 [POD_WITH_ONE_PVC, POD_WITH_RWX], [NODE_1], [RWOP_1, RWX], None, RWOP_CONFLICT,
                 id="access mode conflict, unschedulable"),
    pytest.param(POD_WITH_TWO_CONFLICTS, node_info(POD_WITH_TWO_PVCS, POD_WITH_RWX),
                 [POD_WITH_TWO_PVCS, POD_WITH_RWX], [NODE_1], [RWOP_1, RWOP_2, RWX], None,
                 RWOP_CONFLICT, id="two conflicts, unschedulable"),
])
def test_access_mode_conflicts(pod, ni, pods, nodes, pvcs, want_pre_filter, want_filter):
    plugin = new_plugin(pods, nodes, pvcs)
    assert run(plugin, pod, ni) == (want_pre_filter, want_filter)


def test_remove_pod_resolves_read_write_once_pod_conflict():
    """Preemption dry run: removing the pod that holds the claim makes the node fit."""
    plugin = new_plugin([POD_WITH_ONE_PVC], [NODE_1], [RWOP_1])
    state = CycleState()
    _, pre = plugin.pre_filter(state, POD_WITH_ONE_CONFLICT, [])
    assert pre is None
    ni = node_info(POD_WITH_ONE_PVC)
    clone = state.clone()
    assert plugin.pre_filter_remove_pod(clone, POD_WITH_ONE_CONFLICT, POD_WITH_ONE_PVC, ni) is None
    assert plugin.filter(clone, POD_WITH_ONE_CONFLICT, ni) is None
    # the original state is untouched
    assert status_tuple(plugin.filter(state, POD_WITH_ONE_CONFLICT, ni)) == RWOP_CONFLICT
    assert plugin.pre_filter_add_pod(clone, POD_WITH_ONE_CONFLICT, POD_WITH_ONE_PVC, ni) is None
    assert status_tuple(plugin.filter(clone, POD_WITH_ONE_CONFLICT, ni)) == RWOP_CONFLICT


def test_filter_without_prefilter_state_is_an_error():
    status = new_plugin().filter(CycleState(), pod_with_volumes(dict(GCE)), NodeInfo())
    assert status.code is Code.Error
    assert status.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'


# ---------------------------------------------------------------- queueing hints

@pytest.mark.parametrize("pod,deleted,want", [
    pytest.param(pod_with_volumes(dict(GCE)), pod_with_volumes(dict(GCE)), QueueingHint.Queue,
                 id="queue-new-object-gcedisk-conflict"),
    pytest.param(pod_with_volumes(dict(GCE)), pod_with_volumes(dict(GCE2)), QueueingHint.QueueSkip,
                 id="skip-new-object-gcedisk-no-conflict"),
    pytest.param(pod_with_volumes(dict(AWS)), pod_with_volumes(dict(AWS)), QueueingHint.Queue,
                 id="queue-new-object-awsdisk-conflict"),
    pytest.param(pod_with_volumes(dict(AWS)), pod_with_volumes(dict(AWS2)), QueueingHint.QueueSkip,
                 id="skip-new-object-awsdisk-no-conflict"),
    pytest.param(pod_with_volumes(dict(RBD)), pod_with_volumes(dict(RBD)), QueueingHint.Queue,
                 id="queue-new-object-rbddisk-conflict"),
    pytest.param(pod_with_volumes(dict(RBD)), pod_with_volumes(dict(RBD2)), QueueingHint.QueueSkip,
                 id="skip-new-object-rbddisk-no-conflict"),
    pytest.param(pod_with_volumes(dict(ISCSI)), pod_with_volumes(dict(ISCSI)), QueueingHint.Queue,
                 id="queue-new-object-iscsidisk-conflict"),
    pytest.param(pod_with_volumes(dict(ISCSI)), pod_with_volumes(dict(ISCSI2)), QueueingHint.QueueSkip,
                 id="skip-new-object-iscsidisk-no-conflict"),
    pytest.param(pod_with_volumes(name="pod1", pvcs=["claim-rwop"]), pod_with_volumes(name="pod2", pvcs=["claim-rwop"]),
                 QueueingHint.Queue, id="queue-has-same-claim"),
    pytest.param(pod_with_volumes(name="pod1", pvcs=["claim-1-rwop"]),
                 pod_with_volumes(name="pod2", pvcs=["claim-2-rwop"]),
                 QueueingHint.QueueSkip, id="skip-no-same-claim"),
])
def test_is_schedulable_after_pod_deleted(pod, deleted, want):
    assert new_plugin().is_schedulable_after_pod_deleted(pod, deleted, None) == want


_RWX_1 = make_pvc("claim-with-rwx-1", "ReadWriteMany")
_RWX_2 = make_pvc("claim-with-rwx-2", "ReadWriteMany")


@pytest.mark.parametrize("pod,new,want", [
    pytest.param(pod_with_volumes(name="pod-with-two-pvcs", pvcs=["claim-with-rwx-1", "claim-with-rwx-2"]),
                 _RWX_1, QueueingHint.Queue, id="queue-new-object-pvc-belong-pod"),
    pytest.param(pod_with_volumes(name="pod-with-one-pvc", pvcs=["claim-with-rwx-1"]), _RWX_2,
                 QueueingHint.QueueSkip, id="skip-new-object-unused"),
    pytest.param(pod_with_volumes(name="pod-with-one-pvc", pvcs=["claim-with-rwx-1"]), _RWX_2,
                 QueueingHint.QueueSkip, id="skip-nil-old-object"),
    pytest.param(pod_with_volumes(name="pod-with-one-pvc", pvcs=["claim-with-rwx-1"]), _RWX_2,
                 QueueingHint.QueueSkip, id="skip-new-object-not-belong-pod"),
    pytest.param(pod_with_volumes(name="pod-with-one-pvc", namespace="kube-system", pvcs=["claim-with-rwx-1"]),
                 _RWX_1, QueueingHint.QueueSkip, id="skip-new-object-namespace-not-equal-pod"),
])
def test_is_schedulable_after_persistent_volume_claim_added(pod, new, want):
    assert new_plugin().is_schedulable_after_persistent_volume_claim_added(pod, None, new) == want


def test_events_to_register():
    events = [(e.event, e.queueing_hint_fn is not None) for e in new_plugin().events_to_register()]
    assert events == [
        (ClusterEvent(EventResource.Pod, ActionType.Delete), True),
        (ClusterEvent(EventResource.Node, ActionType.Add), False),
        (ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add), True),
    ]


def test_pod_without_volumes_skips_without_lookups():
    class Exploding:
        def get(self, *a, **k):
            raise AssertionError("no lookups for a pod without volumes")

        list = get

    plugin = VolumeRestrictions({}, Handle(lister=Exploding()))
    _, status = plugin.pre_filter(CycleState(), pod_with_volumes(), [])
    assert status.code is Code.Skip
