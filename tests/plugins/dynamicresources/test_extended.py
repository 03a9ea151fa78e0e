"""Extended resources backed by a DeviceClass (DRAExtendedResource): upstream's
``extendeddynamicresources_test.go`` (the special claim's requests and container mappings) and the
``extended-resource-*`` cases of ``dynamicresources_test.go`` (TestPlugin), as tables with
upstream's expectations; plus the class mapping rule, NodeResourcesFit leaving such resources to
DynamicResources, and both plugins with the gate off."""

from __future__ import annotations

import copy

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.interface import NotFound
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo, NodeToStatus
from kschedfw.plugins.dynamicresources import DynamicResources
from kschedfw.plugins.dynamicresources.extended import (DeviceClassResolver, requests_and_mappings)
from kschedfw.plugins.noderesources.fit import NodeResourcesFit

from ..fakes import FakeLister

POD_NAME, POD_UID, NAMESPACE = "my-pod", "1234", "default"
NODE, NODE2 = "worker", "worker-2"
CLASS_NAME = "my-resource-class"
DRIVER = "some-driver"
GPU, GPU2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT = "deviceclass.resource.kubernetes.io/my-resource-class"
NOW = "2026-01-01T00:00:00Z"
FINALIZER = "resource.kubernetes.io/delete-protection"
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


# ---------------------------------------------------------------------------------- objects

def container(name, requests, sidecar=False):
    c = {"name": name, "image": "pause", "resources": {"requests": dict(requests)}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


class PodBuilder:
    """upstream st.MakePod(): Req/Res add ``con<n>``, InitReq ``init-con<n>``, SidecarReq
    ``sidecar-con<n>`` (n: the position in its list)."""

    def __init__(self):
        self.containers, self.init = [], []

    def req(self, requests):
        self.containers.append(container(f"con{len(self.containers)}", requests))
        return self

    def init_req(self, requests):
        self.init.append(container(f"init-con{len(self.init)}", requests))
        return self

    def sidecar_req(self, requests):
        self.init.append(container(f"sidecar-con{len(self.init)}", requests, sidecar=True))
        return self

    def obj(self):
        return parse_object({"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID},
                             "spec": {"containers": self.containers or [container("con0", {})],
                                      "initContainers": self.init}})


def device_class(name=CLASS_NAME, extended_resource_name=None, created=None):
    meta = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    spec = {"extendedResourceName": extended_resource_name} if extended_resource_name else {}
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta, "spec": spec})


def resource_slice(node_name, *devices):
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                         "metadata": {"name": f"{node_name}-{DRIVER}"},
                         "spec": {"nodeName": node_name, "driver": DRIVER, "devices": [{"name": d} for d in devices],
                                  "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}}})


def node(name=NODE, allocatable=None):
    return NodeInfo(node=kit.make_node(name, labels={"kubernetes.io/hostname": name},
                                       allocatable={"cpu": "4", "memory": "8Gi", "pods": "110",
                                                    **(allocatable or {})}))


def exactly_request(name, class_name=CLASS_NAME, count=1):
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}}


def allocation(*results, node_name=NODE):
    return {"devices": {"results": [{"request": r, "driver": DRIVER, "pool": NODE, "device": d} for r, d in results]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}


def special_claim(requests, alloc=None, name="my-pod-extended-resources-0"):
    """upstream extendedResourceClaim*: the special claim as created (``name``) or as Reserve keeps
    it in flight (``<extended-resources>``)."""
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": name, "generateName": "my-pod-extended-resources-", "namespace": NAMESPACE,
                        "annotations": {ANNOTATION: "true"},
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID,
                                             "controller": True}]},
           "spec": {"devices": {"requests": requests}}}
    if alloc is not None:
        raw["status"] = {"allocation": alloc}
    return raw


