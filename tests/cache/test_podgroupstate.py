"""The cache's PodGroup states, as upstream's podgroupstate_test.go states them: a pod is
unscheduled, assumed or assigned; assume and forget move it between the first two (a bound pod
stays assigned, an unknown one is ignored); a snapshot is a copy neither side's changes reach.
And the cache keeps them from its pod events, its assume and forget, into each cycle's snapshot."""

from __future__ import annotations

import pytest

from kschedfw.cache.cache import Cache
from kschedfw.cache.podgroupstate import PodGroupState, PodGroupStates
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.interface import NotFound
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing.builders import make_node, make_pod


def member(name, group="pg1", *, namespace="ns1", node=""):
    return make_pod(name, uid=name, namespace=namespace, node_name=node,
                    schedulingGroup={"podGroupName": group})


def test_assume_then_forget_moves_a_pod_between_unscheduled_and_assumed():
    pgs = PodGroupState()
    pod = member("p1")
    pgs.add_pod(pod)
    assert "p1" not in pgs.assumed_pods() and "p1" in pgs.unscheduled_pods().keys()
    pgs.assume_pod(pod)
    assert "p1" in pgs.assumed_pods() and pgs.unscheduled_pods() == {}
    pgs.forget_pod(pod.uid)
    assert "p1" not in pgs.assumed_pods() and list(pgs.unscheduled_pods()) == ["p1"]


def test_a_snapshot_is_a_copy_with_the_same_generation():
    pgs = PodGroupState()
    pod1, pod2 = member("p1", "pg"), member("p2", "pg")
    pgs.add_pod(pod1)
    pgs.add_pod(pod2)
    pgs.assume_pod(pod2)
    snap = pgs.snapshot()
    assert snap.generation == pgs.generation
    assert snap.all_pods() == {"p1", "p2"}
    assert "p1" in snap.unscheduled_pods()
    assert "p2" in snap.assumed_pods()
    snap.assume_pod(pod1)  # the copy's change does not reach the original
    assert "p1" not in pgs.assumed_pods()
    pgs.add_pod(member("p3", "pg"))  # nor the original's the copy
    assert "p3" not in snap.all_pods()


def test_pod_counts_through_assume_and_forget():
    pgs = PodGroupState()
    pod1, pod2, pod3, pod4 = member("p1"), member("p2"), member("p3", node="node1"), member("p4")
    assert (pgs.all_pods_count(), pgs.scheduled_pods_count()) == (0, 0)
    for pod in (pod1, pod2, pod3):
        pgs.add_pod(pod)
    assert (pgs.all_pods_count(), pgs.scheduled_pods_count()) == (3, 1)
    steps = [
        ("assuming an unscheduled pod makes it scheduled", lambda: pgs.assume_pod(pod1), 2),
        ("assuming a bound pod changes nothing", lambda: pgs.assume_pod(pod3), 2),
        ("assuming a pod the group does not hold changes nothing", lambda: pgs.assume_pod(pod4), 2),
        ("forgetting a bound pod changes nothing", lambda: pgs.forget_pod(pod3.uid), 2),
        ("forgetting an assumed pod makes it unscheduled", lambda: pgs.forget_pod(pod1.uid), 1),
        ("forgetting a pod not assumed changes nothing", lambda: pgs.forget_pod(pod1.uid), 1),
        ("assuming again makes it scheduled again", lambda: pgs.assume_pod(pod2), 2),
        ("forgetting a pod the group does not hold changes nothing", lambda: pgs.forget_pod(pod4.uid), 2),
    ]
    for what, step, scheduled in steps:
        step()
        assert (pgs.all_pods_count(), pgs.scheduled_pods_count()) == (3, scheduled), what


def test_scheduled_pods_are_the_assigned_then_the_assumed_ones_as_assumed():
    pgs = PodGroupState()
    unscheduled, assumed, assigned = member("p1", "pg", namespace="ns"), member("p2", "pg", namespace="ns"), \
        member("p3", "pg", namespace="ns", node="node1")
    for pod in (assigned, unscheduled, assumed):
        pgs.add_pod(pod)
    assumed_on_node = assumed.with_node("node2")
    pgs.assume_pod(assumed_on_node)
    scheduled = pgs.scheduled_pods()
    snapshot = pgs.snapshot()
    pgs.assume_pod(unscheduled)
    assert scheduled == [assigned, assumed_on_node]
    assert snapshot.scheduled_pods() == [assigned, assumed_on_node]


