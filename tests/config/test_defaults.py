"""v1 defaulting: upstream default_plugins_test.go (TestMergePlugins, TestApplyFeatureGates) and
defaults_test.go (TestSchedulerDefaults)."""

from __future__ import annotations

import pytest

from kschedfw.config.defaults import (DEFAULT_MULTI_POINT, PluginSet, Ref, default_configuration,
                                      document_to_dict, merge_plugin_set, merge_plugins,
                                      plugins_from_yaml)
from kschedfw.config.validate import load_config_text

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def P(*items):
    """PluginSet entries from names or (name, weight)."""
    return tuple(Ref(i) if isinstance(i, str) else Ref(*i) for i in items)


def names(refs):
    return [(r.name, r.weight) for r in refs]


# ----------------------------------------------------------- TestMergePlugins

@pytest.mark.parametrize("field, default, custom, want", [
    pytest.param("filter", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")),
                 PluginSet(P("CustomPlugin")),
                 PluginSet(P("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")),
                 id="AppendCustomPlugin"),
    pytest.param("filter", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")),
                 PluginSet(P("CustomPlugin", "DefaultPlugin2"), P("DefaultPlugin2")),
                 PluginSet(P("DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"),
                           P("DefaultPlugin2")), id="InsertAfterDefaultPlugins2"),
    pytest.param("filter", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")),
                 PluginSet(P("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"), P("*")),
                 PluginSet(P("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"), P("*")),
                 id="InsertBeforeAllPlugins"),
    pytest.param("filter", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")),
                 PluginSet(P("DefaultPlugin2", "DefaultPlugin1"), P("*")),
                 PluginSet(P("DefaultPlugin2", "DefaultPlugin1"), P("*")),
                 id="ReorderDefaultPlugins"),
    pytest.param("filter", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")), None,
                 PluginSet(P("DefaultPlugin1", "DefaultPlugin2")), id="ApplyNilCustomPlugin"),
    pytest.param("filter", PluginSet(P("Plugin1", "Plugin2", "Plugin3")),
                 PluginSet(P(("Plugin1", 2), ("Plugin3", 3))),
                 PluginSet(P(("Plugin1", 2), "Plugin2", ("Plugin3", 3))),
                 id="CustomPluginOverrideDefaultPlugin"),
    pytest.param("filter", PluginSet(P("Plugin1", "Plugin2", "Plugin3")),
                 PluginSet(P(("Plugin2", 2), ("Plugin1", 1))),
                 PluginSet(P(("Plugin1", 1), ("Plugin2", 2), "Plugin3")),
                 id="OrderPreserveAfterOverride"),
    pytest.param("filter", PluginSet(P("Plugin1", "Plugin2", "Plugin3")),
                 PluginSet(P("Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4))),
                 PluginSet(P("Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2))),
                 id="RepeatedCustomPlugin"),
    pytest.param("multiPoint", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")),
                 PluginSet(P("CustomPlugin")),
                 PluginSet(P("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")),
                 id="Append custom MultiPoint plugin"),
    pytest.param("multiPoint", PluginSet(P("DefaultPlugin1", "DefaultPlugin2")),
                 PluginSet(P("CustomPlugin", "CustomPlugin2"), P("DefaultPlugin2")),
                 PluginSet(P("DefaultPlugin1", "CustomPlugin", "CustomPlugin2"),
                           P("DefaultPlugin2")), id="Append disabled Multipoint plugins"),
    pytest.param("multiPoint", PluginSet(P("DefaultPlugin")),
                 PluginSet(P(("DefaultPlugin", 5))), PluginSet(P(("DefaultPlugin", 5))),
                 id="override default MultiPoint plugins with custom value"),
    pytest.param("multiPoint", PluginSet(P("DefaultPlugin"), P("DefaultPlugin2")),
                 PluginSet(P("CustomPlugin")),
                 PluginSet(P("DefaultPlugin", "CustomPlugin"), P("DefaultPlugin2")),
                 id="disabled MultiPoint plugin in default set"),
    pytest.param("multiPoint", PluginSet(P("DefaultPlugin")), PluginSet((), P("DefaultPlugin")),
                 PluginSet((), P("DefaultPlugin")), id="multipoint with only disabled gets merged"),
])
def test_merge_plugins(field, default, custom, want):
    defaults = {field: default}
    got = merge_plugins(defaults, None if custom is None else {field: custom})
    assert got[field] == want


def test_merge_plugins_specific_point_disabled_in_default_set():
    """'disabled MultiPoint plugin in default set for specific extension point'."""
    default = {"multiPoint": PluginSet(P("DefaultPlugin")), "score": PluginSet((), P("DefaultPlugin2"))}
    got = merge_plugins(default, {"multiPoint": PluginSet(P("CustomPlugin"))})
    assert got["multiPoint"] == PluginSet(P("DefaultPlugin", "CustomPlugin"))
    assert got["score"] == PluginSet((), P("DefaultPlugin2"))


def test_merge_keeps_custom_disabled_before_default_disabled_and_drops_weights():
    got = merge_plugin_set(PluginSet((), P("A")), PluginSet((), P(("B", 3))))
    assert got.disabled == P("B", "A")


def test_merge_keeps_yaml_origins_of_custom_entries():
    custom = plugins_from_yaml({"score": {"enabled": [{"name": "X", "weight": 2}]}},
                               ("profiles", 0, "plugins"))
    got = merge_plugins({"score": PluginSet(P("X"))}, custom)
    assert got["score"].enabled[0].origin == ("profiles", 0, "plugins", "score", "enabled", 0)


# ----------------------------------------------------------- TestApplyFeatureGates

def test_default_multi_point_plugins_v1_36():
    """getDefaultPlugins with DynamicResourceAllocation GA: DynamicResources before
    DefaultPreemption; the removed *Limits plugins are gone from v1.36's list."""
    assert names(DEFAULT_MULTI_POINT) == [
        ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None),
        ("NodeName", None), ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None),
        ("NodeResourcesFit", 1), ("VolumeRestrictions", None), ("NodeVolumeLimits", None),
        ("VolumeBinding", None), ("VolumeZone", None), ("PodTopologySpread", 2),
        ("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", None),
        ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None)]


# ----------------------------------------------------------- TestSchedulerDefaults

TOP_DEFAULTS = {
    "parallelism": 16,
    "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
                       "retryPeriod": "2s", "resourceLock": "leases",
                       "resourceName": "kube-scheduler", "resourceNamespace": "kube-system"},
    "clientConnection": {"contentType": "application/vnd.kubernetes.protobuf", "qps": 50,
                         "burst": 100},
    "enableProfiling": True, "enableContentionProfiling": True,
    "percentageOfNodesToScore": 0, "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10,
    "delayCacheUntilActive": False,
}

