"""The placement points as upstream's frameworkImpl runs them (runtime/framework_test.go:
TestRunPlacementGeneratePlugins, TestRunPlacementScorePlugins, the PlacementGenerate and
PlacementScore rows of TestRecordingMetrics, and NewFramework's "more than one
PlacementGeneratePlugin"), and the guard around every placement plugin call."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from kschedfw import hookimpl
from kschedfw.config.expand import PluginEntry, ResolvedProfile
from kschedfw.framework.registry import Registry
from kschedfw.framework.runtime import Framework, FrameworkError
from kschedfw.fwk.cycle_state import CycleState
from kschedfw.fwk.podgroup import (GeneratePlacementsResult, Placement, PlacementPluginScores, PlacementScore,
                                   PodGroupAssignments, PodGroupInfo)
from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing import make_node

GROUP = PodGroupInfo("pg")


def placement_framework(generate: list[type] = (), score: list[tuple[type, int]] = ()) -> Framework:  # type: ignore[assignment]
    """A profile of only placement plugins: ``generate`` at placementGenerate, ``score`` at
    placementScore with its weight."""
    classes = [*generate, *(cls for cls, _ in score)]
    profile = ResolvedProfile(
        scheduler_name="test-scheduler", percentage_of_nodes_to_score=None,
        plugins={"generate_placements": tuple(PluginEntry(cls.name) for cls in generate),
                 "score_placement": tuple(PluginEntry(cls.name, weight) for cls, weight in score)},
        plugin_args={cls.name: {} for cls in classes})
    return Framework(profile, Registry.from_classes(classes))


def generator(name: str, out: Callable[[Placement], Any]) -> type:
    """A PlacementGenerate plugin returning ``out(parent placement)``."""
    def generate_placements(self: Any, state: Any, pod_group: Any, parent_placement: Placement) -> Any:
        return out(parent_placement)
    return type(name, (), {"name": name, "__init__": lambda self, args, handle: None,
                           "generate_placements": hookimpl(generate_placements)})


def scorer(name: str, score: Callable[[PodGroupAssignments], Any],
           normalize: Callable[[list[PlacementScore]], Any] | None = None) -> type:
    """A PlacementScore plugin scoring with ``score``, normalising with ``normalize`` if given."""
    body: dict[str, Any] = {"name": name, "__init__": lambda self, args, handle: None}

    def score_placement(self: Any, state: Any, pod_group: Any, placement: PodGroupAssignments) -> Any:
        return score(placement)
    body["score_placement"] = hookimpl(score_placement)
    if normalize is not None:
        def normalize_placement_score(self: Any, state: Any, pod_group: Any, placement_scores: Any) -> Any:
            return normalize(placement_scores)
        body["normalize_placement_score"] = hookimpl(normalize_placement_score)
    return type(name, (), body)


NODES = [NodeInfo(node=make_node(name)) for name in ("node1", "node2", "node3")]


# ---------------------------------------------------------------- PlacementGenerate

def test_without_a_plugin_the_one_placement_is_every_node() -> None:
    """No PlacementGenerate plugin: a single placement, named "", of the nodes given."""
    placements, status = placement_framework().run_placement_generate_plugins(CycleState(), GROUP, NODES)
    assert status is None
    assert [(p.name, p.nodes) for p in placements] == [("", NODES)]


def test_the_plugins_placements_are_the_candidates() -> None:
    """One plugin: its placements, as it generated them (they may overlap), from the parent of
    every node."""
    foo, bar = Placement("foo", NODES[:2]), Placement("bar", NODES[1:])
    parents: list[Placement] = []

    def out(parent: Placement) -> Any:
        parents.append(parent)
        return GeneratePlacementsResult([foo, bar]), None
    fw = placement_framework([generator("Gen", out)])
    placements, status = fw.run_placement_generate_plugins(CycleState(), GROUP, NODES)
    assert status is None and placements == [foo, bar]
    assert [(p.name, p.nodes) for p in parents] == [("", NODES)]


@pytest.mark.parametrize("code", [Code.Error, Code.Unschedulable])
def test_a_failed_status_comes_back_as_the_plugin_gave_it(code: Code) -> None:
    """The plugin's non-Success status is the result, its code kept, naming the plugin."""
    fw = placement_framework([generator("Gen", lambda parent: (None, Status(code, ("injected",))))])
    placements, status = fw.run_placement_generate_plugins(CycleState(), GROUP, NODES)
    assert placements == [] and status is not None
    assert (status.code, status.message(), status.plugin) == (code, "injected", "Gen")


