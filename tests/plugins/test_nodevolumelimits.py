"""Port of upstream nodevolumelimits/csi_test.go (TestCSILimits, TestCSILimitsQHint,
TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint,
TestCSILimitsAfterCSINodeUpdatedQHint, TestVolumeLimitScalingGate).

Upstream's fake PVC lister says ``persistentvolumeclaims "x" not found``; the informer lister the
scheduler runs with says ``persistentvolumeclaim "x" not found``, which is what is checked here.
"""

import itertools

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits

from .fakes import FakeLister

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"

_names = itertools.count()


def pod_with_volumes(*volumes, name=None, namespace="default", uid=None, pvcs=(), node=""):
    """A pod of a fresh name mounting ``volumes`` and the claims ``pvcs`` (unnamed volumes get
    ``vol-<i>``)."""
    vols = [dict(v) for v in volumes] + [{"persistentVolumeClaim": {"claimName": c}} for c in pvcs]
    for i, v in enumerate(vols):
        v.setdefault("name", f"vol-{i}")
    return kit.make_pod(name or f"pod-{next(_names)}", namespace=namespace, uid=uid, node_name=node, volumes=vols)


def make_pvc(name, namespace="default", volume_name="", storage_class=None, owner=None):
    if owner is not None:
        owner = kit.owner_reference("Pod", owner.name, api_version="v1", uid=owner.uid)
    return kit.make_pvc(name, namespace=namespace, volume_name=volume_name, storage_class=storage_class,
                        owner=owner, request=None, access_modes=(), phase="Pending")


def fake_pvs(volume_name, *drivers):
    out = []
    for driver in drivers:
        for j in range(4):
            handle = f"{volume_name}-{driver}-{j}"
            if driver == EBS_IN_TREE:
                source = {"awsElasticBlockStore": {"volumeID": handle}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": handle}}
            out.append(kit.make_pv(handle, capacity=None, access_modes=(), source=source, phase="Pending"))
    return out


def fake_pvcs(volume_name, sc_name, *drivers):
    out = [make_pvc(f"{volume_name}-{d}-{j}", volume_name=f"{volume_name}-{d}-{j}")
           for d in drivers for j in range(4)]
    out.append(make_pvc(f"{volume_name}-4", storage_class=sc_name))
    out.append(make_pvc(f"{volume_name}-5"))
    # a pvc with missing PV but available storageclass
    out.append(make_pvc(f"{volume_name}-6", storage_class=sc_name, volume_name="missing-in-action"))
    return out


def fake_vas(count, *drivers):
    return [parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                          "metadata": {"name": f"va-{d}-{j}"},
                          "spec": {"nodeName": NODE_NAME, "attacher": d,
                                   "source": {"persistentVolumeName": f"csi-{d}-{j}"}}})
            for d in drivers for j in range(count)]


def node_with_limits(limit_source, pods, limit, *drivers):
    ni = NodeInfo(node=kit.make_node(NODE_NAME, hostname_label=False))
    for p in pods:
        ni.add_pod(p)
    csi_node = None
    if limit_source in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        drivers_limits = {} if limit_source == "no-csi-driver" else \
            {d: limit if limit_source == "csinode" else None for d in drivers}
        csi_node = kit.make_csi_node(NODE_NAME, drivers_limits,
                                     annotations={"storage.alpha.kubernetes.io/migrated-plugins": EBS_IN_TREE})
    return ni, csi_node


def st(status):
    return None if status is None else (status.code, status.message())


# ---------------------------------------------------------------- pods of TestCSILimits

