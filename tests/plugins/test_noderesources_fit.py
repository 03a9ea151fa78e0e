"""NodeResourcesFit, ported from upstream ``noderesources/fit_test.go`` (v1.36).

Tables: TestEnoughRequests, TestPreFilterDisabled, TestNotEnoughRequests, TestStorageRequests,
TestRestartableInitContainers, TestFitScore, TestEventsToRegister,
Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange,
Test_isSchedulableAfterDeviceClassChange, TestIsFit, TestHaveAnyRequestedResourcesIncreased.
Cases that need a DRA manager (extended resources backed by DeviceClasses/ResourceSlices) are
left out: kschedfw has no DRA manager, so those resources are handled as plain extended ones.
"""

from __future__ import annotations

import itertools

import pytest

from kschedfw import testing as kit
from kschedfw import ActionType, ClusterEvent, Code, CycleState, EventResource, QueueingHint, Status
from kschedfw.api import parse_object
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import NodeInfo, NodeScore
from kschedfw.plugins.noderesources.fit import (PRE_FILTER_STATE_KEY, NodeResourcesFit, InsufficientResource,
                                                compute_pod_resource_request, fits_request,
                                                have_any_requested_resources_increased, is_fit)

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
EXT_DRA = "extended.resource.dra.io/something"

_names = itertools.count()


# --------------------------------------------------------------------------- builders

def R(cpu: int = 0, mem: int = 0, eph: int = 0, scalars: dict | None = None) -> dict:
    """Container requests as upstream's ``newResourcePod`` writes them (zero amounts included)."""
    reqs = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}
    for name, amount in (scalars or {}).items():
        reqs[name] = str(amount)
    return reqs


def fit_pod(name: str | None = None, *, containers=(), init=(), overhead=None, pod_level=None,
            node: str = "", nominated: str = "", uid: str | None = None):
    """A pod with one container per request list in ``containers`` and one init container per
    ``(requests, is_sidecar)`` in ``init``; ``pod_level`` is the pod-level resources' requests."""
    extra = {"resources": {"requests": pod_level}} if pod_level else {}
    return kit.make_pod(
        name or f"p{next(_names)}", uid=uid, node_name=node, nominated_node_name=nominated, overhead=overhead,
        containers=[kit.container(f"c{i}", requests=r) for i, r in enumerate(containers)],
        init_containers=[kit.container(f"i{i}", requests=r, restart_policy="Always" if sidecar else None)
                         for i, (r, sidecar) in enumerate(init)], **extra)


def resource_pod(*usages: dict, **kw):
    """Upstream ``newResourcePod``: one container per usage."""
    return fit_pod(containers=usages, **kw)


def resource_init_pod(usages, init_usages, **kw):
    """Upstream ``newResourceInitPod(newResourcePod(usages...), init_usages...)``."""
    return fit_pod(containers=usages, init=[(u, False) for u in init_usages], **kw)


def allocatable(cpu: int, mem: int, pods: int, ext_a: int, storage: int, huge: int) -> dict:
    """Upstream ``makeAllocatableResources``."""
    return {"cpu": f"{cpu}m", "memory": str(mem), "pods": str(pods), EXT_A: str(ext_a),
            "ephemeral-storage": str(storage), HUGE_A: str(huge)}


def node_info(node, *pods) -> NodeInfo:
    ni = NodeInfo(node=node)
    for p in pods:
        ni.add_pod(p)
    return ni


def IR(name, reason, requested, used, capacity, unresolvable=False):
    return InsufficientResource(name, reason, requested, used, capacity, unresolvable)


def err(name: str) -> str:
    return f"Insufficient {name}"


def run_filter(plugin: NodeResourcesFit, pod, ni: NodeInfo) -> Status | None:
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    return plugin.filter(state, pod, ni)


# --------------------------------------------------------------------------- TestEnoughRequests

ENOUGH_NODE = allocatable(10, 20, 32, 5, 20, 5)

