"""Framework build of a profile: upstream runtime/framework_test.go (TestNewFrameworkMultiPoint-
Expansion, TestNewFrameworkErrors, TestInitFrameworkWithScorePlugins) and the errors building a
profile's framework reports."""

from __future__ import annotations

import pytest

from kschedfw.config.defaults import PluginSet, Ref, plugins_from_yaml
from kschedfw.config.expand import MAX_TOTAL_SCORE, resolve_plugins, unknown_plugin_text
from kschedfw.api.field import format_path

from .fakes import FakeRegistry

ALL_BUT_QUEUEING = frozenset({"less", "pre_filter", "filter", "post_filter", "pre_score", "score",
                              "reserve", "permit", "pre_bind", "bind", "post_bind",
                              "generate_placements", "score_placement"})

# the registry of framework_test.go, by what each test plugin implements
REGISTRY = FakeRegistry(plugins={
    "score-with-normalize-plugin-1": frozenset({"score", "normalize_score"}),
    "score-with-normalize-plugin-2": frozenset({"score", "normalize_score"}),
    "score-plugin-1": frozenset({"pre_score", "score"}),
    "score-plugin-2": frozenset({"pre_score", "score"}),
    "plugin-not-implementing-score": frozenset(),
    "duplicate-plugin": frozenset({"pre_filter"}),
    "test-plugin": ALL_BUT_QUEUEING,
    "no-op-queue-sort-plugin": frozenset({"less"}),
    "bind-plugin": frozenset({"bind"}),
    "placement-generate-plugin": frozenset({"generate_placements"}),
    "placement-score-plugin-1": frozenset({"score_placement"}),
})

T, S1, S2 = "test-plugin", "score-plugin-1", "score-plugin-2"
SWN1, PS1 = "score-with-normalize-plugin-1", "placement-score-plugin-1"
QS, BIND = "no-op-queue-sort-plugin", "bind-plugin"
WEIGHTED = {"score", "score_placement"}


def sets(**fields):
    """config.Plugins from keyword PluginSets: ``score=(["a", ("b", 5)], ["*"])``."""
    raw = {}
    for field, value in fields.items():
        enabled, disabled = value if isinstance(value, tuple) else (value, [])
        raw[field] = {
            "enabled": [{"name": e} if isinstance(e, str) else {"name": e[0], "weight": e[1]}
                        for e in enabled],
            "disabled": [{"name": d} for d in disabled]}
    return plugins_from_yaml(raw, ("profiles", 0, "plugins"))


def listed(resolved):
    """ListPlugins(): non-empty points; weights shown for score and placementScore only."""
    out = {}
    for hook, entries in resolved.items():
        if entries:
            out[hook] = [(e.name, e.weight) if hook in WEIGHTED else e.name for e in entries]
    return out


def resolve(plugins, registry=REGISTRY, name="test-profile"):
    return resolve_plugins(plugins, registry, scheduler_name=name, profile_path=("profiles", 0))


def errors(issues):
    return [f"{format_path(i.error.path)}: {i.error.body()}" for i in issues
            if i.severity == "error"]


def everywhere(name, weight=1, **overrides):
    """test-plugin at each point it implements (the common part of upstream's wantPlugins)."""
    want = {h: [name] for h in ("less", "pre_filter", "filter", "post_filter", "pre_score",
                                "reserve", "permit", "pre_bind", "bind", "post_bind",
                                "generate_placements")}
    want["score"] = [(name, weight)]
    want["score_placement"] = [(name, weight)]
    want.update(overrides)
    return {k: v for k, v in want.items() if v}


