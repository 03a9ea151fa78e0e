"""The cases of upstream's ``dynamicresources_test.go`` (TestPlugin, TestComputeScore) that allocate
devices under v1.36's default feature gates, as a table with upstream's expectations.

Each case runs the plugin's extension points in scheduling order as upstream's ``testPlugin``
does; ``want`` holds the statuses, the scores and the claims in flight after Reserve and written
by PreBind."""

from __future__ import annotations

import copy

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo, NodeScore, NodeToStatus
from kschedfw.plugins.dynamicresources import DynamicResources
from kschedfw.plugins.dynamicresources.scoring import ScoreError, compute_score

from ..fakes import FakeLister

POD_NAME, POD_UID, NAMESPACE = "my-pod", "1234", "default"
RESOURCE_NAME, RESOURCE_NAME2 = "my-resource", "my-resource-2"
CLAIM_NAME, CLAIM_NAME2 = f"{POD_NAME}-{RESOURCE_NAME}", f"{POD_NAME}-{RESOURCE_NAME2}"
CLASS_NAME = "my-resource-class"
DRIVER = "some-driver"
NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
ATTR = "healthy"
BROKEN = {"cel": {"expression": f'device.attributes["{DRIVER}"].{ATTR}'}}
NOW = "2026-01-01T00:00:00Z"
FINALIZER = "resource.kubernetes.io/delete-protection"


class Client:
    """The claim status writes of the API server: stored in the lister, as an informer would."""

    def __init__(self, lister):
        self.lister = lister
        self.writes = []

    def update_resource_claim_status(self, claim):
        self.writes.append(copy.deepcopy(claim.raw))
        self.lister.add(claim)
        return claim


def pod(*claim_names):
    claims = [{"name": name, "resourceClaimName": f"{POD_NAME}-{name}"} for name in claim_names]
    return kit.make_pod(POD_NAME, namespace=NAMESPACE, uid=POD_UID, resourceClaims=claims)


def node(name):
    return NodeInfo(node=kit.make_node(name, labels={"kubernetes.io/hostname": name}))


def device_class(selectors=()):
    spec = {"selectors": list(selectors)} if selectors else {}
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                         "metadata": {"name": CLASS_NAME}, "spec": spec})


def resource_slice(node_name, *devices):
    """upstream st.MakeResourceSlice(node, driver).Device(...): a one-slice pool named after the node.
    A device is a name or (name, {attribute: bool})."""
    out = []
    for d in devices:
        name, attrs = (d, None) if isinstance(d, str) else d
        device = {"name": name}
        if attrs:
            device["attributes"] = {k: {"bool": v} for k, v in attrs.items()}
        out.append(device)
    return parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                         "metadata": {"name": f"{node_name}-{DRIVER}"},
                         "spec": {"nodeName": node_name, "driver": DRIVER, "devices": out,
                                  "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}}})


def exactly(selectors=(), admin=False, count=1):
    body = {"deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": count}
    if selectors:
        body["selectors"] = list(selectors)
    if admin:
        body["adminAccess"] = True
    return body


def sub(name, count=1, selectors=()):
    body = {"name": name, "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": count}
    if selectors:
        body["selectors"] = list(selectors)
    return body


def claim(name=CLAIM_NAME, requests=None, allocation=None, owner=True, uid=None):
    meta = {"name": name, "namespace": NAMESPACE, "uid": uid or f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID,
                                    "controller": True}]
    if requests is None:
        requests = [{"name": "req-1", "exactly": exactly()}]
    d = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
         "spec": {"devices": {"requests": requests}}}
    if allocation is not None:
        d["status"] = {"allocation": allocation}
    return parse_object(d)