ENOUGH_CASES = [
    pytest.param(
        fit_pod(), [R(cpu=10, mem=20)], {},
        None, [], id="no resources requested always fits"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1)), [R(cpu=10, mem=20)], {},
        Status.unschedulable(err("cpu"), err("memory")),
        [IR("cpu", err("cpu"), 1, 10, 10), IR("memory", err("memory"), 1, 20, 20)],
        id="too many resources fails"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=3, mem=1)]), [R(cpu=8, mem=19)], {},
        Status.unschedulable(err("cpu")), [IR("cpu", err("cpu"), 3, 8, 10)],
        id="too many resources fails due to init container cpu"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=3, mem=1), R(cpu=2, mem=1)]), [R(cpu=8, mem=19)],
        {}, Status.unschedulable(err("cpu")), [IR("cpu", err("cpu"), 3, 8, 10)],
        id="too many resources fails due to highest init container cpu"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=1, mem=3)]), [R(cpu=9, mem=19)], {},
        Status.unschedulable(err("memory")), [IR("memory", err("memory"), 3, 19, 20)],
        id="too many resources fails due to init container memory"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=1, mem=3), R(cpu=1, mem=2)]), [R(cpu=9, mem=19)],
        {}, Status.unschedulable(err("memory")), [IR("memory", err("memory"), 3, 19, 20)],
        id="too many resources fails due to highest init container memory"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=1, mem=1)]), [R(cpu=9, mem=19)], {}, None, [],
        id="init container fits because it's the max, not sum, of containers and init containers"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=1, mem=1), R(cpu=1, mem=1)]), [R(cpu=9, mem=19)],
        {}, None, [],
        id="multiple init containers fit because it's the max, not sum, of containers and init containers"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1)), [R(cpu=5, mem=5)], {}, None, [], id="both resources fit"),
    pytest.param(
        resource_pod(R(cpu=2, mem=1)), [R(cpu=9, mem=5)], {},
        Status.unschedulable(err("cpu")), [IR("cpu", err("cpu"), 2, 9, 10)],
        id="one resource memory fits"),
    pytest.param(
        resource_pod(R(cpu=1, mem=2)), [R(cpu=5, mem=19)], {},
        Status.unschedulable(err("memory")), [IR("memory", err("memory"), 2, 19, 20)],
        id="one resource cpu fits"),
    pytest.param(
        resource_pod(R(cpu=5, mem=1)), [R(cpu=5, mem=19)], {}, None, [], id="equal edge case"),
    pytest.param(
        resource_init_pod([R(cpu=4, mem=1)], [R(cpu=5, mem=1)]), [R(cpu=5, mem=19)], {}, None, [],
        id="equal edge case for init container"),
    pytest.param(
        resource_pod(R(scalars={EXT_A: 1})), [R()], {}, None, [], id="extended resource fits"),
    pytest.param(
        resource_init_pod([R()], [R(scalars={EXT_A: 1})]), [R()], {}, None, [],
        id="extended resource fits for init container"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_A: 10})), [R(scalars={EXT_A: 0})], {},
        Status.unresolvable(err(EXT_A)), [IR(EXT_A, err(EXT_A), 10, 0, 5, True)],
        id="extended resource capacity enforced"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={EXT_A: 10})]), [R(scalars={EXT_A: 0})], {},
        Status.unresolvable(err(EXT_A)), [IR(EXT_A, err(EXT_A), 10, 0, 5, True)],
        id="extended resource capacity enforced for init container"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_A: 1})), [R(scalars={EXT_A: 5})], {},
        Status.unschedulable(err(EXT_A)), [IR(EXT_A, err(EXT_A), 1, 5, 5)],
        id="extended resource allocatable enforced"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={EXT_A: 1})]), [R(scalars={EXT_A: 5})], {},
        Status.unschedulable(err(EXT_A)), [IR(EXT_A, err(EXT_A), 1, 5, 5)],
        id="extended resource allocatable enforced for init container"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_A: 3}), R(cpu=1, mem=1, scalars={EXT_A: 3})),
        [R(scalars={EXT_A: 2})], {},
        Status.unresolvable(err(EXT_A)), [IR(EXT_A, err(EXT_A), 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple containers"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={EXT_A: 3}), R(cpu=1, mem=1, scalars={EXT_A: 3})]),
        [R(scalars={EXT_A: 2})], {}, None, [],
        id="extended resource allocatable admits multiple init containers"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={EXT_A: 6}), R(cpu=1, mem=1, scalars={EXT_A: 3})]),
        [R(scalars={EXT_A: 2})], {},
        Status.unresolvable(err(EXT_A)), [IR(EXT_A, err(EXT_A), 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple init containers"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_B: 1})), [R()], {},
        Status.unresolvable(err(EXT_B)), [IR(EXT_B, err(EXT_B), 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={EXT_B: 1})]), [R()], {},
        Status.unresolvable(err(EXT_B)), [IR(EXT_B, err(EXT_B), 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource for init container"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={K8S_IO_A: 10})), [R()], {},
        Status.unresolvable(err(K8S_IO_A)), [IR(K8S_IO_A, err(K8S_IO_A), 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={K8S_IO_B: 10})]), [R()], {},
        Status.unresolvable(err(K8S_IO_B)), [IR(K8S_IO_B, err(K8S_IO_B), 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced for init container"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={HUGE_A: 10})), [R(scalars={HUGE_A: 0})], {},
        Status.unresolvable(err(HUGE_A)), [IR(HUGE_A, err(HUGE_A), 10, 0, 5, True)],
        id="hugepages resource capacity enforced"),
    pytest.param(
        resource_init_pod([R()], [R(cpu=1, mem=1, scalars={HUGE_A: 10})]), [R(scalars={HUGE_A: 0})], {},
        Status.unresolvable(err(HUGE_A)), [IR(HUGE_A, err(HUGE_A), 10, 0, 5, True)],
        id="hugepages resource capacity enforced for init container"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={HUGE_A: 3}), R(cpu=1, mem=1, scalars={HUGE_A: 3})),
        [R(scalars={HUGE_A: 2})], {},
        Status.unresolvable(err(HUGE_A)), [IR(HUGE_A, err(HUGE_A), 6, 2, 5, True)],
        id="hugepages resource allocatable enforced for multiple containers"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_B: 1})), [R()], {"ignoredResources": [EXT_B]},
        None, [], id="skip checking ignored extended resource"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1), overhead={"cpu": "3m", "memory": "13"}), [R(cpu=5, mem=5)], {},
        None, [], id="resources + pod overhead fits"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1), overhead={"cpu": "1m", "memory": "15"}), [R(cpu=5, mem=5)], {},
        Status.unschedulable(err("memory")), [IR("memory", err("memory"), 16, 5, 20)],
        id="requests + overhead does not fit for memory"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_B: 1, K8S_IO_A: 1})), [R()],
        {"ignoredResourceGroups": ["example.com"]},
        Status.unresolvable(err(K8S_IO_A)), [IR(K8S_IO_A, err(K8S_IO_A), 1, 0, 0, True)],
        id="skip checking ignored extended resource via resource groups"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_A: 0})), [R(scalars={EXT_A: 6})], {}, None, [],
        id="skip checking extended resource request with quantity zero via resource groups"),
    pytest.param(
        resource_pod(R(scalars={EXT_A: 1})), [R(cpu=20, mem=30, scalars={EXT_A: 1})], {}, None, [],
        id="skip checking resource request with quantity zero"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1), pod_level={"cpu": "1m", "memory": "2"}), [R(cpu=5, mem=5)], {},
        None, [], id="both pod-level and container-level resources fit"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1), pod_level={"cpu": "7m", "memory": "2"}), [R(cpu=5, mem=5)], {},
        Status.unschedulable(err("cpu")), [IR("cpu", err("cpu"), 7, 5, 10)],
        id="pod-level cpu resource not fit"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1), pod_level={"cpu": "3m", "memory": "2"}), [R(cpu=5, mem=19)], {},
        Status.unschedulable(err("memory")), [IR("memory", err("memory"), 2, 19, 20)],
        id="pod-level memory resource not fit"),
    pytest.param(
        resource_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), [], {}, None, [],
        id="pod-level hugepages resource fit"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
        [], {}, None, [], id="both pod-level and container-level hugepages resource fit"),
    pytest.param(
        resource_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}), [], {},
        Status.unresolvable(err(HUGE_A)), [IR(HUGE_A, err(HUGE_A), 10, 0, 5, True)],
        id="pod-level hugepages resource not fit"),
    pytest.param(
        resource_init_pod([R(cpu=1, mem=1)], [R(cpu=1, mem=1)], pod_level={"cpu": "3m", "memory": "2"}),
        [R(cpu=5, mem=19)], {},
        Status.unschedulable(err("memory")), [IR("memory", err("memory"), 2, 19, 20)],
        id="one pod-level cpu resource fits and all init and non-init containers resources fit"),
    pytest.param(
        resource_pod(R(scalars={EXT_A: 1})), [R()], {}, None, [],
        id="extended resource backed by device plugin"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_A: 1})), [R()], {}, None, [],
        id="extended resource backed by DRA, nil draManager"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_DRA: 1})), [R()], {},
        Status.unresolvable(err(EXT_DRA)), [IR(EXT_DRA, err(EXT_DRA), 1, 0, 0, True)],
        id="extended resource backed by DRA not enabled"),
    pytest.param(
        resource_pod(R(cpu=1, mem=1, scalars={EXT_B: 1})), [R()], {},
        Status.unresolvable(err(EXT_B)), [IR(EXT_B, err(EXT_B), 1, 0, 0, True)],
        id="extended resource NOT backed by DRA"),
    pytest.param(
        resource_pod(R(scalars={EXT_A: 1})), [R(scalars={EXT_A: 0})], {}, None, [],
        id="extended resource was backed by Device Plugin (Allocatable: 0), global cache"),
]