POD = PodBuilder().req({GPU: "1"}).obj()                                    # podWithExtendedResourceName
POD2 = PodBuilder().req({GPU: "1", GPU2: "1"}).obj()                        # podWithExtendedResourceName2
POD_IMPLICIT = PodBuilder().req({IMPLICIT: "1", GPU: "2"}).obj()            # podWithImplicitExtendedResourceName
POD_IMPLICIT_TWO = PodBuilder().req({IMPLICIT: "1"}).req({GPU: "2"}).obj()  # ...TwoContainers
CLASS = device_class(extended_resource_name=GPU)                            # deviceClassWithExtendResourceName
CLASS2 = device_class(CLASS_NAME + "2", extended_resource_name=GPU2)
WORKER_SLICE = resource_slice(NODE, "instance-1")
LARGE_SLICE = resource_slice(NODE, "instance-1", "instance-2", "instance-3", "instance-4")


# ---------------------------------------------------------------------------------- requests

EXT, EXT1, EXT_INIT = GPU, GPU + "1", GPU + "init"


def resolver(mapping):
    """upstream mockDeviceClassResolver: resource name -> class name."""
    class Mock(DeviceClassResolver):
        def __init__(self):
            self._by_resource = {k: device_class(v) for k, v in mapping.items()}
    return Mock()


POD1 = PodBuilder().req({EXT: "1", EXT1: "2"}).obj()
POD2_CONTAINERS = PodBuilder().req({EXT: "1"}).req({EXT1: "2"}).obj()
POD_INIT = PodBuilder().req({EXT: "1"}).init_req({EXT_INIT: "2"}).obj()
POD_INIT2 = PodBuilder().req({EXT: "1"}).init_req({EXT_INIT: "1"}).init_req({EXT_INIT: "2"}).obj()
POD_INIT3 = (PodBuilder().req({EXT: "1"}).init_req({EXT_INIT: "1"}).sidecar_req({EXT_INIT: "1"})
             .init_req({EXT_INIT: "2"}).obj())
POD1_INIT_IMPLICIT = PodBuilder().init_req({EXT_INIT: "1", "deviceclass.resource.kubernetes.io/classInit": "2"}).obj()
POD_INIT_IMPLICIT = (PodBuilder().req({EXT: "1"}).init_req({EXT_INIT: "1"})
                     .init_req({"deviceclass.resource.kubernetes.io/classInit": "2"}).obj())
DEV_MAP = {EXT: "class"}
DEV_MAP2 = {EXT: "class", EXT1: "class1"}
DEV_MAP_INIT = {EXT: "class", EXT_INIT: "classInit", "deviceclass.resource.kubernetes.io/classInit": "classInit"}
RES, RES2 = {EXT: 1}, {EXT: 1, EXT1: 2}
RES_INIT = {EXT: 1, EXT_INIT: 2}
RES_INIT_IMPLICIT = {EXT: 1, EXT_INIT: 2, "deviceclass.resource.kubernetes.io/classInit": 2}


@pytest.mark.parametrize("p,extended,mapping,want", [
    pytest.param(POD1, {}, {}, [], id="nil"),
    pytest.param(POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)], id="one resource match"),
    pytest.param(POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)],
                 id="one resource match, one resource not match"),
    pytest.param(POD1, RES2, DEV_MAP2, [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)],
                 id="two resources match"),
    pytest.param(POD2_CONTAINERS, RES2, DEV_MAP2,
                 [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)],
                 id="two containers match"),
    pytest.param(POD_INIT, RES_INIT, DEV_MAP_INIT,
                 [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)],
                 id="one init container, one regular container"),
    pytest.param(POD_INIT2, RES_INIT, DEV_MAP_INIT,
                 [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)],
                 id="two init containers, one regular container"),
    pytest.param(POD_INIT3, RES_INIT, DEV_MAP_INIT,
                 [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2),
                  ("container-3-request-0", "class", 1)],
                 id="three init containers, one sidecar, one regular container"),
])
def test_requests(p, extended, mapping, want):
    requests, _ = requests_and_mappings(p, extended, resolver(mapping))
    assert [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in requests] == want
    assert all(r["exactly"]["allocationMode"] == "ExactCount" for r in requests)


