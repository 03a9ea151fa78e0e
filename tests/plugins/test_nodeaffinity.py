"""Port of upstream nodeaffinity/node_affinity_test.go (TestNodeAffinity incl. addedAffinity and
PreFilter results, TestNodeAffinityPriority, Test_isSchedulableAfterNodeChange)."""

import pytest

from kschedfw import testing as kit
from kschedfw.api import Node
from kschedfw.cache.snapshot import Snapshot
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kschedfw.framework.handle import Handle
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import MAX_NODE_SCORE, NodeInfo, NodeScore, PreFilterResult
from kschedfw.plugins.nodeaffinity import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD,
                                           NodeAffinity, SelectorParseError)

NAME_FIELD = "metadata.name"
REJECT_POD = (Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
REJECT_ENFORCED = (Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
SKIP = (Code.Skip, "")


def req(key, op, *values):
    d = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def term(exprs=None, fields=None):
    d = {}
    if exprs is not None:
        d["matchExpressions"] = exprs
    if fields is not None:
        d["matchFields"] = fields
    return d


def pod(required_terms=None, preferred=None, node_selector=None, node_affinity=None):
    na = dict(node_affinity or {})
    if required_terms is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    affinity = {"nodeAffinity": na} if na or node_affinity is not None else None
    return kit.make_pod("p", containers=[], node_selector=node_selector, affinity=affinity)


def added_required(*terms):
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def fmt(status):
    return None if status is None else (status.code, status.message())


# name, pod, labels, node name, want filter, want pre-filter status, want pre-filter result, args, run pre-filter
NODE_AFFINITY_CASES = [
    pytest.param(pod(node_selector={"foo": "bar"}), None, "", REJECT_POD, None, None, {}, True, id="missing labels"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar"}, "", None, None, None, {}, True, id="same labels"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None, None, {}, True,
                 id="node labels are superset"),
    pytest.param(pod(node_selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", REJECT_POD, None, None, {}, True,
                 id="node labels are subset"),
    pytest.param(pod([term([req("foo", "In", "bar", "value2")])]), {"foo": "bar"}, "", None, None, None, {}, True,
                 id="Pod with matchExpressions using In operator that matches the existing node"),
    pytest.param(pod([term([req("kernel-version", "Gt", "0204")])]), {"kernel-version": "0206"}, "",
                 None, None, None, {}, True,
                 id="Pod with matchExpressions using Gt operator that matches the existing node"),
    pytest.param(pod([term([req("mem-type", "NotIn", "DDR", "DDR2")])]), {"mem-type": "DDR3"}, "",
                 None, None, None, {}, True,
                 id="Pod with matchExpressions using NotIn operator that matches the existing node"),
    pytest.param(pod([term([req("GPU", "Exists")])]), {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, {}, True,
                 id="Pod with matchExpressions using Exists operator that matches the existing node"),
    pytest.param(pod([term([req("foo", "In", "value1", "value2")])]), {"foo": "bar"}, "", REJECT_POD, None, None, {},
                 True, id="Pod with affinity that don't match node's labels won't schedule onto the node"),
    pytest.param(pod([term([])]), {"foo": "bar"}, "", REJECT_POD, None, None, {}, True,
                 id="Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule "
                    "onto the node"),
    pytest.param(pod(), {"foo": "bar"}, "", None, SKIP, None, {}, True,
                 id="Pod with no Affinity will schedule onto a node"),
    pytest.param(pod(node_affinity={}), {"foo": "bar"}, "", None, SKIP, None, {}, True,
                 id="Pod with Affinity but nil NodeSelector will schedule onto a node"),
    pytest.param(pod([term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")])]), {"GPU": "NVIDIA-GRID-K1"},
                 "", None, None, None, {}, True,
                 id="Pod with multiple matchExpressions ANDed that matches the existing node"),
    pytest.param(pod([term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")])]), {"GPU": "NVIDIA-GRID-K1"},
                 "", REJECT_POD, None, None, {}, True,
                 id="Pod with multiple matchExpressions ANDed that doesn't match the existing node"),
    pytest.param(pod([term([req("foo", "In", "bar", "value2")]), term([req("diffkey", "In", "wrong", "value2")])]),
                 {"foo": "bar"}, "", None, None, None, {}, True,
                 id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will "
                    "schedule onto the node"),
    pytest.param(pod([term([req("foo", "Exists")])], node_selector={"foo": "bar"}), {"foo": "bar"}, "",
                 None, None, None, {}, True,
                 id="Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
                    "satisfied, will schedule onto the node"),
    pytest.param(pod([term([req("foo", "Exists")])], node_selector={"foo": "bar"}), {"foo": "barrrrrr"}, "",
                 REJECT_POD, None, None, {}, True,
                 id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we "
                    "are deprecating) is not satisfied, won't schedule onto the node"),
    pytest.param(pod([term([req("foo", "NotIn", "invalid value: ___@#$%^")])]), {"foo": "bar"}, "",
                 REJECT_POD, None, None, {}, True,
                 id="Pod with an invalid value in Affinity term won't be scheduled onto the node"),
    pytest.param(pod([term(fields=[req(NAME_FIELD, "In", "node1")])]), None, "node1",
                 None, None, PreFilterResult(frozenset({"node1"})), {}, True,
                 id="Pod with matchFields using In operator that matches the existing node"),
    pytest.param(pod([term(fields=[req(NAME_FIELD, "In", "node1")])]), None, "node2",
                 REJECT_POD, None, PreFilterResult(frozenset({"node1"})), {}, True,
                 id="Pod with matchFields using In operator that does not match the existing node"),
    pytest.param(pod([term(fields=[req(NAME_FIELD, "In", "node1"), req(NAME_FIELD, "In", "node2")]),
                      term([req("foo", "In", "bar")])]), {"foo": "bar"}, "node2", None, None, None, {}, True,
                 id="Pod with two terms: matchFields does not match, but matchExpressions matches"),
    pytest.param(pod([term([req("foo", "In", "bar")], [req(NAME_FIELD, "In", "node1")])]), {"foo": "bar"}, "node2",
                 REJECT_POD, None, PreFilterResult(frozenset({"node1"})), {}, True,
                 id="Pod with one term: matchFields does not match, but matchExpressions matches"),
    pytest.param(pod([term([req("foo", "In", "bar")], [req(NAME_FIELD, "In", "node1")])]), {"foo": "bar"}, "node1",
                 None, None, PreFilterResult(frozenset({"node1"})), {}, True,
                 id="Pod with one term: both matchFields and matchExpressions match"),
    pytest.param(pod([term(fields=[req(NAME_FIELD, "In", "node1")]), term([req("foo", "In", "not-match-to-bar")])]),
                 {"foo": "bar"}, "node2", REJECT_POD, None, None, {}, True,
                 id="Pod with two terms: both matchFields and matchExpressions do not match"),
    pytest.param(pod([term(fields=[req(NAME_FIELD, "In", "node1")]), term(fields=[req(NAME_FIELD, "In", "node2")])]),
                 None, "node2", None, None, PreFilterResult(frozenset({"node1", "node2"})), {}, True,
                 id="Pod with two terms of node.Name affinity"),
    pytest.param(pod([term(fields=[req(NAME_FIELD, "In", "node1"), req(NAME_FIELD, "In", "node2")])]),
                 {"foo": "bar"}, "node2", REJECT_POD, (Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT), None,
                 {}, True, id="Pod with two conflicting mach field requirements"),
    pytest.param(pod([term([req("zone", "In", "foo")])]), {"zone": "foo"}, "node2", None, None, None,
                 added_required(term(fields=[req(NAME_FIELD, "In", "node2")])), True,
                 id="Matches added affinity and Pod's node affinity"),
    pytest.param(pod([term([req("zone", "In", "bar")])]), {"zone": "foo"}, "node2", REJECT_POD, None, None,
                 added_required(term(fields=[req(NAME_FIELD, "In", "node2")])), True,
                 id="Matches added affinity but not Pod's node affinity"),
    pytest.param(pod(), {"zone": "foo"}, "node2", REJECT_ENFORCED, None, None,
                 added_required(term([req("zone", "In", "bar")])), True, id="Doesn't match added affinity"),
    pytest.param(pod(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None, None, {}, False,
                 id="Matches node selector correctly even if PreFilter is not called"),
    pytest.param(pod([term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")])]), {"GPU": "NVIDIA-GRID-K1"},
                 "", None, None, None, {}, False,
                 id="Matches node affinity correctly even if PreFilter is not called"),
]


@pytest.mark.parametrize("pod,labels,node_name,want_status,want_pre_filter_status,want_pre_filter_result,args,"
                         "run_pre_filter", NODE_AFFINITY_CASES)
def test_node_affinity(pod, labels, node_name, want_status, want_pre_filter_status, want_pre_filter_result, args,
                       run_pre_filter):
    node = Node(name=node_name, labels=dict(labels or {}))
    pl = NodeAffinity(args, None)
    state = CycleState()
    if run_pre_filter:
        result, status = pl.pre_filter(state, pod, None)
        assert fmt(status) == want_pre_filter_status
        assert result == want_pre_filter_result
    assert fmt(pl.filter(state, pod, NodeInfo(node=node))) == want_status


def test_match_fields_ignored_for_a_node_without_a_name():
    # Upstream's field selector is only consulted when the node has a name.
    p = pod([term(fields=[req(NAME_FIELD, "In", "node1")])])
    assert NodeAffinity({}, None).filter(CycleState(), p, NodeInfo(node=Node(name=""))) is None


def test_match_fields_not_in():
    p = pod([term(fields=[req(NAME_FIELD, "NotIn", "node1")])])
    pl = NodeAffinity({}, None)
    state = CycleState()
    assert pl.pre_filter(state, p, None) == (None, None)
    assert fmt(pl.filter(state, p, NodeInfo(node=Node(name="node1")))) == REJECT_POD
    assert pl.filter(state, p, NodeInfo(node=Node(name="node2"))) is None


# --------------------------------------------------------------------------- TestNodeAffinityPriority

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

PREFERRED1 = [{"weight": 2, "preference": term([req("foo", "In", "bar")])}]
PREFERRED2 = [
    {"weight": 2, "preference": term([req("foo", "In", "bar")])},
    {"weight": 4, "preference": term([req("key", "In", "value")])},
    {"weight": 5, "preference": term([req("foo", "In", "bar"), req("key", "In", "value"), req("az", "In", "az1")])},
]

BROKEN_KEY_ERROR = (
    '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '
    "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def nodes(*pairs):
    return [kit.make_node(name, labels=labels, hostname_label=False) for name, labels in pairs]


PRIORITY_CASES = [
    pytest.param(pod(), nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
                 [("node1", 0), ("node2", 0), ("node3", 0)], {}, False, None,
                 id="all nodes are same priority as NodeAffinity is nil"),
    pytest.param(pod(), nodes(("node1", LABEL1)), None, {}, True, SKIP,
                 id="Skip is returned in PreScore when NodeAffinity is nil"),
    pytest.param(pod(preferred=[{"weight": 2, "preference": term([req("invalid key", "In", "bar")])}]),
                 nodes(("node1", LABEL1)), None, {}, True, (Code.Error, BROKEN_KEY_ERROR),
                 id="PreScore returns error when an incoming Pod has a broken affinity"),
    pytest.param(pod(preferred=PREFERRED1), nodes(("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)),
                 [("node1", 0), ("node2", 0), ("node3", 0)], {}, True, None,
                 id="no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
                    "priority is zero"),
    pytest.param(pod(preferred=PREFERRED1), nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)),
                 [("node1", MAX_NODE_SCORE), ("node2", 0), ("node3", 0)], {}, True, None,
                 id="only node1 matches the preferred scheduling requirements of pod"),
    pytest.param(pod(preferred=PREFERRED2), nodes(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
                 [("node1", 18), ("node5", MAX_NODE_SCORE), ("node2", 36)], {}, True, None,
                 id="all nodes matches the preferred scheduling requirements of pod but with different priorities "),
    pytest.param(pod(), nodes(("node1", LABEL1), ("node2", LABEL2)),
                 [("node1", MAX_NODE_SCORE), ("node2", 0)],
                 {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": PREFERRED1}}, True, None,
                 id="added affinity"),
    pytest.param(pod(preferred=PREFERRED1), nodes(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)),
                 [("node1", 40), ("node2", 60), ("node3", MAX_NODE_SCORE)],
                 {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 3, "preference": term([req("key", "In", "value")])}]}}, True, None,
                 id="added affinity and pod has default affinity"),
    pytest.param(pod(preferred=PREFERRED2), nodes(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
                 [("node1", 18), ("node5", MAX_NODE_SCORE), ("node2", 36)], {}, False, None,
                 id="calculate the priorities correctly even if PreScore is not called"),
]


@pytest.mark.parametrize("pod,node_list,expected,args,run_pre_score,want_pre_score", PRIORITY_CASES)
def test_node_affinity_priority(pod, node_list, expected, args, run_pre_score, want_pre_score):
    snapshot = Snapshot.from_objects(node_list)
    pl = NodeAffinity(args, Handle(snapshot=snapshot))
    state = CycleState()
    if run_pre_score:
        status = pl.pre_score(state, pod, snapshot.node_infos())
        assert fmt(status) == want_pre_score
        if status is not None:
            return
    scores = []
    for ni in snapshot.node_infos():
        got = pl.score(state, pod, ni)
        assert isinstance(got, int), got
        scores.append(NodeScore(ni.name, got))
    assert pl.normalize_score(state, pod, scores) is None
    assert [(s.name, s.score) for s in scores] == expected


def test_score_without_pre_score_reports_broken_affinity():
    p = pod(preferred=[{"weight": 2, "preference": term([req("invalid key", "In", "bar")])}])
    status = NodeAffinity({}, None).score(CycleState(), p, NodeInfo(node=Node(name="n", labels=LABEL1)))
    assert isinstance(status, Status) and (status.code, status.message()) == (Code.Error, BROKEN_KEY_ERROR)


def test_added_affinity_parse_error():
    with pytest.raises(ValueError, match=r"^parsing addedAffinity\.requiredDuringSchedulingIgnoredDuringExecution: "
                                         r"nodeSelectorTerms\[0\]\.matchExpressions\[0\]\.key: Invalid value: "
                                         r'"bad key"'):
        NodeAffinity(added_required(term([req("bad key", "Exists")])), None)


# --------------------------------------------------------------------------- Test_isSchedulableAfterNodeChange

POD_WITH_NODE_AFFINITY = pod([term([req("foo", "In", "bar")])])
ADDED_FOO_BAR = added_required(term([req("foo", "In", "bar")]))


def mk_node(labels=None, capacity=None):
    return kit.make_node("n", labels=labels, capacity=capacity or {}, hostname_label=False, ready=False)


@pytest.mark.parametrize("args,old,new,expected", [
    pytest.param({}, None, "not-a-node", TypeError, id="backoff-wrong-new-object"),
    pytest.param({}, "not-a-node", mk_node(), TypeError, id="backoff-wrong-old-object"),
    pytest.param({}, None, mk_node(), QueueingHint.QueueSkip, id="skip-queue-on-add"),
    pytest.param({}, None, mk_node({"foo": "bar"}), QueueingHint.Queue, id="queue-on-add"),
    pytest.param({}, mk_node(), mk_node(capacity={"cpu": 0}), QueueingHint.QueueSkip, id="skip-unrelated-changes"),
    pytest.param({}, mk_node(), mk_node({"k": "v"}), QueueingHint.QueueSkip, id="skip-unrelated-changes-on-labels"),
    pytest.param({}, mk_node({"foo": "bar"}), mk_node({"k": "v"}), QueueingHint.QueueSkip,
                 id="skip-labels-changes-on-node-from-suitable-to-unsuitable"),
    pytest.param({}, mk_node(), mk_node({"foo": "bar"}), QueueingHint.Queue,
                 id="queue-on-labels-change-makes-pod-schedulable"),
    pytest.param({}, mk_node({"foo": "bar"}), mk_node({"foo": "bar"}, {"cpu": 0}), QueueingHint.QueueSkip,
                 id="skip-unrelated-change-that-keeps-pod-schedulable"),
    pytest.param(ADDED_FOO_BAR, None, mk_node(), QueueingHint.QueueSkip,
                 id="skip-queue-on-add-scheduler-enforced-node-affinity"),
    pytest.param(ADDED_FOO_BAR, None, mk_node({"foo": "bar"}), QueueingHint.Queue,
                 id="queue-on-add-scheduler-enforced-node-affinity"),
])
def test_is_schedulable_after_node_change(args, old, new, expected):
    pl = NodeAffinity(args, None)
    if expected is TypeError:
        with pytest.raises(TypeError):
            pl.is_schedulable_after_node_change(POD_WITH_NODE_AFFINITY, old, new)
        return
    assert pl.is_schedulable_after_node_change(POD_WITH_NODE_AFFINITY, old, new) is expected


def test_hint_raises_on_unparsable_affinity():
    # Upstream returns (Queue, err) when no term matched and some term could not be parsed.
    p = pod([term([req("foo", "NotIn", "bad value!")])])
    with pytest.raises(SelectorParseError):
        NodeAffinity({}, None).is_schedulable_after_node_change(p, None, mk_node({"foo": "bar"}))


def test_events_to_register():
    events = NodeAffinity({}, None).events_to_register()
    assert [e.event for e in events] == [ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)]
    assert events[0].queueing_hint_fn is not None