@pytest.mark.parametrize("pod, existing, args, want_status, want_insufficient", ENOUGH_CASES)
def test_enough_requests(pod, existing, args, want_status, want_insufficient):
    ni = node_info(kit.make_node("n", allocatable=ENOUGH_NODE, hostname_label=False),
                   *(resource_pod(u) for u in existing))
    plugin = NodeResourcesFit(args, Handle())
    assert run_filter(plugin, pod, ni) == want_status
    got = fits_request(compute_pod_resource_request(pod), ni, plugin.ignored_resources,
                       plugin.ignored_resource_groups)
    assert got == want_insufficient


def test_pre_filter_disabled():
    """Filter without PreFilter state is an Error (upstream TestPreFilterDisabled)."""
    plugin = NodeResourcesFit({}, Handle())
    status = plugin.filter(CycleState(), fit_pod(), node_info(kit.make_node("n", allocatable={}, hostname_label=False)))
    assert status.code is Code.Error
    assert status.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


def test_pre_filter_writes_state_under_upstream_key():
    state = CycleState()
    NodeResourcesFit({}, Handle()).pre_filter(state, resource_pod(R(cpu=1, mem=2)), [])
    s = state.read(PRE_FILTER_STATE_KEY)
    assert (s.request.milli_cpu, s.request.memory) == (1, 2)
    assert s.clone() is s


# --------------------------------------------------------------------------- TestNotEnoughRequests

