"""GangScheduling as upstream's gangscheduling_test.go states it: its queueing hints queue a pod
for an added pod or PodGroup of its own group only; PreEnqueue holds a gang pod until its
PodGroup exists and minCount of its pods are known; Permit makes it wait until minCount pods of
the gang are assumed or bound, activating the rest of the gang meanwhile, and the pod that
completes the quorum allows every waiting one, reading the snapshot inside a pod-group cycle
and the cache outside one."""

from __future__ import annotations

import pytest

from kschedfw.api.workload import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from kschedfw.cache.cache import Cache
from kschedfw.framework.handle import Handle
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import QueueingHint
from kschedfw.fwk.status import Code, Status
from kschedfw.plugins.gangscheduling import PERMIT_TIMEOUT_SECONDS, GangScheduling
from kschedfw.testing.builders import make_pod
from tests.plugins.fakes import FakeLister


def member(name, group, *, namespace="ns1"):
    return make_pod(name, uid=name, namespace=namespace, schedulingGroup={"podGroupName": group})


def gang(name, min_count, *, namespace="ns1"):
    return PodGroup(name=name, namespace=namespace,
                    scheduling_policy=PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count=min_count)))


def basic(name, *, namespace="ns1"):
    return PodGroup(name=name, namespace=namespace, scheduling_policy=PodGroupSchedulingPolicy(basic=True))


def plugin(*objects, **facets):
    return GangScheduling({}, Handle(lister=FakeLister(*objects), **facets))


@pytest.mark.parametrize("name,pod,added,hint", [
    ("add a newPod which matches the pod's scheduling group",
     member("p", "pg", namespace="default"), member("x", "pg", namespace="default"), QueueingHint.Queue),
    ("add a newPod which doesn't match the pod's namespace",
     member("p", "pg", namespace="default"), member("x", "pg", namespace="foo"), QueueingHint.QueueSkip),
    ("add a newPod which doesn't match the pod's pod group name",
     member("p", "pg1", namespace="default"), member("x", "pg2", namespace="default"), QueueingHint.QueueSkip),
])
def test_is_schedulable_after_pod_added(name, pod, added, hint):
    assert plugin().is_schedulable_after_pod_added(pod, None, added) is hint


@pytest.mark.parametrize("name,pod,added,hint", [
    ("add a pod group which matches the pod's pod group name",
     member("p", "pg", namespace="default"), gang("pg", 1, namespace="default"), QueueingHint.Queue),
    ("add a pod group which doesn't match the pod's scheduling group name",
     member("p", "pg1", namespace="default"), gang("pg2", 1, namespace="default"), QueueingHint.QueueSkip),
    ("add a pod group which doesn't match the pod's scheduling group namespace",
     member("p", "pg", namespace="ns1"), gang("pg", 1, namespace="ns2"), QueueingHint.QueueSkip),
])
def test_is_schedulable_after_pod_group_added(name, pod, added, hint):
    assert plugin().is_schedulable_after_pod_group_added(pod, None, added) is hint


class WaitingPod:
    """A pod held at Permit that records who allowed it."""

    def __init__(self, pod):
        self.pod = pod
        self.allowed_by = []

    def get_pod(self):
        return self.pod

    def get_pending_plugins(self):
        return ["GangScheduling"]

    def allow(self, plugin_name):
        self.allowed_by.append(plugin_name)

    def reject(self, plugin_name, message):
        raise AssertionError("GangScheduling never rejects a waiting pod")

    def preempt(self, plugin_name, message):
        return False


PG1, PG2, PG3 = gang("pg1", 3), gang("pg2", 4), basic("pg3")
P1, P2, P3 = member("p1", "pg1"), member("p2", "pg1"), member("p3", "pg1")
P4, P5 = member("p4", "pg2"), member("p5", "pg2")
BASIC_POD = member("basic-pod", "pg3")
NON_GANG = make_pod("non-gang", uid="non-gang", namespace="ns1")

