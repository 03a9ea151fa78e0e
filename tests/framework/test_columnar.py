"""The in-tree plugins' whole-list forms of Filter, Score and NormalizeScore (hookspecs'
WholeListFilter, WholeListScore, WholeListNormalizeScore) give exactly what the per-node hooks
give (upstream calls Filter and Score once per node): the same feasible nodes, rejections (status, reasons, plugin, visiting order) and errors, the same
raw, normalised and weighted scores per plugin and the same totals, cycle after cycle on a
changing seeded random cluster; a fault in a chunk gives the per-node path's error and fault
count; a form's wrong results meet the per-node hook's guard; and a subclass that overrides a
per-node hook does not inherit a form. The plain path is ``Framework(..., fast_paths=False)``."""

from __future__ import annotations

import random

import pytest

from kschedfw import Code, Status, hookimpl
from kschedfw.framework import columnar
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.plugins.dynamicresources import DynamicResources
from kschedfw.plugins.imagelocality import ImageLocality
from kschedfw.plugins.nodeaffinity import NodeAffinity
from kschedfw.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedfw.plugins.noderesources.fit import NodeResourcesFit
from kschedfw.plugins.nodename import NodeName
from kschedfw.plugins.nodeunschedulable import NodeUnschedulable
from kschedfw.plugins.tainttoleration import TaintToleration
from kschedfw.testing import PluginHarness, make_node, make_pod

PLUGINS = (NodeResourcesFit, NodeResourcesBalancedAllocation, TaintToleration, ImageLocality, NodeAffinity,
           DynamicResources)
IMAGES = ["img-a:1", "img-b:2", "img-c:3"]


def _cluster(rng):
    nodes = []
    for i in range(40):
        taints = [{"key": f"k{rng.randrange(3)}", "value": "v", "effect": rng.choice(
            ["PreferNoSchedule", "PreferNoSchedule", "NoSchedule"])} for _ in range(rng.randrange(3))]
        images = [([name], rng.choice([10, 300, 900]) * 1024 * 1024) for name in IMAGES if rng.random() < 0.3]
        nodes.append(make_node(f"n{i}", cpu=f"{rng.choice([2000, 4000, 8000])}m",
                               memory=f"{rng.choice([4096, 16384])}Mi", labels={"tier": rng.choice("abc")},
                               taints=taints, images=images))
    pods = [make_pod(f"bound{i}", cpu=f"{rng.choice([100, 500, 1000])}m", memory=f"{rng.choice([128, 1024])}Mi",
                     node_name=f"n{rng.randrange(40)}") for i in range(30)]
    return nodes, pods


def _pod(rng, i):
    preferred = [{"weight": rng.randrange(1, 100), "preference": {"matchExpressions": [
        {"key": "tier", "operator": "In", "values": [rng.choice("abc")]}]}} for _ in range(rng.randrange(3))]
    tolerations = [{"key": f"k{rng.randrange(3)}", "operator": "Exists", "effect": "PreferNoSchedule"}
                   for _ in range(rng.randrange(2))]
    kwargs = {}
    if rng.random() < 0.8:  # else best effort: BalancedAllocation skips
        kwargs = {"cpu": f"{rng.choice([100, 300, 1500])}m", "memory": f"{rng.choice([64, 512])}Mi"}
    return make_pod(f"p{i}", image=rng.choice(IMAGES + ["other:1"]), tolerations=tolerations,
                    affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}
                    if preferred else None, **kwargs)


def _harness(nodes, pods, fast_paths):
    return PluginHarness(*PLUGINS, nodes=nodes, pods=pods, fast_paths=fast_paths,
                         weights={"NodeResourcesFit": 2, "TaintToleration": 3, "NodeAffinity": 1})


def _facts(record):
    return ({name: (s.raw, s.normalized, s.weighted) for name, s in record.plugin_scores.items()},
            record.node_totals, record.node)