@pytest.mark.parametrize("pod, existing", [
    pytest.param(fit_pod(), R(cpu=10, mem=20),
                 id="even without specified resources, predicate fails when there's no space for additional pod"),
    pytest.param(resource_pod(R(cpu=1, mem=1)), R(cpu=5, mem=5),
                 id="even if both resources fit, predicate fails when there's no space for additional pod"),
    pytest.param(resource_pod(R(cpu=5, mem=1)), R(cpu=5, mem=19),
                 id="even for equal edge case, predicate fails when there's no space for additional pod"),
    pytest.param(resource_init_pod([R(cpu=5, mem=1)], [R(cpu=5, mem=1)]), R(cpu=5, mem=19),
                 id="even for equal edge case, predicate fails when there's no space for additional pod"
                    " due to init container"),
])
def test_not_enough_requests(pod, existing):
    ni = node_info(kit.make_node("n", allocatable=allocatable(10, 20, 1, 0, 0, 0), hostname_label=False),
                   resource_pod(existing))
    assert run_filter(NodeResourcesFit({}, Handle()), pod, ni) == Status.unschedulable("Too many pods")


# --------------------------------------------------------------------------- TestStorageRequests

@pytest.mark.parametrize("pod, existing, want", [
    pytest.param(resource_pod(R(cpu=1, mem=1)), R(cpu=2, mem=10), None,
                 id="empty storage requested, and pod fits"),
    pytest.param(resource_pod(R(eph=25)), R(cpu=2, mem=2),
                 Status.unresolvable(err("ephemeral-storage")),
                 id="storage ephemeral local storage request exceeds allocatable"),
    pytest.param(resource_init_pod([R(eph=5)], []), R(cpu=2, mem=2, eph=10), None,
                 id="ephemeral local storage is sufficient"),
    pytest.param(resource_pod(R(eph=10)), R(cpu=2, mem=2), None, id="pod fits"),
])
def test_storage_requests(pod, existing, want):
    ni = node_info(kit.make_node("n", allocatable=ENOUGH_NODE, hostname_label=False), resource_pod(existing))
    assert run_filter(NodeResourcesFit({}, Handle()), pod, ni) == want


# --------------------------------------------------------------------------- TestRestartableInitContainers

def _sidecar_pod(request, sidecar_request):
    return kit.make_pod(f"p{next(_names)}", containers=[kit.container("regular", requests=request)],
                        init_containers=[kit.container("restartable-init", requests=sidecar_request,
                                                       restart_policy="Always")])


_REGULAR_POD = kit.make_pod("regular-only", containers=[kit.container("regular")])


@pytest.mark.parametrize("pod, want", [
    pytest.param(_REGULAR_POD, None,
                 id="allow pod without restartable init containers if sidecar containers is disabled"),
    pytest.param(_REGULAR_POD, None,
                 id="allow pod without restartable init containers if sidecar containers is enabled"),
    pytest.param(_sidecar_pod(None, None), None,
                 id="allow pod with restartable init containers if sidecar containers is enabled"),
    pytest.param(_sidecar_pod({"cpu": "1m"}, {"cpu": "1m"}), None,
                 id="allow pod if the total requested resources do not exceed the node's allocatable resources"),
    pytest.param(_sidecar_pod({"cpu": "1m"}, {"cpu": "2m"}), Status.unresolvable(err("cpu")),
                 id="not allow pod if the total requested resources do exceed the node's allocatable resources"),
])
def test_restartable_init_containers(pod, want):
    # SidecarContainers is GA and locked on in v1.36: the "feature disabled" rejection is gone.
    ni = node_info(kit.make_node("n", allocatable=allocatable(2, 0, 1, 0, 0, 0), hostname_label=False))
    assert run_filter(NodeResourcesFit({}, Handle()), pod, ni) == want


# --------------------------------------------------------------------------- TestFitScore

def st_pod(*reqs: dict, node: str = "", sidecars=()) -> object:
    """Upstream ``st.MakePod().Req(...)...``: one container per ``Req`` (quantities as written)."""
    return fit_pod(containers=reqs, init=[(s, True) for s in sidecars], node=node)


def st_node(name: str, capacity: dict | None = None) -> object:
    """Upstream ``st.MakeNode().Name(name).Capacity(...)``: allocatable = capacity, pods 32 unless given."""
    return kit.make_node(name, allocatable={"pods": "32", **(capacity or {})}, hostname_label=False)


def score_nodes(plugin, pod, nodes, existing, run_pre_score=True):
    snapshot = Snapshot.from_objects(nodes, existing)
    state = CycleState()
    out = []
    for n in nodes:
        if run_pre_score:
            assert plugin.pre_score(state, pod, snapshot.node_infos()) is None
        result = plugin.score(state, pod, snapshot.get(n.name))
        score, status = result if isinstance(result, tuple) else (result, None)
        assert status is None or status.is_success()
        out.append(NodeScore(n.name, score))
    return out


def cpu_mem(cpu: str, mem: str) -> dict:
    return {"cpu": cpu, "memory": mem}


DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
_FIT_NODES = [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("6000", "10000"))]
_FIT_EXISTING = [st_pod(cpu_mem("2000", "4000"), node="node1"),
                 st_pod(cpu_mem("1000", "2000"), node="node2")]


