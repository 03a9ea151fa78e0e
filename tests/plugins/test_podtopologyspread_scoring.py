"""PodTopologySpread PreScore / Score / NormalizeScore, ported from upstream scoring_test.go
(TestPreScoreSkip, TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore)."""

from __future__ import annotations

import math

import pytest

from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo, NodeScore

from .podtopologyspread_builders import (BAR, C, FOO, HONOR, HOSTNAME, IGNORE, SA, DNS,
                                              TAINTS, ZONE, st_node, make_plugin, st_pod,
                                              match_labels, new_cycle_state, spread)

from kschedfw.plugins.podtopologyspread.scoring import (PRE_SCORE_STATE_KEY, go_round,
                                                        topology_normalizing_weight)

P = st_pod
W = topology_normalizing_weight
RS = ("apps/v1", "ReplicaSet")
F = {"foo": ""}
FB = {"foo": "", "bar": ""}
B = {"bar": ""}


def N(name, taints=(), labels=None, **kw):
    return st_node(name, {**(labels or {}), **kw}, taints)


def H(name, taints=(), **kw):
    """A node whose kubernetes.io/hostname label is its name."""
    return st_node(name, {HOSTNAME: name, **kw}, taints)


def pods_on(labels, *name_node):
    return [P(name, node=node, labels=labels) for name, node in name_node]


def rs(name, selector):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": selector}}


# =========================================================================== TestPreScoreSkip

@pytest.mark.parametrize("pod,nodes,objs,defaulting,default_constraints", [
    pytest.param(P(), [H("node-a"), H("node-b")], [], "List", [],
                 id="the pod doesn't have soft topology spread Constraints"),
    pytest.param(P(labels={"foo": "bar", "baz": "sup"}, owner=(*RS, "rs2")),
                 [N("node-a", planet="mars")],
                 [rs("rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]})], "List",
                 [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
                 id="default constraints and a replicaset that doesn't match"),
])
def test_pre_score_skip(pod, nodes, objs, defaulting, default_constraints):
    plugin, snapshot = make_plugin(nodes, [], defaulting=defaulting,
                                   default_constraints=default_constraints, objs=objs)
    state = new_cycle_state()
    assert plugin.pre_score(state, pod, [NodeInfo(node=n) for n in nodes]) == Status.skip()


def test_pre_score_skip_without_nodes():
    plugin, _ = make_plugin([])
    pod = P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)])
    assert plugin.pre_score(new_cycle_state(), pod, []) == Status.skip()


# =========================================================================== TestPreScoreStateEmptyNodes

def _zone_host_nodes(**extra):
    return [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")]


PRE_SCORE_STATE_CASES = [
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, FOO)]),
        _zone_host_nodes(), [], "List", [],
        ([C(1, "zone", FOO), C(1, HOSTNAME, FOO)], set(), [{"zone1": 0, "zone2": 0}, {}], [W(2), W(3)]),
        False, id="normal case"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", SA, None)]),
        _zone_host_nodes(), [], "List", [],
        ([C(1, "zone", None)], set(), [{"zone1": 0, "zone2": 0}], [W(2)]),
        False, id="null selector"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
        [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x")], [], "List", [],
        ([C(1, "zone", FOO), C(1, HOSTNAME, BAR)], {"node-x"}, [{"zone1": 0}, {}], [W(1), W(2)]),
        False, id="node-x doesn't have label zone"),
    pytest.param(
        P(labels={"foo": "tar", "baz": "sup"}, owner=(*RS, "rs1")),
        [st_node("node-a", {HOSTNAME: "node-a", ZONE: "mars"}),
         st_node("node-b", {HOSTNAME: "node-b", ZONE: "mars"}),
         # Nodes with no zone are not excluded. They are considered a separate zone.
         H("node-c"), H("node-d")],
        [rs("rs1", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]})], "System", [],
        ([C(3, HOSTNAME, FOO), C(5, ZONE, FOO)], set(), [{}, {"mars": 0, "": 0}], [W(4), W(2)]),
        False, id="system default constraints and a replicaset"),
    pytest.param(
        P(labels={"foo": "tar", "baz": "sup"}, owner=(*RS, "rs1")),
        [st_node("node-a", {"rack": "rack1", HOSTNAME: "node-a", "planet": "mars"})],
        [rs("rs1", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]})], "List",
        [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SA},
         {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
         {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
        ([C(1, HOSTNAME, FOO), C(2, "planet", FOO)], set(), [{}, {"mars": 0}], [W(1), W(1)]),
        False, id="default constraints and a replicaset"),
    pytest.param(
        P(labels={"foo": "bar", "baz": "sup"}, owner=(*RS, "rs1"),
          constraints=[spread(1, "zone", DNS, BAR), spread(2, "planet", SA, match_labels(baz="sup"))]),
        [st_node("node-a", {"planet": "mars", "galaxy": "andromeda"})],
        [rs("rs1", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]})], "List",
        [{"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}],
        ([C(2, "planet", match_labels(baz="sup"))], set(), [{"mars": 0}], [W(1)]),
        False, id="default constraints and a replicaset, but pod has constraints"),
]
_AFF_NODES = lambda: [H("node-a", zone="zone1", foo=""), H("node-b", zone="zone1", foo=""),  # noqa: E731
                      H("node-x", zone="zone2")]