def allocation(*results, node_name=NODE):
    return {"devices": {"results": [{"request": r, "driver": DRIVER, "pool": node_name, "device": d}
                                    for r, d in results]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}


def admin(result):
    out = copy.deepcopy(result)
    for r in out["devices"]["results"]:
        r["adminAccess"] = True
    return out


ALLOCATION = allocation(("req-1", "instance-1"))
PENDING = claim()
OTHER = claim(name="not-my-claim", owner=False)
OTHER_ALLOCATED = claim(name="not-my-claim", owner=False, allocation=ALLOCATION)
OTHER_ALLOCATED_OTHER_DEVICE = claim(name="not-my-claim", owner=False,
                                     allocation=allocation(("req-1", "instance-1-other")))
WORKER_SLICE = resource_slice(NODE, "instance-1")
PRIORITIZED = claim(requests=[{"name": "req-1", "firstAvailable": [sub("subreq-1")]}])
PRIORITIZED_SELECTOR = claim(requests=[{"name": "req-1", "firstAvailable": [
    sub("subreq-1", selectors=[{"cel": {"expression": f'device.attributes["{DRIVER}"].{ATTR}'}}]),
    sub("subreq-2")]}])
PRIORITIZED_MULTIPLE_REQUESTS = claim(requests=[
    {"name": "req-1", "firstAvailable": [sub("subreq-1", 2), sub("subreq-2", 1)]},
    {"name": "req-2", "firstAvailable": [sub("subreq-1", 2), sub("subreq-2", 1)]}])
PRIORITIZED_FOUR_SUBREQUESTS = claim(name=CLAIM_NAME2, requests=[{"name": "req-1", "firstAvailable": [
    sub("subreq-1", 4), sub("subreq-2", 3), sub("subreq-3", 2), sub("subreq-4", 1)]}])


def st(status):
    return None if status is None else (status.code, status.message())


def uau(message):
    return (Code.UnschedulableAndUnresolvable, message)


def error(message):
    return (Code.Error, message)


class _Clock:
    def now(self):
        return 0.0

    def now_datetime(self):
        import datetime
        return datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def run_case(p, objects, nodes, in_flight=(), *, args=None, gates=None, prepare=None, handle=Handle, clock=None):
    """Upstream's ``testPlugin``: PreEnqueue, PreFilter, Filter per node (an Error stops there, as
    it aborts scheduling), Score when more than one node fits, Reserve, PreBind, else PostFilter.
    ``prepare``: stage -> a change (raw -> raw) made to every stored claim just before that stage
    (upstream ``prepare``, say a driver or user writing meanwhile); ``handle``: the Handle type."""
    lister = FakeLister(*objects)
    client = Client(lister)
    plugin = DynamicResources({"filterTimeout": "10s"} if args is None else args,
                              handle(lister=lister, client=client, clock=clock or _Clock(), feature_gates=gates))
    for c in in_flight:
        plugin.manager.signal_pending_allocation(c.uid, copy.deepcopy(c.raw))
    out = {}
    pre = plugin.pre_enqueue(p)
    if pre is not None:
        out["preenqueue"] = st(pre)
        return out
    state = CycleState()
    _, pre = plugin.pre_filter(state, p, nodes)
    if pre is not None:
        out["prefilter"] = st(pre)
        out["postfilter"] = st(plugin.post_filter(state, p, NodeToStatus())[1])
        if client.writes:
            out["written"] = client.writes
        return out
    failed, feasible = {}, []
    for ni in nodes:
        status = plugin.filter(state, p, ni)
        if status is None:
            feasible.append(ni)
            continue
        failed[ni.name] = st(status)
        if status.code == Code.Error:
            out["filter"] = failed
            return out
    if failed:
        out["filter"] = failed
    if not feasible:
        out["postfilter"] = st(plugin.post_filter(state, p, NodeToStatus())[1])
        if client.writes:
            out["written"] = client.writes
        return out
    if len(feasible) > 1:
        scores = [NodeScore(ni.name, plugin.score(state, p, ni)) for ni in feasible]
        out["score"] = {s.name: s.score for s in scores}
        assert plugin.score_nodes(state, p, feasible) == [s.score for s in scores]
        plugin.normalize_score(state, p, scores)
        out["normalized"] = {s.name: s.score for s in scores}
    chosen = feasible[0].name
    assert plugin.reserve(state, p, chosen) is None
    out["in_flight"] = sorted(c["metadata"]["name"] for c in plugin.manager.in_flight.values())
    if prepare and "prebind" in prepare:
        for stored in lister.list("ResourceClaim"):
            lister.add(parse_object(prepare["prebind"](copy.deepcopy(stored.raw))))
    status = plugin.pre_bind(state, p, chosen)
    if status is not None:
        out["prebind"] = st(status)
    out["written"] = client.writes
    out["in_flight_after_bind"] = sorted(c["metadata"]["name"] for c in plugin.manager.in_flight.values())
    return out


def written(c, alloc, *, finalizer=True):
    """upstream addAllocationTimestamp(reserve(allocatedClaim, pod)) as the API receives it."""
    raw = copy.deepcopy(c.raw)
    if finalizer:
        raw["metadata"]["finalizers"] = [FINALIZER]
    raw["status"] = {"allocation": {**copy.deepcopy(alloc), "allocationTimestamp": NOW},
                     "reservedFor": [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]}
    return raw


def with_resources(c=PENDING, alloc=ALLOCATION, in_flight_others=()):
    return {"in_flight": sorted([c.name, *in_flight_others]), "written": [written(c, alloc)],
            "in_flight_after_bind": sorted(in_flight_others)}


def broken_claim():
    return claim(requests=[{"name": "req-1", "exactly": exactly(selectors=[BROKEN])}])


CEL_CLAIM_ERROR = f"claim default/{CLAIM_NAME}: selector #0: CEL runtime error: no such key: {ATTR}"
CEL_CLASS_ERROR = f"class {CLASS_NAME}: selector #0: CEL runtime error: no such key: {ATTR}"


@pytest.mark.parametrize("p,objects,nodes,in_flight,want", [
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class()], [node(NODE)], (),
                 {"filter": {NODE: uau("cannot allocate all claims")},
                  "postfilter": (Code.Unschedulable, "still not schedulable")}, id="no-resources"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class(), WORKER_SLICE], [node(NODE)], (),
                 with_resources(), id="with-resources"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, OTHER_ALLOCATED, device_class(), WORKER_SLICE], [node(NODE)], (),
                 {"filter": {NODE: uau("cannot allocate all claims")},
                  "postfilter": (Code.Unschedulable, "still not schedulable")},
                 id="exhausted-resources-in-informer-cache"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, OTHER, device_class(), WORKER_SLICE], [node(NODE)],
                 (OTHER_ALLOCATED,),
                 {"filter": {NODE: uau("cannot allocate all claims")},
                  "postfilter": (Code.Unschedulable, "still not schedulable")},
                 id="exhausted-resources-in-flight-claim"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, OTHER, device_class(), WORKER_SLICE], [node(NODE)],
                 (OTHER_ALLOCATED_OTHER_DEVICE,), with_resources(in_flight_others=["not-my-claim"]),
                 id="other-resources-in-flight-claim"),
    pytest.param(pod(RESOURCE_NAME),
                 [claim(requests=[{"name": "req-1", "exactly": exactly(admin=True)}]), OTHER_ALLOCATED,
                  device_class(), WORKER_SLICE], [node(NODE)], (),
                 {"in_flight": [CLAIM_NAME], "in_flight_after_bind": [],
                  "written": [written(claim(requests=[{"name": "req-1", "exactly": exactly(admin=True)}]),
                                      admin(ALLOCATION))]},
                 id="request-admin-access-with-DRAAdminAccess-featuregate"),
    pytest.param(pod(RESOURCE_NAME),
                 [PENDING, claim(name="not-my-claim", owner=False, allocation=admin(ALLOCATION)), device_class(),
                  WORKER_SLICE], [node(NODE)], (), with_resources(), id="structured-ignore-allocated-admin-access"),
    pytest.param(pod(RESOURCE_NAME), [broken_claim(), device_class(), WORKER_SLICE], [node(NODE)], (),
                 {"filter": {NODE: error(CEL_CLAIM_ERROR)}}, id="claim-parameters-CEL-runtime-error"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, device_class([BROKEN]), WORKER_SLICE], [node(NODE)], (),
                 {"filter": {NODE: error(CEL_CLASS_ERROR)}}, id="class-parameters-CEL-runtime-error"),
    pytest.param(pod(RESOURCE_NAME), [PENDING], [node(NODE)], (),
                 {"prefilter": uau(f"request req-1: device class {CLASS_NAME} does not exist"),
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")}, id="missing-class"),
    pytest.param(pod(RESOURCE_NAME), [PRIORITIZED, device_class(), WORKER_SLICE], [node(NODE)], (),
                 with_resources(PRIORITIZED, allocation(("req-1/subreq-1", "instance-1"))),
                 id="claim-with-prioritized-list"),
    pytest.param(pod(RESOURCE_NAME), [PENDING, OTHER, device_class(), WORKER_SLICE], [node(NODE)],
                 (claim(uid=f"uid-{CLAIM_NAME}", allocation=ALLOCATION),),
                 {"prefilter": uau(f"resource claim default/{CLAIM_NAME} is in the process of being allocated"),
                  "postfilter": (Code.Unschedulable, "no new claims to deallocate")},
                 id="claim-allocation-in-flight"),
    pytest.param(pod(RESOURCE_NAME),
                 [PRIORITIZED_SELECTOR, device_class(), resource_slice(NODE, ("instance-1", {ATTR: True})),
                  resource_slice(NODE2, ("instance-1", {ATTR: False}))], [node(NODE), node(NODE2)], (),
                 {"score": {NODE: 8, NODE2: 7}, "normalized": {NODE: 100, NODE2: 87},
                  **with_resources(PRIORITIZED_SELECTOR, allocation(("req-1/subreq-1", "instance-1")))},
                 id="single-claim-prioritized-list-scoring"),
    pytest.param(pod(RESOURCE_NAME, RESOURCE_NAME2),
                 [PRIORITIZED, PRIORITIZED_FOUR_SUBREQUESTS, device_class(),
                  resource_slice(NODE, "instance-1", "instance-2", "instance-3", "instance-4"),
                  resource_slice(NODE2, "instance-1", "instance-2"), resource_slice(NODE3, "instance-1")],
                 [node(NODE), node(NODE2), node(NODE3)], (),
                 {"filter": {NODE3: uau("cannot allocate all claims")},
                  "score": {NODE: 15, NODE2: 13}, "normalized": {NODE: 100, NODE2: 86},
                  "in_flight": [CLAIM_NAME, CLAIM_NAME2], "in_flight_after_bind": [],
                  "written": [written(PRIORITIZED, allocation(("req-1/subreq-1", "instance-1"))),
                              written(PRIORITIZED_FOUR_SUBREQUESTS, allocation(
                                  ("req-1/subreq-2", "instance-2"), ("req-1/subreq-2", "instance-3"),
                                  ("req-1/subreq-2", "instance-4")))]},
                 id="multiple-claims-prioritized-list-scoring"),
    pytest.param(pod(RESOURCE_NAME),
                 [PRIORITIZED_MULTIPLE_REQUESTS, device_class(),
                  resource_slice(NODE, "instance-1", "instance-2", "instance-3", "instance-4"),
                  resource_slice(NODE2, "instance-1", "instance-2", "instance-3"),
                  resource_slice(NODE3, "instance-1", "instance-2")],
                 [node(NODE), node(NODE2), node(NODE3)], (),
                 {"score": {NODE: 16, NODE2: 15, NODE3: 14}, "normalized": {NODE: 100, NODE2: 93, NODE3: 87},
                  **with_resources(PRIORITIZED_MULTIPLE_REQUESTS, allocation(
                      ("req-1/subreq-1", "instance-1"), ("req-1/subreq-1", "instance-2"),
                      ("req-2/subreq-1", "instance-3"), ("req-2/subreq-1", "instance-4")))},
                 id="multiple-requests-prioritized-list-scoring"),
])
def test_plugin(p, objects, nodes, in_flight, want):
    assert run_case(p, objects, nodes, in_flight) == want