def _rtcr(shape):
    return {"type": "RequestedToCapacityRatio", "resources": DEFAULT_RESOURCES,
            "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]}}


@pytest.mark.parametrize("pod, nodes, existing, strategy, run_pre_score, expected", [
    pytest.param(st_pod(cpu_mem("3000", "5000")), _FIT_NODES, _FIT_EXISTING, _rtcr([(0, 10), (100, 0)]),
                 True, [("node1", 10), ("node2", 32)],
                 id="test case for ScoringStrategy RequestedToCapacityRatio case1"),
    pytest.param(st_pod(cpu_mem("3000", "5000")), _FIT_NODES, _FIT_EXISTING, _rtcr([(0, 0), (100, 10)]),
                 True, [("node1", 95), ("node2", 68)],
                 id="test case for ScoringStrategy RequestedToCapacityRatio case2"),
    pytest.param(st_pod(cpu_mem("1000", "2000")), _FIT_NODES, _FIT_EXISTING,
                 {"type": "MostAllocated", "resources": DEFAULT_RESOURCES}, True,
                 [("node1", 67), ("node2", 36)], id="test case for ScoringStrategy MostAllocated"),
    pytest.param(st_pod(cpu_mem("1000", "2000")), _FIT_NODES, _FIT_EXISTING,
                 {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}, True,
                 [("node1", 32), ("node2", 63)], id="test case for ScoringStrategy LeastAllocated"),
    pytest.param(st_pod(cpu_mem("3000", "5000")), _FIT_NODES, _FIT_EXISTING, _rtcr([(0, 10), (100, 0)]),
                 False, [("node1", 10), ("node2", 32)],
                 id="test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called"),
    pytest.param(st_pod(cpu_mem("1000", "2000")), _FIT_NODES, _FIT_EXISTING,
                 {"type": "MostAllocated", "resources": DEFAULT_RESOURCES}, False,
                 [("node1", 67), ("node2", 36)],
                 id="test case for ScoringStrategy MostAllocated if PreScore is not called"),
    pytest.param(st_pod(cpu_mem("1000", "2000")), _FIT_NODES, _FIT_EXISTING,
                 {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}, False,
                 [("node1", 32), ("node2", 63)],
                 id="test case for ScoringStrategy LeastAllocated if PreScore is not called"),
    pytest.param(st_pod(cpu_mem("1000", "2000")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [st_pod(cpu_mem("1000", "2000"), node="node1", sidecars=[cpu_mem("1000", "2000")]),
                  st_pod(cpu_mem("1000", "2000"), node="node2")],
                 {"type": "MostAllocated", "resources": DEFAULT_RESOURCES}, True,
                 [("node1", 67), ("node2", 45)],
                 id="test case for ScoringStrategy MostAllocated with sidecar container"),
    pytest.param(st_pod(cpu_mem("1000", "2000")),
                 [st_node("node1", cpu_mem("4000", "10000")), st_node("node2", cpu_mem("4000", "10000"))],
                 [st_pod(cpu_mem("1000", "2000"), node="node1", sidecars=[cpu_mem("1000", "2000")]),
                  st_pod(cpu_mem("1000", "2000"), node="node2")],
                 {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}, True,
                 [("node1", 32), ("node2", 55)],
                 id="test case for ScoringStrategy LeastAllocated with sidecar container"),
])
def test_fit_score(pod, nodes, existing, strategy, run_pre_score, expected):
    plugin = NodeResourcesFit({"scoringStrategy": strategy}, Handle())
    got = score_nodes(plugin, pod, nodes, existing, run_pre_score)
    assert got == [NodeScore(n, s) for n, s in expected]


def test_default_args_score_least_allocated_cpu_memory():
    """Empty args default to LeastAllocated over cpu and memory, weight 1 (SetDefaults)."""
    plugin = NodeResourcesFit({}, Handle())
    assert plugin.scorer.name == "LeastAllocated"
    assert plugin.scorer.resources == (("cpu", 1), ("memory", 1))


def test_unknown_scoring_strategy_is_refused():
    with pytest.raises(ValueError, match="scoring strategy Foo is not supported"):
        NodeResourcesFit({"scoringStrategy": {"type": "Foo"}}, Handle())


# --------------------------------------------------------------------------- TestEventsToRegister

@pytest.mark.parametrize("in_place, qhint, dra, expected", [
    pytest.param(True, False, False, [
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown | ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                     | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel)],
        id="Register events with InPlacePodVerticalScaling feature enabled"),
    pytest.param(False, True, False, [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable)],
        id="Register events with SchedulingQueueHint feature enabled"),
    pytest.param(False, False, False, [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                     | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel)],
        id="Register events with InPlacePodVerticalScaling feature disabled"),
    pytest.param(False, False, True, [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                     | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel),
        ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update)],
        id="Register events with DRAExtendedResource feature enabled"),
    pytest.param(False, False, False, [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                     | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel)],
        id="Register events with DRAExtendedResource feature disabled"),
    pytest.param(True, True, True, [
        ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
        ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update)],
        id="v1.36 defaults (all three gates on)"),
])
def test_events_to_register(in_place, qhint, dra, expected):
    plugin = NodeResourcesFit({}, Handle())
    plugin.enable_in_place_pod_vertical_scaling = in_place
    plugin.enable_scheduling_queue_hint = qhint
    plugin.enable_dra_extended_resource = dra
    events = plugin.events_to_register()
    assert [e.event for e in events] == expected
    assert all(e.queueing_hint_fn is not None for e in events)