RUNNING_POD = pod_with_volumes(pvcs=["csi-ebs.csi.aws.com-3"])
PENDING_VOLUME_POD = pod_with_volumes(pvcs=["csi-4"])
UNBOUND_PVC_POD2 = pod_with_volumes(pvcs=["csi-4"])
MISSING_PV_POD = pod_with_volumes(pvcs=["csi-6"])
NO_SC_PVC_POD = pod_with_volumes(pvcs=["csi-5"])
GCE_TWO_VOL_POD = pod_with_volumes(pvcs=["csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2"])
IN_TREE_ONE_VOL_POD = pod_with_volumes(pvcs=["csi-kubernetes.io/aws-ebs-0"])
IN_TREE_TWO_VOL_POD = pod_with_volumes(pvcs=["csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2"])
CSI_EBS_ONE_VOL_POD = pod_with_volumes(pvcs=["csi-ebs.csi.aws.com-0"])
CSI_EBS_TWO_VOL_POD = pod_with_volumes(pvcs=["csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"])
IN_TREE_NON_MIGRATABLE_ONE_VOL_POD = pod_with_volumes(pvcs=["csi-kubernetes.io/hostpath-0"])
EPHEMERAL_VOLUME_POD = pod_with_volumes({"name": "xyz", "ephemeral": {}}, name="abc", namespace="test", uid="12345")
EPHEMERAL_CLAIM = make_pvc("abc-xyz", namespace="test", storage_class=SC_NAME, owner=EPHEMERAL_VOLUME_POD)
CONFLICTING_CLAIM = make_pvc("abc-xyz", namespace="test", storage_class=SC_NAME)
EPHEMERAL_TWO_VOLUME_POD = pod_with_volumes({"name": "x", "ephemeral": {}}, {"name": "y", "ephemeral": {}},
                                    name="abc", namespace="test", uid="12345II")