def test_two_pods_in_a_row_do_not_share_a_device():
    """Reserve puts the allocation in flight: the next pod's PreFilter counts its device as taken."""
    second = claim(name=f"{POD_NAME}-other", uid="uid-second")
    second_pod = kit.make_pod("other", namespace=NAMESPACE, uid="5678",
                              resourceClaims=[{"name": "c", "resourceClaimName": second.name}])
    lister = FakeLister(PENDING, second, device_class(), WORKER_SLICE)
    plugin = DynamicResources({}, Handle(lister=lister))
    first_state = CycleState()
    plugin.pre_filter(first_state, pod(RESOURCE_NAME), [node(NODE)])
    assert plugin.filter(first_state, pod(RESOURCE_NAME), node(NODE)) is None
    assert plugin.reserve(first_state, pod(RESOURCE_NAME), NODE) is None
    state = CycleState()
    plugin.pre_filter(state, second_pod, [node(NODE)])
    assert st(plugin.filter(state, second_pod, node(NODE))) == uau("cannot allocate all claims")
    plugin.unreserve(first_state, pod(RESOURCE_NAME), NODE)
    state = CycleState()
    plugin.pre_filter(state, second_pod, [node(NODE)])
    assert plugin.filter(state, second_pod, node(NODE)) is None


