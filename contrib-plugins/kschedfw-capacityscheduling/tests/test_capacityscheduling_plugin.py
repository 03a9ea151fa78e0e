"""CapacityScheduling: upstream ``pkg/capacityscheduling/capacity_scheduling_test.go`` (TestPreFilter,
TestPostFilter, TestReserve, TestUnreserve, TestDryRunPreemption, TestPodEligibleToPreemptOthers,
TestAdd/Update/DeleteElasticQuota, TestAdd/Update/DeletePod), plus nominated pods, extensions and
queueing hints."""

from __future__ import annotations

import attrs
import pytest
from capsched_testlib import (HIGH_PRIORITY, MID_PRIORITY, info, infos, make_eq, make_node, make_pod, res,
                              resource_list, st_pod)

from kschedfw import ActionType, ClusterEvent, Code, CycleState, NodeToStatus, PostFilterResult, QueueingHint, Status
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.preemption import Evaluator, Executor
from kschedfw.testing import framework_for

from kschedfw_capacityscheduling import (ELASTIC_QUOTA_SNAPSHOT_KEY, PRE_FILTER_STATE_KEY, CapacityScheduling,
                                         ElasticQuotaSnapshotState, PreFilterState, Preemptor,
                                         compute_pod_resource_request)
from kschedfw_capacityscheduling.elasticquota import UPPER_BOUND_OF_MAX

MEM_150 = {"memory": "150"}


class Nominator:
    """Pods nominated per node (upstream's test PodNominator)."""

    def __init__(self, pods=()):
        self.pods = list(pods)

    def nominated_pods_for_node(self, node_name):
        return [p for p in self.pods if p.nominated_node_name == node_name]


def plugin_with(quotas=None, nodes=(), pods=(), nominator=None, with_fit=False):
    """The plugin on a handle with a snapshot. ``with_fit``: the handle's framework runs
    NodeResourcesFit only, as upstream's tests register it (so the plugin's own AddPod/RemovePod
    do not run during dry runs); otherwise the framework runs CapacityScheduling."""
    handle = Handle.factory(snapshot=Snapshot.from_objects(nodes, pods), nominator=nominator)
    if with_fit:
        fwk = framework_for([NodeResourcesFit], handle=handle)
        plugin = CapacityScheduling({}, fwk.handle)
    else:
        fwk = framework_for([CapacityScheduling], handle=handle)
        plugin = fwk.plugins["CapacityScheduling"]
    if quotas is not None:
        plugin.elastic_quota_infos = quotas
    return fwk, plugin


def unschedulable_node_a() -> NodeToStatus:
    m = NodeToStatus()
    m.set("node-a", Status(Code.Unschedulable))
    return m


def prepared_state(fwk, pod, quotas) -> CycleState:
    """Run PreFilter, then replace the plugin's state as the upstream tests do."""
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod, fwk.handle.snapshot.node_infos())
    assert status is None or status.is_success(), status
    req = compute_pod_resource_request(pod)
    state.write(PRE_FILTER_STATE_KEY, PreFilterState(req, req.clone(), req.clone()))
    state.write(ELASTIC_QUOTA_SNAPSHOT_KEY, ElasticQuotaSnapshotState(quotas))
    return state


# --------------------------------------------------------------------------- TestPreFilter