DEFAULT_PLUGIN_CONFIG_NAMES = ["DefaultPreemption", "DynamicResources", "InterPodAffinity",
                               "NodeAffinity", "NodeResourcesBalancedAllocation",
                               "NodeResourcesFit", "PodTopologySpread", "VolumeBinding"]


def defaulted(yaml_text: str, registry) -> dict:
    config, diags = load_config_text(HEAD + yaml_text, "c.yaml", registry)
    assert config is not None, [d.render() for d in diags]
    return config.document


def test_empty_config(registry):
    doc = defaulted("", registry)
    assert {k: doc[k] for k in TOP_DEFAULTS} == TOP_DEFAULTS
    [profile] = doc["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    assert profile["plugins"] == {"multiPoint": {"enabled": [r.to_dict()
                                                            for r in DEFAULT_MULTI_POINT]}}
    assert [c["name"] for c in profile["pluginConfig"]] == DEFAULT_PLUGIN_CONFIG_NAMES
    assert profile["pluginConfig"][0]["args"] == {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs",
        "minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    assert profile["pluginConfig"][3]["args"] == {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs"}


def test_no_scheduler_name(registry):
    doc = defaulted("profiles:\n- {}\n", registry)
    assert doc["profiles"][0]["schedulerName"] == "default-scheduler"


def _args_defaulter(name, raw):
    from .fakes import IN_TREE_ARGS
    if raw is not None:
        return dict(raw)
    spec = IN_TREE_ARGS.get(name)
    return spec.defaults({}) if spec else None