@pytest.mark.parametrize("p,extended,mapping,want", [
    pytest.param(POD1, RES2, DEV_MAP2, [("container-0-request-0", "con0", EXT), ("container-0-request-1", "con0", EXT1)],
                 id="one container, two requests"),
    pytest.param(POD1_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT,
                 [("container-0-request-0", "init-con0", "deviceclass.resource.kubernetes.io/classInit"),
                  ("container-0-request-1", "init-con0", EXT_INIT)],
                 id="one container, one explicit and one implicit request"),
    pytest.param(POD2_CONTAINERS, RES2, DEV_MAP2,
                 [("container-0-request-0", "con0", EXT), ("container-1-request-0", "con1", EXT1)],
                 id="two containers, two requests"),
    pytest.param(POD_INIT, RES_INIT, DEV_MAP_INIT,
                 [("container-0-request-0", "init-con0", EXT_INIT), ("container-1-request-0", "con0", EXT)],
                 id="one init container, one regular container, one request"),
    pytest.param(POD_INIT2, RES_INIT, DEV_MAP_INIT,
                 [("container-1-request-0", "init-con0", EXT_INIT), ("container-1-request-0", "init-con1", EXT_INIT),
                  ("container-2-request-0", "con0", EXT)],
                 id="three containers (two are init container), two requests"),
    pytest.param(POD_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT,
                 [("container-0-request-0", "init-con0", EXT_INIT),
                  ("container-1-request-0", "init-con1", "deviceclass.resource.kubernetes.io/classInit"),
                  ("container-2-request-0", "con0", EXT)],
                 id="three containers (two are init container), both explicit and implicit resources"),
    pytest.param(POD_INIT3, RES_INIT, DEV_MAP_INIT,
                 [("container-1-request-0", "init-con0", EXT_INIT), ("container-1-request-0", "sidecar-con1", EXT_INIT),
                  ("container-2-request-0", "init-con2", EXT_INIT), ("container-3-request-0", "con0", EXT)],
                 id="four containers (two are init container, one sidecar), three requests"),
])
def test_mappings(p, extended, mapping, want):
    _, mappings = requests_and_mappings(p, extended, resolver(mapping))
    got = sorted((m["requestName"], m["containerName"], m["resourceName"]) for m in mappings)
    assert got == want


# ---------------------------------------------------------------------------------- class mapping

def test_explicit_name_of_two_classes_goes_to_the_newer_then_the_lower_name():
    old = device_class("a-old", GPU, created="2026-01-01T00:00:00Z")
    new = device_class("z-new", GPU, created="2026-01-02T00:00:00Z")
    assert DeviceClassResolver([new, old]).get(GPU).name == "z-new"
    same_a, same_b = device_class("b", GPU, created=NOW), device_class("a", GPU, created=NOW)
    assert DeviceClassResolver([same_a, same_b]).get(GPU).name == "a"
    # the older class is skipped altogether once the newer holds the name (it sorts after it here)
    older = device_class("zz-older", GPU, created="2025-01-01T00:00:00Z")
    r = DeviceClassResolver([new, older])
    assert r.get("deviceclass.resource.kubernetes.io/z-new").name == "z-new"
    assert r.get("deviceclass.resource.kubernetes.io/zz-older") is None
    assert DeviceClassResolver([device_class("plain")]).get("deviceclass.resource.kubernetes.io/plain").name == "plain"
    assert DeviceClassResolver([device_class("plain")]).get(GPU) is None


# ---------------------------------------------------------------------------------- the plugin