_TAINT_NODES = lambda: [H("node-a", zone="zone1", foo=""), H("node-b", zone="zone1", foo=""),  # noqa: E731
                        H("node-x", TAINTS, zone="zone2")]
_ZONES = [{"zone1": 0, "zone2": 0}]
PRE_SCORE_STATE_CASES += [
    pytest.param(P(labels=F, node_selector=F, constraints=[spread(1, "zone", SA, BAR)]),
                 _AFF_NODES(), [], "List", [], ([C(1, "zone", BAR)], set(), _ZONES, [W(2)]),
                 True, id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(P(labels=F, node_selector=F, constraints=[spread(1, "zone", SA, BAR, None, IGNORE)]),
                 _AFF_NODES(), [], "List", [], ([C(1, "zone", BAR, 1, IGNORE)], set(), _ZONES, [W(2)]),
                 True, id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "zone", SA, BAR)]),
                 _AFF_NODES(), [], "List", [], ([C(1, "zone", BAR)], set(), _ZONES, [W(2)]),
                 True, id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "zone", SA, BAR, None, IGNORE)]),
                 _AFF_NODES(), [], "List", [], ([C(1, "zone", BAR, 1, IGNORE)], set(), _ZONES, [W(2)]),
                 True, id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", SA, BAR, None, None, HONOR)]),
                 _TAINT_NODES(), [], "List", [], ([C(1, "zone", BAR, 1, HONOR, HONOR)], set(), _ZONES, [W(2)]),
                 True, id="NodeTaintsPolicy honored"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", SA, BAR)]),
                 _TAINT_NODES(), [], "List", [], ([C(1, "zone", BAR)], set(), _ZONES, [W(2)]),
                 True, id="NodeTaintsPolicy ignored"),
]


@pytest.mark.parametrize("pod,nodes,objs,defaulting,default_constraints,want,inclusion",
                         PRE_SCORE_STATE_CASES)
def test_pre_score_state_empty_nodes(pod, nodes, objs, defaulting, default_constraints, want, inclusion):
    plugin, _ = make_plugin(nodes, [], defaulting=defaulting, default_constraints=default_constraints,
                            objs=objs, inclusion=inclusion, match_label_keys=False)
    state = new_cycle_state()
    assert plugin.pre_score(state, pod, [NodeInfo(node=n) for n in nodes]) is None
    got = state.read(PRE_SCORE_STATE_KEY)
    assert list(got.constraints) == want[0]
    assert got.ignored_nodes == want[1]
    assert got.topology_value_to_pod_counts == want[2]
    assert got.topology_normalizing_weight == want[3]


# =========================================================================== TestPodTopologySpreadScore

SERVICE_FOO = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
               "spec": {"selector": {"foo": ""}}}
SPREAD_2103 = [("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-d1", "node-d"),
               ("p-d2", "node-d"), ("p-d3", "node-d")]
SPREAD_4321 = [("p-a1", "node-a"), ("p-a2", "node-a"), ("p-a3", "node-a"), ("p-a4", "node-a"),
               ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-b3", "node-b"), ("p-c1", "node-c"),
               ("p-c2", "node-c"), ("p-d1", "node-d")]
SPREAD_421_3 = [("p-a1", "node-a"), ("p-a2", "node-a"), ("p-a3", "node-a"), ("p-a4", "node-a"),
                ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y"),
                ("p-y2", "node-y"), ("p-y3", "node-y")]


def hosts(*names):
    return [H(n) for n in names]


