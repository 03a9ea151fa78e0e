"""ProcessPreemption and the evaluator's callExtenders (upstream extender.go, preemption.go)."""

from __future__ import annotations

import pytest

from kschedfw.api import Pod
from kschedfw.preemption.extenders import call_extenders_for_preemption
from kschedfw.fwk.status import Code
from kschedfw.fwk.victims import Candidate, Victims
from kschedfw.testing.builders import make_cluster, make_node, make_pod
from tests.extenders.helpers import extender
from tests.extenders.server import Reply


def with_uid(pod: Pod, uid: str) -> Pod:
    return Pod.from_dict({**pod.raw, "metadata": {**pod.raw["metadata"], "uid": uid}})


VICTIM_A = with_uid(make_pod("a", node_name="n1", priority=1), "uid-a")
VICTIM_B = with_uid(make_pod("b", node_name="n1", priority=0), "uid-b")
VICTIM_C = with_uid(make_pod("c", node_name="n2", priority=0), "uid-c")
PREEMPTOR = with_uid(make_pod("p", priority=100), "uid-p")


@pytest.fixture
def snapshot():
    return make_cluster([make_node("n1"), make_node("n2")], [VICTIM_A, VICTIM_B, VICTIM_C])


def candidates():
    return [Candidate("n1", Victims([VICTIM_A, VICTIM_B], 1)), Candidate("n2", Victims([VICTIM_C], 0))]


def meta(**nodes):
    return {"NodeNameToMetaVictims": {n: {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": 0}
                                      for n, uids in nodes.items()}}


def test_full_victims_sent_and_answer_resolved_to_pods(extender_server, snapshot):
    server = extender_server({"preempt": lambda args: meta(n1=["uid-b"])})
    ext = extender(server.url, preemptVerb="preempt")
    result, status = call_extenders_for_preemption([ext], PREEMPTOR, candidates(), snapshot)
    assert status is None
    assert result == [Candidate("n1", Victims([VICTIM_B], 0))]
    args = server.requests[0][1]
    assert args["Pod"]["metadata"]["uid"] == "uid-p" and args["NodeNameToMetaVictims"] is None
    assert [p["metadata"]["name"] for p in args["NodeNameToVictims"]["n1"]["Pods"]] == ["a", "b"]
    assert args["NodeNameToVictims"]["n1"]["NumPDBViolations"] == 1
    assert "kind" not in args["NodeNameToVictims"]["n1"]["Pods"][0] and "kind" not in args["Pod"]


def test_node_cache_capable_gets_uids_only(extender_server, snapshot):
    server = extender_server({"preempt": lambda args: meta(n2=["uid-c"])})
    ext = extender(server.url, preemptVerb="preempt", nodeCacheCapable=True)
    result, status = call_extenders_for_preemption([ext], PREEMPTOR, candidates(), snapshot)
    assert status is None and result == [Candidate("n2", Victims([VICTIM_C], 0))]
    args = server.requests[0][1]
    assert args["NodeNameToVictims"] is None
    assert args["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": "uid-a"}, {"UID": "uid-b"}], "NumPDBViolations": 1},
        "n2": {"Pods": [{"UID": "uid-c"}], "NumPDBViolations": 0}}


def test_each_extender_sees_the_previous_result(extender_server, snapshot):
    first = extender_server({"preempt": lambda args: meta(n1=["uid-a", "uid-b"])})
    second = extender_server({"preempt": lambda args: meta(n1=["uid-a"])})
    exts = [extender(first.url, preemptVerb="preempt", nodeCacheCapable=True),
            extender(second.url, preemptVerb="preempt", nodeCacheCapable=True)]
    result, status = call_extenders_for_preemption(exts, PREEMPTOR, candidates(), snapshot)
    assert status is None and result == [Candidate("n1", Victims([VICTIM_A], 0))]
    assert list(second.requests[0][1]["NodeNameToMetaVictims"]) == ["n1"]


def test_no_preempt_verb_or_no_extenders_keeps_candidates(extender_server, snapshot):
    server = extender_server({})
    ext = extender(server.url, filterVerb="filter")
    assert call_extenders_for_preemption([ext], PREEMPTOR, candidates(), snapshot) == (candidates(), None)
    assert call_extenders_for_preemption([], PREEMPTOR, candidates(), snapshot) == (candidates(), None)
    assert server.requests == []


@pytest.mark.parametrize("answer, message", [
    pytest.param(meta(n1=[]), 'expected at least one victim pod on node "n1"', id="no-victims"),
    pytest.param(meta(n1=["uid-c"]), "extender: {url} claims to preempt pod (UID: &{{uid-c}}) on node: n1, "
                                     "but the pod is not found on that node", id="victim-not-on-node"),
    pytest.param(meta(n9=["uid-a"]), 'nodeinfo not found for node name "n9"', id="unknown-node"),
    pytest.param(Reply(500, b""), "failed preempt with extender at URL {url}/preempt, code 500", id="http-500"),
])
def test_non_ignorable_failure_is_an_error(extender_server, snapshot, answer, message):
    server = extender_server({"preempt": lambda args: answer})
    ext = extender(server.url, preemptVerb="preempt")
    result, status = call_extenders_for_preemption([ext], PREEMPTOR, candidates(), snapshot)
    assert result == [] and status.code is Code.Error
    assert status.message() == message.format(url=server.url)


def test_ignorable_extender_failure_is_skipped(extender_server, snapshot):
    server = extender_server({"preempt": lambda args: Reply(500, b"")})
    ext = extender(server.url, preemptVerb="preempt", ignorable=True)
    assert call_extenders_for_preemption([ext], PREEMPTOR, candidates(), snapshot) == (candidates(), None)


def test_ignorable_extender_nodes_without_victims_are_dropped(extender_server, snapshot):
    server = extender_server({"preempt": lambda args: meta(n1=[], n2=["uid-c"])})
    ext = extender(server.url, preemptVerb="preempt", ignorable=True)
    result, status = call_extenders_for_preemption([ext], PREEMPTOR, candidates(), snapshot)
    assert status is None and result == [Candidate("n2", Victims([VICTIM_C], 0))]


def test_emptied_candidate_list_stops_the_loop(extender_server, snapshot):
    first = extender_server({"preempt": lambda args: {"NodeNameToMetaVictims": {}}})
    second = extender_server({"preempt": lambda args: meta(n1=["uid-a"])})
    exts = [extender(first.url, preemptVerb="preempt"), extender(second.url, preemptVerb="preempt")]
    assert call_extenders_for_preemption(exts, PREEMPTOR, candidates(), snapshot) == ([], None)
    assert second.requests == []
