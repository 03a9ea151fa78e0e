"""InterPodAffinity PreFilter / AddPod / RemovePod / Filter.

Ported from upstream ``pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go``
(v1.36): every case of TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
TestPreFilterDisabled, TestPreFilterStateAddRemovePod, TestPreFilterStateClone and
TestGetTPMapMatchingIncomingAffinityAntiAffinity, with upstream's case names as ids. Upstream's
default test namespace is "" and is kept as is.
"""

from __future__ import annotations

import itertools

import pytest

from kschedfw import Code, CycleState, Status
from kschedfw.api import (Affinity, LabelSelector, LabelSelectorRequirement, Namespace, Node, Pod,
                          PodAffinity, PodAffinityTerm)
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.plugins.interpodaffinity import InterPodAffinity
from kschedfw.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, PRE_FILTER_STATE_KEY, PreFilterState,
    count_pairs, incoming_affinity_anti_affinity_counts)
from kschedfw.fwk.pod_info import pod_terms

# --------------------------------------------------------------------------- builders
# A small equivalent of upstream's st.MakePod() wrapper, building Pod objects directly (so that
# upstream's terms without a topologyKey can be expressed).

_uids = itertools.count()


def req(key: str, op: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key, op, tuple(values))


def sel(*reqs: LabelSelectorRequirement, **match_labels: str) -> LabelSelector:
    return LabelSelector(dict(match_labels), tuple(reqs))


def term(topology_key: str = "", selector: LabelSelector | None = None, namespaces=(),
         namespace_selector: LabelSelector | None = None, match_label_keys=(),
         mismatch_label_keys=()) -> PodAffinityTerm:
    return PodAffinityTerm(selector, tuple(namespaces), topology_key, namespace_selector,
                           tuple(match_label_keys), tuple(mismatch_label_keys))


class P:
    """Fluent pod builder mirroring st.MakePod()."""

    def __init__(self) -> None:
        self._kw: dict = {"name": "", "namespace": "", "labels": {}, "node_name": ""}
        self._aff: list = []
        self._anti: list = []

    def name(self, v): self._kw["name"] = v; return self  # noqa: E702
    def uid(self, v): self._kw["uid"] = v; return self  # noqa: E702
    def namespace(self, v): self._kw["namespace"] = v; return self  # noqa: E702
    def node(self, v): self._kw["node_name"] = v; return self  # noqa: E702
    def nominated(self, v): self._kw["nominated_node_name"] = v; return self  # noqa: E702

    def label(self, k, v):
        self._kw["labels"] = {**self._kw["labels"], k: v}
        return self

    def labels(self, d):
        self._kw["labels"] = dict(d)
        return self

    def affinity(self, t): self._aff.append(t); return self  # noqa: E702
    def anti(self, t): self._anti.append(t); return self  # noqa: E702
    def affinity_in(self, k, tk, vals): return self.affinity(term(tk, sel(req(k, "In", *vals))))
    def affinity_not_in(self, k, tk, vals): return self.affinity(term(tk, sel(req(k, "NotIn", *vals))))
    def affinity_exists(self, k, tk): return self.affinity(term(tk, sel(req(k, "Exists"))))
    def anti_in(self, k, tk, vals): return self.anti(term(tk, sel(req(k, "In", *vals))))
    def anti_not_in(self, k, tk, vals): return self.anti(term(tk, sel(req(k, "NotIn", *vals))))
    def anti_exists(self, k, tk): return self.anti(term(tk, sel(req(k, "Exists"))))

    def obj(self) -> Pod:
        kw = dict(self._kw)
        kw.setdefault("uid", f"uid-{next(_uids)}")
        if self._aff or self._anti:
            kw["affinity"] = Affinity(
                pod_affinity=PodAffinity(tuple(self._aff)) if self._aff else None,
                pod_anti_affinity=PodAffinity(tuple(self._anti)) if self._anti else None)
        return Pod(**kw)


def pod_with_terms(namespace, labels, affinity=(), anti=()) -> Pod:
    """Upstream's createPodWithAffinityTerms."""
    b = P().namespace(namespace).labels(labels)
    for t in affinity:
        b.affinity(t)
    for t in anti:
        b.anti(t)
    return b.obj()


