"""Port of upstream dynamicresources/dynamicresources_test.go for the paths this port implements
(TestPlugin: empty, empty-with-extended-resources-enabled, missing-claim, deleted-claim,
wrong-claim, missing-class, claim-with-request-with-unknown-device-class, wrong-topology,
good-topology, reserved-okay, extended-resource-name-with-node-resource,
non-DRA-extended-resource-name-with-zero-allocatable, extended-resource-name-no-resource;
TestIsSchedulableAfterClaimChange; TestIsSchedulableAfterPodChange). The cases that allocate devices
are in tests/plugins/dynamicresources/test_plugin.py and test_extended.py."""

import copy

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo, NodeScore, NodeToStatus
from kschedfw.plugins.dynamicresources import DynamicResources

from .fakes import FakeLister

POD_NAME, POD_UID, NAMESPACE = "my-pod", "1234", "default"
RESOURCE_NAME = "my-resource"
CLAIM_NAME = f"{POD_NAME}-{RESOURCE_NAME}"
CLASS_NAME = "my-resource-class"
NODE_NAME = "worker"
EXTENDED = "example.com/gpu"


class RecordingClient:
    def __init__(self):
        self.updates = []

    def update_resource_claim_status(self, claim):
        self.updates.append(claim.raw)
        return claim


def pod(claims=None, statuses=None, requests=None, name=POD_NAME, uid=POD_UID):
    extra = {"resourceClaims": claims} if claims else {}
    return kit.make_pod(name, namespace=NAMESPACE, uid=uid, containers=[kit.container("c", requests=requests)],
                        status=None if statuses is None else {"resourceClaimStatuses": statuses}, **extra)


def claim(name=CLAIM_NAME, owner_uid=POD_UID, allocation=None, reserved_for=None, deleting=False,
          class_name=CLASS_NAME, uid=None):
    meta = {"name": name, "namespace": NAMESPACE}
    if uid:
        meta["uid"] = uid
    if owner_uid is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": owner_uid,
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    d = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
         "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": class_name,
                                                                          "allocationMode": "ExactCount",
                                                                          "count": 1}}]}}}
    status = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved_for is not None:
        status["reservedFor"] = reserved_for
    if status:
        d["status"] = status
    return parse_object(d)


def device_class(name=CLASS_NAME, extended_resource_name=None):
    spec = {"extendedResourceName": extended_resource_name} if extended_resource_name else {}
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                         "spec": spec})


def node(capacity=None):
    return NodeInfo(node=kit.make_node(NODE_NAME, capacity=capacity or {}))


def selector(key, value):
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


RESULTS = {"devices": {"results": [{"request": "req-1", "driver": "some-driver", "pool": NODE_NAME,
                                     "device": "instance-1"}]}}
POD_WITH_CLAIM_NAME = pod([{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}])
POD_WITH_CLAIM_TEMPLATE = pod([{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}])
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = pod([{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}],
                                        statuses=[{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}])
PENDING_CLAIM = claim()
ALLOCATED_CLAIM = claim(allocation=RESULTS)
WRONG_TOPOLOGY = claim(allocation={**RESULTS, "nodeSelector": selector("no-such-label", "no-such-value")})
GOOD_TOPOLOGY = claim(allocation={**RESULTS, "nodeSelector": selector("kubernetes.io/hostname", NODE_NAME)})
IN_USE_CLAIM = claim(allocation=RESULTS, reserved_for=[{"resource": "pods", "name": POD_NAME, "uid": POD_UID}])
OTHER_ALLOCATED_CLAIM = claim(name="not-my-claim", owner_uid=None, allocation=RESULTS)


def st(status):
    return None if status is None else (status.code, status.message())


def new_plugin(*objects, client=None):
    return DynamicResources({"filterTimeout": "10s"}, Handle(lister=FakeLister(*objects), client=client))