@pytest.mark.parametrize("plugins, want", [
    pytest.param(sets(multiPoint=[(T, 5)]), everywhere(T, 5), id="plugin expansion"),
    pytest.param(sets(multiPoint=[T], preScore=([], [T]), score=([], [T]),
                      placementScore=([], [T])),
                 everywhere(T, pre_score=[], score=[], score_placement=[]),
                 id="disable MultiPoint plugin at some extension points"),
    pytest.param(sets(multiPoint=[T, S1, PS1]),
                 everywhere(T, pre_score=[T, S1], score=[(T, 1), (S1, 1)],
                            score_placement=[(T, 1), (PS1, 1)]), id="Multiple MultiPoint plugins"),
    pytest.param(sets(multiPoint=[T, S1], preScore=([], ["*"])),
                 everywhere(T, pre_score=[], score=[(T, 1), (S1, 1)]),
                 id="disable MultiPoint extension"),
    pytest.param(sets(multiPoint=[SWN1, T, S1], score=[S1, T]),
                 everywhere(T, pre_score=[T, S1], score=[(S1, 1), (T, 1), (SWN1, 1)]),
                 id="Reorder MultiPoint plugins (specified extension takes precedence)"),
    pytest.param(sets(multiPoint=[T, S1], score=[SWN1, S1, T]),
                 everywhere(T, pre_score=[T, S1], score=[(S1, 1), (T, 1), (SWN1, 1)]),
                 id="Reorder MultiPoint plugins (specified extension only takes precedence when it "
                    "exists in MultiPoint)"),
    pytest.param(sets(multiPoint=[T, S1], score=[(S1, 5), (T, 3)], placementScore=[(T, 2)]),
                 everywhere(T, pre_score=[T, S1], score=[(S1, 5), (T, 3)],
                            score_placement=[(T, 2)]), id="Override MultiPoint plugins weights"),
    pytest.param(sets(multiPoint=([QS, BIND, S1, PS1], ["*"])),
                 {"less": [QS], "pre_score": [S1], "score": [(S1, 1)], "bind": [BIND],
                  "score_placement": [(PS1, 1)]},
                 id="disable and enable MultiPoint plugins with '*'"),
    pytest.param(sets(multiPoint=([BIND, QS, S1], [S1])),
                 {"less": [QS], "pre_score": [S1], "score": [(S1, 1)], "bind": [BIND]},
                 id="disable and enable MultiPoint plugin by name"),
    pytest.param(sets(multiPoint=[T, S1, PS1], score=[(S1, 5), (S2, 5), (T, 3)],
                      placementScore=[(T, 2), (PS1, 6)]),
                 everywhere(T, pre_score=[T, S1], score=[(S1, 5), (T, 3), (S2, 5)],
                            score_placement=[(T, 2), (PS1, 6)]),
                 id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple "
                    "times"),
])
def test_multi_point_expansion(plugins, want):
    resolved, issues = resolve(plugins)
    assert errors(issues) == []
    assert listed(resolved) == want


def test_multi_point_expansion_already_registered():
    """TestNewFrameworkMultiPointExpansion: Expect 'already registered' error."""
    _, issues = resolve(sets(multiPoint=[T, T]))
    assert errors(issues) == ['profiles[0].plugins.multiPoint.enabled[1].name: Duplicate value: '
                              '"test-plugin": plugin "test-plugin" already registered as '
                              '"PreFilterPlugin"']


# ----------------------------------------------------------- TestNewFrameworkErrors

def test_duplicate_plugin_name():
    _, issues = resolve(sets(preFilter=[("duplicate-plugin", 1), ("duplicate-plugin", 1)],
                             queueSort=[QS], bind=[BIND]))
    assert errors(issues) == ['profiles[0].plugins.preFilter.enabled[1].name: Duplicate value: '
                              '"duplicate-plugin": plugin "duplicate-plugin" already registered '
                              'as "PreFilterPlugin"']


def test_more_than_one_placement_generate_plugin():
    _, issues = resolve(sets(queueSort=[QS], bind=[BIND],
                             placementGenerate=[T, "placement-generate-plugin"]))
    assert errors(issues) == ["profiles[0].plugins.placementGenerate: Invalid value: 2: at most "
                              "one placement generate plugin is allowed"]


# ----------------------------------------------------------- TestInitFrameworkWithScorePlugins

@pytest.mark.parametrize("score, want", [
    pytest.param(["notExist"], ["profiles[0].plugins.score.enabled[0].name: Unsupported value: "
                                '"notExist": ScorePlugin "notExist" does not exist'],
                 id="enabled Score plugin doesn't exist in registry"),
    pytest.param(["plugin-not-implementing-score"],
                 ['profiles[0].plugins.score.enabled[0].name: Invalid value: '
                  '"plugin-not-implementing-score": plugin "plugin-not-implementing-score" does '
                  'not extend ScorePlugin plugin'],
                 id="enabled Score plugin doesn't extend the ScorePlugin interface"),
    pytest.param(None, [], id="Score plugins are nil"),
    pytest.param([], [], id="enabled Score plugin list is empty"),
    pytest.param([S1], [], id="enabled plugin only implements ScorePlugin interface"),
    pytest.param([SWN1], [], id="enabled plugin implements ScoreWithNormalizePlugin interface"),
])
def test_init_framework_with_score_plugins(score, want):
    fields = {"queueSort": [QS], "bind": [BIND]}
    if score is not None:
        fields["score"] = score
    _, issues = resolve(sets(**fields))
    got = [e.split("; installed plugins")[0] for e in errors(issues)]
    assert got == want


# ----------------------------------------------------------- counts, weights, messages