@pytest.mark.parametrize("pods, quotas, expected", [
    pytest.param([("ns1-p1", "ns1", 500), ("ns1-p2", "ns1", 1800)],
                 infos(info("ns1", min_=res(memory=1000), max_=res(memory=2000), used=res(memory=300))),
                 [Code.Success, Code.Unschedulable], id="pod subjects to ElasticQuota"),
    pytest.param([("ns2-p1", "ns2", 500)],
                 infos(info("ns1", min_=res(memory=1000), max_=res(memory=2000), used=res(memory=1800)),
                       info("ns2", min_=res(memory=1000), max_=res(memory=2000), used=res(memory=200))),
                 [Code.Unschedulable], id="the sum of used is bigger than the sum of min"),
    pytest.param([("ns2-p1", "ns2", 500)], infos(), [Code.Success], id="without elasticQuotaInfo"),
])
def test_pre_filter(pods, quotas, expected):
    _, plugin = plugin_with(quotas)
    state = CycleState()
    for (name, namespace, mem), code in zip(pods, expected, strict=True):
        pod = make_pod(name, namespace, mem, 0, 0, 0, name)
        _, status = plugin.pre_filter(state, pod, [])
        assert (status.code if status is not None else Code.Success) is code


def test_pre_filter_messages():
    quotas = infos(info("ns1", min_=res(memory=1000), max_=res(memory=2000), used=res(memory=300)),
                   info("ns2", min_=res(memory=100), max_=res(memory=2000), used=res(memory=0)))
    _, plugin = plugin_with(quotas)
    _, status = plugin.pre_filter(CycleState(), make_pod("p", "ns1", 1800, 0, 0, 0, "p"), [])
    assert status.message() == "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    _, status = plugin.pre_filter(CycleState(), make_pod("q", "ns1", 900, 0, 0, 0, "q"), [])
    assert status.message() == "Pod ns1/q is rejected in PreFilter because total ElasticQuota used is more than min"


def test_pre_filter_counts_nominated_pods():
    """Nominated pods of the namespace with at least the pod's priority count against its max;
    nominated pods of namespaces within their min count against the sum of minimums."""
    quotas = infos(info("ns1", min_=res(memory=1000), max_=res(memory=1000)),
                   info("ns2", min_=res(memory=1000), max_=res(memory=2000)))
    node = make_node("node-a", {"memory": "10000"})
    nominated = [make_pod("n1", "ns1", 600, 0, 0, HIGH_PRIORITY, "n1", nominated="node-a"),
                 make_pod("n2", "ns2", 900, 0, 0, 0, "n2", nominated="node-a")]
    _, plugin = plugin_with(quotas, nodes=[node], nominator=Nominator(nominated))
    state = CycleState()
    _, status = plugin.pre_filter(state, make_pod("p", "ns1", 500, 0, 0, MID_PRIORITY, "p"), [])
    assert status.message() == "Pod ns1/p is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    pre = state.read(PRE_FILTER_STATE_KEY)
    assert pre.nominated_pods_req_in_eq_with_pod_req.memory == 1100
    assert pre.nominated_pods_req_with_pod_req.memory == 2000
    # a more important pod does not count the less important nominated one of its namespace
    _, status = plugin.pre_filter(CycleState(), make_pod("q", "ns1", 400, 0, 0, HIGH_PRIORITY + 1, "q"), [])
    assert status is None
    # ns2's nominated pod fills the sum of minimums (ns1 1000 + ns2 1000)
    _, status = plugin.pre_filter(CycleState(), make_pod("r", "ns2", 200, 0, 0, 0, "r"), [])
    assert status is None
    _, status = plugin.pre_filter(CycleState(), make_pod("s", "ns1", 200, 0, 0, HIGH_PRIORITY + 1, "s"), [])
    assert status is None  # ns1: 200 <= max; total 200 + 900 <= 2000


# --------------------------------------------------------------------------- TestPostFilter