SCORE_CASES = [
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]), [], hosts("node-a", "node-b"), [], [],
                 {"node-a": 100, "node-b": 100}, False, False, id="one constraint on node, no existing pods"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b")),
                 hosts("node-a"), hosts("node-b"), [],
                 {"node-a": 100}, False, False, id="one constraint on node, only one node is candidate"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]),
                 pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b")), hosts("node-a", "node-b"), [], [],
                 {"node-a": 100, "node-b": 100}, False, False,
                 id="one constraint on node, all nodes have the same number of matching pods"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]), pods_on(F, *SPREAD_2103),
                 hosts("node-a", "node-b", "node-c", "node-d"), [], [],
                 {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}, False, False,
                 id="one constraint on node, all 4 nodes are candidates"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, None)]), pods_on(F, *SPREAD_2103),
                 hosts("node-a", "node-b", "node-c", "node-d"), [], [],
                 {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}, False, False,
                 id="one constraint on node, null selector"),
    pytest.param(P(labels=F, constraints=[spread(2, HOSTNAME, SA, FOO)]), pods_on(F, *SPREAD_2103),
                 hosts("node-a", "node-b", "node-c", "node-d"), [], [],
                 {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}, False, False,
                 id="one constraint on node, all 4 nodes are candidates, maxSkew=2"),
    pytest.param(P(labels=F, constraints=[spread(3, HOSTNAME, SA, FOO)]), pods_on(F, *SPREAD_4321),
                 hosts("node-a", "node-b", "node-c", "node-d"), [], [],
                 {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}, False, False,
                 id="one constraint on node, all 4 nodes are candidates, maxSkew=3"),
    pytest.param(P(labels=F), pods_on(F, *SPREAD_4321),
                 hosts("node-a", "node-b", "node-c", "node-d"), [], [SERVICE_FOO],
                 # Same scores as if we were using one spreading constraint.
                 {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}, False, False,
                 id="system defaulting, nodes don't have zone, pods match service"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]), pods_on(F, *SPREAD_421_3),
                 hosts("node-a", "node-b", "node-x"), hosts("node-y"), [],
                 {"node-a": 33, "node-b": 83, "node-x": 100}, False, False,
                 id="one constraint on node, 3 out of 4 nodes are candidates"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]), pods_on(F, *SPREAD_421_3),
                 [H("node-a"), st_node("node-b", {"n": "node-b"}), H("node-x")], hosts("node-y"), [],
                 {"node-a": 16, "node-b": 0, "node-x": 100}, False, False,
                 id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", SA, FOO)]), pods_on(F, *SPREAD_421_3),
                 [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")],
                 [H("node-y", zone="zone2")], [],
                 {"node-a": 75, "node-b": 75, "node-x": 100}, False, False,
                 id="one constraint on zone, 3 out of 4 nodes are candidates"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, FOO)]),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"),
                         ("p-x2", "node-x"), ("p-y1", "node-y"), ("p-y2", "node-y"), ("p-y3", "node-y"),
                         ("p-y4", "node-y")),
                 [H("node-a", zone="zone1"), H("node-x", zone="zone2")],
                 [H("node-b", zone="zone1"), H("node-y", zone="zone2")], [],
                 {"node-a": 100, "node-x": 63}, False, False,
                 id="two Constraints on zone and node, 2 out of 4 nodes are candidates"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", SA, FOO), spread(1, "zone", SA, BAR)]),
                 [P("p-a1", node="node-a", labels=FB), P("p-a2", node="node-a", labels=F),
                  P("p-b1", node="node-b", labels=FB), P("p-y1", node="node-y", labels=F),
                  P("p-y2", node="node-y", labels=FB), P("p-y3", node="node-y", labels=F)],
                 [N("node-a", zone="zone1"), N("node-x", zone="zone2")],
                 [N("node-b", zone="zone1"), N("node-y", zone="zone2")], [],
                 {"node-a": 85, "node-x": 100}, False, False,
                 id="two Constraints on zone, 2 out of 4 nodes are candidates"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
                 [P("p-a1", node="node-a", labels=F), P("p-b1", node="node-b", labels=FB),
                  P("p-y1", node="node-y", labels=F), P("p-y2", node="node-y", labels=B)],
                 [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2"),
                  H("node-y", zone="zone2")], [], [],
                 {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}, False, False,
                 id="two Constraints on zone and node, with different labelSelectors"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
                 [P("p-b1", node="node-b", labels=B), P("p-x1", node="node-x", labels=F),
                  P("p-y1", node="node-y", labels=FB)],
                 [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2"),
                  H("node-y", zone="zone2")], [], [],
                 {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}, False, False,
                 id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", SA, FOO), spread(1, HOSTNAME, SA, BAR)]),
                 [P("p-a1", node="node-a", labels=F), P("p-b1", node="node-b", labels=FB),
                  P("p-y1", node="node-y", labels=F), P("p-y2", node="node-y", labels=B)],
                 [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-x", zone="zone2")],
                 [H("node-y", zone="zone2")], [],
                 {"node-a": 50, "node-b": 25, "node-x": 100}, False, False,
                 id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]),
                 [P("p-a1", ns="ns1", node="node-a", labels=F), P("p-a2", node="node-a", labels=F),
                  P("p-b1", node="node-b", labels=F), P("p-b2", node="node-b", labels=F)],
                 hosts("node-a", "node-b"), [], [],
                 {"node-a": 100, "node-b": 33}, False, False,
                 id="existing pods in a different namespace do not count"),
    pytest.param(P(labels=F, constraints=[spread(1, HOSTNAME, SA, FOO)]),
                 [P("p-a", node="node-a", labels=F, terminating=True), P("p-b", node="node-b", labels=F)],
                 hosts("node-a", "node-b"), [], [],
                 {"node-a": 100, "node-b": 0}, False, False, id="terminating Pods should be excluded"),
    pytest.param(P(labels=F, constraints=[spread(2, "node", SA, FOO, 10)]),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-b2", "node-b"),
                         ("p-c1", "node-c")),
                 [N("node-a", node="node-a"), N("node-b", node="node-b"), N("node-c", node="node-c")], [], [],
                 {"node-a": 75, "node-b": 75, "node-c": 100}, False, False,
                 id="minDomains has no effect when ScheduleAnyway"),
]