EPHEMERAL_CLAIM_X = make_pvc("abc-x", namespace="test", storage_class=SC_NAME, owner=EPHEMERAL_TWO_VOLUME_POD)
EPHEMERAL_CLAIM_Y = make_pvc("abc-y", namespace="test", storage_class=SC_NAME, owner=EPHEMERAL_TWO_VOLUME_POD)
IN_TREE_INLINE_VOL_POD = pod_with_volumes({"awsElasticBlockStore": {"volumeID": "aws-inline1"}})
IN_TREE_INLINE_VOL_POD_WITH_SAME_CSI_VOLUME_ID = pod_with_volumes(
    {"awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}})
ONLY_CONFIGMAP_AND_SECRET_VOL_POD = pod_with_volumes({"configMap": {"name": "cm"}}, {"secret": {"secretName": "s"}})
PVC_POD_WITH_CONFIGMAP_AND_SECRET = pod_with_volumes({"configMap": {"name": "cm"}}, {"secret": {"secretName": "s"}},
                                             pvcs=["csi-ebs.csi.aws.com-0"])
EPHEMERAL_POD_WITH_CONFIGMAP_AND_SECRET = pod_with_volumes(
    {"configMap": {"name": "cm"}}, {"secret": {"secretName": "s"}}, {"name": "xyz", "ephemeral": {}},
    name="abc", namespace="test")
INLINE_MIGRATABLE_POD_WITH_CONFIGMAP_AND_SECRET = pod_with_volumes(
    {"configMap": {"name": "cm"}}, {"secret": {"secretName": "s"}},
    {"awsElasticBlockStore": {"volumeID": "aws-inline1"}})

EXCEEDED = (Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
ABC_XYZ_MISSING = (Code.UnschedulableAndUnresolvable,
                   'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')


def case(test, new_pod, existing=(), max_vols=0, drivers=(EBS,), limit_source="", va_count=0,
         extra_claims=(), want=None, want_pre_filter=None):
    return pytest.param(new_pod, list(existing), max_vols, list(drivers), limit_source, va_count,
                        list(extra_claims), want, want_pre_filter, id=test)


CSI_LIMITS_CASES = [
    case("should count VolumeAttachments towards volume limit when no pods exist", CSI_EBS_ONE_VOL_POD,
         max_vols=2, va_count=2, limit_source="csinode", want=EXCEEDED),
    case("should schedule pod when VolumeAttachments count does not exceed limit", CSI_EBS_ONE_VOL_POD,
         max_vols=2, va_count=1, limit_source="csinode"),
    case("fits when node volume limit >= new pods CSI volume", CSI_EBS_ONE_VOL_POD,
         [RUNNING_POD, CSI_EBS_TWO_VOL_POD], 4, limit_source="csinode"),
    case("doesn't when node volume limit <= pods CSI volume", CSI_EBS_ONE_VOL_POD,
         [RUNNING_POD, CSI_EBS_TWO_VOL_POD], 2, limit_source="csinode", want=EXCEEDED),
    case("should when driver does not support volume limits", CSI_EBS_ONE_VOL_POD,
         [RUNNING_POD, CSI_EBS_TWO_VOL_POD], 2, limit_source="csinode-with-no-limit"),
    case("count pending PVCs towards volume limit <= pods CSI volume", CSI_EBS_ONE_VOL_POD,
         [PENDING_VOLUME_POD, CSI_EBS_TWO_VOL_POD], 2, limit_source="csinode", want=EXCEEDED),
    case("count multiple pending pvcs towards volume limit >= pods CSI volume", CSI_EBS_ONE_VOL_POD,
         [PENDING_VOLUME_POD, UNBOUND_PVC_POD2, CSI_EBS_TWO_VOL_POD], 4, limit_source="csinode"),
    case("should count PVCs with invalid PV name but valid SC", CSI_EBS_ONE_VOL_POD,
         [MISSING_PV_POD, CSI_EBS_TWO_VOL_POD], 2, limit_source="csinode", want=EXCEEDED),
    case("don't count pvcs with missing SC towards volume limit", CSI_EBS_ONE_VOL_POD,
         [RUNNING_POD, NO_SC_PVC_POD], 2, limit_source="csinode"),
    case("count pvcs with the same type towards volume limit", CSI_EBS_ONE_VOL_POD,
         [GCE_TWO_VOL_POD, CSI_EBS_TWO_VOL_POD], 2, [EBS, GCE], limit_source="csinode", want=EXCEEDED),
    case("don't count pvcs with different type towards volume limit", GCE_TWO_VOL_POD,
         [CSI_EBS_TWO_VOL_POD, RUNNING_POD], 2, [EBS, GCE], limit_source="csinode"),
    case("should count in-tree volumes if migration is enabled", IN_TREE_ONE_VOL_POD,
         [IN_TREE_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS], limit_source="csinode", want=EXCEEDED),
    case("nil csi node", IN_TREE_INLINE_VOL_POD, [IN_TREE_TWO_VOL_POD], 0, [EBS_IN_TREE, EBS]),
    case("should count unbound in-tree volumes if migration is enabled", PENDING_VOLUME_POD,
         [IN_TREE_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS], limit_source="csinode", want=EXCEEDED),
    case("should not limit pod if volume used does not report limits", IN_TREE_ONE_VOL_POD,
         [IN_TREE_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS], limit_source="csinode-with-no-limit"),
    case("should not count non-migratable in-tree volumes", IN_TREE_NON_MIGRATABLE_ONE_VOL_POD,
         [CSI_EBS_TWO_VOL_POD], 2, [HOSTPATH_IN_TREE, EBS], limit_source="csinode"),
    case("should count in-tree inline volumes if migration is enabled", IN_TREE_INLINE_VOL_POD,
         [IN_TREE_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS], limit_source="csinode", want=EXCEEDED),
    case("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
         IN_TREE_ONE_VOL_POD, [CSI_EBS_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS], limit_source="csinode",
         want=EXCEEDED),
    case("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
         IN_TREE_INLINE_VOL_POD, [CSI_EBS_TWO_VOL_POD, IN_TREE_ONE_VOL_POD], 3, [EBS_IN_TREE, EBS],
         limit_source="csinode", want=EXCEEDED),
    case("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
         IN_TREE_INLINE_VOL_POD_WITH_SAME_CSI_VOLUME_ID, [CSI_EBS_TWO_VOL_POD, IN_TREE_ONE_VOL_POD], 3,
         [EBS_IN_TREE, EBS], limit_source="csinode"),
    case("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
         CSI_EBS_ONE_VOL_POD, [IN_TREE_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS], limit_source="csinode",
         want=EXCEEDED),
    case("ephemeral volume missing", EPHEMERAL_VOLUME_POD, limit_source="csinode-with-no-limit",
         want=ABC_XYZ_MISSING),
    case("ephemeral volume not owned", EPHEMERAL_VOLUME_POD, limit_source="csinode-with-no-limit",
         extra_claims=[CONFLICTING_CLAIM],
         want=(Code.Error, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")),
    case("ephemeral volume unbound", EPHEMERAL_VOLUME_POD, limit_source="csinode-with-no-limit",
         extra_claims=[EPHEMERAL_CLAIM]),
    case("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL_VOLUME_POD,
         [RUNNING_POD, CSI_EBS_TWO_VOL_POD], 2, limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM],
         want=EXCEEDED),
    case("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", CSI_EBS_ONE_VOL_POD,
         [RUNNING_POD, EPHEMERAL_TWO_VOLUME_POD], 2, limit_source="csinode",
         extra_claims=[EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], want=EXCEEDED),
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, "
         "ephemeral disabled", CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_VOLUME_POD, CSI_EBS_TWO_VOL_POD],
         3, limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM], want=EXCEEDED),
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
         CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_VOLUME_POD, CSI_EBS_TWO_VOL_POD], 3,
         limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM], want=EXCEEDED),
    case("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
         CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_VOLUME_POD, CSI_EBS_TWO_VOL_POD], 5,
         limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM]),
    case("skip Filter when the pod only uses secrets and configmaps", ONLY_CONFIGMAP_AND_SECRET_VOL_POD,
         max_vols=2, limit_source="csinode", want_pre_filter=(Code.Skip, "")),
    case("don't skip Filter when the pod has pvcs", PVC_POD_WITH_CONFIGMAP_AND_SECRET, max_vols=2,
         limit_source="csinode"),
    case("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_POD_WITH_CONFIGMAP_AND_SECRET,
         limit_source="csinode-with-no-limit", want=ABC_XYZ_MISSING),
    case("don't skip Filter when the pod has inline migratable volumes",
         INLINE_MIGRATABLE_POD_WITH_CONFIGMAP_AND_SECRET, [IN_TREE_TWO_VOL_POD], 2, [EBS_IN_TREE, EBS],
         limit_source="csinode", want=EXCEEDED),
]