FLOW = [
    # name, pod, initial pods, pod groups, pods waiting on permit, in a pod-group cycle,
    # PreEnqueue, Permit, activated, allowed (of the waiting pods)
    ("non-gang pod succeeds immediately", NON_GANG, [], [PG1, PG2, PG3], [], False, None, None, [], []),
    ("basic policy pod succeeds immediately", BASIC_POD, [], [PG1, PG2, PG3], [], False, None, None, [], []),
    ("gang pod fails PreEnqueue when pod group is not yet created", P1, [P2, P3, P4, P5], [], [], False,
     Status.unresolvable('waiting for pods\'s pod group "pg1" to appear in scheduling queue'), None, [], []),
    ("gang pod fails PreEnqueue when quorum is not met", P1, [P2, P4, P5], [PG1, PG2], [], False,
     Status.unresolvable("waiting for minCount pods from a gang to appear in scheduling queue"), None, [], []),
    ("gang pod passes PreEnqueue, but waits at Permit", P1, [P2, P3, P4, P5], [PG1, PG2], [P2, P4, P5], False,
     None, Status.wait("waiting for minCount pods from a gang to be scheduled"), ["p3"], []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", P1, [P2, P3, P4, P5],
     [PG1, PG2], [P2, P3, P4, P5], False, None, None, [], ["p2", "p3"]),
    ("final gang pod arrives at Permit during pod group scheduling cycle", P1, [P2, P3, P4, P5],
     [PG1, PG2], [P2, P3, P4, P5], True, None, None, [], ["p2", "p3"]),
]


@pytest.mark.parametrize("name,pod,initial,groups,waiting,group_cycle,want_pre_enqueue,want_permit,"
                         "want_activated,want_allowed", FLOW, ids=[row[0] for row in FLOW])
def test_gang_scheduling_flow(name, pod, initial, groups, waiting, group_cycle, want_pre_enqueue,
                              want_permit, want_activated, want_allowed):
    cache = Cache()
    activated = []
    waiting_pods = {}
    pl = plugin(*groups, snapshot=cache.snapshot, pod_group_manager=cache, waiting_pods=waiting_pods,
                activate=activated.extend)
    for p in initial:
        cache.add_pod_group_member(p)
    cache.add_pod_group_member(pod)

    assert pl.pre_enqueue(pod) == want_pre_enqueue
    if want_pre_enqueue is not None:
        return

    # Other pods of the gangs have reached Permit and wait there.
    for p in waiting:
        assumed = p.with_node("some-node")
        cache.assume_pod(assumed)
        status, timeout = pl.permit(CycleState(), assumed, "some-node")
        assert status is not None and status.code is Code.Wait, p.name
        assert timeout == PERMIT_TIMEOUT_SECONDS
        waiting_pods[p.uid] = WaitingPod(assumed)
    activated.clear()

    state = CycleState()
    assumed = pod.with_node("some-node")
    if group_cycle:
        # The group's cycle takes its snapshot once the waiting pods are assumed, and assumes
        # its own pods there only.
        state.set_pod_group_scheduling_cycle(state)
        snapshot = cache.update_snapshot()
        if assumed.scheduling_group is not None:
            snapshot.pod_group_states().get(pod.namespace, "pg1").assume_pod(assumed)
    else:
        cache.assume_pod(assumed)
    status, timeout = pl.permit(state, assumed, "some-node")
    assert status == want_permit
    assert [p.name for p in activated] == want_activated
    assert sorted(uid for uid, wp in waiting_pods.items() if wp.allowed_by == ["GangScheduling"]) == want_allowed
    assert all(wp.allowed_by in ([], ["GangScheduling"]) for wp in waiting_pods.values())


def test_permit_is_an_error_when_the_pod_group_is_gone():
    """Upstream retries the pod (an Error) when its PodGroup was deleted after PreEnqueue."""
    status, timeout = plugin().permit(CycleState(), P1.with_node("n"), "n")
    assert status is not None and status.code is Code.Error and timeout == 0
    assert status.message() == 'failed to get podGroup ns1/pg1: podgroup.scheduling.k8s.io "pg1" not found'