class Client:
    """The API server's answers to the plugin's writes, kept in the lister as an informer would."""

    def __init__(self, lister, fail_create=None, fail_patch=None):
        self.lister = lister
        self.fail_create, self.fail_patch = fail_create, fail_patch
        self.created, self.deleted, self.pod_status = [], [], []

    def update_resource_claim_status(self, claim):
        self.lister.add(claim)
        return claim

    def create_resource_claim(self, claim):
        if self.fail_create:
            raise RuntimeError(self.fail_create)
        self.created.append(copy.deepcopy(claim.raw))  # as sent
        raw = copy.deepcopy(claim.raw)
        raw["metadata"]["name"] = raw["metadata"]["generateName"] + str(len(self.created) - 1)
        raw["metadata"]["uid"] = f"created-{len(self.created) - 1}"
        created = parse_object(raw)
        self.lister.add(created)
        return created

    def delete_resource_claim(self, claim):
        if self.lister.get("ResourceClaim", claim.name, claim.namespace) is None:
            raise NotFound(claim.name)
        self.deleted.append(claim.name)
        del self.lister._objects[("ResourceClaim", claim.namespace, claim.name)]

    def set_extended_resource_claim_status(self, pod, status):
        if self.fail_patch:
            raise RuntimeError(self.fail_patch)
        self.pod_status.append(copy.deepcopy(status))


class _Clock:
    def now(self):
        return 0.0

    def now_datetime(self):
        import datetime
        return datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def new_plugin(objects, gates=None, **client_args):
    lister = FakeLister(*objects)
    client = Client(lister, **client_args)
    handle = Handle(lister=lister, client=client, clock=_Clock(), feature_gates=gates)
    return DynamicResources({"filterTimeout": "10s"}, handle), client, lister


def st(status):
    return None if status is None else (status.code, status.message())


def in_flight_view(plugin):
    return [{"name": c["metadata"]["name"], "requests": c["spec"]["devices"]["requests"],
             "allocation": c["status"]["allocation"]} for c in plugin.manager.in_flight.values()]


def run(p, objects, nodes, *, unreserve_before_pre_bind=False, unreserve_after_pre_bind=False, **client_args):
    """The extension points in scheduling order (upstream testPlugin), recording what upstream's
    ``want`` records: statuses, claims in flight after Reserve, created/deleted claims, the pod status."""
    plugin, client, lister = new_plugin(objects, **client_args)
    state = CycleState()
    out = {}
    _, pre = plugin.pre_filter(state, p, nodes)
    if pre is not None:
        out["prefilter"] = st(pre)
        return out
    statuses = {ni.name: plugin.filter(state, p, ni) for ni in nodes}
    if any(s is not None for s in statuses.values()):
        out["filter"] = {k: st(v) for k, v in statuses.items() if v is not None}
    feasible = [ni.name for ni in nodes if statuses[ni.name] is None]
    if not feasible:
        out["postfilter"] = st(plugin.post_filter(state, p, NodeToStatus())[1])
        out["deleted"] = client.deleted
        return out
    assert plugin.reserve(state, p, feasible[0]) is None
    out["in_flight"] = in_flight_view(plugin)
    if unreserve_before_pre_bind:
        plugin.unreserve(state, p, feasible[0])
    else:
        out["prebind"] = st(plugin.pre_bind(state, p, feasible[0]))
        if out["prebind"] is not None or unreserve_after_pre_bind:
            plugin.unreserve(state, p, feasible[0])
    out["in_flight_after"] = in_flight_view(plugin)
    out["created"] = client.created
    out["claims"] = [c.raw for c in lister.list("ResourceClaim")]
    out["deleted"] = client.deleted
    out["pod_status"] = client.pod_status
    return out


def reserved(raw):
    """upstream addAllocationTimestamp(reserve(claim, pod)) as stored."""
    out = copy.deepcopy(raw)
    out["metadata"]["finalizers"] = [FINALIZER]
    out["metadata"]["uid"] = "created-0"
    out["status"]["allocation"]["allocationTimestamp"] = NOW
    out["status"]["reservedFor"] = [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]
    return out


def created(requests):
    """The special claim as PreBind sends it: no name (generateName), no uid, no status."""
    raw = special_claim(requests)
    del raw["metadata"]["name"]
    return raw