def test_unreserve_after_pre_bind_removes_the_reservation():
    lister = FakeLister(PENDING, device_class(), WORKER_SLICE)
    client = Client(lister)
    plugin = DynamicResources({}, Handle(lister=lister, client=client, clock=_Clock()))
    state = CycleState()
    p = pod(RESOURCE_NAME)
    plugin.pre_filter(state, p, [node(NODE)])
    plugin.filter(state, p, node(NODE))
    plugin.reserve(state, p, NODE)
    plugin.pre_bind(state, p, NODE)
    plugin.unreserve(state, p, NODE)
    assert "reservedFor" not in client.writes[-1]["status"]
    assert client.writes[-1]["status"]["allocation"]["devices"] == ALLOCATION["devices"]


# ---------------------------------------------------------------- TestComputeScore

def _allocated(c, alloc):
    raw = copy.deepcopy(c.raw)
    raw["status"] = {"allocation": alloc}
    return parse_object(raw)


def _results(*requests):
    return {"devices": {"results": [{"request": r, "driver": DRIVER, "pool": NODE, "device": "d"} for r in requests]}}


@pytest.mark.parametrize("claims,allocations,want", [
    pytest.param([PRIORITIZED], [_results("req-1/subreq-1")], 8, id="single-request-only-subrequest-allocated"),
    pytest.param([PRIORITIZED_FOUR_SUBREQUESTS], [_results("req-1/subreq-4")], 5,
                 id="single-request-last-subrequest-allocated"),
    pytest.param([PRIORITIZED_MULTIPLE_REQUESTS], [_results("req-1/subreq-2", "req-2/subreq-2")], 14,
                 id="multiple-requests-with-middle-subrequests-allocated"),
    pytest.param([PRIORITIZED, PRIORITIZED_FOUR_SUBREQUESTS],
                 [_results("req-1/subreq-1"), _results("req-1/subreq-1")], 16,
                 id="multiple-claims-with-top-subrequests-allocated"),
    pytest.param([_allocated(PRIORITIZED, _results("req-1/subreq-1")), PRIORITIZED_FOUR_SUBREQUESTS],
                 [_results("req-1/subreq-3")], 14, id="mix-of-allocated-and-unallocated-claims"),
    pytest.param([PENDING], [_results("req-1")], 0, id="no-prioritized-list"),
])
def test_compute_score(claims, allocations, want):
    assert compute_score(claims, allocations) == want