@pytest.mark.parametrize("seed", range(4))
def test_whole_list_forms_give_the_per_node_scores(seed):
    rng = random.Random(seed)
    nodes, pods = _cluster(rng)
    fast, plain = _harness(nodes, pods, True), _harness(nodes, pods, False)
    assert any(f[4] for f in fast.framework.plans.score) and not any(f[4] or f[5] for f in plain.framework.plans.score)
    for step in range(25):
        pod = _pod(rng, step)
        expected = _facts(plain.cycle(pod))
        assert _facts(fast.cycle(pod)) == expected, f"step {step}"
        assert expected[0], "every plugin was skipped: the test compares nothing"
        # a plugin scoring every node alike is added as a constant: totals are still the sums
        scores, totals, _ = expected
        assert totals == {node: sum(s[2][node] for s in scores.values()) for node in totals}
        # bind it on both clusters, so the memos see a changed node next cycle
        chosen = expected[2]
        for harness in (fast, plain):
            harness.snapshot.get(chosen).add_pod(make_pod(f"p{step}", cpu="200m", memory="64Mi", node_name=chosen))


def test_normalize_values_equal_the_node_score_path():
    from kschedfw.fwk.types import NodeScore
    from kschedfw.plugins.helper import default_normalize_score, default_normalize_values
    rng = random.Random(7)
    for _ in range(200):
        values = [rng.randrange(-5, 40) if rng.random() < 0.2 else rng.randrange(0, 40)
                  for _ in range(rng.randrange(0, 12))]
        for reverse in (False, True):
            scores = [NodeScore(f"n{i}", v) for i, v in enumerate(values)]
            default_normalize_score(100, reverse, scores)
            assert default_normalize_values(100, reverse, values) == [s.score for s in scores]


def test_a_subclass_overriding_score_keeps_its_own_score():
    class Halved(TaintToleration):
        def score(self, state, pod, node_info):
            return super().score(state, pod, node_info) // 2

    class Plain(TaintToleration):
        pass

    assert columnar.whole_list_score(Halved({}, None), Halved.normalize_score)[0] is None
    plain_forms = columnar.whole_list_score(Plain({}, None), Plain.normalize_score)
    assert plain_forms[0] is not None and plain_forms[1] is not None
    assert columnar.whole_list_score(Halved({}, None), None)[1] is None


# ---------------------------------------------------------------------------------------- Filter

FILTER_PLUGINS = (NodeUnschedulable, NodeName, TaintToleration, NodeResourcesFit)


def _filter_cluster(rng, n=60):
    nodes = []
    for i in range(n):
        taints = [{"key": f"k{rng.randrange(3)}", "value": "v", "effect": rng.choice(["NoSchedule", "PreferNoSchedule"])}
                  for _ in range(rng.randrange(2) if rng.random() < 0.4 else 0)]
        nodes.append(make_node(f"n{i}", cpu=f"{rng.choice([500, 1000, 4000])}m", memory="4Gi",
                               pods=str(rng.choice([2, 110])), taints=taints, unschedulable=rng.random() < 0.1))
    return nodes


def _filter_facts(fwk, pod, infos, start, to_find):
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, infos)
    feasible, rejected, failure = fwk.filter_nodes(state, pod, infos, start, to_find)
    return ([ni.name for ni in feasible], [(ni.name, st.code, st.reasons, st.plugin) for ni, st in rejected],
            None if failure is None else (failure.code, failure.message(), failure.plugin))