def in_flight(requests, alloc):
    return [{"name": "<extended-resources>", "requests": requests, "allocation": alloc}]


def status_of(*mappings):
    return [{"requestMappings": [{"containerName": c, "resourceName": r, "requestName": n} for c, r, n in mappings],
             "resourceClaimName": "my-pod-extended-resources-0"}]


def bound(requests, alloc, *mappings):
    """upstream want for a pod whose special claim PreBind created and allocated."""
    return {"in_flight": in_flight(requests, alloc), "prebind": None, "in_flight_after": [],
            "created": [created(requests)],
            "claims": [reserved(special_claim(requests, alloc))], "deleted": [], "pod_status": status_of(*mappings)}


REQ0 = [exactly_request("container-0-request-0")]
REQ1_CLASS2 = [exactly_request("container-0-request-1", CLASS_NAME + "2")]
ALLOC0 = allocation(("container-0-request-0", "instance-1"))
IMPLICIT_REQS = [exactly_request("container-0-request-0"), exactly_request("container-0-request-1", count=2)]
IMPLICIT_ALLOC = allocation(("container-0-request-0", "instance-1"), ("container-0-request-1", "instance-2"),
                            ("container-0-request-1", "instance-3"))
IMPLICIT_TWO_REQS = [exactly_request("container-0-request-0"), exactly_request("container-1-request-0", count=2)]
IMPLICIT_TWO_ALLOC = allocation(("container-0-request-0", "instance-1"), ("container-1-request-0", "instance-2"),
                                ("container-1-request-0", "instance-3"))
PRIOR_CLAIM = parse_object(special_claim(REQ0, ALLOC0))  # extendedResourceClaim
PRIOR_CLAIM_NODE2 = parse_object(special_claim(REQ0, allocation(("container-0-request-0", "instance-1"),
                                                                 node_name=NODE2)))


