"""pluggy's contract, kept by the compiled plan: a hookimpl may take any subset of its spec's
arguments, by name and in any order (as pytest's and datasette's hooks do); a name the spec does
not have is refused when the plugin loads, naming the plugin, the hook and the argument."""

from __future__ import annotations

from typing import Any

import pytest

from kschedfw import hookimpl
from kschedfw.framework.registry import PluginLoadError, check_plugin_class
from kschedfw.fwk.status import Status
from kschedfw.plugins.defaultbinder import DefaultBinder
from kschedfw.plugins.queuesort import PrioritySort
from kschedfw.testing import PluginHarness, make_node, make_pod
from kschedfw.testing.profiles import simulate_with
from tests.contract.author_plugins import Misspelled, OnlyNode


class PrefersGood:
    """Score with its arguments out of the spec's order, and NormalizeScore with one of three."""
    name = "PrefersGood"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def score(self, node_info: Any, pod: Any) -> int:
        return 10 if node_info.node.labels.get("good") == "true" else 1

    @hookimpl
    def normalize_score(self, scores: Any) -> Status | None:
        for entry in scores:
            entry.score *= 10
        return None


NODES = [make_node("bad", labels={"bad": "true"}), make_node("plain"), make_node("good", labels={"good": "true"})]


def test_a_filter_without_state_runs_in_the_harness():
    assert PluginHarness(OnlyNode, nodes=NODES).feasible(make_pod("web")) == ["plain", "good"]


def test_score_and_normalize_score_by_name_in_any_order():
    report = PluginHarness(PrefersGood, nodes=NODES).score(make_pod("web"))
    scores = report.scores["PrefersGood"]
    assert scores.raw == {"bad": 1, "plain": 1, "good": 10}
    assert scores.normalized == {"bad": 10, "plain": 10, "good": 100}


def test_such_plugins_schedule_in_a_simulation():
    result = simulate_with([PrioritySort, OnlyNode, PrefersGood, DefaultBinder],
                           [*NODES, make_pod("web"), make_pod("api")])
    assert {p.key: p.node for p in result.pods} == {"default/web": "good", "default/api": "good"}


def test_a_misspelled_argument_is_refused_at_load():
    with pytest.raises(PluginLoadError) as err:
        check_plugin_class(Misspelled, "local[Misspelled]")
    message = str(err.value)
    assert "Misspelled" in message and "filter" in message and "nodeinfo" in message