EXIST_PODS = [
    make_pod("t1-p2", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p2", "node-a"),
    make_pod("t1-p3", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p3", "node-a"),
    make_pod("t1-p4", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p4", "node-a"),
]
IN_NAMESPACE = lambda: infos(info("ns1", max_=res(memory=200), min_=res(memory=50), used=res(memory=50)),  # noqa: E731
                             info("ns2", max_=res(memory=200), min_=res(memory=200), used=res(memory=100)))
CROSS_NAMESPACE = lambda: infos(info("ns1", max_=res(memory=200), min_=res(memory=150), used=res(memory=50)),  # noqa: E731
                                info("ns2", max_=res(memory=200), min_=res(memory=50), used=res(memory=100)))


@pytest.mark.parametrize("quotas", [
    pytest.param(IN_NAMESPACE, id="in-namespace preemption"),
    pytest.param(CROSS_NAMESPACE, id="cross-namespace preemption"),
    pytest.param(infos, id="without elasticQuotas"),
])
def test_post_filter(quotas):
    pod = make_pod("t1-p1", "ns1", 50, 0, 0, HIGH_PRIORITY, "t1-p1")
    quotas = quotas()
    fwk, plugin = plugin_with(quotas, nodes=[make_node("node-a", MEM_150)], pods=EXIST_PODS, with_fit=True)
    state = prepared_state(fwk, pod, quotas)
    result, status = plugin.post_filter(state, pod, unschedulable_node_a())
    assert status.code is Code.Success
    assert result == PostFilterResult.nominate("node-a")


# --------------------------------------------------------------------------- TestDryRunPreemption

@pytest.mark.parametrize("pods, quotas, victims", [
    pytest.param([make_pod("t1-p1", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p1", "node-a"),
                  make_pod("t1-p2", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p2", "node-a"),
                  make_pod("t1-p3", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p3", "node-a")],
                 IN_NAMESPACE, ["t1-p1"], id="in-namespace preemption"),
    pytest.param([make_pod("t1-p1", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p1", "node-a"),
                  make_pod("t1-p2", "ns2", 50, 0, 0, HIGH_PRIORITY, "t1-p2", "node-a"),
                  make_pod("t1-p3", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p3", "node-a")],
                 CROSS_NAMESPACE, ["t1-p3"], id="cross-namespace preemption"),
])
def test_dry_run_preemption(pods, quotas, victims):
    pod = make_pod("t1-p", "ns1", 50, 0, 0, HIGH_PRIORITY, "t1-p")
    quotas = quotas()
    fwk, plugin = plugin_with(quotas, nodes=[make_node("node-a", MEM_150)], pods=pods, with_fit=True)
    state = prepared_state(fwk, pod, quotas)
    evaluator = Evaluator("CapacityScheduling", fwk.handle, Preemptor(fwk.handle, state),
                          Executor(fwk.handle, async_preemption=False))
    node_infos = fwk.handle.snapshot.node_infos()
    candidates, _, errors = evaluator.dry_run_preemption(state, pod, node_infos, [], 0, len(node_infos))
    assert errors == ""
    assert [(c.name, sorted(p.name for p in c.victims.pods), c.victims.num_pdb_violations) for c in candidates] == \
        [("node-a", victims, 0)]


def test_dry_run_with_the_plugins_own_extensions():
    """With CapacityScheduling's AddPod/RemovePod in the framework and quotas that count the pods
    on the node, reclaiming stops once the lender is back at its min."""
    pods = [make_pod("t1-p1", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p1", "node-a"),
            make_pod("t1-p2", "ns2", 50, 0, 0, HIGH_PRIORITY, "t1-p2", "node-a"),
            make_pod("t1-p3", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p3", "node-a")]
    pod = make_pod("t1-p", "ns1", 50, 0, 0, HIGH_PRIORITY, "t1-p")
    fwk = framework_for([NodeResourcesFit, CapacityScheduling],
                        handle=Handle.factory(snapshot=Snapshot.from_objects([make_node("node-a", MEM_150)], pods)))
    plugin = fwk.plugins["CapacityScheduling"]
    handle = fwk.handle
    plugin.add_elastic_quota(make_eq("ns1", "q", {"memory": "200"}, {"memory": "150"}))
    plugin.add_elastic_quota(make_eq("ns2", "q", {"memory": "200"}, {"memory": "50"}))
    for p in pods:
        plugin.add_pod(p)
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod, handle.snapshot.node_infos())
    assert status is None
    evaluator = Evaluator("CapacityScheduling", handle, Preemptor(handle, state),
                          Executor(handle, async_preemption=False))
    candidates, _, errors = evaluator.dry_run_preemption(state, pod, handle.snapshot.node_infos(), [], 0, 1)
    assert [(c.name, [p.name for p in c.victims.pods]) for c in candidates] == [("node-a", ["t1-p3"])]
    assert plugin.elastic_quota_infos["ns2"].used.memory == 100  # dry runs change copies only


def test_no_victims_and_global_quota():
    """Same-priority pods of a namespace over its min are no victims; nor is a node where the pod
    would still break the quotas after all evictions."""
    pod = make_pod("p", "ns1", 50, 0, 0, MID_PRIORITY, "p")
    quotas = infos(info("ns1", max_=res(memory=200), min_=res(memory=50), used=res(memory=50)))
    pods = [make_pod("q", "ns1", 100, 0, 0, MID_PRIORITY, "q", "node-a")]
    fwk, _ = plugin_with(quotas, nodes=[make_node("node-a", MEM_150)], pods=pods, with_fit=True)
    state = prepared_state(fwk, pod, quotas)
    preemptor = Preemptor(fwk.handle, state)
    node = fwk.handle.snapshot.get("node-a").clone()
    victims, _, status = preemptor.select_victims_on_node(state.clone(), pod, node, [])
    assert (victims, status.code, status.message()) == \
        ([], Code.UnschedulableAndUnresolvable, "No victims found on node node-a for preemptor pod p")
    quotas = infos(info("ns1", max_=res(memory=60), min_=res(memory=50), used=res(memory=50), pods=set()))
    state = prepared_state(fwk, make_pod("p", "ns1", 50, 0, 0, HIGH_PRIORITY, "p"), quotas)
    victims, _, status = Preemptor(fwk.handle, state).select_victims_on_node(
        state.clone(), make_pod("p", "ns1", 50, 0, 0, HIGH_PRIORITY, "p"), fwk.handle.snapshot.get("node-a").clone(),
        [])
    assert (victims, status.code, status.message()) == ([], Code.Unschedulable, "global quota max exceeded")


# --------------------------------------------------------------------------- TestPodEligibleToPreemptOthers

@pytest.mark.parametrize("pod, exist, nominated_status, quotas, expected", [
    pytest.param(st_pod("t1-p1", "t1-p1", priority=HIGH_PRIORITY, preemption_policy="Never"),
                 [make_pod("t1-p0", "ns1", 50, 10, 0, MID_PRIORITY, "t1-p1", "node-a")],
                 Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",)),
                 infos(info("ns1", max_=res(memory=150), min_=res(memory=50), used=res(memory=0))), False,
                 id="Pod with PreemptNever preemption policy"),
    pytest.param(st_pod("t1-p1", "t1-p1", priority=HIGH_PRIORITY, nominated="node-a"),
                 [make_pod("t1-p0", "ns1", 50, 10, 0, MID_PRIORITY, "t1-p1", "node-a")],
                 Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",)),
                 infos(info("ns1", max_=res(memory=150), min_=res(memory=50), used=res(memory=0))), True,
                 id="Pod with unschedulableAndUnresolvable nominated node"),
    pytest.param(st_pod("t1-p1", "t1-p1", "ns1", HIGH_PRIORITY, nominated="node-a"),
                 [st_pod("t1-p0", "t1-p0", "ns1", MID_PRIORITY, node="node-a", terminating=True)], None,
                 infos(info("ns1", max_=res(memory=150), min_=res(memory=50), used=res(memory=0))), False,
                 id="Pod with terminating pod in the same namespace"),
    pytest.param(st_pod("t1-p1", "t1-p1", "ns1", HIGH_PRIORITY, nominated="node-a"),
                 [st_pod("t1-p0", "t1-p0", "ns2", MID_PRIORITY, node="node-a", terminating=True)], None,
                 infos(info("ns1", max_=res(memory=150), min_=res(memory=50), used=res(memory=0)),
                       info("ns2", max_=res(memory=150), min_=res(memory=50), used=res(memory=100))), False,
                 id="Pod with terminating pod in another namespace"),
    pytest.param(st_pod("t1-p1", "t1-p1", "ns1", HIGH_PRIORITY, nominated="node-a"),
                 [st_pod("t1-p0", "t1-p0", "ns2", MID_PRIORITY, node="node-a", terminating=True)], None,
                 infos(), False, id="Pod without elasticQuotas and terminating pod exists in the same namespace"),
    pytest.param(st_pod("t1-p1", "t1-p1", "ns1", HIGH_PRIORITY, nominated="node-a"),
                 [st_pod("t1-p0", "t1-p0", "ns2", MID_PRIORITY, node="node-a", terminating=True)], None,
                 infos(info("ns2", max_=res(memory=150), min_=res(memory=50), used=res(memory=100))), True,
                 id="Pod without ElasticQuotas and terminating pod exists in another namespace"),
])
def test_pod_eligible_to_preempt_others(pod, exist, nominated_status, quotas, expected):
    fwk, _ = plugin_with(quotas, nodes=[make_node("node-a", MEM_150)], pods=exist, with_fit=True)
    state = prepared_state(fwk, pod, quotas)
    eligible, _ = Preemptor(fwk.handle, state).pod_eligible_to_preempt_others(pod, nominated_status)
    assert eligible is expected


# --------------------------------------------------------------------------- TestReserve / TestUnreserve

def test_reserve():
    quotas = infos(info("ns1", min_=res(memory=1000), max_=res(memory=2000), used=res(memory=300)))
    _, plugin = plugin_with(quotas)
    pods = [make_pod("t1-p1", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p1", "node-a"),
            make_pod("t1-p2", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p2", "node-a")]
    for pod in pods:
        assert plugin.reserve(CycleState(), pod, "node-a") is None
        ns1 = plugin.elastic_quota_infos["ns1"]
        assert (ns1.pods, ns1.used) == ({"t1-p1"}, res(memory=350, gpu=0))
    assert plugin.reserve(CycleState(), pods[0], "node-a") is None  # twice: counted once
    assert plugin.elastic_quota_infos["ns1"].used == res(memory=350, gpu=0)


def test_unreserve():
    quotas = infos(info("ns1", min_=res(memory=1000), max_=res(memory=2000), used=res(memory=300),
                        pods={"t1-p3", "t1-p4"}))
    _, plugin = plugin_with(quotas)
    steps = [(make_pod("t1-p1", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p1", "node-a"), {"t1-p3", "t1-p4"}, 300),
             (make_pod("t1-p2", "ns2", 50, 0, 0, MID_PRIORITY, "t1-p2", "node-a"), {"t1-p3", "t1-p4"}, 300),
             (make_pod("t1-p3", "ns1", 50, 0, 0, MID_PRIORITY, "t1-p3", "node-a"), {"t1-p4"}, 250)]
    for pod, pods, memory in steps:
        plugin.unreserve(CycleState(), pod, "node-a")
        ns1 = plugin.elastic_quota_infos["ns1"]
        assert (ns1.pods, ns1.used.memory) == (pods, memory)


def test_reserve_needs_a_uid():
    quotas = infos(info("ns1", min_=res(memory=1000), max_=res(memory=2000)))
    _, plugin = plugin_with(quotas)
    pod = attrs.evolve(make_pod("p", "ns1", 1, 0, 0, 0, "p"), uid="")
    status = plugin.reserve(CycleState(), pod, "node-a")
    assert status.code is Code.Error
    assert status.message() == "cannot get cache key for pod with empty UID"


# --------------------------------------------------------------------------- TestAdd/Update/DeleteElasticQuota

@pytest.mark.parametrize("max_, min_, expected_max, expected_min", [
    pytest.param(resource_list(100, 1000), resource_list(10, 100), res(100, 1000), res(10, 100), id="Add ElasticQuota"),
    pytest.param(None, resource_list(10, 100), res(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX),
                 res(10, 100), id="Add ElasticQuota without Max"),
    pytest.param(resource_list(100, 1000), None, res(100, 1000), res(0, 0, 0), id="Add ElasticQuota without Min"),
    pytest.param(None, None, res(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX), res(0, 0, 0),
                 id="Add ElasticQuota without Max and Min"),
])
def test_add_elastic_quota(max_, min_, expected_max, expected_min):
    _, plugin = plugin_with()
    plugin.add_elastic_quota(make_eq("ns1", "t1-eq1", max_, min_))
    got = plugin.elastic_quota_infos["ns1"]
    assert (got.namespace, got.pods, got.max, got.min, got.used) == ("ns1", set(), expected_max, expected_min, res())


def test_second_elastic_quota_in_a_namespace_is_ignored():
    _, plugin = plugin_with()
    plugin.add_elastic_quota(make_eq("ns1", "a", resource_list(100, 1000), None))
    plugin.add_elastic_quota(make_eq("ns1", "b", resource_list(5, 5), None))
    assert plugin.elastic_quota_infos["ns1"].max == res(100, 1000)


def test_update_elastic_quota():
    _, plugin = plugin_with()
    old = make_eq("ns1", "t1-eq1", resource_list(100, 1000), resource_list(10, 100))
    plugin.add_elastic_quota(old)
    plugin.elastic_quota_infos["ns1"].add_pod_if_not_present(make_pod("p", "ns1", 5, 5, 0, 0, "p", "node-a"))
    plugin.update_elastic_quota(old, make_eq("ns1", "t1-eq1", resource_list(300, 1000), resource_list(10, 100)))
    got = plugin.elastic_quota_infos["ns1"]
    assert (got.max, got.min, got.pods, got.used) == (res(300, 1000), res(10, 100), {"p"}, res(5, 5, gpu=0))


def test_delete_elastic_quota():
    _, plugin = plugin_with()
    eq = make_eq("ns1", "t1-eq1", resource_list(300, 1000), resource_list(10, 100))
    plugin.add_elastic_quota(eq)
    plugin.delete_elastic_quota(eq)
    assert plugin.elastic_quota_infos == {}


# --------------------------------------------------------------------------- TestAdd/Update/DeletePod

def _with_eq():
    _, plugin = plugin_with()
    plugin.add_elastic_quota(make_eq("ns1", "t1-eq1", resource_list(100, 1000), resource_list(10, 100)))
    return plugin


def test_add_pod():
    plugin = _with_eq()
    for i in (1, 2, 3):
        plugin.add_pod(make_pod(f"t1-p{i}", "ns1", 50, 10, 0, MID_PRIORITY, f"t1-p{i}", "node-a"))
    got = plugin.elastic_quota_infos["ns1"]
    assert (got.pods, got.used) == ({"t1-p1", "t1-p2", "t1-p3"}, res(30, 150, gpu=0))


@pytest.mark.parametrize("old_phase, new_phase, pods, used", [
    pytest.param("Succeeded", "Running", {"t1-p1"}, res(30, 100, gpu=0), id="PodSucceeded and PodRunning"),
    pytest.param("Pending", "Failed", set(), res(0, 0, gpu=0), id="PodPending and PodFailed"),
])
def test_update_pod(old_phase, new_phase, pods, used):
    plugin = _with_eq()
    old = make_pod("t1-p1", "ns1", 100, 30, 0, MID_PRIORITY, "t1-p1", "node-a", phase=old_phase)
    new = make_pod("t1-p1", "ns1", 100, 30, 0, HIGH_PRIORITY, "t1-p1", "node-a", phase=new_phase)
    plugin.add_pod(old)
    plugin.update_pod(old, new)
    got = plugin.elastic_quota_infos["ns1"]
    assert (got.pods, got.used) == (pods, used)


@pytest.mark.parametrize("delete, pods, used", [
    pytest.param(["t1-p1", "t1-p2"], set(), res(0, 0, gpu=0), id="Delete All Pods"),
    pytest.param(["t1-p1"], {"t1-p2"}, res(30, 100, gpu=0), id="Delete one Pod"),
])
def test_delete_pod(delete, pods, used):
    plugin = _with_eq()
    existing = {f"t1-p{i}": make_pod(f"t1-p{i}", "ns1", 100, 30, 0, MID_PRIORITY, f"t1-p{i}", "node-a") for i in (1, 2)}
    for pod in existing.values():
        plugin.add_pod(pod)
    for name in delete:
        plugin.delete_pod(existing[name])
    got = plugin.elastic_quota_infos["ns1"]
    assert (got.pods, got.used) == (pods, used)


def test_follows_quotas_and_assigned_pods_through_handle_subscribe():
    """Upstream's informer event handlers: ElasticQuota add/update/delete, and assigned pods only
    (a filtering handler), here through ``handle.subscribe`` on the embedded cluster."""
    from kschedfw.cluster.memory import MemoryCluster

    cluster = MemoryCluster()
    cluster.create(make_node("node-a", {"cpu": "10", "memory": "1000"}))
    cluster.deliver()
    plugin = CapacityScheduling({}, Handle(backend=cluster))
    cluster.create(make_eq("ns1", "q", resource_list(100, 1000), None))
    cluster.deliver()
    assert plugin.elastic_quota_infos["ns1"].max == res(100, 1000)
    cluster.update(make_eq("ns1", "q", resource_list(300, 1000), None))
    cluster.deliver()
    assert plugin.elastic_quota_infos["ns1"].max == res(300, 1000)
    pending = cluster.create(make_pod("p", "ns1", 50, 10, 0, 0, "p"))
    cluster.deliver()
    assert plugin.elastic_quota_infos["ns1"].pods == set()  # not assigned: filtered out
    cluster.bind(pending, "node-a")
    cluster.deliver()
    assert (plugin.elastic_quota_infos["ns1"].pods, plugin.elastic_quota_infos["ns1"].used) == ({"p"}, res(10, 50, gpu=0))
    cluster.remove("Pod", "p", "ns1")
    cluster.deliver()
    assert plugin.elastic_quota_infos["ns1"].pods == set()
    cluster.remove("ElasticQuota", "q", "ns1")
    cluster.deliver()
    assert plugin.elastic_quota_infos == {}


def test_add_pod_lists_the_quota_when_unknown():
    """An assigned pod of a namespace whose quota the plugin has not seen yet reads it from the lister."""
    class Lister:
        def get(self, kind, name, namespace=""):
            return None

        def list(self, kind, namespace=None):
            return [make_eq("ns1", "q", resource_list(100, 1000), None)] if kind == "ElasticQuota" and \
                namespace in (None, "ns1") else []

    plugin = CapacityScheduling({}, Handle(lister=Lister()))
    assert plugin.elastic_quota_infos == {"ns1": plugin.elastic_quota_infos["ns1"]}  # listed at start
    plugin.elastic_quota_infos.clear()
    plugin.add_pod(make_pod("p", "ns1", 10, 10, 0, 0, "p", "node-a"))
    assert plugin.elastic_quota_infos["ns1"].used == res(10, 10, gpu=0)
    plugin.add_pod(make_pod("x", "ns9", 10, 10, 0, 0, "x", "node-a"))
    assert "ns9" not in plugin.elastic_quota_infos


# --------------------------------------------------------------------------- extensions, state

def test_add_and_remove_pod_extensions_change_the_cycle_snapshot_only():
    quotas = infos(info("ns1", min_=res(memory=100), max_=res(memory=200)))
    fwk, plugin = plugin_with(quotas, nodes=[make_node("node-a", MEM_150)])
    pod = make_pod("p", "ns1", 10, 0, 0, 0, "p")
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    other = make_pod("o", "ns1", 50, 0, 0, 0, "o", "node-a")
    node = fwk.handle.snapshot.get("node-a")
    copy = state.clone()
    assert fwk.run_pre_filter_extension_add_pod(copy, pod, other, node) is None
    assert copy.read(ELASTIC_QUOTA_SNAPSHOT_KEY).elastic_quota_infos["ns1"].used.memory == 50
    assert state.read(ELASTIC_QUOTA_SNAPSHOT_KEY).elastic_quota_infos["ns1"].used.memory == 0
    assert plugin.elastic_quota_infos["ns1"].used.memory == 0
    assert fwk.run_pre_filter_extension_remove_pod(copy, pod, other, node) is None
    assert copy.read(ELASTIC_QUOTA_SNAPSHOT_KEY).elastic_quota_infos["ns1"].used.memory == 0
    assert plugin.pre_filter_add_pod(CycleState(), pod, other, node).code is Code.Error  # no PreFilter state


def test_no_args():
    assert CapacityScheduling.validate_args({}) == []
    with pytest.raises(ValueError):
        CapacityScheduling({"x": 1}, Handle())


# --------------------------------------------------------------------------- queueing hints

def test_events_and_hints():
    _, plugin = plugin_with()
    plugin.add_elastic_quota(make_eq("ns1", "q", resource_list(100, 1000), resource_list(10, 100)))
    events = {(str(e.event.resource.value if hasattr(e.event.resource, "value") else e.event.resource),
               e.event.action_type): e.queueing_hint_fn for e in plugin.events_to_register()}
    assert set(events) == {("Pod", ActionType.Delete), ("ElasticQuota", ActionType.Add),
                           ("ElasticQuota", ActionType.Update), ("ElasticQuota", ActionType.Delete),
                           ("Node", ActionType.Add)}
    waiting = make_pod("w", "ns1", 10, 10, 0, 0, "w")
    on_delete = events[("Pod", ActionType.Delete)]
    assert on_delete(waiting, make_pod("d", "ns1", 1, 1, 0, 0, "d", "node-a"), None) is QueueingHint.Queue
    assert on_delete(waiting, make_pod("d", "nsX", 1, 1, 0, 0, "d", "node-a"), None) is QueueingHint.QueueSkip
    on_update = events[("ElasticQuota", ActionType.Update)]
    old = make_eq("ns1", "q", resource_list(100, 1000), resource_list(10, 100))
    assert on_update(waiting, old, make_eq("ns1", "q", resource_list(200, 1000), resource_list(10, 100))) \
        is QueueingHint.Queue  # max raised in the pod's namespace
    assert on_update(waiting, old, make_eq("ns1", "q", resource_list(50, 1000), resource_list(10, 100))) \
        is QueueingHint.QueueSkip  # lowered
    other_old = make_eq("ns2", "q", resource_list(100, 1000), resource_list(10, 100))
    assert on_update(waiting, other_old, make_eq("ns2", "q", resource_list(200, 1000), resource_list(10, 100))) \
        is QueueingHint.QueueSkip  # another namespace's max
    assert on_update(waiting, other_old, make_eq("ns2", "q", resource_list(100, 1000), resource_list(20, 100))) \
        is QueueingHint.Queue  # a larger min anywhere raises the sum of minimums
    assert on_update(waiting, old, make_eq("ns1", "q", resource_list(100, 1000), resource_list(10, 100))) \
        is QueueingHint.QueueSkip  # no change
    assert events[("ElasticQuota", ActionType.Add)] is None
    assert events[("Node", ActionType.Add)] is None
    assert ClusterEvent("ElasticQuota", ActionType.Add).label == "ElasticQuotaAdd"
