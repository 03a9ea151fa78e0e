"""The per-profile runtime applies upstream's rules at each extension point."""

from __future__ import annotations

import pytest

from kschedfw import Code, CycleState, PreFilterResult, Status, hookimpl
from kschedfw.fwk.types import NodeInfo, NodeToStatus, PostFilterResult
from kschedfw.testing import framework_for, make_node, make_pod


def node_info(name):
    return NodeInfo(node=make_node(name, allocatable={"cpu": "1", "pods": "10"}))


def plugin(name, **hooks):
    """A plugin class named ``name`` whose hooks are the given functions (self is dropped)."""
    namespace = {"name": name, "__init__": lambda self, args, handle: None}
    for hook, fn in hooks.items():
        namespace[hook] = hookimpl(_method(hook, fn))
    return type(name, (), namespace)


def _method(hook, fn):
    """A real method ``hook(self, <fn's parameters>)`` calling ``fn``, as a class body would define it."""
    import inspect
    params = ", ".join(inspect.signature(fn).parameters)
    namespace = {"fn": fn}
    exec(f"def {hook}(self, {params}):\n    return fn({params})\n", namespace)
    method = namespace[hook]
    method.__qualname__ = f"TestPlugin.{hook}"
    return method


def test_filter_stops_at_first_rejection_and_names_the_plugin():
    calls = []
    first = plugin("First", filter=lambda state, pod, node_info: calls.append("First") or Status.unschedulable("full"))
    second = plugin("Second", filter=lambda state, pod, node_info: calls.append("Second"))
    fwk = framework_for([first, second])
    status = fwk.run_filter_plugins(CycleState(), make_pod("p"), node_info("n1"))
    assert (status.code, status.message(), status.plugin) == (Code.Unschedulable, "full", "First")
    assert calls == ["First"]


@pytest.mark.parametrize("returned, expected", [
    pytest.param(Status.wait(), 'running "P" filter plugin: ', id="wait-is-an-error"),
    pytest.param(Status.as_status("boom"), 'running "P" filter plugin: boom', id="error"),
])
def test_filter_non_rejection_codes_become_errors(returned, expected):
    fwk = framework_for([plugin("P", filter=lambda state, pod, node_info: returned)])
    status = fwk.run_filter_plugins(CycleState(), make_pod("p"), node_info("n1"))
    assert status.code is Code.Error and status.message() == expected


def test_plugin_that_raises_is_an_error_naming_it():
    def explode(state, pod, node_info):
        raise RuntimeError("kaboom")
    fwk = framework_for([plugin("Explodes", filter=explode)])
    status = fwk.run_filter_plugins(CycleState(), make_pod("p"), node_info("n1"))
    assert status.code is Code.Error
    assert status.plugin == "Explodes"
    assert 'running "Explodes" filter plugin: RuntimeError: kaboom' == status.message()


def test_pre_filter_skip_skips_that_plugins_filter():
    fwk = framework_for([plugin("S", pre_filter=lambda state, pod, nodes: (None, Status.skip()),
                                filter=lambda state, pod, node_info: Status.unschedulable("never"))])
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, make_pod("p"), [])
    assert status is None
    assert fwk.run_filter_plugins(state, make_pod("p"), node_info("n1")) is None


def test_pre_filter_unschedulable_continues_and_records_every_rejector():
    a = plugin("A", pre_filter=lambda state, pod, nodes: (None, Status.unschedulable("a says no")))
    b = plugin("B", pre_filter=lambda state, pod, nodes: (None, Status.unschedulable("b says no")))
    _, status, rejectors = framework_for([a, b]).run_pre_filter_plugins(CycleState(), make_pod("p"), [])
    assert rejectors == {"A", "B"}
    assert status.message() == "b says no"


def test_pre_filter_unresolvable_stops_at_once():
    a = plugin("A", pre_filter=lambda state, pod, nodes: (None, Status.unresolvable("stop")))
    b = plugin("B", pre_filter=lambda state, pod, nodes: pytest.fail("B must not run"))
    _, status, rejectors = framework_for([a, b]).run_pre_filter_plugins(CycleState(), make_pod("p"), [])
    assert status.code is Code.UnschedulableAndUnresolvable and rejectors == {"A"}


@pytest.mark.parametrize("results, message", [
    pytest.param([{"n1"}, {"n2"}], "node(s) didn't satisfy plugin(s) [A B] simultaneously", id="two-disjoint"),
    pytest.param([set(), None], "node(s) didn't satisfy plugin A", id="one-empty"),
])
def test_pre_filter_results_intersect(results, message):
    def make(names):
        return lambda state, pod, nodes: (PreFilterResult(frozenset(names)) if names is not None else None, None)
    plugins = [plugin(n, pre_filter=make(r)) for n, r in zip("AB", results)]
    result, status, _ = framework_for(plugins).run_pre_filter_plugins(CycleState(), make_pod("p"), [])
    assert status.code is Code.UnschedulableAndUnresolvable
    assert status.message() == message