def test_default_plugin_registers_v136_events():
    events = [e.event for e in NodeResourcesFit({}, Handle()).events_to_register()]
    assert events[0] == ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown)
    assert events[1] == ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable)


# --------------------------------------------------------------------------- Test_isSchedulableAfterPodChange

def _p(name, reqs=None, *, node="", nominated="", uid=None, pod_level=None):
    return fit_pod(name, containers=[reqs] if reqs else [], node=node, nominated=nominated, uid=uid,
                   pod_level=pod_level)


EMPTY_POD = parse_object({"kind": "Pod", "metadata": {"name": "empty"}})

POD_CHANGE_CASES = [
    pytest.param(EMPTY_POD, "not-a-pod", None, True, None, id="backoff-wrong-old-object"),
    pytest.param(EMPTY_POD, None, "not-a-pod", True, None, id="backoff-wrong-new-object"),
    pytest.param(_p("pod1", {"cpu": "1"}), _p("pod2", {"cpu": "1"}, node="fake"), None, True,
                 QueueingHint.Queue, id="queue-on-other-pod-deleted"),
    pytest.param(EMPTY_POD, parse_object({"kind": "Pod", "metadata": {"name": "other"}}), None, True,
                 QueueingHint.QueueSkip, id="skip-queue-on-unscheduled-pod-deleted"),
    pytest.param(_p("pod1", {"cpu": "1"}, uid="uid0"), _p("pod2", {"cpu": "2"}, nominated="fake", uid="uid1"),
                 None, True, QueueingHint.Queue, id="queue-on-nominated-pod-deleted"),
    pytest.param(_p("pod1", {"cpu": "1"}), _p("pod2", {"cpu": "2"}, node="fake"),
                 _p("pod2", {"cpu": "1"}, node="fake"), False, QueueingHint.QueueSkip,
                 id="skip-queue-on-disable-inplace-pod-vertical-scaling"),
    pytest.param(_p("pod1", {"cpu": "1"}, uid="uid0"), _p("pod2", {"cpu": "2"}, uid="uid1"),
                 _p("pod2", {"cpu": "1"}, uid="uid1"), True, QueueingHint.QueueSkip,
                 id="skip-queue-on-other-unscheduled-pod"),
    pytest.param(_p("pod1", {"cpu": "1"}, uid="pod1"), _p("pod2", {"memory": "2"}, node="fake", uid="pod2"),
                 _p("pod2", {"memory": "1"}, node="fake", uid="pod2"), True, QueueingHint.QueueSkip,
                 id="skip-queue-on-other-pod-unrelated-resource-scaled-down"),
    pytest.param(_p("pod1", pod_level={"cpu": "1"}, uid="pod1"),
                 _p("pod2", pod_level={"memory": "2"}, node="fake", uid="pod2"),
                 _p("pod2", pod_level={"memory": "1"}, node="fake", uid="pod2"), True, QueueingHint.QueueSkip,
                 id="skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down"),
    pytest.param(_p("pod1", {"cpu": "1"}, uid="pod1"), _p("pod2", {"cpu": "2"}, node="fake", uid="pod2"),
                 _p("pod2", {"cpu": "1"}, node="fake", uid="pod2"), True, QueueingHint.Queue,
                 id="queue-on-other-pod-some-resource-scale-down"),
    pytest.param(_p("pod1", pod_level={"cpu": "1"}, uid="pod1"),
                 _p("pod2", pod_level={"cpu": "2"}, node="fake", uid="pod2"),
                 _p("pod2", pod_level={"cpu": "1"}, node="fake", uid="pod2"), True, QueueingHint.Queue,
                 id="queue-on-other-pod-some-pod-level-resource-scale-down"),
    pytest.param(_p("pod1", {"cpu": "1"}, uid="pod1"), _p("pod1", {"cpu": "2"}, uid="pod1"),
                 _p("pod1", {"cpu": "1"}, uid="pod1"), True, QueueingHint.Queue,
                 id="queue-on-target-pod-some-resource-scale-down"),
    pytest.param(_p("pod1", pod_level={"cpu": "1"}, uid="pod1"), _p("pod1", pod_level={"cpu": "2"}, uid="pod1"),
                 _p("pod1", pod_level={"cpu": "1"}, uid="pod1"), True, QueueingHint.Queue,
                 id="queue-on-target-pod-some-pod-level-resource-scale-down"),
]


@pytest.mark.parametrize("pod, old, new, in_place, expected", POD_CHANGE_CASES)
def test_is_schedulable_after_pod_change(pod, old, new, in_place, expected):
    plugin = NodeResourcesFit({}, Handle())
    plugin.enable_in_place_pod_vertical_scaling = in_place
    if expected is None:  # upstream: error, which the queue treats as Queue
        with pytest.raises(TypeError):
            plugin.is_schedulable_after_pod_event(pod, old, new)
        return
    assert plugin.is_schedulable_after_pod_event(pod, old, new) == expected


# --------------------------------------------------------------------------- Test_isSchedulableAfterNodeChange

