"""Port of upstream nodeports/node_ports_test.go (TestNodePorts, TestPreFilterDisabled,
Test_isSchedulableAfterPodDeleted, TestFits)."""

import pytest

from kschedfw import testing as kit
from kschedfw.api import parse_object
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeInfo
from kschedfw.plugins.nodeports import ERR_REASON, NodePorts, fits

_counter = iter(range(1_000_000))


def new_pod(host, *host_port_infos):
    """upstream newPod: "PROTO/IP/PORT" strings become host ports of one container."""
    ports = [(int(port), proto, ip) for proto, ip, port in (info.split("/") for info in host_port_infos)]
    return kit.make_pod(f"p{next(_counter)}", node_name=host, host_ports=ports)


def node_info(*pods):
    ni = NodeInfo()
    for p in pods:
        ni.add_pod(p)
    return ni


def init_container_pod(sidecar):
    c = kit.container("init-container", image="pause", host_ports=[8001], restart_policy="Always" if sidecar else None)
    return kit.make_pod("p", containers=[], init_containers=[c])


SKIP = (Code.Skip, "")
CONFLICT = (Code.Unschedulable, ERR_REASON)
EMPTY_POD = kit.make_pod("p", containers=[])


@pytest.mark.parametrize("pod,ni,want_pre_filter,want_filter", [
    pytest.param(EMPTY_POD, NodeInfo(), SKIP, None, id="skip filter"),
    pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), node_info(new_pod("m1", "UDP/127.0.0.1/9090")),
                 None, None, id="other port"),
    pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
                 None, CONFLICT, id="same udp port"),
    pytest.param(new_pod("m1", "TCP/127.0.0.1/8080"), node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
                 None, CONFLICT, id="same tcp port"),
    pytest.param(new_pod("m1", "TCP/127.0.0.1/8080"), node_info(new_pod("m1", "TCP/127.0.0.2/8080")),
                 None, None, id="different host ip"),
    pytest.param(new_pod("m1", "UDP/127.0.0.1/8080"), node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
                 None, None, id="different protocol"),
    pytest.param(new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
                 node_info(new_pod("m1", "UDP/127.0.0.1/8080")), None, CONFLICT, id="second udp port conflict"),
    pytest.param(new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
                 node_info(new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")), None, CONFLICT,
                 id="first tcp port conflict"),
    pytest.param(new_pod("m1", "TCP/0.0.0.0/8001"), node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
                 None, CONFLICT, id="first tcp port conflict due to 0.0.0.0 hostIP"),
    pytest.param(new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
                 node_info(new_pod("m1", "TCP/127.0.0.1/8001")), None, CONFLICT,
                 id="TCP hostPort conflict due to 0.0.0.0 hostIP"),
    pytest.param(new_pod("m1", "TCP/127.0.0.1/8001"), node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
                 None, CONFLICT, id="second tcp port conflict to 0.0.0.0 hostIP"),
    pytest.param(new_pod("m1", "UDP/127.0.0.1/8001"), node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
                 None, None, id="second different protocol"),
    pytest.param(new_pod("m1", "UDP/127.0.0.1/8001"), node_info(new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
                 None, CONFLICT, id="UDP hostPort conflict due to 0.0.0.0 hostIP"),
    pytest.param(init_container_pod(False), node_info(new_pod("m1", "TCP/0.0.0.0/8001")), SKIP, None,
                 id="non-sidecar initContainer using hostPort"),
    pytest.param(init_container_pod(True), node_info(new_pod("m1", "TCP/0.0.0.0/8001")), None, CONFLICT,
                 id="TCP hostPort conflict from sidecar initContainer"),
])
def test_node_ports(pod, ni, want_pre_filter, want_filter):
    pl = NodePorts({}, None)
    state = CycleState()
    result, status = pl.pre_filter(state, pod, None)
    assert result is None
    got = None if status is None else (status.code, status.message())
    assert got == want_pre_filter
    if status is not None and status.is_skip():
        return
    status = pl.filter(state, pod, ni)
    got = None if status is None else (status.code, status.message())
    assert got == want_filter


def test_empty_host_ip_and_protocol_default_to_wildcard_tcp():
    pl = NodePorts({}, None)
    pod = parse_object({"kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}]}})
    state = CycleState()
    pl.pre_filter(state, pod, None)
    assert pl.filter(state, pod, node_info(new_pod("m1", "TCP/10.1.1.1/80"))).code is Code.Unschedulable
    assert pl.filter(state, pod, node_info(new_pod("m1", "UDP/10.1.1.1/80"))) is None


def test_pre_filter_disabled():
    from kschedfw.api import Node
    pod = EMPTY_POD
    status = NodePorts({}, None).filter(CycleState(), pod, NodeInfo(node=Node(name="")))
    assert status.code is Code.Error
    assert status.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


def _hostport_pod(port, node=""):
    # st.MakePod().HostPort(p): a container with that host port (and the same container port).
    return kit.make_pod(f"p{next(_counter)}", node_name=node, host_ports=[port])


def _plain_pod(node=""):
    return kit.make_pod(f"p{next(_counter)}", node_name=node, containers=[])


@pytest.mark.parametrize("old,expected", [
    pytest.param("not-a-pod", TypeError, id="backoff-wrong-old-object"),
    pytest.param(_plain_pod(), QueueingHint.QueueSkip, id="skip-queue-on-unscheduled"),
    pytest.param(_plain_pod("fake-node"), QueueingHint.QueueSkip, id="skip-queue-on-non-hostport"),
    pytest.param(_hostport_pod(8081, "fake-node"), QueueingHint.QueueSkip, id="skip-queue-on-unrelated-hostport"),
    pytest.param(_hostport_pod(8080, "fake-node"), QueueingHint.Queue, id="queue-on-released-hostport"),
])
def test_is_schedulable_after_pod_deleted(old, expected):
    pl = NodePorts({}, None)
    pod = _hostport_pod(8080)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_pod_deleted(pod, old, None)
        return
    assert pl.is_schedulable_after_pod_deleted(pod, old, None) is expected


def test_deleted_nominated_pod_frees_ports():
    pl = NodePorts({}, None)
    nominated = _hostport_pod(8080).with_nominated_node("n1")
    assert pl.is_schedulable_after_pod_deleted(_hostport_pod(8080), nominated, None) is QueueingHint.Queue


def _existing(*infos):
    return node_info(new_pod("p1", *infos))


@pytest.mark.parametrize("pod,existing,expect", [
    pytest.param(new_pod("p", "TCP/127.0.0.1/80"), _existing("TCP/127.0.0.1/9090"), True,
                 id="non-conflicting ports"),
    pytest.param(new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
                 _existing("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"), True,
                 id="multiple non-conflicting ports"),
    pytest.param(new_pod("m1", "TCP/127.0.0.1/80"), _existing("UDP/127.0.0.1/80"), True,
                 id="same ports on different protocols"),
    pytest.param(new_pod("m1", "TCP/127.0.0.1/80"), _existing("TCP/127.0.0.1/80"), False, id="conflicting ports"),
    pytest.param(new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
                 _existing("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"), False,
                 id="multiple ports, some conflicting"),
])
def test_fits(pod, existing, expect):
    assert fits(pod, existing) is expect


def test_events_to_register():
    events = NodePorts({}, None).events_to_register()
    assert [e.event for e in events] == [ClusterEvent(EventResource.Pod, ActionType.Delete),
                                         ClusterEvent(EventResource.Node, ActionType.Add)]
    assert events[0].queueing_hint_fn is not None and events[1].queueing_hint_fn is None