def build(existing, max_vols, drivers, limit_source, va_count, extra_claims, features=None,
          csi_drivers=()):
    ni, csi_node = node_with_limits(limit_source, existing, max_vols, *drivers)
    objects = [*fake_pvs("csi", *drivers), *fake_pvcs("csi", SC_NAME, *drivers), *extra_claims,
               kit.make_storage_class(SC_NAME, provisioner=drivers[0]),
               *fake_vas(va_count, *drivers), *csi_drivers]
    if csi_node is not None:
        objects.append(csi_node)
    return NodeVolumeLimits({}, Handle(lister=FakeLister(*objects)), features=features), ni


@pytest.mark.parametrize("new_pod,existing,max_vols,drivers,limit_source,va_count,extra_claims,"
                         "want,want_pre_filter", CSI_LIMITS_CASES)
def test_csi_limits(new_pod, existing, max_vols, drivers, limit_source, va_count, extra_claims, want,
                    want_pre_filter):
    plugin, ni = build(existing, max_vols, drivers, limit_source, va_count, extra_claims)
    state = CycleState()
    _, pre = plugin.pre_filter(state, new_pod, [])
    assert st(pre) == want_pre_filter
    if pre is None:
        assert st(plugin.filter(state, new_pod, ni)) == want


def test_pod_without_volumes_is_skipped_before_any_lookup():
    class Exploding:
        def get(self, *a, **k):
            raise AssertionError("no lookups for a pod without volumes")

        list = get

    plugin = NodeVolumeLimits({}, Handle(lister=Exploding()))
    _, status = plugin.pre_filter(CycleState(), pod_with_volumes(), [])
    assert status.code is Code.Skip
    assert plugin.filter(CycleState(), pod_with_volumes(), NodeInfo()) is None