NODE_CHANGE_CASES = [
    pytest.param(EMPTY_POD, None, "not-a-node", None, id="backoff-wrong-new-object"),
    pytest.param(EMPTY_POD, "not-a-node", st_node("n", {}), None, id="backoff-wrong-old-object"),
    pytest.param(resource_pod(R(mem=2)), None, st_node("n", {"memory": "1"}), QueueingHint.QueueSkip,
                 id="skip-queue-on-node-add-without-sufficient-resources"),
    pytest.param(resource_pod(R(scalars={EXT_A: 1})), None, st_node("n", {EXT_B: "1"}), QueueingHint.QueueSkip,
                 id="skip-queue-on-node-add-without-required-resource-type"),
    pytest.param(resource_pod(R(mem=2, scalars={EXT_A: 1})), None, st_node("n", {"memory": "4", EXT_A: "2"}),
                 QueueingHint.Queue, id="queue-on-node-add-with-sufficient-resources"),
    pytest.param(resource_pod(R(mem=2, scalars={EXT_A: 1})), st_node("n", {"memory": "2", EXT_A: "2"}),
                 st_node("n", {"memory": "2", EXT_A: "1", EXT_B: "2"}), QueueingHint.QueueSkip,
                 id="skip-queue-on-node-unrelated-changes"),
    pytest.param(resource_pod(R(mem=2, scalars={EXT_A: 1})), st_node("n", {"memory": "2", EXT_A: "1"}),
                 st_node("n", {"memory": "2", EXT_A: "2"}), QueueingHint.Queue,
                 id="queue-on-pod-requested-resources-increase"),
    pytest.param(resource_pod(R(mem=2, scalars={EXT_A: 1})), st_node("n", {"memory": "4", EXT_A: "2"}),
                 st_node("n", {"memory": "1", EXT_A: "2"}), QueueingHint.QueueSkip,
                 id="skip-queue-on-node-changes-from-suitable-to-unsuitable"),
    pytest.param(resource_pod(R(mem=2, scalars={EXT_A: 1})), st_node("n", {"memory": "1", EXT_A: "2"}),
                 st_node("n", {"memory": "4", EXT_A: "2"}), QueueingHint.Queue,
                 id="queue-on-node-changes-from-unsuitable-to-suitable"),
]


@pytest.mark.parametrize("pod, old, new, expected", NODE_CHANGE_CASES)
def test_is_schedulable_after_node_change(pod, old, new, expected):
    plugin = NodeResourcesFit({}, Handle())
    if expected is None:
        with pytest.raises(TypeError):
            plugin.is_schedulable_after_node_change(pod, old, new)
        return
    assert plugin.is_schedulable_after_node_change(pod, old, new) == expected


# --------------------------------------------------------------------------- Test_isSchedulableAfterDeviceClassChange

def device_class(name: str = "", ern: str | None = None) -> dict:
    d: dict = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {}, "spec": {}}
    if name:
        d["metadata"]["name"] = name
    if ern is not None:
        d["spec"]["extendedResourceName"] = ern
    return d


DEVICE_CLASS_CASES = [
    pytest.param(EMPTY_POD, None, "not-a-class", None, id="backoff-wrong-new-object"),
    pytest.param(EMPTY_POD, "not-a-class", device_class(), None, id="backoff-wrong-old-object"),
    pytest.param(resource_pod(R(mem=2)), device_class(), device_class(), QueueingHint.QueueSkip,
                 id="skip-queue-on-class-nil-extended-resource-name-pointer"),
    pytest.param(resource_pod(R(mem=2)), device_class(ern="example.com/gpu"),
                 device_class(ern="example.com/gpu"), QueueingHint.QueueSkip,
                 id="skip-queue-on-class-same-extended-resource-name-pointer"),
    pytest.param(resource_pod(R(mem=2)), device_class(ern="example.com/gpu"),
                 device_class(ern="example.com/gpu"), QueueingHint.QueueSkip,
                 id="skip-queue-on-class-same-extended-resource-name"),
    pytest.param(resource_pod(R(scalars={"deviceclass.resource.kubernetes.io/gpuclass": 1})), None,
                 device_class("gpuclass", "example.com/gpu"), QueueingHint.Queue,
                 id="queue-on-class-add-with-implicit-extended-resource-name"),
    pytest.param(resource_pod(R(scalars={"deviceclass.resource.kubernetes.io/gpuclass": 1})), None,
                 device_class("myclass", "example.com/gpu"), QueueingHint.QueueSkip,
                 id="skip-on-class-add-with-implicit-extended-resource-name-not-matching"),
    pytest.param(resource_pod(R(scalars={"example.com/othergpu": 1})), None,
                 device_class("myclass", "example.com/gpu"), QueueingHint.QueueSkip,
                 id="skip-on-class-add-with-explicit-extended-resource-name-not-matching"),
    pytest.param(resource_pod(R(scalars={"deviceclass.resource.kubernetes.io/gpuclass": 1})),
                 device_class("gpuclass"), device_class("gpuclass", "example.com/gpu"),
                 QueueingHint.QueueSkip, id="skip-on-class-update-with-implicit-extended-resource-name"),
    pytest.param(resource_pod(R(scalars={"example.com/gpu": 1})), None,
                 device_class(ern="example.com/gpu"), QueueingHint.Queue,
                 id="queue-on-class-add-with-extended-resource-name"),
    pytest.param(resource_pod(R(scalars={"example.com/gpu": 1})), device_class(ern="example.com/gpu1"),
                 device_class(ern="example.com/gpu"), QueueingHint.Queue,
                 id="queue-on-class-update-with-extended-resource-name"),
]


