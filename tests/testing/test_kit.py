"""The plugin authors' kit: every in-tree plugin keeps the contract; the checker catches breaches;
the harness and the in-process CLI report what the scheduler would."""

from __future__ import annotations

import pytest

from kschedfw import Status, hookimpl
from kschedfw.framework.registry import Registry
from kschedfw.testing import (PluginHarness, check_plugin, contract_hints, contract_problems, make_node,
                              make_pod, run_cli)

REGISTRY = Registry.discover()
IN_TREE = sorted(ref.name for ref in REGISTRY.refs() if ref.builtin)


@pytest.mark.parametrize("name", IN_TREE)
def test_every_in_tree_plugin_keeps_the_contract(name):
    check_plugin(REGISTRY.load(name))


class Unbounded:
    """Scores by free cpu in millicores: no normalisation, so scores can exceed 100."""

    name = "Unbounded"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def score(self, state, pod, node_info):
        return node_info.allocatable.get("cpu", 0)


class SilentRejector:
    name = "SilentRejector"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable("no")


class WrongEvents:
    name = "WrongEvents"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def events_to_register(self):
        return ["Node/Add"]


class BadDefaults:
    name = "BadDefaults"
    args_schema = {"type": "object", "properties": {"weight": {"type": "integer", "minimum": 1, "default": 0}}}

    def __init__(self, args, handle):
        pass


class lowercase_name:  # noqa: N801 - the point of the test
    name = "lowercase"

    def __init__(self, args, handle):
        pass


@pytest.mark.parametrize("cls, expected", [
    pytest.param(Unbounded, 'plugin "Unbounded" returns an invalid score 2000, it should in the range of [0, 100]',
                 id="score-range"),
    pytest.param(WrongEvents, "EventsToRegister returned str 'Node/Add'; want ClusterEventWithHint", id="bad-events"),
    pytest.param(BadDefaults, "the schema's own defaults do not validate", id="bad-defaults"),
    pytest.param(lowercase_name, "should be CamelCase", id="name"),
])
def test_contract_breaches_are_named(cls, expected):
    problems = contract_problems(cls)
    assert any(expected in p for p in problems), problems
    with pytest.raises(AssertionError, match=cls.name):
        check_plugin(cls)


def test_a_rejecting_plugin_without_events_keeps_the_contract():
    # upstream: a plugin without EnqueueExtensions has its pods requeued on every cluster event
    check_plugin(SilentRejector)
    assert any("events_to_register" in hint for hint in contract_hints(SilentRejector))
    assert contract_hints(REGISTRY.load("NodeResourcesFit")) == []


def test_harness_reports_filter_statuses_and_scores():
    fit = REGISTRY.load("NodeResourcesFit")
    taints = REGISTRY.load("TaintToleration")
    nodes = [make_node("small", cpu="1"), make_node("big", cpu="8"),
             make_node("tainted", cpu="8", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])]
    harness = PluginHarness(fit, taints, nodes=nodes, weights={"TaintToleration": 3},
                            args={"NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated", "resources": [
                                {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}})
    pod = make_pod("p", cpu="2", memory="1Gi")
    statuses = harness.filter(pod).statuses
    assert statuses["small"].message() == "Insufficient cpu"
    assert statuses["tainted"].message() == "node(s) had untolerated taint(s)"
    assert statuses["big"].is_success()
    report = harness.score(pod, ["big", "small"])
    # LeastAllocated on "big": cpu (8000-2000)*100/8000 = 75, memory (32Gi-1Gi)/32Gi -> 96; mean 85
    assert report.scores["NodeResourcesFit"].raw["big"] == 85
    assert report.scores["TaintToleration"].weighted == {"big": 300, "small": 300}
    assert report.totals["big"] == 85 + 300


def test_run_cli_in_process(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "percentageOfNodesToScore: 120\n")
    result = run_cli("validate", str(cfg))
    result.assert_invalid("percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]")
    assert run_cli("validate", "--output", "json", str(cfg)).json["status"] == "invalid"
