"""Framework.filter_nodes, the cycle's Filter loop, gives every node what run_filter_plugins (or,
with nominated pods, upstream's two-pass RunFilterPluginsWithNominatedPods) gives it."""

from __future__ import annotations

from kschedfw import Code, CycleState, Status, hookimpl
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import NodeInfo, NominatingInfo, NominatingMode
from kschedfw.queue.nominator import Nominator
from kschedfw.testing import framework_for, make_node, make_pod


def node_info(name):
    return NodeInfo(node=make_node(name, allocatable={"cpu": "4", "pods": "10"}))


def plugin(name, **hooks):
    namespace = {"name": name, "__init__": lambda self, args, handle: None}
    for hook, fn in hooks.items():
        namespace[hook] = hookimpl(fn)
    return type(name, (), namespace)


def by_node(self, state, pod, node_info):
    """Each node's fate is in its name: fit, rejected, error, raise or a wrong return type."""
    kind = node_info.name.split("-")[0]
    if kind == "rejected":
        return Status.unschedulable("no")
    if kind == "pending":
        return Status(Code.Pending, ("later",))
    if kind == "success":
        return Status(Code.Success)
    if kind == "error":
        return Status.as_status("boom")
    if kind == "raises":
        raise RuntimeError("kaboom")
    if kind == "wrong":
        return "no"
    return None


def passes(self, state, pod, node_info):
    return None


def test_each_node_gets_what_run_filter_plugins_gives_it():
    # the faulty plugin runs second: its statuses must name it, not the one before
    fwk = framework_for([plugin("Passes", filter=passes), plugin("ByNode", filter=by_node)])
    pod = make_pod("p")
    for broken in ("error", "raises", "wrong"):
        nodes = [node_info(n) for n in ("fits-1", "rejected-1", "success-1", "pending-1", f"{broken}-1", "fits-2")]
        feasible, rejected, failure = fwk.filter_nodes(CycleState(), pod, nodes, 0, 10)
        # the first error stops the search, as upstream's findNodesThatPassFilters
        assert [ni.name for ni in feasible] == ["fits-1", "success-1"]
        expected = fwk.run_filter_plugins(CycleState(), pod, nodes[4])
        assert failure.code is Code.Error and failure.message() == expected.message() and failure.plugin == "ByNode"
        assert [(ni.name, st.code, st.plugin) for ni, st in rejected] == [
            ("rejected-1", Code.Unschedulable, "ByNode"), ("pending-1", Code.Pending, "ByNode")]


def test_search_starts_at_start_wraps_round_and_stops_at_to_find():
    fwk = framework_for([plugin("ByNode", filter=by_node)])
    nodes = [node_info(n) for n in ("fits-0", "rejected-1", "fits-2", "fits-3", "fits-4")]
    feasible, rejected, failure = fwk.filter_nodes(CycleState(), make_pod("p"), nodes, 3, 3)
    assert [ni.name for ni in feasible] == ["fits-3", "fits-4", "fits-0"]
    assert rejected == [] and failure is None


def counting_pods(limit):
    """A Filter that rejects a node holding more than ``limit`` pods."""
    def filter(self, state, pod, node_info):
        names = " ".join(p.name for p in node_info.pods)
        return Status.unschedulable(names) if len(node_info.pods) > limit else None
    return filter


def nominated_setup(*classes):
    nominator = Nominator()
    fwk = framework_for(list(classes), handle=Handle.factory(nominator=nominator))
    return fwk, nominator


def nominate(nominator, name, node, priority=10):
    pod = make_pod(name, priority=priority)
    nominator.add_nominated_pod(pod, NominatingInfo(node, NominatingMode.Override))
    return pod


def test_nominated_pods_are_added_and_a_changed_node_or_nomination_is_seen():
    fwk, nominator = nominated_setup(plugin("AtMostOne", filter=counting_pods(1)))
    n1 = node_info("n1")
    n1.add_pod(make_pod("running", node_name="n1"))
    pod = make_pod("p", priority=10)

    def verdict():
        _, rejected, failure = fwk.filter_nodes(CycleState(), pod, [n1], 0, 1, nominator.nominated_node_names())
        assert failure is None
        return [st.message() for _, st in rejected]

    assert verdict() == []
    nominate(nominator, "q", "n1")
    # upstream: equal-priority pods nominated to the node count as if they ran there
    assert verdict() == ["running q"] == verdict()
    n1.remove_pod(n1.pods[0])  # the snapshot's node changes (the cache bumps its generation)
    assert verdict() == []
    nominate(nominator, "r", "n1")
    assert verdict() == ["q r"]
    nominator.delete_nominated_pod_if_exists(make_pod("q", priority=10))
    nominate(nominator, "s", "n1")
    assert verdict() == ["r s"]
    nominator.delete_nominated_pod_if_exists(make_pod("s", priority=10))
    nominate(nominator, "low", "n1", priority=1)  # lower priority pods are not added
    assert verdict() == []


def test_an_add_pod_extension_sees_every_nominated_pod_on_its_own_state_every_time():
    added = []

    def pre_filter_add_pod(self, state, pod_to_schedule, pod_to_add, node_info):
        added.append((pod_to_add.name, len(node_info.pods)))
        state.write("added", state.get("added", 0) + 1)

    def filter(self, state, pod, node_info):
        return Status.unschedulable(f"added {state.get('added', 0)}") if node_info.pods else None

    def pre_filter(self, state, pod, nodes):
        return None

    fwk, nominator = nominated_setup(plugin("Ext", pre_filter=pre_filter, pre_filter_add_pod=pre_filter_add_pod,
                                            filter=filter))
    nominate(nominator, "q", "n1")
    n1 = node_info("n1")
    state = CycleState()
    for _ in range(2):
        _, rejected, _ = fwk.filter_nodes(state, make_pod("p", priority=10), [n1], 0, 1,
                                          nominator.nominated_node_names())
        assert [st.message() for _, st in rejected] == ["added 1"]
    assert added == [("q", 1), ("q", 1)] and state.get("added") is None