@pytest.mark.parametrize("pod, old, new, expected", DEVICE_CLASS_CASES)
def test_is_schedulable_after_device_class_change(pod, old, new, expected):
    plugin = NodeResourcesFit({}, Handle())
    if expected is None:
        with pytest.raises(TypeError):
            plugin.is_schedulable_after_device_class_event(pod, old, new)
        return
    assert plugin.is_schedulable_after_device_class_event(pod, old, new) == expected


def test_device_class_hint_accepts_parsed_objects():
    pod = resource_pod(R(scalars={"example.com/gpu": 1}))
    cls = parse_object({**device_class("gpuclass", "example.com/gpu")})
    assert NodeResourcesFit({}, Handle()).is_schedulable_after_device_class_event(pod, None, cls) == QueueingHint.Queue


# --------------------------------------------------------------------------- TestIsFit

@pytest.mark.parametrize("pod, node, expected", [
    pytest.param(EMPTY_POD, None, False, id="nil node"),
    pytest.param(_p("a", {"cpu": "2"}), st_node("n", {"cpu": "1"}), False,
                 id="insufficient resource"),
    pytest.param(_p("a", {"cpu": "1"}), st_node("n", {"cpu": "2"}), True,
                 id="sufficient resource"),
    pytest.param(_p("a", pod_level={"cpu": "2"}), st_node("n", {"cpu": "1"}), False,
                 id="insufficient pod-level resource"),
    pytest.param(_p("a", pod_level={"cpu": "2"}), st_node("n", {"cpu": "2"}), True,
                 id="sufficient pod-level resource"),
    pytest.param(_p("a", pod_level={HUGE_A: "2Mi"}), st_node("n", {HUGE_A: "2Mi"}), True,
                 id="sufficient pod-level resource hugepages"),
    pytest.param(_p("a", pod_level={HUGE_A: "4Mi"}), st_node("n", {HUGE_A: "2Mi"}), False,
                 id="insufficient pod-level resource hugepages"),
])
def test_is_fit(pod, node, expected):
    assert is_fit(pod, node) is expected


# --------------------------------------------------------------------------- TestHaveAnyRequestedResourcesIncreased

@pytest.mark.parametrize("pod, original, modified, expected", [
    pytest.param(resource_pod(R()),
                 st_node("n", {"pods": "1", "cpu": "1", "memory": "1", "ephemeral-storage": "1", EXT_A: "1"}),
                 st_node("n", {"pods": "1", "cpu": "2", "memory": "2", "ephemeral-storage": "2", EXT_A: "2"}),
                 False, id="no-requested-resources"),
    pytest.param(resource_pod(R()),
                 st_node("n", {"pods": "1", "cpu": "1", "memory": "1", "ephemeral-storage": "1", EXT_A: "1"}),
                 st_node("n", {"pods": "2", "cpu": "1", "memory": "1", "ephemeral-storage": "1", EXT_A: "1"}),
                 True, id="no-requested-resources-pods-increased"),
    pytest.param(resource_pod(R(cpu=2, mem=2, eph=2, scalars={EXT_A: 2})),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "3"}),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "1"}),
                 False, id="scalar-resources-not-in-node"),
    pytest.param(resource_pod(R(cpu=2, mem=2, eph=2, scalars={EXT_A: 2})),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "3", EXT_A: "4"}),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "1", EXT_A: "1"}),
                 False, id="requested-resources-decreased"),
    pytest.param(resource_pod(R(cpu=2, mem=2, eph=2, scalars={EXT_A: 2})),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "3", EXT_A: "4"}),
                 st_node("n", {"cpu": "3", "memory": "4", "ephemeral-storage": "3", EXT_A: "4"}),
                 True, id="requested-resources-increased"),
    pytest.param(resource_pod(R(cpu=2, mem=2)),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "3", EXT_A: "4"}),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "1", EXT_A: "1"}),
                 False, id="non-requested-resources-decreased"),
    pytest.param(resource_pod(R(cpu=2, mem=2)),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "3", EXT_A: "4"}),
                 st_node("n", {"cpu": "1", "memory": "2", "ephemeral-storage": "5", EXT_A: "6"}),
                 False, id="non-requested-resources-increased"),
])
def test_have_any_requested_resources_increased(pod, original, modified, expected):
    assert have_any_requested_resources_increased(pod, original, modified) is expected


# --------------------------------------------------------------------------- SignPod

def test_sign_pod_same_requests_same_signature():
    plugin = NodeResourcesFit({}, Handle())
    a, status = plugin.sign_pod(st_pod(cpu_mem("500m", "1000"), cpu_mem("1500m", "3000")))
    b, _ = plugin.sign_pod(st_pod(cpu_mem("2000m", "4000")))
    assert status is None
    assert a[0].key == "v1.Pod.Spec.ContainerRequestsAndOverheads()"
    assert a == b