@pytest.mark.parametrize("p,objects,nodes,kwargs,want", [
    pytest.param(POD, [CLASS], [node(allocatable={GPU: "1"})], {},
                 {"in_flight": [], "prebind": None, "in_flight_after": [], "created": [], "claims": [], "deleted": [],
                  "pod_status": []},
                 id="extended-resource-name-with-node-resource"),
    pytest.param(POD2, [CLASS, CLASS2, WORKER_SLICE], [node(allocatable={GPU: "1"})], {},
                 bound(REQ1_CLASS2, allocation(("container-0-request-1", "instance-1")),
                       ("con0", GPU2, "container-0-request-1")),
                 id="extended-resource-one-device-plugin-one-dra"),
    pytest.param(POD, [CLASS, WORKER_SLICE], [node(allocatable={GPU: "0"})], {},
                 bound(REQ0, ALLOC0, ("con0", GPU, "container-0-request-0")),
                 id="extended-resource-name-with-zero-allocatable"),
    pytest.param(POD, [device_class(), WORKER_SLICE], [node(allocatable={GPU: "0"})], {},
                 {"prefilter": (Code.Skip, "")}, id="non-DRA-extended-resource-name-with-zero-allocatable"),
    pytest.param(POD, [CLASS], [node()], {},
                 {"filter": {NODE: (Code.UnschedulableAndUnresolvable, "cannot allocate all claims")},
                  "postfilter": (Code.Unschedulable, "still not schedulable"), "deleted": []},
                 id="extended-resource-name-no-resource"),
    pytest.param(POD, [CLASS, WORKER_SLICE], [node()], {},
                 bound(REQ0, ALLOC0, ("con0", GPU, "container-0-request-0")),
                 id="extended-resource-name-with-resources"),
    pytest.param(POD_IMPLICIT, [CLASS, LARGE_SLICE], [node()], {},
                 bound(IMPLICIT_REQS, IMPLICIT_ALLOC, ("con0", IMPLICIT, "container-0-request-0"),
                       ("con0", GPU, "container-0-request-1")),
                 id="implicit-extended-resource-name-with-resources"),
    pytest.param(POD_IMPLICIT_TWO, [CLASS, LARGE_SLICE], [node()], {},
                 bound(IMPLICIT_TWO_REQS, IMPLICIT_TWO_ALLOC, ("con0", IMPLICIT, "container-0-request-0"),
                       ("con1", GPU, "container-1-request-0")),
                 id="implicit-extended-resource-name-two-containers-with-resources"),
    pytest.param(POD, [CLASS, WORKER_SLICE, PRIOR_CLAIM], [node()], {},
                 {"filter": {NODE: (Code.UnschedulableAndUnresolvable, "cannot schedule extended resource claim")},
                  "postfilter": (Code.Unschedulable, "deletion of ResourceClaim completed"),
                  "deleted": ["my-pod-extended-resources-0"]},
                 id="extended-resource-name-with-resources-has-claim"),
    pytest.param(POD, [CLASS, WORKER_SLICE, PRIOR_CLAIM_NODE2], [node()], {},
                 {"filter": {NODE: (Code.UnschedulableAndUnresolvable, "cannot schedule extended resource claim")},
                  "postfilter": (Code.Unschedulable, "deletion of ResourceClaim completed"),
                  "deleted": ["my-pod-extended-resources-0"]},
                 id="extended-resource-name-with-resources-delete-claim"),
    pytest.param(POD, [CLASS, WORKER_SLICE], [node()], {"unreserve_after_pre_bind": True},
                 {**bound(REQ0, ALLOC0, ("con0", GPU, "container-0-request-0")), "claims": [],
                  "deleted": ["my-pod-extended-resources-0"]},
                 id="extended-resource-name-bind-failure"),
    pytest.param(POD, [CLASS, WORKER_SLICE], [node()], {"unreserve_before_pre_bind": True},
                 {"in_flight": in_flight(REQ0, ALLOC0), "in_flight_after": [], "created": [], "claims": [],
                  "deleted": [], "pod_status": []},
                 id="extended-resource-name-skip-bind"),
    pytest.param(POD, [CLASS, WORKER_SLICE], [node()], {"fail_create": "claim creation errors"},
                 {"in_flight": in_flight(REQ0, ALLOC0),
                  "prebind": (Code.Error, "create claim for extended resources default/: claim creation errors"),
                  "in_flight_after": [], "created": [], "claims": [], "deleted": [], "pod_status": []},
                 id="extended-resource-name-claim-creation-failure"),
    pytest.param(POD, [CLASS, WORKER_SLICE], [node()], {"fail_patch": "patch error"},
                 {**bound(REQ0, ALLOC0), "prebind": (Code.Error, "update pod default/my-pod ExtendedResourceClaimStatus: "
                                                                 "patch error"),
                  "claims": [], "deleted": ["my-pod-extended-resources-0"], "pod_status": []},
                 id="extended-resource-name-with-resources-fail-patch"),
])
def test_plugin(p, objects, nodes, kwargs, want):
    assert run(p, objects, nodes, **kwargs) == want


def test_two_pods_in_one_batch_do_not_share_the_device():
    """The special claim of the first pod is in flight after Reserve: the next pod's allocator
    sees its device as taken (upstream SignalClaimPendingAllocation)."""
    plugin, client, lister = new_plugin([CLASS, WORKER_SLICE])
    first = CycleState()
    plugin.pre_filter(first, POD, [node()])
    assert plugin.filter(first, POD, node()) is None
    assert plugin.reserve(first, POD, NODE) is None
    other = parse_object({**POD.raw, "metadata": {"name": "other", "namespace": NAMESPACE, "uid": "5678"}})
    second = CycleState()
    assert plugin.pre_filter(second, other, [node()]) == (None, None)
    assert st(plugin.filter(second, other, node())) == (Code.UnschedulableAndUnresolvable, "cannot allocate all claims")