def test_a_group_none_of_whose_pods_is_known_is_not_found():
    with pytest.raises(NotFound, match="pod group state not found for pod group ns1/pg1"):
        PodGroupStates().get("ns1", "pg1")


# ------------------------------------------------------------------ the cache keeps them

def test_the_cache_tracks_members_through_their_lifecycle():
    """Unscheduled members come from the event handlers; assume, forget, the binding's
    confirmation and deletion move them, and a group with no pods left is gone."""
    cache = Cache()
    cache.add_node(make_node("node1"))
    p1, p2 = member("p1"), member("p2")
    cache.add_pod_group_member(p1)
    cache.add_pod_group_member(p2)
    states = cache.pod_group_states()
    state = states.get("ns1", "pg1")
    assert (state.all_pods_count(), state.scheduled_pods_count()) == (2, 0)
    cache.assume_pod(p1.with_node("node1"))
    assert state.assumed_pods() == {"p1"} and list(state.unscheduled_pods()) == ["p2"]
    cache.forget_pod(p1.with_node("node1"))
    assert state.assumed_pods() == set() and sorted(state.unscheduled_pods()) == ["p1", "p2"]
    cache.assume_pod(p1.with_node("node1"))
    cache.add_pod(p1.with_node("node1"))  # the binding confirmed: assigned
    state = states.get("ns1", "pg1")
    assert state.assigned_pods() == {"p1"} and state.assumed_pods() == set()
    assert state.scheduled_pods_count() == 1 and state.all_pods_count() == 2
    cache.remove_pod(p1.with_node("node1"))
    cache.remove_pod_group_member(p2)
    with pytest.raises(NotFound):
        states.get("ns1", "pg1")


def test_a_pod_without_a_scheduling_group_is_in_no_group():
    cache = Cache()
    cache.add_node(make_node("node1"))
    cache.add_pod(make_pod("plain", uid="plain", node_name="node1"))
    cache.add_pod_group_member(make_pod("waiting", uid="waiting"))
    assert cache.pod_group_states().states == {}


def test_the_snapshot_copies_the_groups_that_changed_and_drops_those_gone():
    cache = Cache()
    cache.add_node(make_node("node1"))
    cache.add_pod_group_member(member("a1", "a"))
    cache.add_pod_group_member(member("b1", "b"))
    snapshot = cache.update_snapshot()
    kept = snapshot.pod_group_states().get("ns1", "a")
    assert kept is not cache.pod_group_states().get("ns1", "a")
    cache.add_pod_group_member(member("b2", "b"))
    cache.remove_pod_group_member(member("a1", "a"))
    snapshot = cache.update_snapshot()
    assert snapshot.pod_group_states().get("ns1", "b").all_pods_count() == 2
    with pytest.raises(NotFound):
        snapshot.pod_group_states().get("ns1", "a")
    b_state = snapshot.pod_group_states().get("ns1", "b")
    cache.update_snapshot()  # nothing changed: the copy is kept
    assert snapshot.pod_group_states().get("ns1", "b") is b_state
    b_state.assume_pod(member("b1", "b").with_node("node1"))  # a pod-group cycle's assume
    assert cache.pod_group_states().get("ns1", "b").assumed_pods() == set()


def test_a_snapshot_from_objects_holds_the_groups_of_its_pods_bound_or_not():
    snapshot = Snapshot.from_objects([make_node("node1")], [member("p1", node="node1"), member("p2"),
                                                           member("p3", node="elsewhere")])
    state = snapshot.pod_group_states().get("ns1", "pg1")
    assert state.assigned_pods() == {"p1", "p3"} and list(state.unscheduled_pods()) == ["p2"]