def node(name: str, labels: dict | None = None) -> Node:
    return Node(name=name, labels=dict(labels or {}))


class FakeLister:
    """Namespaces for the plugin's namespace lister."""

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


def setup(pods, nodes, namespaces=(), args=None):
    snapshot = Snapshot.from_objects(nodes, pods)
    handle = Handle(snapshot=snapshot, lister=FakeLister(namespaces))
    return InterPodAffinity(args or {}, handle), snapshot


AFFINITY = Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
SKIP = Status.skip()

BAD_VALUE_MSG = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def _pre_filter_status(result):
    if isinstance(result, tuple):
        return result[1]
    return result


# --------------------------------------------------------------------------- TestRequiredAffinitySingleNode

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})
EXISTING_POD = P().labels(POD_LABEL).node("node1").obj()


def _ns_selector_term(topology_key):
    return term(topology_key, sel(req("service", "In", "securityscan", "value2")),
                namespace_selector=sel(req("team", "In", "team1")))


SINGLE_NODE_CASES = [
    pytest.param(Pod(name="", namespace="", uid="empty"), [], SKIP, None,
                 id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods"),
    pytest.param(P().labels(POD_LABEL2).affinity_in("service", "region", ["securityscan", "value2"]).obj(),
                 [EXISTING_POD], None, None,
                 id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod"),
    pytest.param(P().labels(POD_LABEL2).affinity_not_in("service", "region", ["securityscan3", "value3"]).obj(),
                 [EXISTING_POD], None, None,
                 id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod"),
    pytest.param(pod_with_terms("", POD_LABEL2, affinity=[
        term("", sel(req("service", "In", "securityscan", "value2")), namespaces=["DiffNameSpace"])]),
                 [P().namespace("ns").label("service", "securityscan").node("node1").obj()], None, AFFINITY,
                 id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace"),
    pytest.param(P().labels(POD_LABEL).affinity_in("service", "", ["antivirusscan", "value2"]).obj(),
                 [EXISTING_POD], None, AFFINITY,
                 id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod"),
    pytest.param(pod_with_terms("", POD_LABEL2, affinity=[
        term("region", sel(req("service", "Exists"), req("wrongkey", "DoesNotExist"))),
        term("region", sel(req("service", "In", "securityscan"), req("service", "NotIn", "WrongValue")))]),
                 [EXISTING_POD], None, None,
                 id="satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution "),
    pytest.param(pod_with_terms("", POD_LABEL2, affinity=[
        term("region", sel(req("service", "Exists"), req("wrongkey", "DoesNotExist"))),
        term("region", sel(req("service", "In", "securityscan2"), req("service", "NotIn", "WrongValue")))]),
                 [EXISTING_POD], None, AFFINITY,
                 id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match."),
    pytest.param(P().labels(POD_LABEL2).affinity_in("service", "region", ["securityscan", "value2"])
                 .anti_in("service", "node", ["antivirusscan", "value2"]).obj(),
                 [EXISTING_POD], None, None,
                 id="satisfies the PodAffinity and PodAntiAffinity with the existing pod"),
    pytest.param(P().labels(POD_LABEL2).affinity_in("service", "region", ["securityscan", "value2"])
                 .anti_in("service", "node", ["antivirusscan", "value2"]).obj(),
                 [P().node("node1").labels(POD_LABEL).anti_in("service", "node", ["antivirusscan", "value2"]).obj()],
                 None, None,
                 id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod"),
    pytest.param(P().labels(POD_LABEL2).affinity_in("service", "region", ["securityscan", "value2"])
                 .anti_in("service", "zone", ["securityscan", "value2"]).obj(),
                 [EXISTING_POD], None, ANTI,
                 id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod"),
    pytest.param(P().labels(POD_LABEL).affinity_in("service", "region", ["securityscan", "value2"])
                 .anti_in("service", "node", ["antivirusscan", "value2"]).obj(),
                 [P().labels(POD_LABEL).node("node1").anti_in("service", "zone", ["securityscan", "value2"]).obj()],
                 None, EXISTING,
                 id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod"),
    pytest.param(P().labels(POD_LABEL).affinity_not_in("service", "region", ["securityscan", "value2"]).obj(),
                 [P().label("service", "securityscan").node("node2").obj()], None, AFFINITY,
                 id="pod matches its own Label in PodAffinity and that matches the existing pod Labels"),
    pytest.param(P().labels(POD_LABEL).obj(),
                 [P().node("node1").labels(POD_LABEL).anti_in("service", "zone", ["securityscan", "value2"]).obj()],
                 None, EXISTING,
                 id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod"),
    pytest.param(P().labels(POD_LABEL).obj(),
                 [P().node("node1").labels(POD_LABEL).anti_not_in("service", "zone", ["securityscan", "value2"]).obj()],
                 SKIP, None,
                 id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod"),
    pytest.param(P().labels(POD_LABEL).anti_exists("service", "region").anti_exists("security", "region").obj(),
                 [P().node("node1").labels(POD_LABEL2).anti_exists("security", "zone").obj()], None, ANTI,
                 id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod"),
    pytest.param(P().labels(POD_LABEL).anti_exists("service", "zone").anti_exists("security", "zone").obj(),
                 [P().node("node1").labels(POD_LABEL2).anti_exists("security", "zone").obj()], None, ANTI,
                 id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms"),
    pytest.param(P().labels(POD_LABEL2).anti_exists("security", "zone").obj(),
                 [P().node("node1").labels(POD_LABEL).anti_exists("service", "zone").anti_exists("security", "zone").obj()],
                 None, EXISTING,
                 id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms"),
    pytest.param(P().labels({"abc": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj(),
                 [P().node("node1").labels({"def": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj()],
                 None, ANTI,
                 id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms"),
    pytest.param(P().labels({"def": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj(),
                 [P().node("node1").labels({"abc": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj()],
                 None, ANTI,
                 id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms"),
    pytest.param(P().labels(POD_LABEL).affinity_in("service", "region", ["{{.bad-value.}}"])
                 .affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
                 [], Status.unresolvable(BAD_VALUE_MSG), None,
                 id="PodAffinity fails PreFilter with an invalid affinity label syntax"),
    pytest.param(P().labels(POD_LABEL).affinity_in("service", "region", ["foo"])
                 .affinity_in("service", "node", ["{{.bad-value.}}"]).obj(),
                 [], Status.unresolvable(BAD_VALUE_MSG), None,
                 id="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax"),
    pytest.param(pod_with_terms("", POD_LABEL2, affinity=[_ns_selector_term("region")]),
                 [Pod(name="", namespace="subteam1.team1", uid="e1", labels=POD_LABEL, node_name="node1")],
                 None, None, id="affinity with NamespaceSelector"),
    pytest.param(pod_with_terms("", POD_LABEL2, affinity=[_ns_selector_term("region")]),
                 [Pod(name="", namespace="subteam1.team2", uid="e1", labels=POD_LABEL, node_name="node1")],
                 None, AFFINITY, id="affinity with non-matching NamespaceSelector"),
    pytest.param(pod_with_terms("subteam1.team1", POD_LABEL2, anti=[_ns_selector_term("zone")]),
                 [Pod(name="", namespace="subteam2.team1", uid="e1", labels=POD_LABEL, node_name="node1")],
                 None, ANTI, id="anti-affinity with matching NamespaceSelector"),
    pytest.param(pod_with_terms("subteam1.team1", POD_LABEL2, anti=[
        term("zone", sel(req("service", "In", "securityscan", "value2")), namespace_selector=sel())]),
                 [Pod(name="", namespace="subteam2.team1", uid="e1", labels=POD_LABEL, node_name="node1")],
                 None, ANTI, id="anti-affinity with matching all NamespaceSelector"),
    pytest.param(pod_with_terms("subteam1.team1", POD_LABEL2, anti=[_ns_selector_term("zone")]),
                 [Pod(name="", namespace="subteam1.team2", uid="e1", labels=POD_LABEL, node_name="node1")],
                 None, None, id="anti-affinity with non-matching NamespaceSelector"),
]


@pytest.mark.parametrize("pod, pods, want_pre_filter, want_filter", SINGLE_NODE_CASES)
def test_required_affinity_single_node(pod, pods, want_pre_filter, want_filter):
    plugin, snapshot = setup(pods, [NODE1], NAMESPACES)
    state = CycleState()
    status = _pre_filter_status(plugin.pre_filter(state, pod, snapshot.node_infos()))
    assert status == want_pre_filter
    if status is not None:
        return
    assert plugin.filter(state, pod, snapshot.get("node1")) == want_filter


# --------------------------------------------------------------------------- TestRequiredAffinityMultipleNodes

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


_AB_Z1_Z2 = [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
             node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})]
_AB_Z1_Z1 = [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
             node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})]

MULTI_NODE_CASES = [
    pytest.param(P().affinity_in("foo", "region", ["bar"]).obj(),
                 [P().name("p1").node("node1").labels({"foo": "bar"}).obj()],
                 [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
                 None, [None, None, AFFINITY],
                 id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules"),
    pytest.param(P().labels({"foo": "bar", "service": "securityscan"}).affinity_in("foo", "zone", ["bar"])
                 .affinity_in("service", "zone", ["securityscan"]).obj(),
                 [P().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
                 [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
                 None, [None, None],
                 id="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection "
                    "should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere."),
    pytest.param(P().labels({"foo": "bar", "service": "securityscan"}).affinity_in("foo", "zone", ["bar"])
                 .affinity_in("service", "zone", ["securityscan"]).obj(),
                 [P().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
                 [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
                 None, [AFFINITY, AFFINITY],
                 id="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys"),
    pytest.param(P().anti_in("foo", "region", ["abc"]).obj(),
                 [P().node("nodeA").labels({"foo": "abc"}).obj()],
                 [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
                 None, [ANTI, ANTI],
                 id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB."),
    pytest.param(P().anti_in("foo", "region", ["abc"]).anti_in("service", "zone", ["securityscan"]).obj(),
                 [P().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
                 [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
                  node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
                 None, [ANTI, ANTI],
                 id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod."),
    pytest.param(P().anti_in("foo", "region", ["abc"]).obj(),
                 [P().node("nodeA").labels({"foo": "abc"}).obj()],
                 [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
                 None, [ANTI, ANTI, None],
                 id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC"),
    pytest.param(P().namespace("NS1").labels({"foo": "123"}).anti_in("foo", "region", ["bar"]).obj(),
                 [P().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
                  P().node("nodeC").namespace("NS2").anti_in("foo", "region", ["123"]).obj()],
                 [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
                 None, [ANTI, ANTI, None],
                 id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)"),
    pytest.param(P().label("foo", "").obj(),
                 [P().node("nodeA").anti_exists("foo", "invalid-node-label").obj()],
                 _AB_Z1_Z1, SKIP, [None, None],
                 id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked"),
    pytest.param(P().node("nodeA").anti_exists("foo", "invalid-node-label").obj(),
                 [P().node("nodeA").labels({"foo": ""}).obj()],
                 _AB_Z1_Z1, None, [None, None],
                 id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches"),
    pytest.param(P().label("foo", "").label("bar", "").obj(),
                 [P().node("nodeA").anti_exists("foo", "zone").obj(),
                  P().node("nodeA").anti_exists("bar", "region").obj()],
                 _AB_Z1_Z2, None, [EXISTING, EXISTING],
                 id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes"),
    pytest.param(P().anti_exists("foo", "zone").anti_exists("bar", "region").obj(),
                 [P().node("nodeA").labels({"foo": ""}).obj(), P().node("nodeB").labels({"bar": ""}).obj()],
                 _AB_Z1_Z2, None, [ANTI, ANTI],
                 id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod"),
    pytest.param(P().label("foo", "").label("bar", "").obj(),
                 [P().node("nodeA").anti_exists("foo", "invalid-node-label").anti_exists("bar", "zone").obj()],
                 _AB_Z1_Z2, None, [EXISTING, None],
                 id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey"),
    pytest.param(P().anti_exists("foo", "invalid-node-label").anti_exists("bar", "zone").obj(),
                 [P().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
                 _AB_Z1_Z2, None, [ANTI, None],
                 id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey"),
    pytest.param(P().label("foo", "").label("bar", "").obj(),
                 [P().node("nodeA").anti_exists("foo", "region").anti_exists("bar", "zone").obj()],
                 _AB_Z1_Z2, None, [EXISTING, EXISTING],
                 id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey"),
    pytest.param(P().anti_exists("foo", "region").anti_exists("bar", "zone").obj(),
                 [P().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
                 _AB_Z1_Z2, None, [ANTI, ANTI],
                 id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey"),
    pytest.param(P().label("foo", "").label("bar", "").obj(),
                 [P().node("nodeA").anti_exists("foo", "zone").anti_exists("labelA", "zone").obj(),
                  P().node("nodeB").anti_exists("bar", "zone").anti_exists("labelB", "zone").obj()],
                 _AB_Z1_Z2 + [node("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
                 None, [EXISTING, EXISTING, None],
                 id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC"),
    pytest.param(P().affinity_exists("foo", "region").affinity_exists("bar", "zone").obj(),
                 [P().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
                 _AB_Z1_Z1, None, [None, None],
                 id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match"),
    pytest.param(P().affinity_exists("foo", "region").affinity_exists("bar", "zone").obj(),
                 [P().node("nodeA").name("pod1").labels({"foo": ""}).obj(),
                  P().node("nodeB").name("pod2").labels({"bar": ""}).obj()],
                 _AB_Z1_Z2, None, [AFFINITY, AFFINITY],
                 id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod"),
]


@pytest.mark.parametrize("pod, pods, nodes, want_pre_filter, want_filters", MULTI_NODE_CASES)
def test_required_affinity_multiple_nodes(pod, pods, nodes, want_pre_filter, want_filters):
    plugin, snapshot = setup(pods, nodes, [Namespace("NS1")])
    state = CycleState()
    status = _pre_filter_status(plugin.pre_filter(state, pod, snapshot.node_infos()))
    assert status == want_pre_filter
    if status is not None and status.code is Code.Skip:
        return
    got = [plugin.filter(state, pod, snapshot.get(n.name)) for n in nodes]
    assert got == want_filters


# --------------------------------------------------------------------------- TestPreFilterDisabled

def test_pre_filter_disabled():
    plugin = InterPodAffinity({}, Handle())
    from kschedfw.fwk.types import NodeInfo
    status = plugin.filter(CycleState(), Pod(name="", namespace=""), NodeInfo(node=Node(name="")))
    assert status.code is Code.Error
    assert status.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


def test_pre_filter_extensions_without_state_are_errors():
    plugin = InterPodAffinity({}, Handle())
    from kschedfw.fwk.types import NodeInfo
    ni = NodeInfo(node=Node(name="n"))
    for hook in (plugin.pre_filter_add_pod, plugin.pre_filter_remove_pod):
        status = hook(CycleState(), Pod(name="a"), Pod(name="b"), ni)
        assert status.code is Code.Error
        assert status.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# --------------------------------------------------------------------------- TestPreFilterStateAddRemovePod

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = (term("region", sel(req("foo", "In", "bar"))),)
ANTI_COMPLEX = (term("region", sel(req("foo", "In", "bar", "buzz"))),
                term("zone", sel(req("service", "NotIn", "bar", "security", "test"))))
AFFINITY_COMPLEX = ANTI_COMPLEX
ADD_REMOVE_NODES = [node("nodeA", LABEL1), node("nodeB", LABEL2), node("nodeC", LABEL3)]


def _pod(name, labels=None, node_name="", affinity=(), anti=()):
    aff = None
    if affinity or anti:
        aff = Affinity(pod_affinity=PodAffinity(tuple(affinity)) if affinity else None,
                       pod_anti_affinity=PodAffinity(tuple(anti)) if anti else None)
    return Pod(name=name, namespace="", uid=name, labels=dict(labels or {}), node_name=node_name,
               affinity=aff)


ADD_REMOVE_CASES = [
    pytest.param(
        _pod("pending", SELECTOR1, anti=ANTI_FOO_BAR),
        [_pod("p1", SELECTOR1, "nodeA"), _pod("p2", None, "nodeC", anti=ANTI_FOO_BAR)],
        _pod("addedPod", SELECTOR1, "nodeB", anti=ANTI_FOO_BAR),
        {("region", "r1"): 2}, {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod"),
    pytest.param(
        _pod("pending", SELECTOR1, anti=ANTI_COMPLEX),
        [_pod("p1", SELECTOR1, "nodeA"), _pod("p2", None, "nodeC", anti=ANTI_FOO_BAR)],
        _pod("addedPod", SELECTOR1, "nodeA", anti=ANTI_COMPLEX),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod, second case"),
    pytest.param(
        _pod("pending", SELECTOR1, affinity=AFFINITY_COMPLEX),
        [_pod("p1", SELECTOR1, "nodeA"),
         _pod("p2", None, "nodeC", affinity=AFFINITY_COMPLEX, anti=ANTI_FOO_BAR)],
        _pod("addedPod", SELECTOR1, "nodeA", anti=ANTI_COMPLEX),
        {}, {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod"),
]


def _state_of(pending, pods):
    plugin, snapshot = setup(pods, ADD_REMOVE_NODES)
    state = CycleState()
    status = _pre_filter_status(plugin.pre_filter(state, pending, snapshot.node_infos()))
    assert status is None
    return plugin, state, snapshot


def _counts(s: PreFilterState):
    return (count_pairs(s.existing_anti_affinity_counts), count_pairs(s.affinity_counts),
            count_pairs(s.anti_affinity_counts))


@pytest.mark.parametrize("pending, existing, added, want_anti, want_affinity", ADD_REMOVE_CASES)
def test_pre_filter_state_add_remove_pod(pending, existing, added, want_anti, want_affinity):
    _, all_state, _ = _state_of(pending, existing + [added])
    all_pods_state = all_state.read(PRE_FILTER_STATE_KEY)

    plugin, cycle_state, snapshot = _state_of(pending, existing)
    state = cycle_state.read(PRE_FILTER_STATE_KEY)
    original = state.clone()

    node_info = snapshot.get(added.node_name)
    assert plugin.pre_filter_add_pod(cycle_state, pending, added, node_info) is None
    new_state = cycle_state.read(PRE_FILTER_STATE_KEY)
    assert count_pairs(new_state.anti_affinity_counts) == want_anti
    assert count_pairs(new_state.affinity_counts) == want_affinity
    assert _counts(state) == _counts(all_pods_state)

    assert plugin.pre_filter_remove_pod(cycle_state, pending, added, node_info) is None
    assert _counts(state) == _counts(original)


def test_add_pod_on_cloned_cycle_state_leaves_original_untouched():
    pending = _pod("pending", SELECTOR1, anti=ANTI_FOO_BAR)
    plugin, cycle_state, snapshot = _state_of(pending, [_pod("p2", None, "nodeC", anti=ANTI_FOO_BAR)])
    before = _counts(cycle_state.read(PRE_FILTER_STATE_KEY))
    cloned = cycle_state.clone()
    added = _pod("addedPod", SELECTOR1, "nodeB", anti=ANTI_FOO_BAR)
    plugin.pre_filter_add_pod(cloned, pending, added, snapshot.get("nodeB"))
    assert _counts(cycle_state.read(PRE_FILTER_STATE_KEY)) == before
    assert _counts(cloned.read(PRE_FILTER_STATE_KEY)) != before
    # nodeB (region r1) now hosts a pod whose anti-affinity selects the pending pod, and vice versa.
    assert plugin.filter(cloned, pending, snapshot.get("nodeA")) == ANTI
    assert plugin.filter(cycle_state, pending, snapshot.get("nodeA")) is None


# --------------------------------------------------------------------------- TestPreFilterStateClone

def test_pre_filter_state_clone():
    source = PreFilterState(Pod(name="p"), (), (), None)
    source.existing_anti_affinity_counts = {"name": {"node1": 1, "node2": 1}}
    source.affinity_counts = {"name": {"nodeA": 1, "nodeC": 2}}
    source.anti_affinity_counts = {"name": {"nodeN": 3, "nodeM": 1}}
    clone = source.clone()
    assert clone is not source
    assert _counts(clone) == _counts(source)
    clone.affinity_counts["name"]["nodeA"] = 5
    assert source.affinity_counts["name"]["nodeA"] == 1


# --------------------------------------------------------------------------- TestGetTPMapMatchingIncomingAffinityAntiAffinity

def _normal(*labels):
    b = P().name("normal").node("nodeA")
    for label in labels:
        b.label(label, "")
    return b.obj()


NORMAL_A, NORMAL_B, NORMAL_AB = _normal("aaa"), _normal("bbb"), _normal("aaa", "bbb")
NODE_A = node("nodeA", {"hostname": "nodeA"})
H_A = {("hostname", "nodeA"): 1}

TP_MAP_CASES = [
    pytest.param([], P().name("aaa-normal").obj(), {}, {}, id="nil test"),
    pytest.param([NORMAL_A], P().name("aaa-normal").obj(), {}, {},
                 id="incoming pod without affinity/anti-affinity causes a no-op"),
    pytest.param([NORMAL_B], P().name("aaa-anti").affinity_exists("aaa", "hostname")
                 .anti_exists("aaa", "hostname").obj(), {}, {},
                 id="no pod has label that violates incoming pod's affinity and anti-affinity"),
    pytest.param([NORMAL_A], P().name("affi-antiaffi").affinity_exists("aaa", "hostname")
                 .anti_exists("aaa", "hostname").obj(), H_A, H_A,
                 id="existing pod matches incoming pod's affinity and anti-affinity - single term case"),
    pytest.param([NORMAL_AB], P().name("affi-antiaffi").affinity_exists("aaa", "hostname")
                 .affinity_exists("bbb", "hostname").anti_exists("aaa", "hostname").obj(),
                 {("hostname", "nodeA"): 2}, H_A,
                 id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case"),
    pytest.param([NORMAL_A], P().name("affi-antiaffi").affinity_exists("aaa", "hostname")
                 .affinity_exists("bbb", "hostname").anti_exists("aaa", "hostname")
                 .anti_exists("bbb", "hostname").obj(), {}, H_A,
                 id="existing pod not match incoming pod's affinity but matches anti-affinity"),
    pytest.param([NORMAL_AB], P().name("anaffi-antiaffiti").affinity_exists("aaa", "hostname")
                 .affinity_exists("ccc", "hostname").anti_exists("aaa", "hostname")
                 .anti_exists("ccc", "hostname").obj(), {}, H_A,
                 id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1"),
    pytest.param([NORMAL_B], P().name("affi-antiaffi").affinity_exists("aaa", "hostname")
                 .affinity_exists("bbb", "hostname").anti_exists("aaa", "hostname")
                 .anti_exists("bbb", "hostname").obj(), {}, H_A,
                 id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2"),
]


@pytest.mark.parametrize("existing, pod, want_affinity, want_anti", TP_MAP_CASES)
def test_get_tp_map_matching_incoming_affinity_anti_affinity(existing, pod, want_affinity, want_anti):
    snapshot = Snapshot.from_objects([NODE_A], existing)
    terms = pod_terms(pod)
    affinity, anti = incoming_affinity_anti_affinity_counts(
        terms.required_affinity, terms.required_anti_affinity, snapshot.node_infos())
    assert count_pairs(affinity) == want_affinity
    assert count_pairs(anti) == want_anti


# --------------------------------------------------------------------------- beyond upstream's tables

def test_pre_filter_uses_nodes_argument_when_snapshot_is_empty():
    existing = P().node("nodeA").label("foo", "").anti_exists("foo", "zone").obj()
    snapshot = Snapshot.from_objects(_AB_Z1_Z2, [existing])
    plugin = InterPodAffinity({}, Handle())  # no snapshot in the handle
    pod = P().label("foo", "").obj()
    state = CycleState()
    assert _pre_filter_status(plugin.pre_filter(state, pod, snapshot.node_infos())) is None
    assert [plugin.filter(state, pod, ni) for ni in snapshot.node_infos()] == [EXISTING, None]


def test_pod_without_affinity_in_cluster_without_affinity_is_skipped():
    pods = [P().node(f"n{i}").label("app", "x").obj() for i in range(50)]
    plugin, snapshot = setup(pods, [node(f"n{i}", {"zone": f"z{i % 3}"}) for i in range(50)])
    assert _pre_filter_status(plugin.pre_filter(CycleState(), P().label("app", "x").obj(),
                                                snapshot.node_infos())) == SKIP


def test_match_label_keys_are_merged_into_the_selector():
    # matchLabelKeys: only pods with the same "version" as the incoming pod count.
    t = term("zone", sel(req("app", "In", "web")), match_label_keys=["version"])
    pod = P().labels({"app": "web", "version": "v2"}).anti(t).obj()
    nodes = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"})]
    pods = [P().node("a").labels({"app": "web", "version": "v1"}).obj(),
            P().node("b").labels({"app": "web", "version": "v2"}).obj()]
    plugin, snapshot = setup(pods, nodes)
    state = CycleState()
    assert _pre_filter_status(plugin.pre_filter(state, pod, snapshot.node_infos())) is None
    assert [plugin.filter(state, pod, snapshot.get(n)) for n in "ab"] == [None, ANTI]


def test_mismatch_label_keys_are_merged_into_the_selector():
    # mismatchLabelKeys: keep away from web pods of *other* tenants.
    t = term("zone", sel(req("app", "In", "web")), mismatch_label_keys=["tenant"])
    pod = P().labels({"app": "web", "tenant": "t1"}).anti(t).obj()
    nodes = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"})]
    pods = [P().node("a").labels({"app": "web", "tenant": "t1"}).obj(),
            P().node("b").labels({"app": "web", "tenant": "t2"}).obj()]
    plugin, snapshot = setup(pods, nodes)
    state = CycleState()
    assert _pre_filter_status(plugin.pre_filter(state, pod, snapshot.node_infos())) is None
    assert [plugin.filter(state, pod, snapshot.get(n)) for n in "ab"] == [None, ANTI]


def test_match_label_keys_missing_on_pod_are_ignored():
    t = term("zone", sel(req("app", "In", "web")), match_label_keys=["version"])
    terms = pod_terms(P().labels({"app": "web"}).affinity(t).obj())
    assert terms.required_affinity[0].selector == sel(req("app", "In", "web"))


def test_invalid_label_key_is_rejected_at_pre_filter():
    pod = P().affinity(term("zone", LabelSelector({}, (req("bad key", "Exists"),)))).obj()
    plugin, snapshot = setup([], [node("a", {"zone": "z"})])
    status = _pre_filter_status(plugin.pre_filter(CycleState(), pod, snapshot.node_infos()))
    assert status.code is Code.UnschedulableAndUnresolvable
    assert status.message() == (
        'parsing pod: requiredAffinityTerms: key: Invalid value: "bad key": name part must consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def test_manifests_end_to_end():
    from kschedfw.testing import make_node, make_pod

    web_anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    cache_aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["cache"]}]},
        "topologyKey": "zone"}]}}

    nodes = [make_node("n1", labels={"zone": "a"}), make_node("n2", labels={"zone": "a"}),
             make_node("n3", labels={"zone": "b"})]
    pods = [make_pod("web-1", uid="web-1", labels={"app": "web"}, node_name="n1", affinity=web_anti),
            make_pod("cache-1", uid="cache-1", labels={"app": "cache"}, node_name="n2")]
    plugin, snapshot = setup(pods, nodes)
    incoming = make_pod("web-2", uid="web-2", labels={"app": "web"}, affinity={**web_anti, **cache_aff})
    state = CycleState()
    assert _pre_filter_status(plugin.pre_filter(state, incoming, snapshot.node_infos())) is None
    # n1: web-1 is there (anti-affinity both ways); n2: zone a has the cache; n3: zone b has none.
    assert [plugin.filter(state, incoming, snapshot.get(n)) for n in ("n1", "n2", "n3")] == [
        ANTI, None, AFFINITY]
