"""Fuzz: config-shaped YAML (and some garbage) never makes load_config_text raise; it returns a
config or diagnostics, and a returned config has no error diagnostics."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedfw.config.validate import load_config_text

from .fakes import FakeRegistry

FAKE_REGISTRY = FakeRegistry().with_out_of_tree()
NAMES = FAKE_REGISTRY.names() + ["*", "Nope", "EBSLimits", ""]

scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 2 ** 33), st.floats(allow_nan=True),
                   st.text(max_size=5), st.sampled_from(["10s", "-1s", "0", "leases", "System",
                                                         "List", "LeastAllocated"]))
leaf = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6)
plugin = st.one_of(st.fixed_dictionaries({"name": st.sampled_from(NAMES)},
                                         optional={"weight": st.one_of(st.integers(-2, 5), scalar)}),
                   scalar)
plugin_set = st.fixed_dictionaries({}, optional={"enabled": st.lists(plugin, max_size=3),
                                                 "disabled": st.lists(plugin, max_size=2)})
args = st.dictionaries(st.sampled_from(["minCandidateNodesPercentage", "hardPodAffinityWeight",
                                        "scoringStrategy", "defaultingType", "defaultConstraints",
                                        "addedAffinity", "resources", "shape", "filterTimeout",
                                        "bindTimeoutSeconds", "permitWaitingTimeSeconds", "mode",
                                        "apiVersion", "kind"]), leaf, max_size=3)
profile = st.fixed_dictionaries({}, optional={
    "schedulerName": st.one_of(st.sampled_from(["a", "b", "default-scheduler", ""]), scalar),
    "percentageOfNodesToScore": st.one_of(st.integers(-5, 150), scalar),
    "plugins": st.dictionaries(st.sampled_from(["multiPoint", "queueSort", "filter", "score",
                                                "bind", "postFilter", "placementScore", "bogus"]),
                               st.one_of(plugin_set, scalar), max_size=3),
    "pluginConfig": st.lists(st.one_of(st.fixed_dictionaries(
        {"name": st.sampled_from(NAMES)}, optional={"args": st.one_of(args, scalar)}), scalar),
        max_size=3),
})
document = st.fixed_dictionaries(
    {"apiVersion": st.sampled_from(["kubescheduler.config.k8s.io/v1"] * 4 +
                                   ["kubescheduler.config.k8s.io/v1beta3", "v1"]),
     "kind": st.sampled_from(["KubeSchedulerConfiguration"] * 4 + ["Pod"])},
    optional={
        "parallelism": st.one_of(st.integers(-2, 64), scalar),
        "percentageOfNodesToScore": st.one_of(st.integers(-5, 150), scalar),
        "podInitialBackoffSeconds": st.one_of(st.integers(-2, 20), scalar),
        "podMaxBackoffSeconds": st.one_of(st.integers(-2, 20), scalar),
        "leaderElection": st.dictionaries(st.sampled_from(
            ["leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
             "resourceName"]), scalar, max_size=3),
        "clientConnection": st.dictionaries(st.sampled_from(["qps", "burst", "kubeconfig"]),
                                            scalar, max_size=2),
        "profiles": st.one_of(st.lists(profile, max_size=3), scalar),
        "extenders": st.lists(st.one_of(st.dictionaries(st.sampled_from(
            ["prioritizeVerb", "weight", "bindVerb", "managedResources"]), leaf, max_size=3),
            scalar), max_size=2),
        "bogus": leaf,
    })


def check(text: str) -> None:
    config, diagnostics = load_config_text(text, "fuzz.yaml", FAKE_REGISTRY)
    errors = [d for d in diagnostics if d.is_error]
    assert (config is None) == bool(errors)
    for d in diagnostics:
        assert d.line >= 1 and d.column >= 1 and d.render()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document)
def test_config_shaped_documents(doc):
    check(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#\n \t0123,?%@`~")), max_size=60))
def test_yaml_noise(text):
    check("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + text)