# ---------------------------------------------------------------- TestVolumeLimitScalingGate

def _csi_driver(prevent):
    spec = {"preventPodSchedulingIfMissing": True} if prevent else {}
    return parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                         "metadata": {"name": EBS}, "spec": spec})


@pytest.mark.parametrize("enabled,limit_source,limit,driver_present,prevent,want", [
    pytest.param(True, "no-csi-driver", 0, True, False, None,
                 id="gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing "
                    "is not set"),
    pytest.param(True, "no-csi-driver", 0, True, True,
                 (Code.Unschedulable, f"{EBS} CSI driver is not installed on the node"),
                 id="gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true"),
    pytest.param(False, "no-csi-driver", 0, True, True, None,
                 id="gate disabled - skip driver presence check (regardless of CSIDriver presence)"),
    pytest.param(True, "csinode", 2, True, True, None, id="gate enabled - driver installed within limit"),
    pytest.param(True, "no-csi-driver", 0, False, False, None,
                 id="gate enabled - allow scheduling when CSIDriver object missing"),
])
def test_volume_limit_scaling_gate(enabled, limit_source, limit, driver_present, prevent, want):
    pod = pod_with_volumes(pvcs=["csi-ebs.csi.aws.com-0"])
    drivers = [_csi_driver(prevent)] if driver_present else []
    plugin, ni = build([], limit, [EBS], limit_source, 0, [], features={"VolumeLimitScaling": enabled},
                       csi_drivers=drivers)
    _, pre = plugin.pre_filter(CycleState(), pod, [])
    assert pre is None
    assert st(plugin.filter(CycleState(), pod, ni)) == want


# ---------------------------------------------------------------- queueing hints

@pytest.mark.parametrize("deleted,scheduled,want", [
    pytest.param(pod_with_volumes(pvcs=["placeholder"]), True, QueueingHint.Queue,
                 id="return a Queue when a deleted pod has a PVC"),
    pytest.param(pod_with_volumes({"awsElasticBlockStore": {}}), True, QueueingHint.Queue,
                 id="return a Queue when a deleted pod has a inline migratable volume"),
    pytest.param(pod_with_volumes(), True, QueueingHint.QueueSkip,
                 id="return a QueueSkip when a deleted pod doesn't have any volume"),
    pytest.param(pod_with_volumes(pvcs=["csi-ebs.csi.aws.com-0"]), False, QueueingHint.QueueSkip,
                 id="return a QueueSkip when a deleted pod is not scheduled."),
])
def test_is_schedulable_after_pod_deleted(deleted, scheduled, want):
    if scheduled:
        deleted = deleted.with_node(NODE_NAME)
    pod = pod_with_volumes(pvcs=["csi-ebs.csi.aws.com-2"])
    assert NodeVolumeLimits({}, Handle()).is_schedulable_after_pod_deleted(pod, deleted, None) == want


@pytest.mark.parametrize("pod,added,want", [
    pytest.param(pod_with_volumes(namespace="ns1"), make_pvc("pvc", namespace="ns2"), QueueingHint.QueueSkip,
                 id="a pod isn't in the same namespace as an added PVC"),
    pytest.param(pod_with_volumes(namespace="ns1", pvcs=["pvc1"]), make_pvc("pvc1", namespace="ns1"),
                 QueueingHint.Queue, id="a pod is in the same namespace as an added PVC"),
    pytest.param(pod_with_volumes({"name": "ephemeral", "ephemeral": {}}, name="pod1", namespace="ns1"),
                 make_pvc("pod1-ephemeral", namespace="ns1"), QueueingHint.Queue,
                 id="a pod has an ephemeral volume related to an added PVC"),
    pytest.param(pod_with_volumes(namespace="ns1", pvcs=["pvc1"]), make_pvc("pvc2", namespace="ns1"),
                 QueueingHint.QueueSkip, id="a pod doesn't have the same PVC as an added PVC"),
    pytest.param(pod_with_volumes(namespace="ns1"), make_pvc("pvc2", namespace="ns1"), QueueingHint.QueueSkip,
                 id="a pod doesn't have any PVC attached"),
])
def test_is_schedulable_after_pvc_added(pod, added, want):
    assert NodeVolumeLimits({}, Handle()).is_schedulable_after_pvc_added(pod, None, added) == want