@pytest.mark.parametrize("result", [GeneratePlacementsResult([]), None], ids=["empty", "none"])
def test_no_placement_is_unschedulable(result: Any) -> None:
    """No placement generated: Unschedulable "no feasible placements found", naming the plugin."""
    fw = placement_framework([generator("Gen", lambda parent: (result, None))])
    placements, status = fw.run_placement_generate_plugins(CycleState(), GROUP, NODES)
    assert placements == [] and status is not None
    assert (status.code, status.message(), status.plugin) == (Code.Unschedulable, "no feasible placements found", "Gen")


def _raise(parent: Placement) -> Any:
    raise RuntimeError("boom")


@pytest.mark.parametrize(("out", "message"), [
    (_raise, "RuntimeError: boom"),
    (lambda parent: [parent], 'plugin "Gen" PlacementGenerate returned list'),
    (lambda parent: (GeneratePlacementsResult(["rack-a"]), None),  # type: ignore[list-item]
     "plugin \"Gen\" PlacementGenerate returned str 'rack-a'; want Placement in the placements"),
], ids=["raises", "wrong-shape", "not-a-placement"])
def test_a_broken_generator_is_an_error_naming_it(out: Callable[[Placement], Any], message: str) -> None:
    fw = placement_framework([generator("Gen", out)])
    placements, status = fw.run_placement_generate_plugins(CycleState(), GROUP, NODES)
    assert placements == [] and status is not None and status.code is Code.Error and status.plugin == "Gen"
    assert status.message().startswith(message)


def test_more_than_one_generator_is_refused() -> None:
    """NewFramework: "at most one placement generate plugin is allowed"."""
    one = generator("One", lambda parent: (None, None))
    two = generator("Two", lambda parent: (None, None))
    with pytest.raises(FrameworkError, match='at most one placement generate plugin is allowed for profile with '
                                             'scheduler name "test-scheduler"'):
        placement_framework([one, two])


# ---------------------------------------------------------------- PlacementScore

P = [Placement("p0"), Placement("p1"), Placement("p2")]


def by_placement(scores: dict[int, Any]) -> Callable[[PodGroupAssignments], Any]:
    return lambda assignments: scores[P.index(assignments.placement)]


def run_scores(*plugins: tuple[type, int]) -> tuple[list[PlacementPluginScores], Status | None]:
    fw = placement_framework(score=list(plugins))
    return fw.run_placement_score_plugins(CycleState(), GROUP, [PodGroupAssignments(p) for p in P])


def table(results: list[PlacementPluginScores]) -> list[tuple[Placement, list[tuple[str, int]], int]]:
    return [(r.placement, r.scores, r.total_score) for r in results]


def _to_hundred(scores: list[PlacementScore]) -> None:
    """upstream's test normalisation: each score over the last one's, times 100 (in float32)."""
    for s in scores:
        s.score = int(s.score / scores[2].score * 100)


@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param([(scorer("plugin1", by_placement({0: 0, 1: 50, 2: 100})), 1),
                  (scorer("plugin2", by_placement({0: 0, 1: 50, 2: 0})), 2)],
                 [(P[0], [("plugin1", 0), ("plugin2", 0)], 0), (P[1], [("plugin1", 50), ("plugin2", 100)], 150),
                  (P[2], [("plugin1", 100), ("plugin2", 0)], 100)], id="all success"),
    pytest.param([], [(P[0], [], 0), (P[1], [], 0), (P[2], [], 0)], id="no plugins"),
    pytest.param([(scorer("plugin1", by_placement({0: 0, 1: 50, 2: 100})), 1),
                  (scorer("plugin2", by_placement({0: 100, 1: 200, 2: 400}), _to_hundred), 2)],
                 [(P[0], [("plugin1", 0), ("plugin2", 50)], 50), (P[1], [("plugin1", 50), ("plugin2", 100)], 150),
                  (P[2], [("plugin1", 100), ("plugin2", 200)], 300)], id="normalize success"),
])
def test_placement_scores_are_normalised_and_weighted(plugins: list[tuple[type, int]], want: Any) -> None:
    """Each plugin scores every placement, normalises its own list, then its weight applies;
    the total is the sum (upstream TestRunPlacementScorePlugins)."""
    results, status = run_scores(*plugins)
    assert status is None
    assert table(results) == want