def test_compute_score_more_claims_than_allocations():
    with pytest.raises(ScoreError, match="number of allocations 0 is smaller than number of claims needing allocation"):
        compute_score([PENDING], [])


# ---------------------------------------------------------------- PreBind and Unreserve (TestPlugin)

def _cycle_to_pre_bind(objects, p=None, claim_changes=None):
    """PreFilter, Filter, Reserve on the single node; then ``claim_changes`` (raw -> raw) are made
    to the stored claim, as upstream's ``prepare.prebind``; then PreBind."""
    p = p or pod(RESOURCE_NAME)
    lister = FakeLister(*objects)
    client = Client(lister)
    plugin = DynamicResources({}, Handle(lister=lister, client=client, clock=_Clock()))
    state = CycleState()
    plugin.pre_filter(state, p, [node(NODE)])
    assert plugin.filter(state, p, node(NODE)) is None
    assert plugin.reserve(state, p, NODE) is None
    if claim_changes is not None:
        stored = lister.get("ResourceClaim", CLAIM_NAME, NAMESPACE)
        lister.add(parse_object(claim_changes(copy.deepcopy(stored.raw))))
    return plugin, state, client, plugin.pre_bind(state, p, NODE)


def test_with_resources_has_finalizer():
    raw = copy.deepcopy(PENDING.raw)
    raw["metadata"]["finalizers"] = [FINALIZER]
    with_finalizer = parse_object(raw)
    _, _, client, status = _cycle_to_pre_bind([with_finalizer, device_class(), WORKER_SLICE])
    assert status is None
    assert client.writes == [written(with_finalizer, ALLOCATION)]


def test_skip_bind():
    """Reserve then Unreserve (say a Permit plugin said no): nothing stays in flight, nothing written."""
    lister = FakeLister(PENDING, device_class(), WORKER_SLICE)
    client = Client(lister)
    plugin = DynamicResources({}, Handle(lister=lister, client=client))
    state = CycleState()
    p = pod(RESOURCE_NAME)
    plugin.pre_filter(state, p, [node(NODE)])
    plugin.filter(state, p, node(NODE))
    plugin.reserve(state, p, NODE)
    assert list(plugin.manager.in_flight) == [PENDING.uid]
    plugin.unreserve(state, p, NODE)
    assert plugin.manager.in_flight == {} and client.writes == []