def test_two_profiles():
    """The unnamed profile stays unnamed (validation then requires a name); the second merges
    its Bind set with the defaults, and both get the default pluginConfig."""
    data = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "parallelism": 16, "profiles": [
                {"pluginConfig": [{"name": "FooPlugin"}]},
                {"schedulerName": "custom-scheduler", "plugins": {"bind": {
                    "enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}}}]}
    doc = document_to_dict(default_configuration(data, _args_defaulter))
    first, second = doc["profiles"]
    assert "schedulerName" not in first
    assert [c["name"] for c in first["pluginConfig"]] == ["FooPlugin", *[
        n for n in DEFAULT_PLUGIN_CONFIG_NAMES]]
    assert second["schedulerName"] == "custom-scheduler"
    assert second["plugins"]["bind"] == {"enabled": [{"name": "BarPlugin"}],
                                         "disabled": [{"name": "DefaultBinder"}]}
    assert second["plugins"]["multiPoint"]["enabled"][-1] == {"name": "DefaultBinder"}
    assert [c["name"] for c in second["pluginConfig"]] == DEFAULT_PLUGIN_CONFIG_NAMES


@pytest.mark.parametrize("text, want_top, want_profile", [
    pytest.param("parallelism: 16\n", {"parallelism": 16}, {}, id="Prallelism with no port"),
    pytest.param("parallelism: 8\n", {"parallelism": 8}, {}, id="set non default parallelism"),
    pytest.param("delayCacheUntilActive: true\n", {"delayCacheUntilActive": True}, {},
                 id="set non default delayCacheUntilActive"),
    pytest.param("percentageOfNodesToScore: 50\n", {"percentageOfNodesToScore": 50}, {},
                 id="set non default global percentageOfNodesToScore"),
    pytest.param("profiles:\n- percentageOfNodesToScore: 50\n", {"percentageOfNodesToScore": 0},
                 {"percentageOfNodesToScore": 50},
                 id="set non default profile percentageOfNodesToScore"),
    pytest.param("percentageOfNodesToScore: 10\nprofiles:\n- percentageOfNodesToScore: 50\n",
                 {"percentageOfNodesToScore": 10}, {"percentageOfNodesToScore": 50},
                 id="set non default global and profile percentageOfNodesToScore"),
])
def test_scheduler_defaults(registry, text, want_top, want_profile):
    doc = defaulted(text, registry)
    assert {k: doc[k] for k in TOP_DEFAULTS} == {**TOP_DEFAULTS, **want_top}
    profile = doc["profiles"][0]
    assert profile["schedulerName"] == "default-scheduler"
    for k, v in want_profile.items():
        assert profile[k] == v


def test_unknown_plugin_config_args_are_kept(full_registry):
    """'unknown plugin config': out-of-tree args pass through (defaulted by their own schema)."""
    doc = defaulted("profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args:\n"
                    "      permitWaitingTimeSeconds: 5\n", full_registry)
    [cos] = [c for c in doc["profiles"][0]["pluginConfig"] if c["name"] == "Coscheduling"]
    assert cos["args"] == {"permitWaitingTimeSeconds": 5, "podGroupBackoffSeconds": 0}


@pytest.mark.parametrize("text, want", [
    pytest.param("leaderElection:\n  leaseDuration: 0s\n", "15s", id="zero duration is defaulted"),
    pytest.param("leaderElection:\n  leaseDuration: 1m\n", "1m0s", id="durations print as Go does"),
])
def test_leader_election_durations(registry, text, want):
    assert defaulted(text, registry)["leaderElection"]["leaseDuration"] == want


def test_contention_profiling_only_defaulted_when_profiling_is_on(registry):
    doc = defaulted("enableProfiling: false\n", registry)
    assert (doc["enableProfiling"], doc["enableContentionProfiling"]) == (False, False)


def test_client_connection_keeps_explicit_values(registry):
    doc = defaulted("clientConnection:\n  kubeconfig: /k\n  qps: 5\n  burst: 7\n", registry)
    assert doc["clientConnection"] == {"kubeconfig": "/k",
                                       "contentType": "application/vnd.kubernetes.protobuf",
                                       "qps": 5, "burst": 7}


def test_default_plugin_config_only_for_enabled_plugins(registry):
    doc = defaulted("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                    "      - name: DefaultPreemption\n      - name: VolumeBinding\n", registry)
    got = [c["name"] for c in doc["profiles"][0]["pluginConfig"]]
    assert "DefaultPreemption" not in got and "VolumeBinding" not in got


def test_wildcard_disable_keeps_only_custom_multipoint(full_registry):
    doc = defaulted("profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                    "      - name: PrioritySort\n      - name: DefaultBinder\n"
                    "      disabled:\n      - name: '*'\n", full_registry)
    assert doc["profiles"][0]["plugins"]["multiPoint"] == {
        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
        "disabled": [{"name": "*"}]}
    assert doc["profiles"][0]["pluginConfig"] == []