def test_a_snapshot_sees_every_change_since_the_last_copy_and_another_snapshot_every_group():
    """Only the groups changed since the last copy are copied into the cache's snapshot, yet
    each change (add, assume, forget, remove) reaches it; a table copied into for the first
    time gets every group."""
    cache = Cache()
    cache.add_node(make_node("node1"))
    for name, group in (("a1", "a"), ("b1", "b"), ("c1", "c")):
        cache.add_pod_group_member(member(name, group))
    snapshot = cache.update_snapshot()
    c_state = snapshot.pod_group_states().get("ns1", "c")
    cache.assume_pod(member("a1", "a").with_node("node1"))
    snapshot = cache.update_snapshot()
    assert snapshot.pod_group_states().get("ns1", "a").assumed_pods() == {"a1"}
    assert snapshot.pod_group_states().get("ns1", "c") is c_state  # unchanged: not copied again
    cache.forget_pod(member("a1", "a").with_node("node1"))
    cache.remove_pod_group_member(member("b1", "b"))
    snapshot = cache.update_snapshot()
    assert list(snapshot.pod_group_states().get("ns1", "a").unscheduled_pods()) == ["a1"]
    with pytest.raises(NotFound):
        snapshot.pod_group_states().get("ns1", "b")
    other = PodGroupStates()
    cache.pod_group_states().copy_into(other)
    assert sorted(other.states) == [("ns1", "a"), ("ns1", "c")]


def test_a_placement_narrows_the_candidates_not_what_plugins_list():
    """Upstream AssumePlacement: ListNodesInPlacement, GetNodeInPlacement and
    NumNodesInPlacement see only the placement's nodes, while List and Get (what plugins read)
    stay the whole cluster; ForgetPlacement makes every node a candidate again."""
    snapshot = Snapshot.from_objects([make_node(f"node{i}") for i in range(4)])
    whole = list(snapshot.node_infos())
    snapshot.assume_placement([whole[3], whole[1]])
    assert [ni.name for ni in snapshot.nodes_in_placement()] == ["node3", "node1"]
    assert snapshot.num_nodes_in_placement() == 2
    assert snapshot.get_in_placement("node0") is None and snapshot.get_in_placement("node1") is whole[1]
    assert [ni.name for ni in snapshot.named_in_placement({"node0", "node1", "node3"})] == ["node1", "node3"]
    assert snapshot.node_infos() == whole and len(snapshot) == 4
    assert snapshot.get("node0") is whole[0]
    assert [ni.name for ni in snapshot.named({"node0", "node1"})] == ["node0", "node1"]
    snapshot.forget_placement()
    assert snapshot.nodes_in_placement() == whole and snapshot.num_nodes_in_placement() == 4
    assert snapshot.get_in_placement("node0") is whole[0]
    assert [ni.name for ni in snapshot.named_in_placement({"node2"})] == ["node2"]


def test_a_placement_of_every_node_is_no_placement():
    """Upstream AssumePlacement: a placement with as many nodes as the snapshot is treated as
    none, so the candidates keep the snapshot's order, not the placement's."""
    snapshot = Snapshot.from_objects([make_node(f"node{i}") for i in range(3)])
    whole = list(snapshot.node_infos())
    snapshot.assume_placement([whole[2], whole[0], whole[1]])
    assert [ni.name for ni in snapshot.nodes_in_placement()] == ["node0", "node1", "node2"]
    assert snapshot.get_in_placement("node2") is whole[2]


@pytest.mark.parametrize("stranger, message", [
    (NodeInfo(node=make_node("node9")), "node node9 in placement is not present in snapshot"),
    (NodeInfo(node=make_node("node1")), "node node1 in placement is not the same instance as in the snapshot"),
])
def test_a_placement_with_a_node_the_snapshot_lacks_is_refused(stranger, message):
    """Upstream AssumePlacement: a node missing from the snapshot, or another NodeInfo under a
    snapshot node's name, is an error and leaves no placement assumed."""
    snapshot = Snapshot.from_objects([make_node(f"node{i}") for i in range(3)])
    whole = list(snapshot.node_infos())
    with pytest.raises(ValueError, match=message):
        snapshot.assume_placement([whole[0], stranger])
    assert snapshot.num_nodes_in_placement() == 3
