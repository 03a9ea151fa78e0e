"""InterPodAffinity PreScore / Score / NormalizeScore.

Ported from upstream ``interpodaffinity/scoring_test.go`` (v1.36): every case of
TestPreferredAffinity and TestPreferredAffinityWithHardPodAffinitySymmetricWeight, with upstream's
names as ids (two duplicated upstream names get a ``[anti]`` suffix). As upstream, PreScore gets
node infos without pods and reads the pods from the handle's snapshot; normalized scores are
asserted, and for some cases the raw scores too (worked out by hand in the comments).
"""

from __future__ import annotations

import pytest

from kschedfw import Code, CycleState, NodeScore, Status
from kschedfw.api import (Affinity, LabelSelector, LabelSelectorRequirement, Namespace, Node, Pod,
                          PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm)
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import MAX_NODE_SCORE, NodeInfo
from kschedfw.plugins.interpodaffinity import InterPodAffinity
from kschedfw.plugins.interpodaffinity.scoring import PreScoreState, normalize

MAX = MAX_NODE_SCORE


class FakeLister:
    def __init__(self, namespaces=()) -> None:
        self._ns = {ns.name: ns for ns in namespaces}

    def get(self, kind, name, namespace=""):
        return self._ns.get(name) if kind == "Namespace" else None

    def list(self, kind, namespace=None):
        return list(self._ns.values()) if kind == "Namespace" else []


NAMESPACES = [
    Namespace("subteam1.team1", {"team": "team1"}),
    Namespace("subteam2.team1", {"team": "team1"}),
    Namespace("subteam1.team2", {"team": "team2"}),
    Namespace("subteam2.team2", {"team": "team2"}),
]


def req(key, op, *values):
    return LabelSelectorRequirement(key, op, tuple(values))


def sel(*reqs):
    return LabelSelector({}, tuple(reqs))


def term(topology_key, selector, namespaces=(), namespace_selector=None):
    return PodAffinityTerm(selector, tuple(namespaces), topology_key, namespace_selector)


def weighted(weight, t):
    return WeightedPodAffinityTerm(weight, t)


_counter = [0]


def pod(node_name="", labels=None, affinity=None, namespace=""):
    _counter[0] += 1
    return Pod(name="", namespace=namespace, uid=f"u{_counter[0]}", labels=dict(labels or {}),
               node_name=node_name, affinity=affinity)


def node(name, labels):
    return Node(name=name, labels=dict(labels))


RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = Affinity(pod_affinity=PodAffinity(preferred=(
    weighted(5, term("region", sel(req("security", "In", "S1")))),)))
STAY_WITH_S2_IN_REGION = Affinity(pod_affinity=PodAffinity(preferred=(
    weighted(6, term("region", sel(req("security", "In", "S2")))),)))
AFFINITY3 = Affinity(pod_affinity=PodAffinity(preferred=(
    weighted(8, term("region", sel(req("security", "NotIn", "S1"), req("security", "In", "S2")))),
    weighted(2, term("region", sel(req("security", "Exists"), req("wrongkey", "DoesNotExist")))),
)))
HARD_AFFINITY = Affinity(pod_affinity=PodAffinity(required=(
    term("region", sel(req("security", "In", "S1", "value2"))),
    term("region", sel(req("security", "Exists"), req("wrongkey", "DoesNotExist"))),
)))
AWAY_FROM_S1_IN_AZ = Affinity(pod_anti_affinity=PodAffinity(preferred=(
    weighted(5, term("az", sel(req("security", "In", "S1")))),)))
AWAY_FROM_S2_IN_AZ = Affinity(pod_anti_affinity=PodAffinity(preferred=(
    weighted(5, term("az", sel(req("security", "In", "S2")))),)))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = Affinity(
    pod_affinity=PodAffinity(preferred=(weighted(8, term("region", sel(req("security", "In", "S1")))),)),
    pod_anti_affinity=PodAffinity(preferred=(weighted(5, term("az", sel(req("security", "In", "S2")))),)))
_NS_TERM = term("region", sel(req("security", "In", "S1")), namespaces=["subteam2.team2"],
                namespace_selector=sel(req("team", "In", "team1")))
AFFINITY_NAMESPACE_SELECTOR = Affinity(pod_affinity=PodAffinity(preferred=(weighted(5, _NS_TERM),)))
ANTI_AFFINITY_NAMESPACE_SELECTOR = Affinity(pod_anti_affinity=PodAffinity(preferred=(weighted(5, _NS_TERM),)))
INVALID_AFFINITY_LABELS = Affinity(pod_affinity=PodAffinity(preferred=(
    weighted(8, term("region", sel(req("security", "In", "{{.bad-value.}}")))),)))
