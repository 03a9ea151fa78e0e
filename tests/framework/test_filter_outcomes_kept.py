"""With fast paths on, when every Filter plugin of the cycle gives a verdict key, the Filter
search keeps each node's outcome per key: a pod with the same keys on an unchanged node (the same
NodeInfo, generation and node object) gets the kept outcome without its plugins running, and a
changed node runs them again. Whatever is kept, the search returns what the plain search
returns: the same feasible nodes, rejections and first error, in visiting order."""

from __future__ import annotations

import attrs

from kschedfw import Code, CycleState, Status, hookimpl
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing import framework_for, make_node, make_pod


def node_info(name):
    return NodeInfo(node=make_node(name, allocatable={"cpu": "4", "pods": "10"}))


def by_label(node_info):
    """A node's fate is its label ``fate``: fit, rejected or error."""
    fate = node_info.node.labels.get("fate", "fit")
    if fate == "rejected":
        return Status.unschedulable("labelled rejected")
    if fate == "error":
        return Status.as_status("boom")
    return None


class Counted:
    """Filters by label and counts the nodes it was asked about; its verdict reads only the node."""

    name = "Counted"
    asked: list[str] = []

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        Counted.asked.append(node_info.name)
        return by_label(node_info)

    def filter_verdict_key(self, state, pod):
        return "same for every pod"


class Unkeyed(Counted):
    """The same Filter without a verdict key: nothing may be kept for it."""

    name = "Unkeyed"

    @hookimpl
    def filter(self, state, pod, node_info):
        Counted.asked.append(node_info.name)
        return by_label(node_info)

    filter_verdict_key = None  # type: ignore[assignment]


def relabel(ni, fate):
    """The node updated as the cache updates one: a new node object, the generation bumped."""
    ni.node = attrs.evolve(ni.node, labels={**ni.node.labels, "fate": fate})
    ni.generation += 1


def search(fwk, nodes, start=0, to_find=100):
    Counted.asked = []
    feasible, rejected, failure = fwk.filter_nodes(CycleState(), make_pod("p"), nodes, start, to_find)
    return ([ni.name for ni in feasible], [(ni.name, st.code, st.plugin, st.message()) for ni, st in rejected],
            None if failure is None else (failure.code, failure.message()))


def test_a_replica_reads_unchanged_nodes_outcomes_and_runs_the_plugins_on_changed_ones():
    fwk = framework_for([Counted])
    nodes = [node_info(f"n{i}") for i in range(40)]
    relabel(nodes[5], "rejected")
    first = search(fwk, nodes)
    assert len(Counted.asked) == 40
    assert first[1] == [("n5", Code.Unschedulable, "Counted", "labelled rejected")]
    assert search(fwk, nodes) == first and Counted.asked == []  # nothing changed: nothing asked
    relabel(nodes[7], "rejected")
    relabel(nodes[5], "fit")
    after = search(fwk, nodes)
    assert sorted(Counted.asked) == ["n5", "n7"]
    assert after[1] == [("n7", Code.Unschedulable, "Counted", "labelled rejected")]
    assert "n5" in after[0] and "n7" not in after[0]


def test_the_kept_search_equals_the_plain_search_round_the_list_and_at_its_first_error():
    kept, plain = framework_for([Counted]), framework_for([Counted], fast_paths=False)
    nodes = [node_info(f"n{i}") for i in range(40)]
    for i in (3, 17, 30):
        relabel(nodes[i], "rejected")
    for start, to_find in ((0, 100), (25, 10), (35, 12), (10, 1)):
        search(kept, nodes, start, to_find)  # keep the outcomes, then read them
        assert search(kept, nodes, start, to_find) == search(plain, nodes, start, to_find)
    relabel(nodes[20], "error")
    relabel(nodes[12], "rejected")
    for start in (0, 15, 21):
        assert search(kept, nodes, start, 100) == search(plain, nodes, start, 100)
    assert search(kept, nodes, 15, 100)[2] == (Code.Error, search(plain, nodes, 15, 100)[2][1])


def test_nothing_is_kept_when_a_plugin_gives_no_verdict_key_or_fast_paths_are_off():
    nodes = [node_info(f"n{i}") for i in range(40)]
    for fwk in (framework_for([Counted, Unkeyed]), framework_for([Counted], fast_paths=False)):
        search(fwk, nodes)
        search(fwk, nodes)
        assert len(Counted.asked) >= 40