def test_claim_allocated_elsewhere_before_pre_bind():
    def allocate(raw):
        raw["status"] = {"allocation": allocation(("req-1", "instance-1"))}
        return raw
    plugin, _, client, status = _cycle_to_pre_bind([PENDING, device_class(), WORKER_SLICE], claim_changes=allocate)
    assert st(status) == error(f"claim default/{CLAIM_NAME} got allocated elsewhere in the meantime")
    assert client.writes == [] and plugin.manager.in_flight == {}


def test_add_allocation_timestamp_failure():
    """upstream: the allocated claim got deallocated before PreBind."""
    allocated = claim(allocation=ALLOCATION)

    def deallocate(raw):
        raw.pop("status")
        return raw
    lister = FakeLister(allocated)
    client = Client(lister)
    plugin = DynamicResources({}, Handle(lister=lister, client=client, clock=_Clock()))
    state = CycleState()
    p = pod(RESOURCE_NAME)
    plugin.pre_filter(state, p, [node(NODE)])
    assert plugin.filter(state, p, node(NODE)) is None
    lister.add(parse_object(deallocate(copy.deepcopy(allocated.raw))))
    assert st(plugin.pre_bind(state, p, NODE)) == error(
        f"claim default/{CLAIM_NAME} got deallocated elsewhere in the meantime")
    assert client.writes == []


class LaggingClient:
    """Writes that the lister (an informer) has not seen yet."""

    def __init__(self):
        self.writes = []

    def update_resource_claim_status(self, claim):
        self.writes.append(claim)
        return claim


def test_written_claims_count_until_the_lister_shows_them():
    """upstream AssumeClaimAfterAPICall: after PreBind the device stays taken, and the claim reads as
    allocated, while the informer still has the claim as it was."""
    second = claim(name=f"{POD_NAME}-other", uid="uid-second")
    second_pod = kit.make_pod("other", namespace=NAMESPACE, uid="5678",
                              resourceClaims=[{"name": "c", "resourceClaimName": second.name}])
    lister = FakeLister(PENDING, second, device_class(), WORKER_SLICE)
    client = LaggingClient()
    plugin = DynamicResources({}, Handle(lister=lister, client=client, clock=_Clock()))
    p = pod(RESOURCE_NAME)
    state = CycleState()
    plugin.pre_filter(state, p, [node(NODE)])
    plugin.filter(state, p, node(NODE))
    plugin.reserve(state, p, NODE)
    assert plugin.pre_bind(state, p, NODE) is None
    assert plugin.manager.in_flight == {}
    assert plugin.claims.get("ResourceClaim", CLAIM_NAME, NAMESPACE).raw["status"]["allocation"]["devices"] == \
        ALLOCATION["devices"]
    state = CycleState()
    plugin.pre_filter(state, second_pod, [node(NODE)])
    assert st(plugin.filter(state, second_pod, node(NODE))) == uau("cannot allocate all claims")
    lister.add(client.writes[-1])  # the informer catches up
    state = CycleState()
    plugin.pre_filter(state, second_pod, [node(NODE)])
    assert st(plugin.filter(state, second_pod, node(NODE))) == uau("cannot allocate all claims")
    assert plugin.manager.assumed == {}


# ---------------------------------------------------------------- binding conditions (TestPlugin)

def _with_binding_conditions(conditions=None, stamp=None):
    alloc = copy.deepcopy(ALLOCATION)
    alloc["devices"]["results"][0].update(bindingConditions=["condition"], bindingFailureConditions=["failed"])
    if stamp:
        alloc["allocationTimestamp"] = stamp
    raw = copy.deepcopy(claim(allocation=alloc).raw)
    device = {"driver": DRIVER, "pool": NODE, "device": "instance-1"}
    if conditions is not None:
        device["conditions"] = [{"type": t, "status": s} for t, s in conditions.items()]
    raw["status"]["devices"] = [device]
    return parse_object(raw)


WAITING = _with_binding_conditions(stamp="2025-12-31T23:59:00Z")


def test_claim_still_waiting_for_binding_conditions_within_the_timeout():
    """Devices not ready yet but within bindingTimeout: the node stays feasible (PreBind waits)."""
    lister = FakeLister(WAITING, WORKER_SLICE)
    plugin = DynamicResources({}, Handle(lister=lister, client=Client(lister), clock=_Clock()))
    state, p = CycleState(), pod(RESOURCE_NAME)
    assert plugin.pre_filter(state, p, [node(NODE)]) == (None, None)
    assert plugin.filter(state, p, node(NODE)) is None
