"""Unit tests for NodeLabelPreference: the hooks on their own, then a small simulation.

``kschedfw.testing`` builds a profile of exactly the plugin classes you give it, so a plugin can be
tested without installing anything: ``framework_for`` returns the runtime (call its ``run_*``
methods), ``simulate_with`` schedules objects on the embedded cluster, and ``make_node`` /
``make_pod`` build the objects from manifests as the scheduler reads them.
"""

from __future__ import annotations

import pytest

from kschedfw import Code, CycleState, QueueingHint
from kschedfw.cache.snapshot import Snapshot
from kschedfw.cluster.inputs.scenario import Step
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.testing import framework_for, make_node, make_pod, simulate_with
from kschedfw_example_plugin import NodeLabelPreference

ZONE = "topology.kubernetes.io/zone"


def node(name, zone=None):
    """A 2-cpu, 8Gi node, labelled with ``zone`` when given."""
    return make_node(name, zone=zone, cpu="2", memory="8Gi")


NODES = [node("a", "zone-a"), node("b", "zone-b"), node("c", "zone-c"), node("bare")]


def framework(**args):
    return framework_for([NodeLabelPreference], args={"NodeLabelPreference": args})


def test_normalized_scores_follow_the_order_of_preference():
    fwk = framework(preferredValues=["zone-a", "zone-b"])
    infos = Snapshot.from_objects(NODES).node_infos()
    scores, status = fwk.run_score_plugins(CycleState(), make_pod("p", cpu="1"), infos)
    assert status is None
    assert {s.name: s.total_score for s in scores} == {"a": 100, "b": 50, "c": 0, "bare": 0}


def test_no_preferred_value_present_scores_every_node_zero():
    fwk = framework(preferredValues=["zone-x"])
    scores, _ = fwk.run_score_plugins(CycleState(), make_pod("p", cpu="1"), Snapshot.from_objects(NODES).node_infos())
    assert {s.total_score for s in scores} == {0}


def test_filter_only_when_required():
    infos = {ni.name: ni for ni in Snapshot.from_objects(NODES).node_infos()}
    lenient = framework(preferredValues=["zone-a"])
    assert lenient.run_filter_plugins(CycleState(), make_pod("p", cpu="1"), infos["c"]) is None

    strict = framework(preferredValues=["zone-a"], requireMatch=True)
    assert strict.run_filter_plugins(CycleState(), make_pod("p", cpu="1"), infos["a"]) is None
    status = strict.run_filter_plugins(CycleState(), make_pod("p", cpu="1"), infos["bare"])
    assert status.code is Code.UnschedulableAndUnresolvable
    assert status.plugin == "NodeLabelPreference"


def test_queueing_hint_wakes_pods_only_for_preferred_nodes():
    plugin = NodeLabelPreference({"preferredValues": ["zone-a"], "requireMatch": True}, None)
    (registered,) = plugin.events_to_register()
    hint = registered.queueing_hint_fn
    assert hint(make_pod("p", cpu="1"), None, node("new", "zone-a")) is QueueingHint.Queue
    assert hint(make_pod("p", cpu="1"), None, node("new", "zone-z")) is QueueingHint.QueueSkip


@pytest.mark.parametrize("args, expected", [
    ({"labelKey": "", "preferredValues": []}, ["labelKey: Required value: a node label key is needed"]),
    ({"labelKey": "bad key!", "preferredValues": []},
     ['labelKey: Invalid value: "bad key!": must be a valid label key']),
    ({"labelKey": "zone", "preferredValues": ["a", "b", "a"]}, ['preferredValues[2]: Duplicate value: "a"']),
    ({"labelKey": "zone", "preferredValues": ["not valid"]},
     ['preferredValues[0]: Invalid value: "not valid": must be a valid label value']),
    ({"labelKey": "zone", "preferredValues": [], "requireMatch": True},
     ["requireMatch: Invalid value: true: needs at least one entry in preferredValues"]),
    ({"labelKey": "example.com/tier", "preferredValues": ["gold", "silver"], "requireMatch": True}, []),
])
def test_validate_args(args, expected):
    assert [str(e) for e in NodeLabelPreference.validate_args(args)] == expected


def test_pods_fill_preferred_zones_first():
    objects = [*NODES, *(make_pod(f"p{i}", cpu="1") for i in range(5))]
    result = simulate_with([PrioritySort, NodeResourcesFit, NodeLabelPreference, DefaultBinder], objects,
                           args={"NodeLabelPreference": {"labelKey": ZONE, "preferredValues": ["zone-b", "zone-a"]}},
                           weights={"NodeLabelPreference": 10})
    placed = sorted((p.node for p in result.pods if p.status == "Bound"))
    assert placed[:4] == ["a", "a", "b", "b"]  # both preferred nodes are full
    assert len(placed) == 5 and placed[4] in ("bare", "c")
    first_two = {p.key: p.node for p in result.pods if p.key in ("default/p0", "default/p1")}
    assert set(first_two.values()) == {"b"}  # the most preferred zone is used first


def test_required_match_leaves_pods_pending_when_preferred_nodes_are_full():
    objects = [*NODES, *(make_pod(f"p{i}", cpu="1") for i in range(3))]
    result = simulate_with([PrioritySort, NodeResourcesFit, NodeLabelPreference, DefaultBinder], objects,
                           args={"NodeLabelPreference": {"preferredValues": ["zone-a"], "requireMatch": True}})
    statuses = sorted(p.status for p in result.pods)
    assert statuses == ["Bound", "Bound", "Pending"]
    assert {p.node for p in result.pods if p.status == "Bound"} == {"a"}


def test_a_filtered_out_pod_is_retried_when_a_node_gets_a_preferred_label():
    """events_to_register at work: the Node/UpdateNodeLabel event wakes the pod, the hint agrees."""
    relabelled = node("c", "zone-a")
    result = simulate_with([PrioritySort, NodeResourcesFit, NodeLabelPreference, DefaultBinder],
                           [node("c", "zone-c"), make_pod("p", cpu="1")], [Step(10.0, "update", objects=(relabelled,))],
                           args={"NodeLabelPreference": {"preferredValues": ["zone-a"], "requireMatch": True}})
    (outcome,) = result.pods
    assert (outcome.status, outcome.node) == ("Bound", "c")
    assert result.end_time == 10.0
