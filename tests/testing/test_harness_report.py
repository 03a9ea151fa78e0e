"""PluginHarness answers every extension point it runs with one shape, a PointReport: a Status per
node, the point's own status, the scores (Score), the plugins that skipped and the CycleState."""

from __future__ import annotations

import pytest

from kschedfw import PreFilterResult, Status, hookimpl
from kschedfw.testing import PluginHarness, PointReport, make_node, make_pod

NODES = [make_node("a", cpu="4"), make_node("b", cpu="1"), make_node("c", cpu="8")]


class NotC:
    """PreFilter narrows to a and b; Filter rejects b for cpu; Score by name."""

    name = "NotC"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        if pod.labels.get("reject"):
            return None, Status.unschedulable("rejected at PreFilter")
        return PreFilterResult({"a", "b"}), None

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable("Insufficient cpu") if node_info.name == "b" else None

    @hookimpl
    def score(self, state, pod, node_info):
        return {"a": 10, "b": 20, "c": 30}[node_info.name]


@pytest.fixture
def harness():
    return PluginHarness(NotC, nodes=NODES)


def test_each_point_gives_a_point_report(harness):
    pod = make_pod("p")
    for point, report in (("PreFilter", harness.pre_filter(pod)), ("Filter", harness.filter(pod)),
                          ("Score", harness.score(pod))):
        assert isinstance(report, PointReport) and report.point == point
        assert all(isinstance(status, Status) for status in report.statuses.values())
        assert report.ok and report.status is None


def test_pre_filter_report_gives_the_nodes_its_result_left_out_the_schedulers_status(harness):
    report = harness.pre_filter(make_pod("p"))
    assert report.feasible == ["a", "b"]
    assert report.statuses["c"].message() == "node(s) didn't satisfy plugin(s) [NotC]"


def test_filter_report_has_every_nodes_status(harness):
    report = harness.filter(make_pod("p"))
    assert report.feasible == ["a"]
    assert report.statuses["b"].message() == "Insufficient cpu"
    assert report.statuses["c"].message() == "node(s) didn't satisfy plugin(s) [NotC]"


def test_a_pre_filter_rejection_is_the_reports_status_and_every_nodes(harness):
    pod = make_pod("p", labels={"reject": "yes"})
    for report in (harness.pre_filter(pod), harness.filter(pod), harness.score(pod, ["a"])):
        assert not report.ok and report.status.message() == "rejected at PreFilter"
        assert report.feasible == [] and report.scores == {}


def test_score_report_has_scores_totals_and_a_status_per_scored_node(harness):
    report = harness.score(make_pod("p"), ["a", "b"])
    assert report.scores["NotC"].raw == {"a": 10, "b": 20}
    assert report.totals == {"a": 10, "b": 20}
    assert report.feasible == ["a", "b"]
    assert harness.score(make_pod("p")).totals == {"a": 10}  # default: the feasible nodes