INVALID_ANTI_AFFINITY_LABELS = Affinity(pod_anti_affinity=PodAffinity(preferred=(
    weighted(5, term("az", sel(req("security", "In", "{{.bad-value.}}")))),)))

N3 = [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)]


def scores(*values):
    return [NodeScore(f"node{i + 1}", v) for i, v in enumerate(values)]


SKIP = Status.skip()


def C(name, incoming, pods, nodes, want=None, status=None, ignore=False, raw=None):
    return pytest.param(incoming, pods, nodes, want, status, ignore, raw, id=name)


PREFERRED_AFFINITY_CASES = [
    C("all nodes are same priority as Affinity is nil",
      pod(labels=S1), [], N3, status=SKIP),
    # node1 (region China) hosts an S1 pod: +5 for region China; node3 has no region label.
    C("Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
      "which doesn't match either pods in nodes or in topology key",
      pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION),
      [pod("node1", S1), pod("node2", S2), pod("node3", S1)], N3,
      want=scores(MAX, 0, 0), raw=[5, 0, 0]),
    C("All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
      pod(affinity=STAY_WITH_S1_IN_REGION), [pod("node1", S1)],
      [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
      want=scores(MAX, MAX, 0), raw=[5, 5, 0]),
    # Three S2 pods in China (node1 x2, node3, node4 -> 4 pods), two in India: 6*4=24 vs 6*2=12.
    C("Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
      pod(labels=S1, affinity=STAY_WITH_S2_IN_REGION),
      [pod("node1", S2), pod("node1", S2), pod("node2", S2), pod("node3", S2), pod("node4", S2), pod("node5", S2)],
      [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", RG_CHINA), node("node4", RG_CHINA),
       node("node5", RG_INDIA)],
      want=scores(MAX, 0, MAX, MAX, 0), raw=[24, 12, 24, 24, 12]),
    # China: the S1 pod matches only the weight-2 term; India: the S2 pod matches both (8+2).
    C("Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
      pod(labels=S1, affinity=AFFINITY3),
      [pod("node1", S1), pod("node2", S2), pod("node3", S1)], N3,
      want=scores(20, MAX, 0), raw=[2, 10, 0]),
    C("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
      pod(labels=S2),
      [pod("node1", S1, STAY_WITH_S1_IN_REGION), pod("node2", S2, STAY_WITH_S2_IN_REGION)], N3,
      want=scores(0, MAX, 0), raw=[0, 6, 0]),
    C("Affinity symmetry with namespace selector",
      pod(labels=S1, namespace="subteam1.team1"),
      [pod("node1", S1, AFFINITY_NAMESPACE_SELECTOR), pod("node2", S2, STAY_WITH_S2_IN_REGION)], N3,
      want=scores(MAX, 0, 0), raw=[5, 0, 0]),
    C("AntiAffinity symmetry with namespace selector",
      pod(labels=S1, namespace="subteam1.team1"),
      [pod("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR), pod("node2", S2, STAY_WITH_S2_IN_REGION)], N3,
      want=scores(0, MAX, MAX), raw=[-5, 0, 0]),
    # Both existing pods' required terms select the incoming S1 pod: 2 terms x weight 1 each.
    C("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
      pod(labels=S1),
      [pod("node1", S1, HARD_AFFINITY), pod("node2", S2, HARD_AFFINITY)], N3,
      want=scores(MAX, MAX, 0), raw=[2, 2, 0]),
    C("Anti Affinity: pod that does not match existing pods in node will get high score ",
      pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
      [pod("node1", S1), pod("node2", S2)], [node("node1", AZ1), node("node2", RG_CHINA)],
      want=scores(0, MAX), raw=[-5, 0]),
    C("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
      pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
      [pod("node1", S1), pod("node2", S1)], [node("node1", AZ1), node("node2", RG_CHINA)],
      want=scores(0, MAX)),
    C("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
      pod(labels=S1, affinity=AWAY_FROM_S1_IN_AZ),
      [pod("node1", S1), pod("node1", S1), pod("node2", S2)], [node("node1", AZ1), node("node2", RG_INDIA)],
      want=scores(0, MAX), raw=[-10, 0]),
    C("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
      pod(labels=S2),
      [pod("node1", S1, AWAY_FROM_S2_IN_AZ), pod("node2", S2, AWAY_FROM_S1_IN_AZ)],
      [node("node1", AZ1), node("node2", AZ2)],
      want=scores(0, MAX)),
    C("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
      pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
      [pod("node1", S1), pod("node2", S1)], [node("node1", RG_CHINA), node("node2", AZ1)],
      want=scores(MAX, 0)),
    C("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
      pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
      [pod("node1", S1), pod("node1", S1), pod("node2", S1), pod("node3", S1), pod("node3", S1),
       pod("node4", S1), pod("node5", S1)],
      [node("node1", RG_CHINA_AZ1), node("node2", RG_INDIA), node("node3", RG_CHINA), node("node4", RG_CHINA),
       node("node5", RG_INDIA)],
      want=scores(MAX, 0, MAX, MAX, 0), raw=[40, 16, 40, 40, 16]),
    # Weights per node: affinity 8 / anti -5 / affinity symmetry 8 / anti-affinity symmetry -5.
    C("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
      pod(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
      [pod("node1", S1), pod("node2", S2), pod("node3", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
       pod("node4", None, AWAY_FROM_S1_IN_AZ)],
      [node("node1", RG_CHINA), node("node2", AZ1), node("node3", RG_INDIA), node("node4", AZ2)],
      want=scores(MAX, 0, MAX, 0), raw=[8, -5, 8, -5]),
    C("Avoid panic when partial nodes in a topology don't have pods with affinity",
      pod(labels=S1),
      [pod("node1", S1), pod("node2", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
      [node("node1", RG_CHINA), node("node2", RG_CHINA)],
      want=scores(0, 0), raw=[8, 8]),
    C("invalid Affinity fails PreScore",
      pod(affinity=INVALID_AFFINITY_LABELS), [], [node("node1", RG_CHINA), node("node2", RG_CHINA)],
      status=Status(Code.Error, ('Invalid value: "{{.bad-value.}}"',))),
    C("invalid AntiAffinity fails PreScore",
      pod(affinity=INVALID_ANTI_AFFINITY_LABELS), [], [node("node1", RG_CHINA), node("node2", RG_CHINA)],
      status=Status(Code.Error, ('Invalid value: "{{.bad-value.}}"',))),
    C("Affinity with pods matching NamespaceSelector",
      pod(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
      [pod("node1", S1, namespace="subteam1.team1"), pod("node1", S1, namespace="subteam1.team1"),
       pod("node1", S1, namespace="subteam1.team2"), pod("node2", S1, namespace="subteam2.team1")],
      [node("node1", RG_CHINA), node("node2", RG_INDIA)],
      want=scores(MAX, 0), raw=[10, 5]),
    C("Affinity with pods matching both NamespaceSelector and Namespaces fields",
      pod(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
      [pod("node1", S1, namespace="subteam1.team1"), pod("node1", S1, namespace="subteam1.team1"),
       pod("node1", S1, namespace="subteam2.team2"), pod("node2", S1, namespace="subteam2.team1")],
      [node("node1", RG_CHINA), node("node2", RG_INDIA)],
      want=scores(MAX, 0), raw=[15, 5]),
    C("Affinity with pods matching NamespaceSelector [anti]",
      pod(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
      [pod("node1", S1, namespace="subteam1.team1"), pod("node1", S1, namespace="subteam1.team1"),
       pod("node1", S1, namespace="subteam1.team2"), pod("node2", S1, namespace="subteam2.team1")],
      [node("node1", RG_CHINA), node("node2", RG_INDIA)],
      want=scores(0, MAX), raw=[-10, -5]),
    C("Affinity with pods matching both NamespaceSelector and Namespaces fields [anti]",
      pod(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, namespace="subteam1.team1"),
      [pod("node1", S1, namespace="subteam1.team1"), pod("node1", S1, namespace="subteam1.team1"),
       pod("node1", S1, namespace="subteam2.team2"), pod("node2", S1, namespace="subteam2.team1")],
      [node("node1", RG_CHINA), node("node2", RG_INDIA)],
      want=scores(0, MAX), raw=[-15, -5]),
    C("Ignore preferred terms of existing pods",
      pod(labels=S2),
      [pod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), pod("node2", S2, STAY_WITH_S2_IN_REGION)],
      [node("node1", RG_CHINA), node("node2", RG_INDIA)],
      status=SKIP, ignore=True),
    C("Do not ignore preferred terms of existing pods",
      pod(labels=S2),
      [pod("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), pod("node2", S2, STAY_WITH_S2_IN_REGION)],
      [node("node1", RG_CHINA), node("node2", RG_INDIA)],
      want=scores(0, MAX), raw=[0, 6]),
    C("No nodes to score", pod(labels=S2), [], [], status=SKIP),
]


def _run(plugin, incoming, node_infos):
    state = CycleState()
    status = plugin.pre_score(state, incoming, node_infos)
    if status is not None:
        return status, None, None
    raw = []
    for ni in node_infos:
        result = plugin.score(state, incoming, ni)
        assert isinstance(result, int), result
        raw.append(NodeScore(ni.node.name, result))
    got = [NodeScore(ns.name, ns.score) for ns in raw]
    assert plugin.normalize_score(state, incoming, got) is None
    return None, [ns.score for ns in raw], got


@pytest.mark.parametrize("incoming, pods, nodes, want, want_status, ignore, want_raw",
                         PREFERRED_AFFINITY_CASES)
def test_preferred_affinity(incoming, pods, nodes, want, want_status, ignore, want_raw):
    handle = Handle(snapshot=Snapshot.from_objects(nodes, pods), lister=FakeLister(NAMESPACES))
    plugin = InterPodAffinity({"hardPodAffinityWeight": 1,
                               "ignorePreferredTermsOfExistingPods": ignore}, handle)
    node_infos = [NodeInfo(node=n) for n in nodes]  # as upstream: no pods, the snapshot has them
    status, raw, got = _run(plugin, incoming, node_infos)
    if want_status is not None:
        assert status is not None
        assert status.code is want_status.code
        assert want_status.message() in status.message()
        return
    assert status is None
    if want_raw is not None:
        assert raw == want_raw
    assert got == want


def test_invalid_preferred_terms_message():
    handle = Handle(snapshot=Snapshot.from_objects([node("node1", RG_CHINA)]))
    status = InterPodAffinity({}, handle).pre_score(CycleState(), pod(affinity=INVALID_AFFINITY_LABELS),
                                                    [NodeInfo(node=node("node1", RG_CHINA))])
    assert status.code is Code.Error
    assert status.message() == (
        'failed to parse pod: preferredAffinityTerms: values[0][security]: Invalid value: '
        '"{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


# --------------------------------------------------------------------------- TestPreferredAffinityWithHardPodAffinitySymmetricWeight

HARD_POD_AFFINITY = Affinity(pod_affinity=PodAffinity(required=(
    term("region", sel(req("service", "In", "S1")), namespaces=["", "subteam2.team2"],
         namespace_selector=sel(req("team", "In", "team1"))),)))
SERVICE_S1 = {"service": "S1"}
HARD_PODS = [("node1", HARD_POD_AFFINITY), ("node2", HARD_POD_AFFINITY)]

HARD_WEIGHT_CASES = [
    pytest.param("", 1, scores(MAX, MAX, 0), None, [1, 1, 0], id="with default weight"),
    pytest.param("", 0, None, SKIP, None, id="with zero weight"),
    pytest.param("subteam1.team2", 1, None, SKIP, None, id="with no matching namespace"),
    pytest.param("subteam1.team1", 1, scores(MAX, MAX, 0), None, [1, 1, 0],
                 id="with matching NamespaceSelector"),
    pytest.param("subteam2.team2", 1, scores(MAX, MAX, 0), None, [1, 1, 0],
                 id="with matching Namespaces"),
]


@pytest.mark.parametrize("namespace, weight, want, want_status, want_raw", HARD_WEIGHT_CASES)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(namespace, weight, want,
                                                                    want_status, want_raw):
    pods = [pod(n, None, a) for n, a in HARD_PODS]
    nodes = [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)]
    snapshot = Snapshot.from_objects(nodes, pods)
    handle = Handle(snapshot=snapshot, lister=FakeLister(NAMESPACES))
    plugin = InterPodAffinity({"hardPodAffinityWeight": weight}, handle)
    incoming = pod(labels=SERVICE_S1, namespace=namespace)
    status, raw, got = _run(plugin, incoming, snapshot.node_infos())
    assert status == want_status
    if status is None:
        assert raw == want_raw
        assert got == want


# --------------------------------------------------------------------------- NormalizeScore

@pytest.mark.parametrize("raw, want", [
    pytest.param([5, 0, 0], [100, 0, 0], id="max to 100, min to 0"),
    pytest.param([-5, 0, 0], [0, 100, 100], id="negative minimum"),
    pytest.param([3, 3, 3], [0, 0, 0], id="all equal give 0"),
    pytest.param([-10, -5], [0, 100], id="all negative"),
    pytest.param([1, 2, 3], [0, 50, 100], id="linear"),
    pytest.param([0, 1, 3], [0, 33, 100], id="truncated toward zero"),
    pytest.param([0, 2, 3], [0, 66, 100], id="float64 product truncated"),
    pytest.param([-7, 1, 10], [0, 47, 100], id="mixed signs"),
])
def test_normalize_score(raw, want):
    scores_ = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    normalize(PreScoreState({"k": {"v": 1}}), scores_)
    assert [s.score for s in scores_] == want


def test_normalize_without_topology_score_leaves_scores():
    scores_ = [NodeScore("a", 7)]
    normalize(PreScoreState({}), scores_)
    assert scores_[0].score == 7


def test_score_without_pre_score_state_is_error():
    plugin = InterPodAffinity({}, Handle())
    result = plugin.score(CycleState(), pod(), NodeInfo(node=node("n", {})))
    assert isinstance(result, Status) and result.code is Code.Error
    assert result.message() == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