def test_score_normalize_weight_and_total():
    def normalize(state, pod, scores):
        top = max(s.score for s in scores)
        for s in scores:
            s.score = s.score * 100 // top
    a = plugin("A", score=lambda state, pod, node_info: {"n1": 1, "n2": 4}[node_info.name], normalize_score=normalize)
    b = plugin("B", score=lambda state, pod, node_info: 10)
    fwk = framework_for([a, b], weights={"A": 2, "B": 3})
    scores, status = fwk.run_score_plugins(CycleState(), make_pod("p"), [node_info("n1"), node_info("n2")])
    assert status is None
    assert [(s.name, s.total_score) for s in scores] == [("n1", 25 * 2 + 30), ("n2", 200 + 30)]


def test_score_out_of_range_after_normalize_is_an_error():
    fwk = framework_for([plugin("Big", score=lambda state, pod, node_info: 101)])
    _, status = fwk.run_score_plugins(CycleState(), make_pod("p"), [node_info("n1")])
    assert status.code is Code.Error
    assert status.message() == ('applying score defaultWeights on Score plugins: plugin "Big" returns an invalid '
                                'score 101, it should in the range of [0, 100] after normalizing')


def test_pre_score_skip_skips_score():
    fwk = framework_for([plugin("S", pre_score=lambda state, pod, nodes: Status.skip(),
                                score=lambda state, pod, node_info: pytest.fail("must be skipped"))])
    state = CycleState()
    assert fwk.run_pre_score_plugins(state, make_pod("p"), []) is None
    scores, status = fwk.run_score_plugins(state, make_pod("p"), [node_info("n1")])
    assert status is None and scores[0].total_score == 0


def test_post_filter_first_success_wins_and_rejections_join():
    a = plugin("A", post_filter=lambda state, pod, filtered_node_status_map: (None, Status.unschedulable("no claims")))
    b = plugin("B", post_filter=lambda state, pod, filtered_node_status_map: (None, Status.unschedulable("preemption: no")))
    result, status = framework_for([a, b]).run_post_filter_plugins(CycleState(), make_pod("p"), NodeToStatus())
    assert status.code is Code.Unschedulable and status.plugin == "A"
    assert status.message() == "no claims, preemption: no"
    c = plugin("C", post_filter=lambda state, pod, filtered_node_status_map: (PostFilterResult.nominate("n1"), None))
    result, status = framework_for([a, c]).run_post_filter_plugins(CycleState(), make_pod("p"), NodeToStatus())
    assert status.is_success() and result.nominating_info.nominated_node_name == "n1"


def test_unreserve_runs_in_reverse_order_even_after_raise():
    calls = []

    def unreserve_b(state, pod, node_name):
        calls.append("B")
        raise RuntimeError("ignored")
    a = plugin("A", reserve=lambda state, pod, node_name: None,
               unreserve=lambda state, pod, node_name: calls.append("A"))
    b = plugin("B", reserve=lambda state, pod, node_name: None, unreserve=unreserve_b)
    framework_for([a, b]).run_reserve_plugins_unreserve(CycleState(), make_pod("p"), "n1")
    assert calls == ["B", "A"]


def test_permit_wait_is_clamped_to_fifteen_minutes():
    p = plugin("Gang", permit=lambda state, pod, node_name: (Status.wait("for the gang"), 3600))
    status, waits = framework_for([p]).run_permit_plugins(CycleState(), make_pod("w"), "n1", 0.0)
    assert status.code is Code.Wait
    # v1.36: the waiting plugin's reasons, then the runtime's
    assert status.message() == "for the gang, one or more plugins asked to wait and no plugin rejected pod"
    assert waits == {"Gang": 900.0}


def test_bind_skip_asks_the_next_binder():
    calls = []
    a = plugin("A", bind=lambda state, pod, node_name: calls.append("A") or Status.skip())
    b = plugin("B", bind=lambda state, pod, node_name: calls.append("B"))
    status = framework_for([a, b]).run_bind_plugins(CycleState(), make_pod("p"), "n1")
    assert status.is_success() and status.plugin == "B" and calls == ["A", "B"]


def test_plugins_without_events_get_the_wildcard_fallback():
    from kschedfw.fwk.events import ActionType
    fwk = framework_for([plugin("NoEvents", filter=lambda state, pod, node_info: None)])
    (event, name, hint), = fwk.queueing_hints()
    assert name == "NoEvents" and event.action_type == ActionType.All and hint is None