def run(plugin, p, nodes):
    """The plugin's extension points in scheduling order, as upstream's testPlugin does."""
    out = {"preenqueue": st(plugin.pre_enqueue(p))}
    if out["preenqueue"] is not None:
        return out
    state = CycleState()
    _, pre = plugin.pre_filter(state, p, nodes)
    out["prefilter"] = st(pre)
    statuses = {}
    if pre is None:
        statuses = {ni.name: plugin.filter(state, p, ni) for ni in nodes}
        out["filter"] = {k: st(v) for k, v in statuses.items()}
    if pre is not None or any(s is not None for s in statuses.values()):
        _, post = plugin.post_filter(state, p, NodeToStatus())
        out["postfilter"] = st(post)
        return out
    out["reserve"] = st(plugin.reserve(state, p, nodes[0].name))
    out["prebindpreflight"] = st(plugin.pre_bind_pre_flight(state, p, nodes[0].name)[1])
    out["prebind"] = st(plugin.pre_bind(state, p, nodes[0].name))
    return out


SKIP = (Code.Skip, "")


def _uau(msg):
    return (Code.UnschedulableAndUnresolvable, msg)


@pytest.mark.parametrize("p,objects,nodes,want", [
    pytest.param(pod(), [], [node()], {"preenqueue": None, "prefilter": SKIP,
                                       "postfilter": (Code.Unschedulable, "no new claims to deallocate")},
                 id="empty"),
    pytest.param(pod(), [device_class(extended_resource_name=EXTENDED)], [node()],
                 {"preenqueue": None, "prefilter": SKIP,
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")},
                 id="empty-with-extended-resources-enabled"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [ALLOCATED_CLAIM], [node()],
                 {"preenqueue": _uau('pod "default/my-pod": ResourceClaim not created yet')}, id="missing-claim"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, [claim(allocation=RESULTS, deleting=True)], [node()],
                 {"preenqueue": _uau('resourceclaim "my-pod-my-resource" is being deleted')}, id="deleted-claim"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, [claim(allocation=RESULTS, owner_uid=POD_UID + "123")],
                 [node()],
                 {"preenqueue": _uau("ResourceClaim default/my-pod-my-resource was not created for Pod "
                                     "default/my-pod (Pod is not owner)")}, id="wrong-claim"),
    pytest.param(POD_WITH_CLAIM_NAME, [], [node()],
                 {"preenqueue": _uau('could not find ResourceClaim "default/my-pod-my-resource"')},
                 id="claim not found"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], [node()],
                 {"preenqueue": None, "prefilter": _uau(f"request req-1: device class {CLASS_NAME} does not exist"),
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")}, id="missing-class"),
    pytest.param(POD_WITH_CLAIM_NAME, [claim(class_name="does-not-exist")], [node()],
                 {"preenqueue": None,
                  "prefilter": _uau("request req-1: device class does-not-exist does not exist"),
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")},
                 id="claim-with-request-with-unknown-device-class"),
    pytest.param(POD_WITH_CLAIM_NAME, [GOOD_TOPOLOGY], [node()],
                 {"preenqueue": None, "prefilter": None, "filter": {NODE_NAME: None}, "reserve": None,
                  "prebindpreflight": None, "prebind": None}, id="good-topology"),
    pytest.param(POD_WITH_CLAIM_NAME, [IN_USE_CLAIM], [node()],
                 {"preenqueue": None, "prefilter": None, "filter": {NODE_NAME: None}, "reserve": None,
                  "prebindpreflight": None, "prebind": None}, id="reserved-okay"),
    pytest.param(pod(requests={EXTENDED: "1"}), [device_class(extended_resource_name=EXTENDED)],
                 [node({EXTENDED: "1"})],
                 {"preenqueue": None, "prefilter": None, "filter": {NODE_NAME: None}, "reserve": None,
                  "prebindpreflight": None, "prebind": None}, id="extended-resource-name-with-node-resource"),
    pytest.param(pod(requests={EXTENDED: "1"}), [device_class()], [node({EXTENDED: "0"})],
                 {"preenqueue": None, "prefilter": SKIP,
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")},
                 id="non-DRA-extended-resource-name-with-zero-allocatable"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM, device_class()], [node()],
                 {"preenqueue": None, "prefilter": None, "filter": {NODE_NAME: _uau("cannot allocate all claims")},
                  "postfilter": (Code.Unschedulable, "still not schedulable")},
                 id="no-resources"),
    # upstream extended-resource-name-no-resource (on a node advertising none): no slice, no device
    pytest.param(pod(requests={EXTENDED: "1"}), [device_class(extended_resource_name=EXTENDED)],
                 [node({EXTENDED: "0"})],
                 {"preenqueue": None, "prefilter": None,
                  "filter": {NODE_NAME: _uau("cannot allocate all claims")},
                  "postfilter": (Code.Unschedulable, "still not schedulable")},
                 id="extended-resource-name-no-resource"),
])
def test_plugin(p, objects, nodes, want):
    assert run(new_plugin(*objects), p, nodes) == want


def test_wrong_topology_deallocates_through_the_client():
    client = RecordingClient()
    plugin = new_plugin(WRONG_TOPOLOGY, client=client)
    state = CycleState()
    assert plugin.pre_filter(state, POD_WITH_CLAIM_NAME, [node()]) == (None, None)
    assert st(plugin.filter(state, POD_WITH_CLAIM_NAME, node())) == _uau("resourceclaim not available on the node")
    _, post = plugin.post_filter(state, POD_WITH_CLAIM_NAME, NodeToStatus())
    assert st(post) == (Code.Unschedulable, "deallocation of ResourceClaim completed")
    [update] = client.updates
    assert "allocation" not in update["status"] and "reservedFor" not in update["status"]


def test_wrong_topology_without_client_support():
    plugin = new_plugin(WRONG_TOPOLOGY)
    state = CycleState()
    plugin.pre_filter(state, POD_WITH_CLAIM_NAME, [node()])
    plugin.filter(state, POD_WITH_CLAIM_NAME, node())
    assert st(plugin.post_filter(state, POD_WITH_CLAIM_NAME, NodeToStatus())[1]) == \
        (Code.Unschedulable, "still not schedulable")


def test_good_topology_reserves_the_claim_in_pre_bind():
    client = RecordingClient()
    plugin = new_plugin(GOOD_TOPOLOGY, client=client)
    state = CycleState()
    plugin.pre_filter(state, POD_WITH_CLAIM_NAME, [node()])
    assert plugin.pre_bind(state, POD_WITH_CLAIM_NAME, NODE_NAME) is None
    [update] = client.updates
    assert update["status"]["reservedFor"] == [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]
    # already reserved: nothing to write
    client2 = RecordingClient()
    plugin2 = new_plugin(IN_USE_CLAIM, client=client2)
    state2 = CycleState()
    plugin2.pre_filter(state2, POD_WITH_CLAIM_NAME, [node()])
    assert plugin2.pre_bind(state2, POD_WITH_CLAIM_NAME, NODE_NAME) is None
    assert client2.updates == []


def test_pod_without_claims_is_cheap_everywhere():
    class Exploding:
        def get(self, *a, **k):
            raise AssertionError("no lookups for a pod without claims or extended resources")

        list = get

    plugin = DynamicResources({}, Handle(lister=Exploding()))
    p = pod(requests={"cpu": "100m", "memory": "64Mi"})
    assert plugin.pre_enqueue(p) is None
    state = CycleState()
    assert st(plugin.pre_filter(state, p, [])[1]) == SKIP
    assert plugin.score(state, p, node()) == 0
    scores = [NodeScore("a", 0), NodeScore("b", 0)]
    assert plugin.normalize_score(state, p, scores) is None and [s.score for s in scores] == [0, 0]
    assert plugin.reserve(state, p, NODE_NAME) is None
    assert st(plugin.pre_bind_pre_flight(state, p, NODE_NAME)[1]) == SKIP
    assert plugin.pre_bind(state, p, NODE_NAME) is None
    assert plugin.unreserve(state, p, NODE_NAME) is None
    assert st(plugin.post_filter(state, p, NodeToStatus())[1]) == (Code.Unschedulable, "no new claims to deallocate")
    assert plugin.sign_pod(p) == ([], None)


def test_post_filter_without_pre_filter_state():
    """A PreFilter rejection before this plugin ran leaves no state: upstream errors with "not found"."""
    _, status = new_plugin().post_filter(CycleState(), pod(), NodeToStatus())
    assert st(status) == (Code.Error, "not found")


def test_sign_pod_with_claims():
    fragments, status = new_plugin().sign_pod(POD_WITH_CLAIM_NAME)
    assert st(status) == (Code.Unschedulable, "pods with dra resource claims are not signable")


# ---------------------------------------------------------------- queueing hints

def _with(obj, **changes):
    raw = copy.deepcopy(obj.raw)
    for path, value in changes.items():
        section, key = path.split("__")
        raw.setdefault(section, {})[key] = value
    return parse_object(raw)


@pytest.mark.parametrize("p,claims,old,new,want", [
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [], ALLOCATED_CLAIM, None, QueueingHint.QueueSkip, id="skip-deletes"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [], None, claim(allocation=RESULTS, owner_uid=POD_UID + "123"),
                 QueueingHint.QueueSkip, id="skip-wrong-claim"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [ALLOCATED_CLAIM], None,
                 claim(name=CLAIM_NAME + "-foo", allocation=RESULTS, uid="other-uid"), QueueingHint.QueueSkip,
                 id="skip-unrelated-claim"),
    pytest.param(POD_WITH_CLAIM_NAME, [], None, PENDING_CLAIM, QueueingHint.Queue, id="queue-on-add"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM,
                 _with(PENDING_CLAIM, metadata__finalizers=["foo"]), QueueingHint.QueueSkip,
                 id="skip-adding-finalizer"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM, _with(PENDING_CLAIM, status__allocation={}),
                 QueueingHint.Queue, id="queue-on-status-change"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], OTHER_ALLOCATED_CLAIM,
                 claim(name="not-my-claim", owner_uid=None), QueueingHint.Queue, id="claim-deallocate"),
])
def test_is_schedulable_after_claim_change(p, claims, old, new, want):
    # As upstream, the new object is in the cluster (the claim cache) when the hint runs.
    plugin = new_plugin(*claims, *([new] if new is not None else []))
    assert plugin.is_schedulable_after_claim_change(p, old, new) == want


@pytest.mark.parametrize("objects,p,new,want", [
    pytest.param([PENDING_CLAIM], POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE_IN_STATUS, QueueingHint.Queue,
                 id="complete"),
    pytest.param([PENDING_CLAIM], pod([{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME}],
                                      name=POD_NAME + "2", uid=POD_UID + "2"),
                 POD_WITH_CLAIM_TEMPLATE_IN_STATUS, QueueingHint.QueueSkip, id="wrong-pod"),
    pytest.param([], POD_WITH_CLAIM_TEMPLATE, POD_WITH_CLAIM_TEMPLATE_IN_STATUS, QueueingHint.QueueSkip,
                 id="missing-claim"),
    pytest.param([PENDING_CLAIM],
                 pod([{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME},
                      {"name": RESOURCE_NAME + "-2", "resourceClaimTemplateName": CLAIM_NAME}]),
                 pod([{"name": RESOURCE_NAME, "resourceClaimTemplateName": CLAIM_NAME},
                      {"name": RESOURCE_NAME + "-2", "resourceClaimTemplateName": CLAIM_NAME}],
                     statuses=[{"name": RESOURCE_NAME, "resourceClaimName": CLAIM_NAME}]),
                 QueueingHint.QueueSkip, id="incomplete"),
])
def test_is_schedulable_after_pod_change(objects, p, new, want):
    assert new_plugin(*objects).is_schedulable_after_pod_change(p, None, new) == want


def test_events_to_register():
    got = [(e.event, e.queueing_hint_fn is not None) for e in new_plugin().events_to_register()]
    assert got == [
        (ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel
                      | ActionType.UpdateNodeAllocatable), False),
        (ClusterEvent(EventResource.ResourceClaim, ActionType.Add | ActionType.Update), True),
        (ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim), True),
        (ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update), False),
        (ClusterEvent(EventResource.ResourceSlice, ActionType.Add | ActionType.Update), False),
    ]


def test_args():
    plugin = DynamicResources({"filterTimeout": "10s", "bindingTimeout": "10m0s"}, Handle())
    assert plugin.filter_timeout_seconds == 10.0 and plugin.binding_timeout_seconds == 600.0