@pytest.mark.parametrize("plugins, want", [
    pytest.param(sets(bind=[BIND]),
                 ['profiles[0].plugins.queueSort: Required value: only one queue sort plugin '
                  'required for profile with scheduler name "test-profile", but got 0'],
                 id="no queue sort"),
    pytest.param(sets(queueSort=[QS, T], bind=[BIND]),
                 ['profiles[0].plugins.queueSort: Invalid value: 2: only one queue sort plugin '
                  'required for profile with scheduler name "test-profile", but got 2'],
                 id="two queue sorts"),
    pytest.param(sets(queueSort=[QS]),
                 ['profiles[0].plugins.bind: Required value: at least one bind plugin is needed '
                  'for profile with scheduler name "test-profile"'], id="no bind"),
])
def test_queue_sort_and_bind_counts(plugins, want):
    _, issues = resolve(plugins)
    assert errors(issues) == want


def test_score_weight_overflow_guard():
    plugins = {"queueSort": PluginSet((Ref(QS),)), "bind": PluginSet((Ref(BIND),)),
               "score": PluginSet((Ref(S1, MAX_TOTAL_SCORE // 100), Ref(S2, 1)))}
    _, issues = resolve(plugins)
    assert errors(issues) == ["profiles[0].plugins.score: Invalid value: total score of Score "
                              "plugins could overflow"]


def test_zero_weight_means_one_and_score_set_wins_over_multi_point():
    resolved, _ = resolve(sets(multiPoint=[(T, 7), (S1, 4)], score=[(S1, 0)]))
    assert [(e.name, e.weight) for e in resolved["score"]] == [(S1, 1), (T, 7)]


def test_negative_weight_followed_by_a_score_plugin_is_refused_as_kube_scheduler_does():
    # upstream's guard computes MaxInt64 - total in int64: a negative total wraps it around, so
    # kube-scheduler v1.36.2 exits with "score plugins: total score of Score plugins could overflow"
    _, issues = resolve(sets(multiPoint=[T], score=[(S1, -2)]))
    assert errors(issues) == ["profiles[0].plugins.score.enabled[0].weight: Invalid value: -2: "
                              "total score of Score plugins could overflow"]
    assert issues[0].hint.startswith("kube-scheduler refuses to start")


def test_negative_total_is_refused_where_it_turns_negative():
    _, issues = resolve(sets(queueSort=[QS], bind=[BIND], score=[(S1, 2), (S2, -3), (SWN1, 1)]))
    assert errors(issues) == ["profiles[0].plugins.score.enabled[1].weight: Invalid value: -3: "
                              "total score of Score plugins could overflow"]


@pytest.mark.parametrize("score", [
    pytest.param([(S1, -2)], id="the only Score plugin"),
    pytest.param([(S1, 2), (S2, -1)], id="the total stays positive"),
])
def test_negative_weight_kube_scheduler_accepts_is_a_warning(score):
    _, issues = resolve(sets(queueSort=[QS], bind=[BIND], score=score))
    assert [(i.severity, format_path(i.error.path)) for i in issues] == [
        ("warning", f"profiles[0].plugins.score.enabled[{len(score) - 1}].weight")]


def test_unknown_plugin_lists_installed_closest_first():
    tail, hint = unknown_plugin_text("NodeResourceFit", ["ImageLocality", "NodeResourcesFit",
                                                         "NodeResourcesBalancedAllocation"])
    assert tail == ("; installed plugins, closest first: NodeResourcesFit, "
                    "NodeResourcesBalancedAllocation, ImageLocality (`kschedfw plugins` lists "
                    "them)")
    assert hint == 'did you mean "NodeResourcesFit"?'
    assert unknown_plugin_text("Coscheduling", ["SchedulingGates"])[1] == ""


def test_unknown_multi_point_plugin_reported_once_with_first_extension_point():
    _, issues = resolve(sets(multiPoint=[T, "nope"]))
    assert [e.split(";")[0] for e in errors(issues)] == [
        'profiles[0].plugins.multiPoint.enabled[1].name: Unsupported value: "nope": '
        'PreFilterPlugin "nope" does not exist']


def test_missing_default_plugins_are_one_warning():
    plugins = {"multiPoint": PluginSet((Ref(QS), Ref("Gone1"), Ref(BIND), Ref("Gone2")))}
    resolved, issues = resolve(plugins)
    assert [(i.severity, i.error.detail) for i in issues] == [
        ("warning", "default plugins not installed, the profile runs without them: Gone1, Gone2")]
    assert listed(resolved) == {"less": [QS], "bind": [BIND]}


class _Broken(FakeRegistry):
    def extension_points(self, name):
        return None if name == "broken" else super().extension_points(name)

    def load_error(self, name):
        return "ImportError: no module"


def test_plugin_that_cannot_be_loaded():
    registry = _Broken(plugins={**{n: REGISTRY.extension_points(n) for n in REGISTRY.names()},
                               "broken": frozenset()})
    _, issues = resolve(sets(multiPoint=[T], filter=["broken"]), registry)
    assert [(i.error.kind, i.error.detail) for i in issues] == [
        ("Plugin load error", 'plugin "broken" is installed but cannot be loaded: ImportError: '
                              'no module')]