def _frameworks(classes, nodes, pods=()):
    from kschedfw.framework.handle import Handle
    from kschedfw.cache.snapshot import Snapshot
    from kschedfw.testing import framework_for
    out = []
    for on in (True, False):
        snapshot = Snapshot.from_objects(nodes, pods)
        out.append((framework_for(list(classes), handle=Handle.factory(snapshot=snapshot), fast_paths=on), snapshot))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_filter_in_chunks_gives_the_per_node_verdicts(seed):
    rng = random.Random(seed)
    nodes = _filter_cluster(rng)
    pods = [make_pod(f"b{i}", cpu="300m", node_name=f"n{rng.randrange(60)}") for i in range(40)]
    (fast, fast_snap), (plain, plain_snap) = _frameworks(FILTER_PLUGINS, nodes, pods)
    assert fast.plans.filter_forms and not plain.plans.filter_forms
    for step in range(40):
        pod = make_pod(f"p{step}", cpu=f"{rng.choice([100, 400, 900, 3000])}m",
                       node_name=rng.choice(["", "", "", "", f"n{rng.randrange(60)}"]),
                       tolerations=[{"key": "k1", "operator": "Exists"}] if rng.random() < 0.3 else ())
        start, to_find = rng.randrange(60), rng.choice([0, 1, 5, 20, 60, 100])
        expected = _filter_facts(plain, pod, plain_snap.node_infos(), start, to_find)
        assert _filter_facts(fast, pod, fast_snap.node_infos(), start, to_find) == expected, f"step {step}"
        if expected[0]:  # the memo of nodes that fit must notice the change
            for snap in (fast_snap, plain_snap):
                snap.get(expected[0][0]).add_pod(make_pod(f"p{step}", cpu="400m", node_name=expected[0][0]))


def _by_name(kind_at):
    """A Filter without a whole-list form whose verdict is in the node's name suffix."""
    def filter(self, state, pod, node_info):
        kind = kind_at.get(node_info.name)
        if kind == "rejected":
            return Status.unschedulable("no")
        if kind == "success":
            return Status(Code.Success)
        if kind == "error":
            return Status.as_status("boom")
        if kind == "raises":
            raise RuntimeError("kaboom")
        if kind == "wrong":
            return "no"
        return None
    return type("ByName", (), {"name": "ByName", "__init__": lambda self, args, handle: None,
                               "filter": hookimpl(filter)})


@pytest.mark.parametrize("broken", ["error", "raises", "wrong", "success"])
def test_a_chunk_with_a_fault_is_filtered_again_node_by_node(broken):
    nodes = [make_node(f"n{i}", cpu="1", taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}] if i == 3 else ())
             for i in range(24)]
    kind_at = {"n2": "rejected", "n5": broken, "n7": "rejected", "n9": "raises", "n20": "rejected"}
    cls = _by_name(kind_at)
    (fast, fast_snap), (plain, plain_snap) = _frameworks((TaintToleration, cls, NodeResourcesFit), nodes)
    chunks = []
    in_chunk = fast._filtering._filter_chunk
    fast._filtering._filter_chunk = lambda *args: chunks.append(len(args[2])) or in_chunk(*args)
    pod = make_pod("p", cpu="100m")
    calls = 0
    for start in (0, 4, 6, 19):
        for to_find in (2, 5, 12, 24):
            expected = _filter_facts(plain, pod, plain_snap.node_infos(), start, to_find)
            assert _filter_facts(fast, pod, fast_snap.node_infos(), start, to_find) == expected, (start, to_find)
            calls += 1
            assert chunks and chunks[0] == to_find  # the search began with a chunk of to_find nodes
            chunks.clear()
    assert calls == 16
    # the guard counted each fault as often on both paths
    assert fast.faults.counts == plain.faults.counts


def test_sampled_cycles_time_each_plugin_per_node_as_without_the_forms():
    """A sampled cycle (upstream samples 10% of cycles) runs the profile's timed plan, which has
    no whole-list forms: it calls the timed per-node hooks, so Filter and Score durations are
    observed for the plugins that have whole-list forms too."""
    from tests.test_metrics import FixedRng, samples, simulate
    from kschedfw.metrics import SchedulerMetrics
    always = SchedulerMetrics(rng=FixedRng(0))
    simulate(always, [make_pod("p", cpu="100m"), make_pod("q", cpu="100m")], nodes=3)
    observed = {(s.labels["plugin"], s.labels["extension_point"]) for s in samples(always)
                if s.name == "scheduler_plugin_execution_duration_seconds_count"}
    for plugin in ("NodeResourcesFit", "TaintToleration", "NodeUnschedulable", "NodeName"):
        assert (plugin, "Filter") in observed
    for plugin in ("NodeResourcesFit", "NodeResourcesBalancedAllocation", "TaintToleration", "ImageLocality"):
        assert (plugin, "Score") in observed


