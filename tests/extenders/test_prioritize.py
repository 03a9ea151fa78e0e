"""prioritizeNodes with extenders: score × weight × (MaxNodeScore / MaxExtenderPriority), summed."""

from __future__ import annotations

import pytest

from kschedfw.extenders import extender_scores, prioritize_with_extenders
from tests.extenders.helpers import extender, make_pod, node_infos
from tests.extenders.server import Reply


def scores(table):
    return lambda args: [{"Host": host, "Score": score} for host, score in table.items()]


def test_scores_are_scaled_by_ten_and_weighted(extender_server):
    server = extender_server({"prioritize": scores({"n1": 3, "n2": 10})})
    ext = extender(server.url, prioritizeVerb="prioritize", weight=2)
    assert extender_scores([ext], make_pod(), node_infos("n1", "n2")) == {"n1": 60, "n2": 200}
    verb, args = server.requests[0]
    assert verb == "prioritize" and [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["n1", "n2"]


def test_node_cache_capable_prioritizer_gets_names(extender_server):
    server = extender_server({"prioritize": scores({"n1": 1})})
    ext = extender(server.url, prioritizeVerb="prioritize", weight=1, nodeCacheCapable=True)
    assert extender_scores([ext], make_pod(), node_infos("n1")) == {"n1": 10}
    assert server.requests[0][1]["NodeNames"] == ["n1"] and server.requests[0][1]["Nodes"] is None


def test_several_extenders_add_up_and_detail_follows_config_order(extender_server):
    a = extender_server({"prioritize": scores({"n1": 1, "n2": 2})})
    b = extender_server({"prioritize": scores({"n1": 5})})
    exts = [extender(a.url, prioritizeVerb="prioritize", weight=1),
            extender(b.url, prioritizeVerb="prioritize", weight=3)]
    nodes = node_infos("n1", "n2")
    assert extender_scores(exts, make_pod(), nodes) == {"n1": 10 + 150, "n2": 20}
    assert prioritize_with_extenders(exts, make_pod(), nodes) == {
        "n1": [(a.url, 10), (b.url, 150)], "n2": [(a.url, 20)]}


@pytest.mark.parametrize("answer", [
    pytest.param(Reply(500, b""), id="http-500"),
    pytest.param(Reply(200, {"not": "a list"}), id="wrong-shape"),
    pytest.param(Reply(200, [{"Host": "n1", "Score": 1.5}]), id="fractional-score"),
    pytest.param(Reply(200, [{"Host": "n1"}], delay=5), id="timeout"),
])
def test_failing_prioritizer_gives_no_score_and_others_still_count(extender_server, answer):
    # upstream ignores prioritize errors, even of a non-ignorable extender
    bad = extender_server({"prioritize": lambda args: answer})
    good = extender_server({"prioritize": scores({"n1": 4})})
    exts = [extender(bad.url, prioritizeVerb="prioritize", weight=1, httpTimeout="200ms"),
            extender(good.url, prioritizeVerb="prioritize", weight=1)]
    assert extender_scores(exts, make_pod(), node_infos("n1")) == {"n1": 40}


def test_hosts_not_among_the_nodes_are_ignored(extender_server):
    server = extender_server({"prioritize": scores({"n1": 1, "elsewhere": 10})})
    ext = extender(server.url, prioritizeVerb="prioritize", weight=1)
    assert extender_scores([ext], make_pod(), node_infos("n1")) == {"n1": 10}


def test_extender_without_prioritize_verb_scores_zero_without_a_request(extender_server):
    server = extender_server({})
    ext = extender(server.url, filterVerb="filter")
    assert prioritize_with_extenders([ext], make_pod(), node_infos("n1")) == {"n1": [(server.url, 0)]}
    assert server.requests == []


def test_uninterested_extender_is_not_asked(extender_server):
    server = extender_server({"prioritize": scores({"n1": 10})})
    ext = extender(server.url, prioritizeVerb="prioritize", weight=1,
                   managedResources=[{"name": "example.com/gpu"}])
    assert extender_scores([ext], make_pod(), node_infos("n1")) == {}
    assert server.requests == []