@pytest.mark.parametrize(("plugins", "message"), [
    pytest.param([(scorer("plugin1", by_placement({0: 0, 1: 50, 2: 100})), 1),
                  (scorer("plugin2", by_placement({0: 0, 1: Status.as_status("error for test"), 2: 0})), 2)],
                 'running PlacementScore plugins: plugin "plugin2" failed with: error for test', id="any error"),
    pytest.param([(scorer("plugin1", by_placement({0: 0, 1: 50, 2: 100})), 1),
                  (scorer("plugin2", by_placement({0: 0, 1: 50, 2: 100}),
                          lambda scores: Status.as_status("error for test")), 2)],
                 'running NormalizePlacementScore on PlacementScore plugins: plugin "plugin2" failed with: '
                 'error for test', id="normalize failure"),
    pytest.param([(scorer("plugin1", by_placement({0: 0, 1: 101, 2: 100})), 1)],
                 'applying score defaultWeights on PlacementScore plugins: plugin "plugin1" returns an invalid '
                 'score 101, it should in the range of [0, 100] after normalizing', id="greater than max score"),
    pytest.param([(scorer("plugin1", by_placement({0: 0, 1: -1, 2: 100})), 1)],
                 'applying score defaultWeights on PlacementScore plugins: plugin "plugin1" returns an invalid '
                 'score -1, it should in the range of [0, 100] after normalizing', id="less than min score"),
])
def test_a_failing_placement_score_is_the_cycles_error(plugins: list[tuple[type, int]], message: str) -> None:
    """A plugin's failed status, a failed normalisation, a score outside [0, 100] after it: an
    Error in upstream's words, naming the plugin, and no scores."""
    results, status = run_scores(*plugins)
    assert results == [] and status is not None and status.code is Code.Error
    assert status.message() == message


def _raise_score(assignments: PodGroupAssignments) -> Any:
    raise ValueError("bad placement")


def _raise_normalize(scores: list[PlacementScore]) -> Any:
    raise KeyError("gone")


def _set_float(scores: list[PlacementScore]) -> None:
    scores[0].score = 0.5  # type: ignore[assignment]


@pytest.mark.parametrize(("plugin", "message"), [
    (scorer("Bad", _raise_score),
     'running PlacementScore plugins: plugin "Bad" failed with: ValueError: bad placement'),
    (scorer("Bad", lambda a: 1.5),
     "plugin \"Bad\" PlacementScore returned float 1.5; want int, or a Status when scoring failed"),
    (scorer("Bad", lambda a: True),
     "plugin \"Bad\" PlacementScore returned bool True; want int, or a Status when scoring failed"),
    (scorer("Bad", lambda a: Status()),
     "plugin \"Bad\" PlacementScore returned Status"),
    (scorer("Bad", lambda a: 1, _raise_normalize),
     'running NormalizePlacementScore on PlacementScore plugins: plugin "Bad" failed with: KeyError: '
     "'gone'"),
    (scorer("Bad", lambda a: 1, lambda scores: "done"),
     'running NormalizePlacementScore on PlacementScore plugins: plugin "Bad" failed with: plugin "Bad" '
     "NormalizePlacementScore returned str 'done'; want Status or None"),
    (scorer("Bad", lambda a: 1, _set_float),
     'plugin "Bad" NormalizePlacementScore returned float 0.5; want int in PlacementScore.score'),
], ids=["raises", "float", "bool", "success-status", "normalize-raises", "normalize-wrong-type",
        "normalize-leaves-a-float"])