# ---------------------------------------------------------------------------------------- the guard

def _listed_filter(per_node, whole_list):
    """A Filter whose per-node hook returns ``per_node`` and whose whole-list form returns
    ``whole_list(nodes)``."""
    def filter(self, state, pod, node_info):
        return per_node

    def filter_nodes(self, state, pod, nodes):
        return whole_list(nodes)
    return type("Listed", (), {"name": "Listed", "__init__": lambda self, args, handle: None,
                               "filter": hookimpl(filter), "filter_nodes": filter_nodes})


def _raise(nodes):
    raise RuntimeError("kaboom")


def _filter_failure(cls, fast_paths):
    nodes = [make_node(f"n{i}", cpu="1") for i in range(20)]
    (fwk, snapshot), = [pair for pair, on in zip(_frameworks((cls,), nodes), (True, False)) if on == fast_paths]
    return _filter_facts(fwk, make_pod("p"), snapshot.node_infos(), 0, 20)[2]


def test_a_whole_list_filter_returning_no_status_is_reported_as_the_per_node_hook():
    fast = _filter_failure(_listed_filter(None, lambda nodes: ["no"] * len(nodes)), True)
    plain = _filter_failure(_listed_filter("no", lambda nodes: None), False)
    assert fast == plain == (Code.Error, """running "Listed" filter plugin: plugin "Listed" Filter returned str 'no'; """
                                         "want Status or None", "Listed")


@pytest.mark.parametrize("whole_list, cause", [
    (lambda nodes: [None] * (len(nodes) - 1), "returned list [None, None"),
    (lambda nodes: 3, "returned int 3; want a list of"),
    (_raise, "RuntimeError: kaboom"),
])
def test_a_whole_list_filter_that_breaks_is_an_error_naming_the_plugin(whole_list, cause):
    code, message, plugin = _filter_failure(_listed_filter(None, whole_list), True)
    assert code is Code.Error and plugin == "Listed"
    assert message.startswith('running "Listed" filter plugin: ') and cause in message


def _listed_score(per_node, whole_list, normalized=None):
    """A Score plugin (with NormalizeScore) whose per-node hooks give ``per_node`` and leave the
    scores as they are, and whose whole-list forms give ``whole_list(nodes)`` and
    ``normalized(values)`` (the values as they are when None)."""
    def score(self, state, pod, node_info):
        return per_node

    def normalize_score(self, state, pod, scores):
        return None

    def score_nodes(self, state, pod, nodes):
        return whole_list(nodes)

    def normalize_score_values(self, state, pod, values):
        return normalized(values) if normalized is not None else list(values)
    return type("Listed", (), {"name": "Listed", "__init__": lambda self, args, handle: None,
                               "score": hookimpl(score), "normalize_score": hookimpl(normalize_score),
                               "score_nodes": score_nodes, "normalize_score_values": normalize_score_values})


def _score_failure(cls, fast_paths):
    from kschedfw.testing import framework_for
    from kschedfw.cache.snapshot import Snapshot
    snapshot = Snapshot.from_objects([make_node(f"n{i}", cpu="1") for i in range(4)], ())
    fwk = framework_for([cls], fast_paths=fast_paths)
    totals, status = fwk.run_score_plugins_totals(CycleState(), make_pod("p"), snapshot.node_infos())
    assert (fwk.plans.score[0][4] is not None) is fast_paths
    return None if status is None else (status.code, status.message(), status.plugin)