_POLICY_PODS = lambda: pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"),  # noqa: E731
                               ("p-c1", "node-c"))
_FOO_NODES = lambda: [N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),  # noqa: E731
                      N("node-c", node="node-c")]
_TAINTED_C = lambda: [N("node-a", node="node-a"), N("node-b", node="node-b"),  # noqa: E731
                      N("node-c", TAINTS, node="node-c")]
HONORED = {"node-a": 0, "node-b": 33, "node-c": 100}
IGNORED = {"node-a": 66, "node-b": 100, "node-c": 100}
SCORE_CASES += [
    pytest.param(P(labels=F, node_selector=F, constraints=[spread(1, "node", SA, FOO)]),
                 _POLICY_PODS(), _FOO_NODES(), [], [], HONORED, True, False,
                 id="NodeAffinityPolicy honoed with labelSelectors"),
    pytest.param(P(labels=F, node_selector=F, constraints=[spread(1, "node", SA, FOO, None, IGNORE)]),
                 _POLICY_PODS(), _FOO_NODES(), [], [], IGNORED, True, False,
                 id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "node", SA, FOO)]),
                 _POLICY_PODS(), _FOO_NODES(), [], [], HONORED, True, False,
                 id="NodeAffinityPolicy honoed with nodeAffinity"),
    pytest.param(P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "node", SA, FOO, None, IGNORE)]),
                 _POLICY_PODS(), _FOO_NODES(), [], [], IGNORED, True, False,
                 id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(P(labels=F, constraints=[spread(1, "node", SA, FOO, None, None, HONOR)]),
                 _POLICY_PODS(), _TAINTED_C(), [], [], HONORED, True, False, id="NodeTaintsPolicy honored"),
    pytest.param(P(labels=F, constraints=[spread(1, "node", SA, FOO)]),
                 _POLICY_PODS(), _TAINTED_C(), [], [], IGNORED, True, False, id="NodeTaintsPolicy ignored"),
]

_MLK_NODES = lambda: [H("node-a", zone="zone1"), H("node-b", zone="zone1"), H("node-c", zone="zone2"),  # noqa: E731
                      H("node-d", zone="zone2")]