def test_gate_off_leaves_extended_resources_to_fit():
    """DRAExtendedResource off: DynamicResources skips the pod and Fit checks the resource as any."""
    gates = FeatureGates({"DRAExtendedResource": False})
    plugin, _, lister = new_plugin([CLASS, WORKER_SLICE], gates=gates)
    state = CycleState()
    assert st(plugin.pre_filter(state, POD, [node()])[1]) == (Code.Skip, "")
    fit = NodeResourcesFit({}, Handle(lister=lister, feature_gates=gates))
    fit.pre_filter(state, POD, [node()])
    assert st(fit.filter(state, POD, node())) == (Code.UnschedulableAndUnresolvable, f"Insufficient {GPU}")


@pytest.mark.parametrize("allocatable,want", [
    pytest.param({}, None, id="not advertised: DynamicResources' to allocate"),
    pytest.param({GPU: "0"}, None, id="zero allocatable: DynamicResources' to allocate"),
    pytest.param({GPU: "1"}, None, id="device plugin with room"),
])
def test_fit_leaves_dra_backed_resources_to_dynamic_resources(allocatable, want):
    lister = FakeLister(CLASS)
    fit = NodeResourcesFit({}, Handle(lister=lister))
    state = CycleState()
    fit.pre_filter(state, POD, [node(allocatable=allocatable)])
    assert st(fit.filter(state, POD, node(allocatable=allocatable))) == want
    assert st(fit.filter_nodes(state, POD, [node(allocatable=allocatable)])[0]) == want


def test_fit_checks_a_device_plugin_resource_as_any():
    """A node advertising the resource is the device plugin's: Fit counts what is in use there."""
    lister = FakeLister(CLASS)
    fit = NodeResourcesFit({}, Handle(lister=lister))
    full = node(allocatable={GPU: "1"})
    full.add_pod(kit.make_pod("user", requests={GPU: "1"}, node_name=NODE))
    state = CycleState()
    fit.pre_filter(state, POD, [full])
    assert st(fit.filter(state, POD, full)) == (Code.Unschedulable, f"Insufficient {GPU}")
    # without a class backing it, a node that does not advertise it cannot host the pod
    fit2 = NodeResourcesFit({}, Handle(lister=FakeLister()))
    state2 = CycleState()
    fit2.pre_filter(state2, POD, [node()])
    assert st(fit2.filter(state2, POD, node())) == (Code.UnschedulableAndUnresolvable, f"Insufficient {GPU}")


def test_fit_node_hint_queues_for_a_node_leaving_the_resource_to_a_class():
    lister = FakeLister(CLASS)
    fit = NodeResourcesFit({}, Handle(lister=lister))
    from kschedfw.fwk.events import QueueingHint
    new = kit.make_node("n", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})
    assert fit.is_schedulable_after_node_change(POD, None, new) == QueueingHint.Queue
    fit_off = NodeResourcesFit({}, Handle(lister=lister, feature_gates=FeatureGates({"DRAExtendedResource": False})))
    assert fit_off.is_schedulable_after_node_change(POD, None, new) == QueueingHint.QueueSkip


def test_fit_node_hint_queues_when_a_node_stops_advertising_a_class_backed_resource():
    """upstream haveAnyRequestedResourcesIncreased: a node leaving the resource to a DeviceClass
    may now allocate it through DRA."""
    from kschedfw.fwk.events import QueueingHint
    fit = NodeResourcesFit({}, Handle(lister=FakeLister(CLASS)))
    base = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    before = kit.make_node("n", allocatable={**base, GPU: "1"})
    after = kit.make_node("n", allocatable={**base, GPU: "0"})
    assert fit.is_schedulable_after_node_change(POD, before, after) == QueueingHint.Queue
    assert fit.is_schedulable_after_node_change(POD, after, after) == QueueingHint.Queue
    no_class = NodeResourcesFit({}, Handle(lister=FakeLister()))
    assert no_class.is_schedulable_after_node_change(POD, before, after) == QueueingHint.QueueSkip