def _va(attacher, pv_name=None, inline_driver=None):
    source = {"persistentVolumeName": pv_name} if pv_name else \
        {"inlineVolumeSpec": {"csi": {"driver": inline_driver}}}
    return parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                         "metadata": {"name": "volumeattachment1"},
                         "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}})


AWS_INLINE = {"awsElasticBlockStore": {"volumeID": "test"}}
GCE_INLINE = {"gcePersistentDisk": {"pdName": "test"}}


@pytest.mark.parametrize("pod,va,want", [
    pytest.param(pod_with_volumes(namespace="ns1", pvcs=["pvc1"]), _va("test.storage.gke.io", "pv1"),
                 QueueingHint.Queue, id="a pod has PVC when VolumeAttachment is deleting"),
    pytest.param(pod_with_volumes(AWS_INLINE, namespace="ns1"), _va(EBS, inline_driver=EBS), QueueingHint.Queue,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment "
                    "(AWSEBSDriver) is deleting (match)"),
    pytest.param(pod_with_volumes(GCE_INLINE, namespace="ns1"), _va(EBS, inline_driver=EBS), QueueingHint.QueueSkip,
                 id="a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment "
                    "(AWSEBSDriver) is deleting (no match)"),
    pytest.param(pod_with_volumes(AWS_INLINE, namespace="ns1", pvcs=["pvc1"]), _va(EBS, inline_driver=EBS),
                 QueueingHint.Queue, id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when "
                                        "VolumeAttachment (AWSEBSDriver) is deleting"),
    pytest.param(pod_with_volumes(AWS_INLINE, namespace="ns1", pvcs=["pvc1"]), _va("test.storage.gke.io", "pv1"),
                 QueueingHint.Queue, id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when "
                                        "VolumeAttachment (AWSEBSDriver)  is deleting"),
    pytest.param(pod_with_volumes(namespace="ns1"), _va("test.storage.gke.io", "pv1"), QueueingHint.QueueSkip,
                 id="a pod has no PVC when VolumeAttachment is deleting"),
])
def test_is_schedulable_after_volume_attachment_deleted(pod, va, want):
    assert NodeVolumeLimits({}, Handle()).is_schedulable_after_volume_attachment_deleted(pod, va, None) == want


def _csi_node(count):
    return kit.make_csi_node("test-node", {EBS: count})


@pytest.mark.parametrize("old,new,want", [
    pytest.param(1, 2, QueueingHint.Queue, id="limit raised, queue"),
    pytest.param(2, 1, QueueingHint.QueueSkip, id="limit decreased, skip queueing"),
    pytest.param(1, 1, QueueingHint.QueueSkip, id="limit unchanged, skip queueing"),
])
def test_is_schedulable_after_csi_node_updated(old, new, want):
    pod = pod_with_volumes(name="test-pod", namespace="ns1", pvcs=["csi-ebs.csi.aws.com-0"])
    plugin = NodeVolumeLimits({}, Handle())
    assert plugin.is_schedulable_after_csi_node_updated(pod, _csi_node(old), _csi_node(new)) == want


def test_events_to_register():
    events = [(e.event, e.queueing_hint_fn is not None)
              for e in NodeVolumeLimits({}, Handle()).events_to_register()]
    assert events == [
        (ClusterEvent(EventResource.CSINode, ActionType.Add), False),
        (ClusterEvent(EventResource.CSINode, ActionType.Update), True),
        (ClusterEvent(EventResource.Pod, ActionType.Delete), True),
        (ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add), True),
        (ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete), True),
    ]