_MLK_SCORES = {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}
SCORE_CASES += [
    pytest.param(P(labels={"foo": "", "bar": "", "baz": ""},
                   constraints=[spread(1, "zone", SA, FOO, match_label_keys=["baz"]),
                                spread(1, HOSTNAME, SA, BAR, match_label_keys=["baz"])]),
                 [P("p-a1", node="node-a", labels=F), P("p-b1", node="node-b", labels=FB),
                  P("p-y1", node="node-c", labels=F), P("p-y2", node="node-c", labels=B)],
                 _MLK_NODES(), [], [], _MLK_SCORES, False, False,
                 id="matchLabelKeys ignored when feature gate disabled"),
    pytest.param(P(labels=FB,
                   constraints=[spread(1, "zone", SA, match_labels(), match_label_keys=["foo"]),
                                spread(1, HOSTNAME, SA, match_labels(), match_label_keys=["bar"])]),
                 [P("p-a1", node="node-a", labels=F), P("p-b1", node="node-b", labels=FB),
                  P("p-y1", node="node-c", labels=F), P("p-y2", node="node-c", labels=B)],
                 _MLK_NODES(), [], [], _MLK_SCORES, False, True,
                 id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(P(labels={"foo": "", "bar": "", "baz": ""},
                   constraints=[spread(1, "zone", SA, FOO),
                                spread(1, HOSTNAME, SA, BAR, match_label_keys=["baz"])]),
                 [P("p-a1", node="node-a", labels=F),
                  P("p-b1", node="node-b", labels={"foo": "", "bar": "", "baz": ""}),
                  P("p-c1", node="node-c", labels=F), P("p-c2", node="node-c", labels=B),
                  P("p-d3", node="node-c", labels={"bar": "", "baz": ""})],
                 _MLK_NODES(), [], [], _MLK_SCORES, False, True,
                 id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
]


@pytest.mark.parametrize("pod,existing,nodes,failed_nodes,objs,want,inclusion,mlk", SCORE_CASES)
def test_pod_topology_spread_score(pod, existing, nodes, failed_nodes, objs, want, inclusion, mlk):
    plugin, snapshot = make_plugin(nodes + failed_nodes, existing, defaulting="System", objs=objs,
                                   inclusion=inclusion, match_label_keys=mlk)
    state = new_cycle_state()
    assert plugin.pre_score(state, pod, [NodeInfo(node=n) for n in nodes]) is None
    scores = []
    for n in nodes:
        score = plugin.score(state, pod, snapshot.get(n.name))
        assert isinstance(score, int)
        scores.append(NodeScore(n.name, score))
    assert plugin.normalize_score(state, pod, scores) is None
    assert {s.name: s.score for s in scores} == want
    assert [s.name for s in scores] == [n.name for n in nodes]


# =========================================================================== extras

def test_raw_scores_before_normalizing():
    """Raw Score: round(sum(count * ln(domains + 2) + maxSkew - 1)); here 2/1/0/3 on 4 hosts."""
    pod = P(labels=F, constraints=[spread(2, HOSTNAME, SA, FOO)])
    nodes = hosts("node-a", "node-b", "node-c", "node-d")
    plugin, snapshot = make_plugin(nodes, pods_on(F, *SPREAD_2103))
    state = new_cycle_state()
    plugin.pre_score(state, pod, snapshot.node_infos())
    raw = {n.name: plugin.score(state, pod, snapshot.get(n.name)) for n in nodes}
    w = math.log(6)
    assert raw == {"node-a": go_round(2 * w + 1), "node-b": go_round(w + 1), "node-c": 1,
                   "node-d": go_round(3 * w + 1)}
    assert raw == {"node-a": 5, "node-b": 3, "node-c": 1, "node-d": 6}


def test_score_without_pre_score_is_an_error():
    plugin, _ = make_plugin([])
    status = plugin.score(new_cycle_state(), P(), NodeInfo(node=st_node("n")))
    assert isinstance(status, Status) and status.code == Code.Error
    assert status.message() == 'error reading "PreScorePodTopologySpread" from cycleState: not found'


def test_normalize_all_ignored_nodes_score_zero():
    pod = P(labels=F, constraints=[spread(1, "zone", SA, FOO)])
    nodes = [st_node("a"), st_node("b")]
    plugin, snapshot = make_plugin(nodes, [])
    state = new_cycle_state()
    assert plugin.pre_score(state, pod, snapshot.node_infos()) is None
    scores = [NodeScore(n.name, plugin.score(state, pod, snapshot.get(n.name))) for n in nodes]
    plugin.normalize_score(state, pod, scores)
    assert [s.score for s in scores] == [0, 0]


@pytest.mark.parametrize("x,want", [(0.5, 1), (1.5, 2), (2.4999, 2), (0.49999999999999994, 0), (3.0, 3)])
def test_go_round(x, want):
    assert go_round(x) == want