@pytest.mark.filterwarnings("ignore::kschedfw.framework.guard.DeprecatedShapeWarning")  # the old (score, status) shape
@pytest.mark.parametrize("bad", [1.5, None, "7", 101, -1, Status.as_status("boom"), (5, Status.as_status("boom")),
                                 (5, "ok")])
def test_a_whole_list_score_meets_the_per_node_guard(bad):
    """One bad value among good ones is found and reported as the per-node hook's would be."""
    fast = _score_failure(_listed_score(0, lambda nodes: [7] * (len(nodes) - 1) + [bad]), True)
    plain = _score_failure(_listed_score(bad, None), False)
    assert fast == plain and fast is not None and fast[0] is Code.Error and fast[2] == "Listed"


@pytest.mark.filterwarnings("ignore::kschedfw.framework.guard.DeprecatedShapeWarning")  # the old (score, status) shape
def test_whole_list_scores_as_pairs_or_int_subclasses_are_taken_as_ints():
    """As from the per-node hook: (score, None) pairs and int subclasses (a bool from a
    whole-list form counts as the int it is: its ints are checked in one pass, see hookspecs)."""
    class Score(int):
        pass
    for values in ([(5, None)] * 4, [Score(5)] * 4, [True] * 4):
        assert _score_failure(_listed_score(0, lambda nodes, values=values: list(values)), True) is None


@pytest.mark.parametrize("bad", [1.5, 101, None])
def test_whole_list_normalized_values_meet_the_node_score_guard(bad):
    from kschedfw.testing import framework_for

    def leave(self, state, pod, scores):
        for s in scores:
            s.score = bad
    per_node = type("Listed", (_listed_score(5, None),), {"normalize_score": hookimpl(leave)})
    fast = _score_failure(_listed_score(0, lambda nodes: [5] * len(nodes), lambda values: [bad] * len(values)), True)
    plain = _score_failure(per_node, False)
    assert fast == plain and fast is not None and fast[2] == "Listed"
    plan = framework_for([per_node]).plans.score[0]
    assert plan[4] is not None and plan[5] is None  # overriding normalize_score drops its form only


@pytest.mark.parametrize("form", ["score", "normalize"])
def test_a_whole_list_score_of_the_wrong_length_is_an_error_naming_the_plugin(form):
    cls = _listed_score(0, lambda nodes: [5] * (len(nodes) + (form == "score")),
                        lambda values: [5] * (len(values) + (form == "normalize")))
    code, message, plugin = _score_failure(cls, True)
    point = "Score" if form == "score" else "NormalizeScore"
    assert code is Code.Error and plugin == "Listed"
    assert f'plugin "Listed" {point} returned list [5, 5, 5, 5, 5]; want a list of 4 results, one per node' in message


def test_a_float_between_a_forms_lowest_and_highest_scores_is_found():
    fast = _score_failure(_listed_score(0, lambda nodes: [0, 3.5, 100, 7]), True)
    plain = _score_failure(_listed_score(3.5, None), False)
    assert fast == plain and "returned float 3.5" in fast[1]


def test_an_earlier_forms_wrong_value_is_reported_before_a_later_plugins_fault():
    """Plan order, as node by node: the first plugin's float, not the second's score out of range."""
    from kschedfw.cache.snapshot import Snapshot
    from kschedfw.testing import framework_for
    first = _listed_score(0, lambda nodes: [1.5] + [2] * (len(nodes) - 1))
    second = type("Later", (_listed_score(0, lambda nodes: [101] * len(nodes)),), {"name": "Later"})
    snapshot = Snapshot.from_objects([make_node(f"n{i}", cpu="1") for i in range(4)], ())
    fwk = framework_for([first, second])
    assert fwk.plans.score[1][4] is not None  # the second plugin kept its form
    _, status = fwk.run_score_plugins_totals(CycleState(), make_pod("p"), snapshot.node_infos())
    assert status.plugin == "Listed" and "returned float 1.5" in status.message()