def test_a_broken_placement_scorer_is_an_error_naming_it(plugin: type, message: str) -> None:
    results, status = run_scores((plugin, 1))
    assert results == [] and status is not None and status.code is Code.Error and status.plugin == "Bad"
    assert message in status.message()


def test_weights_come_from_plugins_placement_score() -> None:
    """The weight a configuration gives a plugin under ``plugins.placementScore`` multiplies its
    scores (upstream placementScorePluginWeight); 0 or unset is 1."""
    from kschedfw.config.defaults import plugins_from_yaml
    from kschedfw.config.expand import resolve_plugins

    heavy = scorer("Heavy", by_placement({0: 10, 1: 20, 2: 30}))
    light = scorer("Light", by_placement({0: 1, 1: 2, 2: 3}))
    registry = Registry.from_classes([heavy, light])
    raw = {"placementScore": {"enabled": [{"name": "Heavy", "weight": 3}, {"name": "Light"}]}}
    resolved, issues = resolve_plugins(plugins_from_yaml(raw, ("profiles", 0, "plugins")), registry,
                                       scheduler_name="s", profile_path=("profiles", 0))
    # (a profile needs QueueSort and Bind plugins too: not this test's business)
    assert [i for i in issues if i.severity == "error" and "placementScore" in i.error.path] == []
    profile = ResolvedProfile(scheduler_name="s", percentage_of_nodes_to_score=None, plugins=resolved,
                              plugin_args={"Heavy": {}, "Light": {}})
    fw = Framework(profile, registry)
    results, status = fw.run_placement_score_plugins(CycleState(), GROUP, [PodGroupAssignments(p) for p in P])
    assert status is None
    assert [r.scores for r in results] == [[("Heavy", 30), ("Light", 1)], [("Heavy", 60), ("Light", 2)],
                                           [("Heavy", 90), ("Light", 3)]]


# ---------------------------------------------------------------- metrics

class _Recording:
    """An Instrumentation that keeps what it observes."""

    def __init__(self) -> None:
        self.plugins: list[tuple[str, str, str]] = []
        self.points: list[tuple[str, str, str]] = []

    def now(self) -> float:
        return 0.0

    def plugin_observer(self, plugin: str, point: str) -> Any:
        return lambda code, seconds: self.plugins.append((plugin, point, code))

    def extension_point_observer(self, point: str, profile: str) -> Any:
        return lambda code, seconds: self.points.append((point, code, profile))

    def node_hint_observer(self, profile: str) -> Any:
        return lambda hint, seconds: None

    def store_results_observer(self, profile: str) -> Any:
        return lambda seconds: None


@pytest.mark.parametrize("failing", [False, True], ids=["success", "error"])
@pytest.mark.parametrize("record", [False, True])
def test_placement_points_are_observed_with_upstreams_labels(failing: bool, record: bool) -> None:
    """Each run is observed as extension_point PlacementGenerate / PlacementScore with its status
    (upstream TestRecordingMetrics); the plugins' calls are timed (PlacementGenerate,
    PlacementScore, PlacementScoreExtensionNormalize) only when the cycle records plugin metrics."""
    status = Status.as_status("injected") if failing else None
    gen = generator("Gen", lambda parent: (GeneratePlacementsResult([Placement("a")]), status))
    score = scorer("Sc", lambda a: status if failing else 7, lambda scores: None)
    fw = placement_framework([gen], [(score, 1)])
    recording = _Recording()
    fw.instrument(recording)  # type: ignore[arg-type]
    state = CycleState()
    state.record_plugin_metrics = record
    fw.run_placement_generate_plugins(state, GROUP, NODES)
    fw.run_placement_score_plugins(state, GROUP, [PodGroupAssignments(Placement("a"))])
    code = "Error" if failing else "Success"
    assert recording.points == [("PlacementGenerate", code, "test-scheduler"),
                                ("PlacementScore", code, "test-scheduler")]
    want = [("Gen", "PlacementGenerate", code), ("Sc", "PlacementScore", code)]
    if not failing:
        want.append(("Sc", "PlacementScoreExtensionNormalize", "Success"))
    assert recording.plugins == (want if record else [])
